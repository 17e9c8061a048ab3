// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_http_stream.c - libFuzzer target for the request reader Host
 * pinning compiles into BPF (include/egret_http.h), driven as
 * bpf/lib/http.h drives it: byte by byte, bodies stepped over by count.
 * The first input byte picks where the stream is cut in two (a segment
 * boundary). Whatever the bytes: the name buffer is never written past
 * its end (ASan), every name reported is one the DNS proxy could have
 * stored (1-253 bytes of [a-z0-9._-], no empty label, no trailing dot,
 * the rest of the buffer zero), and the cut changes nothing the reader
 * reports.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egret_http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct run {
	int refused, heads, names;
	__u64 hash;		/* of the names, in order */
};

static void check_name(const char *name, __u32 len)
{
	if (len < 1 || len > EGRET_SNI_MAX || strlen(name) != len)
		abort();
	for (__u32 i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
		      c == '_' || c == '.') || (c == '.' && (i == 0 || name[i - 1] == '.')))
			abort();
	}
	if (name[len - 1] == '.')
		abort();
	for (__u32 i = len; i < EGRET_HTTP_NAME_BUF; i++)
		if (name[i])
			abort();
}

static void run(const uint8_t *s, size_t len, size_t cut, struct run *r)
{
	char *name = calloc(1, EGRET_HTTP_NAME_BUF);
	struct egret_http h = {};
	size_t off = 0;

	if (!name)
		abort();
	memset(r, 0, sizeof(*r));
	r->hash = 14695981039346656037ULL;
	while (off < len) {
		size_t end = off < cut ? cut : len;
		int res;

		if (h.state == HTTP_BODY) {
			off += egret_http_skip(&h, (__u32)(end - off));
			continue;
		}
		res = egret_http_byte(&h, s[off++], name);
		if (res == EGRET_HTTP_REFUSE) {
			r->refused = 1;
			break;
		}
		if (res == EGRET_HTTP_NAME) {
			check_name(name, h.name_len);
			r->names++;
			for (__u32 i = 0; i < h.name_len; i++)
				r->hash = (r->hash ^ (__u8)name[i]) * 1099511628211ULL;
		}
		if (res == EGRET_HTTP_HEAD)
			r->heads++;
		if (h.head > EGRET_HTTP_HEAD_MAX)
			abort();
	}
	free(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run whole, split;
	size_t cut;

	if (size < 1)
		return 0;
	cut = data[0] % size;
	run(data + 1, size - 1, size - 1, &whole);
	run(data + 1, size - 1, cut, &split);
	if (whole.refused != split.refused || whole.heads != split.heads ||
	    whole.names != split.names || whole.hash != split.hash)
		abort();
	return 0;
}
