/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * egret_http.h - reading the hosts plain HTTP requests name, one byte at
 * a time, shared by the egress backstop (bpf/lib/http.h) and the unit
 * tests and fuzzer (tests/unit/test_http.c, tests/fuzz), like egret_tls.h.
 *
 * A pinned plain-HTTP connection is judged as a stream: every request of
 * it, keep-alive and pipelined alike, wherever the segments cut it. The
 * reader keeps its whole state in struct egret_http (socket storage in
 * BPF), so a head may arrive a byte per segment. It reports a name the
 * moment the line holding it ends - the request line for an absolute-form
 * target's authority, the Host field - for the caller to judge against
 * the DNS pairs, and the end of each head. The caller steps over what
 * can be stepped over by count (a body's rest, a chunk's data: state
 * HTTP_BODY, egret_http_skip) and gives the reader every other byte.
 *
 * It reads a strict subset of RFC 9112, the one clients send; anything
 * else is refused (EGRET_REASON_NOT_HTTP), because a server that reads
 * the bytes differently could see another host or another request:
 *  - request line: METHOD SP TARGET SP HTTP/1.0 or HTTP/1.1, METHOD upper
 *    case letters (CONNECT refused: a tunnel; only POST, PUT and PATCH may
 *    carry a body: servers disagree on a GET's), TARGET origin-form ("/..."),
 *    absolute-form ("http://" or "https://" AUTHORITY ...: the authority,
 *    without userinfo or an IP literal, is judged too), or "*". HTTP/2's
 *    prior-knowledge preface ("PRI * HTTP/2.0") fails the version;
 *  - fields (egret_http_field.h): a token name right before ':', no
 *    obs-fold, no NUL or bare CR; exactly one Host, whose name is judged;
 *    at most one Content-Length, digits only, below EGRET_HTTP_BODY_MAX;
 *    at most one Transfer-Encoding, exactly "chunked", never with
 *    Content-Length nor on HTTP/1.0; at most one Expect, exactly
 *    "100-continue"; Upgrade (the stream would turn into another
 *    protocol) and the headers front ends take the host from instead of
 *    Host (Forwarded, X-Forwarded-Host, X-Host, X-Original-Host) are
 *    refused, and so is any of these names spelt with '_' for '-' (some
 *    servers fold it);
 *  - lines end in LF or CRLF; empty lines before a request line are
 *    skipped (RFC 9112, 2.2); a head is at most EGRET_HTTP_HEAD_MAX bytes;
 *  - bodies (egret_http_body.h): a counted one is stepped over once its
 *    first line is read for a request; a chunked one is followed chunk by
 *    chunk, its lines in CRLF only, its trailers up to the empty line.
 * A name is judged as SNI pinning judges one (egret_tls.h): [A-Za-z0-9._-]
 * lower-cased, no empty label, no trailing dot; a port after ':' is read
 * and not judged (the connection's port is).
 */
#ifndef EGRET_HTTP_H
#define EGRET_HTTP_H

#include "egret.h"

#ifndef EGRET_INLINE
#define EGRET_INLINE static inline __attribute__((always_inline))
#endif

#define EGRET_HTTP_HEAD_MAX	32768U		/* a request head's bytes */
#define EGRET_HTTP_BODY_MAX	(1ULL << 32)	/* Content-Length below this */
#define EGRET_HTTP_NAME_BUF	(EGRET_SNI_MAX + 3)	/* the pin key's name[] */

/* Where the reader stands. */
enum egret_http_state {
	HTTP_REQUEST = 0,	/* before a request line */
	HTTP_METHOD,
	HTTP_TARGET,		/* its first byte */
	HTTP_TARGET_REST,	/* origin-form, or past an authority */
	HTTP_TARGET_SCHEME,	/* "http://" or "https://" */
	HTTP_TARGET_HOST,
	HTTP_TARGET_PORT,
	HTTP_TARGET_STAR,	/* "*": SP next */
	HTTP_VERSION,
	HTTP_FIELD,		/* a field line's first byte, or the empty line */
	HTTP_FIELD_NAME,
	HTTP_FIELD_VALUE,	/* a field not judged */
	HTTP_HOST,
	HTTP_HOST_PORT,
	HTTP_HOST_TAIL,		/* whitespace after the host */
	HTTP_LENGTH,
	HTTP_LENGTH_TAIL,
	HTTP_TOKEN,		/* a value that must be word ->fields */
	HTTP_TOKEN_TAIL,	/* whitespace after it */
	HTTP_BODY,		/* ->body bytes to step over */
	HTTP_BODY_LINE,		/* a counted body's first line */
	/* A chunked body's lines, each ending in CRLF: in this order, from
	 * HTTP_CHUNK_SIZE to HTTP_CHUNK_END (egret_http_in_chunk_line()). */
	HTTP_CHUNK_SIZE,
	HTTP_CHUNK_EXT_NAME,	/* after ';' */
	HTTP_CHUNK_EXT_VALUE,	/* after '=' */
	HTTP_CHUNK_EXT_QUOTED,
	HTTP_CHUNK_EXT_ESCAPE,	/* after a backslash in a quoted value */
	HTTP_CHUNK_EXT_END,	/* after a quoted value */
	HTTP_CHUNK_END,		/* the CRLF after a chunk's data */
	HTTP_REFUSED,
};

/* The words compared: the fields read (a bit each in egret_http.fields
 * while a name may still be one of them), then the request line's. One
 * table, one .rodata array in BPF. Lower case, as compared (field names
 * are case-insensitive), but for the version. */
enum {
	HTTP_F_HOST = 0,
	HTTP_F_LENGTH,
	HTTP_F_TE,
	HTTP_F_EXPECT,
	HTTP_F_REFUSED,		/* the first refused field; the rest follow */
	HTTP_FIELDS = 9,
	/* The methods told apart (a bit each in egret_http.fields while
	 * the method is read): CONNECT is refused, and only these three
	 * may carry a body. */
	HTTP_W_CONNECT = HTTP_FIELDS,
	HTTP_W_POST,
	HTTP_W_PUT,
	HTTP_W_PATCH,
	HTTP_W_VERSION,
	HTTP_W_HTTP,
	HTTP_W_HTTPS,
	/* The one value each of Transfer-Encoding and Expect may have. */
	HTTP_W_CHUNKED,
	HTTP_W_CONTINUE,
	HTTP_WORDS,
	HTTP_WORD_LEN = 32,	/* the longest word and its NUL, padded to a
				 * power of two: a mask bounds the index */
	HTTP_WORD_SLOTS = 32,	/* HTTP_WORDS, likewise */
};

#define HTTP_METHODS	((1U << HTTP_W_CONNECT) | (1U << HTTP_W_POST) | \
			 (1U << HTTP_W_PUT) | (1U << HTTP_W_PATCH))

static const char egret_http_words[HTTP_WORD_SLOTS][HTTP_WORD_LEN] = {
	"host", "content-length", "transfer-encoding", "expect", "upgrade",
	"forwarded", "x-forwarded-host", "x-host", "x-original-host",
	"connect", "post", "put", "patch",
	"HTTP/1.", "http://", "https://",
	"chunked", "100-continue",
};

_Static_assert(HTTP_WORDS <= HTTP_WORD_SLOTS, "egret_http_words: a slot per word");

/* Byte @pos of word @k (0 past its end). */
EGRET_INLINE __u32 egret_http_word(__u32 k, __u32 pos)
{
	return (__u8)egret_http_words[k & (HTTP_WORD_SLOTS - 1)][pos & (HTTP_WORD_LEN - 1)];
}

/* egret_http.flags */
enum {
	HTTP_CR = 1U << 0,		/* a CR: LF must follow */
	HTTP_AUTHORITY = 1U << 1,	/* the target names a host */
	HTTP_HAVE_LENGTH = 1U << 2,
	HTTP_HTTPS = 1U << 3,		/* the scheme may still be https */
	HTTP_PLAIN = 1U << 4,		/* ... or http */
	HTTP_BODY_OK = 1U << 5,		/* POST, PUT or PATCH: a body may follow */
	HTTP_HAVE_TE = 1U << 6,		/* a Transfer-Encoding field */
	HTTP_CHUNKED = 1U << 7,		/* ... "chunked": kept past the head */
	HTTP_HAVE_EXPECT = 1U << 8,
	HTTP_V10 = 1U << 9,		/* HTTP/1.0 */
	HTTP_UNDERSCORE = 1U << 10,	/* the field name has a '_' */
	HTTP_TRAILERS = 1U << 11,	/* the fields are a chunked body's trailers */
	HTTP_LINE = 1U << 12,		/* a counted body's first line began */
};

/* Results of egret_http_byte(). */
enum {
	EGRET_HTTP_REFUSE = -1,	/* ->reason says why */
	EGRET_HTTP_MORE = 0,
	EGRET_HTTP_NAME = 1,	/* a name is whole: judge @name, ->name_len bytes */
	EGRET_HTTP_HEAD = 2,	/* a head ended; its body (->body bytes) follows */
};

struct egret_http {
	__u32 state;		/* enum egret_http_state */
	__u32 pos;		/* bytes into the current token */
	__u32 head;		/* bytes of the current head */
	__u32 fields;		/* candidate fields, then the one matched */
	__u32 hosts;		/* Host fields in this head */
	__u32 name_len;
	__u32 flags;		/* HTTP_* above */
	__u32 reason;		/* EGRET_REASON_* once refused */
	__u64 body;		/* Content-Length or a chunk's size, then what
				 * is left of it */
};

EGRET_INLINE int egret_http_refuse(struct egret_http *h)
{
	h->state = HTTP_REFUSED;
	h->reason = EGRET_REASON_NOT_HTTP;
	return EGRET_HTTP_REFUSE;
}

EGRET_INLINE __u32 egret_http_lower(__u32 c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* RFC 9110's tchar. */
EGRET_INLINE int egret_http_tchar(__u32 c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '!' || c == '#' || c == '$' ||
	       c == '%' || c == '&' || c == '\'' || c == '*' || c == '+' ||
	       c == '-' || c == '.' || c == '^' || c == '_' || c == '`' ||
	       c == '|' || c == '~';
}

/* A byte of a host name, into @name: 0, or -1 if no name has it there. */
EGRET_INLINE int egret_http_name_byte(struct egret_http *h, __u32 c, char *name)
{
	__u32 i = h->name_len;

	c = egret_http_lower(c);
	if (i >= EGRET_SNI_MAX)
		return -1;
	if (c == '.') {
		if (i == 0 || name[(i - 1) & 255] == '.')
			return -1;	/* an empty label */
	} else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		     c == '-' || c == '_')) {
		return -1;
	}
	name[i & 255] = (char)c;
	h->name_len = i + 1;
	return 0;
}

EGRET_INLINE void egret_http_name_begin(struct egret_http *h, char *name)
{
	__builtin_memset(name, 0, EGRET_HTTP_NAME_BUF);
	h->name_len = 0;
}

/* The name just read may be judged: not empty, no trailing dot. */
EGRET_INLINE int egret_http_name_end(struct egret_http *h, const char *name)
{
	if (h->name_len == 0 || name[(h->name_len - 1) & 255] == '.')
		return egret_http_refuse(h);
	return EGRET_HTTP_NAME;
}

/* The bodies and the field lines: they need the state above,
 * egret_http_byte() below needs them. */
#include "egret_http_body.h"
#include "egret_http_field.h"

/* The SP after the method: CONNECT is a tunnel, refused; POST, PUT and
 * PATCH may carry a body. */
EGRET_INLINE int egret_http_method_end(struct egret_http *h)
{
	__u32 pos = h->pos, k;

	for (k = HTTP_W_CONNECT; k <= HTTP_W_PATCH; k++) {
		if (!(h->fields & (1U << k)) || egret_http_word(k, pos) != 0)
			continue;
		if (k == HTTP_W_CONNECT)
			return egret_http_refuse(h);
		h->flags |= HTTP_BODY_OK;
	}
	h->state = HTTP_TARGET;
	return EGRET_HTTP_MORE;
}

/* Is the reader in a chunk line (or the CRLF after a chunk's data)? */
EGRET_INLINE int egret_http_in_chunk_line(const struct egret_http *h)
{
	return h->state >= HTTP_CHUNK_SIZE && h->state <= HTTP_CHUNK_END;
}

/* The end of a line (its LF; @crlf: a CR before it). */
EGRET_INLINE int egret_http_line_end(struct egret_http *h, const char *name, int crlf)
{
	/* A chunked body's lines end in CRLF: a server that ends a chunk
	 * line at a bare LF and one that reads on to the CRLF frame the
	 * chunks differently. */
	if (!crlf && (egret_http_in_chunk_line(h) || (h->flags & HTTP_TRAILERS)))
		return egret_http_refuse(h);
	if (egret_http_in_chunk_line(h))
		return egret_http_chunk_line_end(h);
	switch (h->state) {
	case HTTP_REQUEST:
		return EGRET_HTTP_MORE;		/* an empty line before it */
	case HTTP_VERSION:
		if (h->pos != 8)
			return egret_http_refuse(h);
		h->state = HTTP_FIELD;
		return (h->flags & HTTP_AUTHORITY) ? egret_http_name_end(h, name) :
						     EGRET_HTTP_MORE;
	case HTTP_FIELD:
		if (!(h->flags & HTTP_TRAILERS))
			return egret_http_head_end(h);
		/* The end of the trailers, and of the chunked body. */
		h->state = HTTP_REQUEST;
		h->flags = 0;
		h->head = 0;
		return EGRET_HTTP_MORE;
	case HTTP_FIELD_VALUE:
		h->state = HTTP_FIELD;
		return EGRET_HTTP_MORE;
	case HTTP_HOST:
	case HTTP_HOST_PORT:
	case HTTP_HOST_TAIL:
		if (h->state == HTTP_HOST_PORT && h->pos == 0)
			return egret_http_refuse(h);
		h->state = HTTP_FIELD;
		return egret_http_name_end(h, name);
	case HTTP_LENGTH:
	case HTTP_LENGTH_TAIL:
		if (h->pos == 0)
			return egret_http_refuse(h);
		h->state = HTTP_FIELD;
		return EGRET_HTTP_MORE;
	case HTTP_TOKEN:
	case HTTP_TOKEN_TAIL:
		if (egret_http_word(h->fields, h->pos) != 0)
			return egret_http_refuse(h);	/* "", "chunk" */
		if (h->fields == HTTP_W_CHUNKED)
			h->flags |= HTTP_CHUNKED;
		h->state = HTTP_FIELD;
		return EGRET_HTTP_MORE;
	default:
		return egret_http_refuse(h);	/* HTTP/0.9, a field with no ':' */
	}
}

/* A byte of an absolute-form target's scheme, "http://" or "https://"
 * (@lc: lower-cased, the scheme is case-insensitive): at its end, the
 * authority begins. */
EGRET_INLINE int egret_http_scheme_byte(struct egret_http *h, __u32 lc, char *name)
{
	__u32 pos = h->pos;

	if (pos >= 8)
		return egret_http_refuse(h);
	if ((h->flags & HTTP_PLAIN) && egret_http_word(HTTP_W_HTTP, pos) != lc)
		h->flags &= ~HTTP_PLAIN;
	if ((h->flags & HTTP_HTTPS) && egret_http_word(HTTP_W_HTTPS, pos) != lc)
		h->flags &= ~HTTP_HTTPS;
	if (!(h->flags & (HTTP_PLAIN | HTTP_HTTPS)))
		return egret_http_refuse(h);
	h->pos = pos + 1;
	if (((h->flags & HTTP_PLAIN) && h->pos == 7) ||
	    ((h->flags & HTTP_HTTPS) && h->pos == 8)) {
		h->flags |= HTTP_AUTHORITY;
		h->state = HTTP_TARGET_HOST;
		egret_http_name_begin(h, name);
	}
	return EGRET_HTTP_MORE;
}

/* A byte of the authority: its host (judged at the line's end), then a
 * port after ':' (read, not judged); the path, the query or the SP after
 * the target ends it. */
EGRET_INLINE int egret_http_authority_byte(struct egret_http *h, __u32 c, char *name)
{
	__u32 pos = h->pos;

	if (c == ' ' || c == '/' || c == '?' || c == '#') {
		if (h->state == HTTP_TARGET_PORT && pos == 0)
			return egret_http_refuse(h);	/* "host:" */
		h->state = c == ' ' ? HTTP_VERSION : HTTP_TARGET_REST;
		h->pos = 0;
		return EGRET_HTTP_MORE;
	}
	if (h->state == HTTP_TARGET_HOST && c == ':') {
		h->state = HTTP_TARGET_PORT;
		h->pos = 0;
		return EGRET_HTTP_MORE;
	}
	if (h->state == HTTP_TARGET_PORT) {
		if (c < '0' || c > '9' || pos >= 5)
			return egret_http_refuse(h);
		h->pos = pos + 1;
		return EGRET_HTTP_MORE;
	}
	/* Userinfo ('@'), an IP literal ('['), anything else. */
	return egret_http_name_byte(h, c, name) < 0 ? egret_http_refuse(h) : EGRET_HTTP_MORE;
}

/* The request line, past the method. */
EGRET_INLINE int egret_http_target_byte(struct egret_http *h, __u32 c, char *name)
{
	__u32 lc = egret_http_lower(c), pos = h->pos;

	switch (h->state) {
	case HTTP_TARGET:
		h->pos = 0;
		if (c == '/') {
			h->state = HTTP_TARGET_REST;
		} else if (c == '*') {
			h->state = HTTP_TARGET_STAR;
		} else if (lc == 'h') {
			h->state = HTTP_TARGET_SCHEME;
			h->flags |= HTTP_PLAIN | HTTP_HTTPS;
			h->pos = 1;
		} else {
			return egret_http_refuse(h);
		}
		return EGRET_HTTP_MORE;
	case HTTP_TARGET_SCHEME:
		return egret_http_scheme_byte(h, lc, name);
	case HTTP_TARGET_HOST:
	case HTTP_TARGET_PORT:
		return egret_http_authority_byte(h, c, name);
	case HTTP_TARGET_REST:
		if (c == ' ') {
			h->state = HTTP_VERSION;
			h->pos = 0;
		} else if (c < 0x21 || c == 0x7f) {
			/* Visible bytes; raw UTF-8 too, which sloppy clients
			 * send and servers take (a path routes no tenant). */
			return egret_http_refuse(h);
		}
		return EGRET_HTTP_MORE;
	case HTTP_TARGET_STAR:
		if (c != ' ')
			return egret_http_refuse(h);
		h->state = HTTP_VERSION;
		h->pos = 0;
		return EGRET_HTTP_MORE;
	case HTTP_VERSION:
		/* "HTTP/1." then 0 or 1; the line's end checks the length. */
		if (pos >= 8 || (pos < 7 && egret_http_word(HTTP_W_VERSION, pos) != c) ||
		    (pos == 7 && c != '0' && c != '1'))
			return egret_http_refuse(h);
		if (pos == 7 && c == '0')
			h->flags |= HTTP_V10;
		h->pos = pos + 1;
		return EGRET_HTTP_MORE;
	}
	return egret_http_refuse(h);
}

/*
 * One byte of the stream, not in HTTP_BODY: EGRET_HTTP_MORE, NAME, HEAD
 * or REFUSE (egret_http.h's top comment). @name: EGRET_HTTP_NAME_BUF
 * bytes, where the name being read is kept between calls (the pin key's
 * name, in BPF).
 */
EGRET_INLINE int egret_http_byte(struct egret_http *h, __u32 c, char *name)
{
	if (h->state == HTTP_BODY_LINE)
		return egret_http_body_line(h, c);
	if (h->state == HTTP_REFUSED || h->state == HTTP_BODY)
		return egret_http_refuse(h);
	if (++h->head > EGRET_HTTP_HEAD_MAX)
		return egret_http_refuse(h);
	if (h->flags & HTTP_CR) {
		if (c != '\n')
			return egret_http_refuse(h);	/* a bare CR */
		h->flags &= ~HTTP_CR;
		return egret_http_line_end(h, name, 1);
	}
	if (c == '\r') {
		h->flags |= HTTP_CR;
		return EGRET_HTTP_MORE;
	}
	if (c == '\n')
		return egret_http_line_end(h, name, 0);
	if (egret_http_in_chunk_line(h))
		return egret_http_chunk_byte(h, c);
	switch (h->state) {
	case HTTP_REQUEST:
		h->state = HTTP_METHOD;
		h->pos = 0;
		h->flags = 0;
		h->fields = HTTP_METHODS;
		h->body = 0;
		/* fall through */
	case HTTP_METHOD:
		if (c == ' ' && h->pos)
			return egret_http_method_end(h);
		if (c < 'A' || c > 'Z' || h->pos >= 16)
			return egret_http_refuse(h);
		egret_http_field_byte(h, c);	/* the method candidates */
		h->pos++;
		return EGRET_HTTP_MORE;
	case HTTP_FIELD:
		if (c == ' ' || c == '\t' || c == ':')
			return egret_http_refuse(h);	/* obs-fold, no name */
		h->state = HTTP_FIELD_NAME;
		h->fields = (1U << HTTP_FIELDS) - 1;
		h->flags &= ~HTTP_UNDERSCORE;
		h->pos = 0;
		return egret_http_field_byte_in(h, c, name);
	case HTTP_FIELD_NAME:
	case HTTP_FIELD_VALUE:
	case HTTP_HOST:
	case HTTP_HOST_PORT:
	case HTTP_HOST_TAIL:
	case HTTP_LENGTH:
	case HTTP_LENGTH_TAIL:
	case HTTP_TOKEN:
	case HTTP_TOKEN_TAIL:
		return egret_http_field_byte_in(h, c, name);
	}
	return egret_http_target_byte(h, c, name);
}

#endif /* EGRET_HTTP_H */
