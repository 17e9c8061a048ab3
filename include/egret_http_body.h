/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * egret_http_body.h - the bodies of the requests egret_http.h reads: where
 * each ends, so that the next request head is found exactly where the
 * server will find it. Included by egret_http.h (it needs the reader's
 * state), never alone.
 *
 * A counted body (Content-Length) is stepped over by count; first, its
 * first line is read for a request. A server that answers a request
 * before its body (invited to by `Expect: 100-continue`, or just early)
 * and then does not read that body reads it as its next request: a body
 * whose first line holds "HTTP/" begins like a request line, and is
 * refused. A chunked body (Transfer-Encoding: chunked, RFC 9112, 7.1) is
 * followed line by line: each chunk line (the size in hex, extensions),
 * each chunk's data by count, the CRLF after it, the last chunk and its
 * trailers. Every line of it must end in CRLF and hold no white space;
 * the trailers are field lines, none that egret reads in a head, none
 * holding "HTTP/". docs/SECURITY.md, "Host pinning", says why each.
 */
#ifndef EGRET_HTTP_BODY_H
#define EGRET_HTTP_BODY_H

#ifndef EGRET_HTTP_H
#error "egret_http_body.h is included by egret_http.h"
#endif

/* A chunk size's hex digits, leading zeros included: below 4 GiB, which
 * no parser's integer overflows. */
#define EGRET_HTTP_CHUNK_DIGITS	8U
/* A counted body's first line is read for a request up to this many
 * bytes, white space before it included (more of that is refused): no
 * front end reads a longer request line. */
#define EGRET_HTTP_LINE_MAX	65536U

/* "HTTP/", in any case, in the bytes of a line read so far: h->pos bytes
 * of it matched ('h' is in it only once, so a mismatch starts over at 0,
 * or at 1 on an 'h'). 1 once whole. */
EGRET_INLINE int egret_http_version_seen(struct egret_http *h, __u32 c)
{
	__u32 pos = h->pos, want = pos < 4 ? egret_http_word(HTTP_W_HTTP, pos) : '/';

	c = egret_http_lower(c);
	h->pos = c == want ? pos + 1 : c == 'h';
	return h->pos == 5;
}

/*
 * A byte of a counted body (h->body > 0 of it left) while its first line
 * is read. White space before the line is skipped as servers skip empty
 * lines before a request line; the line ends at its LF, or after
 * EGRET_HTTP_LINE_MAX bytes: the rest is stepped over by count.
 */
EGRET_INLINE int egret_http_body_line(struct egret_http *h, __u32 c)
{
	int ws = c == ' ' || c == '\t' || c == '\r' || c == '\n';

	h->body--;
	if (++h->head > EGRET_HTTP_LINE_MAX) {
		if (!(h->flags & HTTP_LINE))
			return egret_http_refuse(h);	/* all white space */
		goto done;
	}
	if (!(h->flags & HTTP_LINE)) {
		if (ws)
			goto next;
		h->flags |= HTTP_LINE;
	}
	if (c == '\n')
		goto done;
	if (egret_http_version_seen(h, c))
		return egret_http_refuse(h);	/* a request line */
next:
	if (h->body)
		return EGRET_HTTP_MORE;
done:
	h->state = h->body ? HTTP_BODY : HTTP_REQUEST;
	h->flags = 0;
	h->head = 0;
	h->pos = 0;
	return EGRET_HTTP_MORE;
}

/* A hex digit's value; 16 for any other byte. */
EGRET_INLINE __u32 egret_http_hex(__u32 c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = egret_http_lower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return 16;
}

/*
 * A byte of a chunk line (not its CRLF): chunk-size [ chunk-ext ], RFC
 * 9112, 7.1.1, without BWS: 1-8 hex digits, then any number of
 * ";" token [ "=" ( token / quoted-string ) ], the quoted string of
 * visible bytes and quoted-pairs. h->pos counts the digits, then the
 * bytes of the name or value being read.
 */
EGRET_INLINE int egret_http_chunk_byte(struct egret_http *h, __u32 c)
{
	__u32 pos = h->pos, d;

	switch (h->state) {
	case HTTP_CHUNK_SIZE:
		d = egret_http_hex(c);
		if (d < 16) {
			if (pos >= EGRET_HTTP_CHUNK_DIGITS)
				return egret_http_refuse(h);
			h->body = h->body << 4 | d;
			h->pos = pos + 1;
			return EGRET_HTTP_MORE;
		}
		if (c != ';' || pos == 0)
			return egret_http_refuse(h);	/* "5 ", "0x5", "" */
		h->state = HTTP_CHUNK_EXT_NAME;
		h->pos = 0;
		return EGRET_HTTP_MORE;
	case HTTP_CHUNK_EXT_NAME:
	case HTTP_CHUNK_EXT_VALUE:
		if (egret_http_tchar(c)) {
			h->pos = pos + 1;
			return EGRET_HTTP_MORE;
		}
		if (h->state == HTTP_CHUNK_EXT_VALUE && c == '"' && pos == 0) {
			h->state = HTTP_CHUNK_EXT_QUOTED;
			return EGRET_HTTP_MORE;
		}
		if (pos == 0 || (c != ';' && (c != '=' || h->state != HTTP_CHUNK_EXT_NAME)))
			return egret_http_refuse(h);
		h->state = c == '=' ? HTTP_CHUNK_EXT_VALUE : HTTP_CHUNK_EXT_NAME;
		h->pos = 0;
		return EGRET_HTTP_MORE;
	case HTTP_CHUNK_EXT_QUOTED:
		if (c == '"')
			h->state = HTTP_CHUNK_EXT_END;
		else if (c == '\\')
			h->state = HTTP_CHUNK_EXT_ESCAPE;
		else if (c <= 0x20 || c >= 0x7f)
			return egret_http_refuse(h);	/* no white space, no obs-text */
		return EGRET_HTTP_MORE;
	case HTTP_CHUNK_EXT_ESCAPE:
		if (c <= 0x20 || c >= 0x7f)
			return egret_http_refuse(h);
		h->state = HTTP_CHUNK_EXT_QUOTED;
		return EGRET_HTTP_MORE;
	case HTTP_CHUNK_EXT_END:
		if (c != ';')
			return egret_http_refuse(h);
		h->state = HTTP_CHUNK_EXT_NAME;
		h->pos = 0;
		return EGRET_HTTP_MORE;
	}
	return egret_http_refuse(h);	/* HTTP_CHUNK_END: only its CRLF */
}

/* A chunk line's CRLF: the chunk's data follows, or after the last chunk
 * (size 0) its trailers, read as field lines. */
EGRET_INLINE int egret_http_chunk_line_end(struct egret_http *h)
{
	switch (h->state) {
	case HTTP_CHUNK_SIZE:
	case HTTP_CHUNK_EXT_NAME:
	case HTTP_CHUNK_EXT_VALUE:
		if (h->pos == 0)
			return egret_http_refuse(h);	/* no digit, ";", "a=" */
		break;
	case HTTP_CHUNK_EXT_END:
		break;
	case HTTP_CHUNK_END:
		/* The CRLF after a chunk's data: the next chunk line. */
		h->state = HTTP_CHUNK_SIZE;
		h->head = 0;
		h->pos = 0;
		h->body = 0;
		return EGRET_HTTP_MORE;
	default:
		return egret_http_refuse(h);	/* an unclosed quoted string */
	}
	h->head = 0;
	h->pos = 0;
	if (h->body) {
		h->state = HTTP_BODY;
		return EGRET_HTTP_MORE;
	}
	h->state = HTTP_FIELD;
	h->flags |= HTTP_TRAILERS;
	return EGRET_HTTP_MORE;
}

/* In a body (HTTP_BODY): step over up to @avail of its bytes; how many.
 * A chunk's data is followed by its CRLF, a counted body by the next
 * request. */
EGRET_INLINE __u32 egret_http_skip(struct egret_http *h, __u32 avail)
{
	__u32 n = h->body < avail ? (__u32)h->body : avail;

	h->body -= n;
	if (h->body == 0)
		h->state = (h->flags & HTTP_CHUNKED) ? HTTP_CHUNK_END : HTTP_REQUEST;
	return n;
}

#endif /* EGRET_HTTP_BODY_H */
