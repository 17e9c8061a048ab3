// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_http_stream.c - libFuzzer target for the request reader Host
 * pinning compiles into BPF (include/egret_http.h, egret_http_field.h,
 * egret_http_body.h), driven as bpf/lib/http.h drives it: byte by byte,
 * bodies and chunks stepped over by count. The first input byte picks
 * where the stream is cut in two (a segment boundary). Whatever the bytes: the name buffer is
 * never written past its end (ASan), every name reported is one the DNS
 * proxy could have stored (1-253 bytes of [a-z0-9._-], no empty label, no
 * trailing dot, the rest of the buffer zero), the reader's state stays
 * within its bounds, the cut changes nothing the reader reports, and
 * every chunked body the reader reads to its end ends where a plain
 * RFC 9112 decoder (ref_chunked_end(), written for this check alone) ends
 * it: the next request is found where a server finds it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egret_http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct run {
	int refused, heads, names, bodies;
	__u64 hash;		/* of the names and of where chunked bodies end */
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

static int hexval(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Where the line starting at @off ends (its CRLF), or -1. */
static long crlf_at(const uint8_t *s, size_t len, size_t off)
{
	for (size_t i = off; i + 1 < len; i++)
		if (s[i] == '\r' && s[i + 1] == '\n')
			return (long)i;
	return -1;
}

/*
 * A chunked body starting at @off, as a server that follows RFC 9112, 7.1
 * reads it: chunk-size, anything up to the CRLF (its extensions), the
 * data, CRLF; after the last chunk, field lines up to an empty one. The
 * offset just past it, or -1 if the bytes do not hold a whole one.
 */
static long ref_chunked_end(const uint8_t *s, size_t len, size_t off)
{
	for (;;) {
		uint64_t n = 0;
		size_t digits = 0;
		long e;

		for (; off < len && hexval(s[off]) >= 0; off++, digits++) {
			if (digits == 16)
				return -1;
			n = n << 4 | (uint64_t)hexval(s[off]);
		}
		e = crlf_at(s, len, off);
		if (!digits || e < 0)
			return -1;
		off = (size_t)e + 2;
		if (n == 0)
			break;
		if (n > len || off + n + 2 > len || s[off + n] != '\r' || s[off + n + 1] != '\n')
			return -1;
		off += n + 2;
	}
	for (;;) {
		long e = crlf_at(s, len, off);

		if (e < 0)
			return -1;
		if ((size_t)e == off)
			return e + 2;
		off = (size_t)e + 2;
	}
}

/* The state's bounds, after every byte. */
static void check_state(const struct egret_http *h)
{
	if (h->state == HTTP_REFUSED)
		return;
	if (h->state > HTTP_REFUSED)
		abort();
	if (h->head > (h->state == HTTP_BODY_LINE ? EGRET_HTTP_LINE_MAX : EGRET_HTTP_HEAD_MAX))
		abort();
	if (h->body >= EGRET_HTTP_BODY_MAX || h->name_len > EGRET_SNI_MAX)
		abort();
	if (h->state == HTTP_BODY && h->body == 0)
		abort();
}

static void run(const uint8_t *s, size_t len, size_t cut, struct run *r)
{
	char *name = calloc(1, EGRET_HTTP_NAME_BUF);
	struct egret_http h = {};
	size_t off = 0, chunked_at = 0;
	int in_chunked = 0;

	if (!name)
		abort();
	memset(r, 0, sizeof(*r));
	r->hash = 14695981039346656037ULL;
	while (off < len) {
		size_t end = off < cut ? cut : len;
		int res;

		if (h.state == HTTP_BODY) {
			off += egret_http_skip(&h, (__u32)(end - off));
			check_state(&h);
			continue;
		}
		res = egret_http_byte(&h, s[off++], name);
		check_state(&h);
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
		if (res == EGRET_HTTP_HEAD) {
			r->heads++;
			if (h.state == HTTP_CHUNK_SIZE) {
				in_chunked = 1;
				chunked_at = off;
			}
		}
		if (in_chunked && h.state == HTTP_REQUEST) {
			/* The reader's end of the chunked body: a server's. */
			if (ref_chunked_end(s, len, chunked_at) != (long)off)
				abort();
			in_chunked = 0;
			r->bodies++;
			r->hash = (r->hash ^ off) * 1099511628211ULL;
		}
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
	    whole.names != split.names || whole.bodies != split.bodies ||
	    whole.hash != split.hash)
		abort();
	return 0;
}
