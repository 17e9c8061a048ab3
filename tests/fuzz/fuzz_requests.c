// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_requests.c - libFuzzer target for the request store's parsers
 * (user/requests/store.c). Its files hold names and process names that came
 * from inside attempts, and `egret requests`, run by an operator as root,
 * reads them. The input is a requests file: the header line, then one
 * record per line. Every record that parses must format and parse back to
 * the same bytes (a record egret writes is one it reads as it was).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "requests/store.h"

#define LINE_MAX_FUZZ	4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct request r, again;
	static char line[LINE_MAX_FUZZ], out[LINE_MAX_FUZZ * 2], out2[LINE_MAX_FUZZ * 2];
	char repo[POLICY_REPO_MAX];
	uint64_t dropped;
	size_t pos = 0;
	int first = 1;

	while (pos < size) {
		const uint8_t *nl = memchr(data + pos, '\n', size - pos);
		size_t n = nl ? (size_t)(nl - (data + pos)) : size - pos;

		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, data + pos, n);
		line[n] = '\0';
		pos += n + 1;
		if (first) {
			first = 0;
			if (request_header_parse(line, repo, sizeof(repo), &dropped) == 0 &&
			    (strlen(repo) >= sizeof(repo) || !policy_repo_name_valid(repo)))
				__builtin_trap();
			continue;
		}
		if (request_parse(line, &r) < 0)
			continue;
		if (request_format(&r, out, sizeof(out)) < 0)
			__builtin_trap();
		out[strcspn(out, "\n")] = '\0';
		if (request_parse(out, &again) < 0 ||
		    request_format(&again, out2, sizeof(out2)) < 0)
			__builtin_trap();
		out2[strcspn(out2, "\n")] = '\0';
		if (strcmp(out, out2))
			__builtin_trap();
	}
	return 0;
}
