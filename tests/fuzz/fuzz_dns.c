// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_dns.c - libFuzzer target for the DNS wire parser (user/dns/wire.c).
 *
 * The input is treated both as a query from the attempt and as an upstream
 * answer to the question it carries, exercising every parsing path egret
 * runs on untrusted bytes. `make fuzz` runs it for a bounded time from the
 * seed corpus in tests/fuzz/corpus/.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dns/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dns_addr addrs[DNS_MAX_ADDRS];
	struct dns_question q;
	uint8_t reply[DNS_HEADER_LEN + DNS_NAME_MAX + 2 + 4 + 16];
	char name[DNS_NAME_MAX + 1];
	size_t next;
	int n;

	if (dns_parse_query(data, size, &q) == 0) {
		if (q.end <= sizeof(reply))
			dns_build_reply(data, &q, 3, reply, sizeof(reply));
		/* The same bytes as an "answer" to their own question. */
		n = dns_collect_addrs(data, size, &q, addrs, DNS_MAX_ADDRS);
		if (n > DNS_MAX_ADDRS)
			__builtin_trap();
		for (int i = 0; i < n; i++)
			if (addrs[i].family != 2 && addrs[i].family != 10)
				__builtin_trap();
	}
	/* OPT stripping edits in place: a copy, never past its length. */
	if (size <= DNS_MAX_MSG) {
		static uint8_t copy[DNS_MAX_MSG];
		long stripped;

		memcpy(copy, data, size);
		stripped = dns_strip_opt(copy, size);
		if (stripped > (long)size)
			__builtin_trap();
	}
	/* Names at every offset: pointers, loops, truncation. */
	for (size_t off = 0; off < size && off < 64; off++) {
		if (dns_read_name(data, size, off, name, &next) == 0 &&
		    (strlen(name) > DNS_NAME_MAX || next > size))
			__builtin_trap();
	}
	return 0;
}
