/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * egret_http_field.h - the field lines of the request heads egret_http.h
 * reads: which field a name is (a word of egret_http_words, compared a
 * byte at a time as it comes), the values egret reads - Host's name,
 * Content-Length's digits, the one word Transfer-Encoding and Expect may
 * be - and the empty line that ends a head. Included by egret_http.h
 * (it needs the reader's state and names), never alone.
 */
#ifndef EGRET_HTTP_FIELD_H
#define EGRET_HTTP_FIELD_H

#ifndef EGRET_HTTP_H
#error "egret_http_field.h is included by egret_http.h"
#endif

/* A byte @c at h->pos of a field name (or, while the method is read, of
 * the method): drop the candidate words it rules out. A '_' is compared
 * as '-' and remembered (egret_http_field_colon()). */
EGRET_INLINE void egret_http_field_byte(struct egret_http *h, __u32 c)
{
	__u32 pos = h->pos, k;

	if (pos >= HTTP_WORD_LEN - 1) {
		h->fields = 0;
		return;
	}
	c = egret_http_lower(c);
	if (c == '_') {
		c = '-';
		h->flags |= HTTP_UNDERSCORE;
	}
	for (k = 0; k <= HTTP_W_PATCH; k++)
		if ((h->fields & (1U << k)) && egret_http_word(k, pos) != c)
			h->fields &= ~(1U << k);
}

/* The ':' after a field name: which field, if any, the name is. */
EGRET_INLINE int egret_http_field_colon(struct egret_http *h)
{
	__u32 pos = h->pos, k, match = HTTP_FIELDS;

	if (pos == 0)
		return egret_http_refuse(h);
	/* A name longer than every word read is none of them (its
	 * candidates were all dropped on the way). */
	for (k = 0; pos < HTTP_WORD_LEN && k < HTTP_FIELDS; k++)
		if ((h->fields & (1U << k)) && egret_http_word(k, pos) == 0)
			match = k;
	h->state = HTTP_FIELD_VALUE;
	h->pos = 0;
	if (match == HTTP_FIELDS)
		return EGRET_HTTP_MORE;
	/* A field egret reads, or refuses: never in trailers (a server may
	 * merge them into the head), never spelt with '_' (a server may read
	 * it as the field, another not). */
	if (match >= HTTP_F_REFUSED || (h->flags & (HTTP_TRAILERS | HTTP_UNDERSCORE)))
		return egret_http_refuse(h);
	switch (match) {
	case HTTP_F_HOST:
		if (++h->hosts > 1)
			return egret_http_refuse(h);	/* which one counts? */
		h->state = HTTP_HOST;
		h->name_len = 0;	/* its first byte clears the buffer */
		break;
	case HTTP_F_LENGTH:
	case HTTP_F_TE:
		/* One framing, said once: a second Content-Length, or both
		 * (RFC 9112, 6.3: the classic request smuggling). */
		if (h->flags & (HTTP_HAVE_LENGTH | HTTP_HAVE_TE))
			return egret_http_refuse(h);
		if (match == HTTP_F_LENGTH) {
			h->flags |= HTTP_HAVE_LENGTH;
			h->body = 0;
			h->state = HTTP_LENGTH;
		} else {
			h->flags |= HTTP_HAVE_TE;
			h->fields = HTTP_W_CHUNKED;
			h->state = HTTP_TOKEN;
		}
		break;
	default:	/* HTTP_F_EXPECT */
		if (h->flags & HTTP_HAVE_EXPECT)
			return egret_http_refuse(h);
		h->flags |= HTTP_HAVE_EXPECT;
		h->fields = HTTP_W_CONTINUE;
		h->state = HTTP_TOKEN;
		break;
	}
	return EGRET_HTTP_MORE;
}

/* The empty line after a head's fields: the head is whole, its body
 * follows. A body on a method that takes none is one some servers read
 * and some do not; HTTP/1.0 has no chunked coding (RFC 9112, 6.1: a 1.0
 * server may not know it). */
EGRET_INLINE int egret_http_head_end(struct egret_http *h)
{
	__u32 chunked = h->flags & HTTP_CHUNKED;

	if (h->hosts != 1 || ((h->body || chunked) && !(h->flags & HTTP_BODY_OK)) ||
	    (chunked && (h->flags & HTTP_V10)))
		return egret_http_refuse(h);
	if (chunked)
		h->state = HTTP_CHUNK_SIZE;
	else
		h->state = h->body ? HTTP_BODY_LINE : HTTP_REQUEST;
	h->flags = chunked;
	h->head = 0;
	h->hosts = 0;
	h->pos = 0;
	return EGRET_HTTP_HEAD;
}

/* A byte of Host's value (@ws: space or tab): its name, judged at the
 * line's end, then a port after ':' (read, not judged). */
EGRET_INLINE int egret_http_host_byte(struct egret_http *h, __u32 c, int ws, char *name)
{
	if (h->state == HTTP_HOST_PORT) {
		if (ws && h->pos) {
			h->state = HTTP_HOST_TAIL;
			return EGRET_HTTP_MORE;
		}
		if (c < '0' || c > '9' || h->pos >= 5)
			return egret_http_refuse(h);
		h->pos++;
		return EGRET_HTTP_MORE;
	}
	if (ws && h->name_len == 0)
		return EGRET_HTTP_MORE;		/* leading OWS */
	if (h->name_len == 0)
		egret_http_name_begin(h, name);
	if (ws) {
		h->state = HTTP_HOST_TAIL;
		return EGRET_HTTP_MORE;
	}
	if (c == ':' && h->name_len) {
		h->state = HTTP_HOST_PORT;
		h->pos = 0;
		return EGRET_HTTP_MORE;
	}
	return egret_http_name_byte(h, c, name) < 0 ? egret_http_refuse(h) : EGRET_HTTP_MORE;
}

/* A field line, past its first byte. */
EGRET_INLINE int egret_http_field_byte_in(struct egret_http *h, __u32 c, char *name)
{
	int ws = c == ' ' || c == '\t';

	switch (h->state) {
	case HTTP_FIELD_NAME:
		if (c == ':')
			return egret_http_field_colon(h);
		if (!egret_http_tchar(c))
			return egret_http_refuse(h);	/* "Host :", "Ho\0st:" */
		egret_http_field_byte(h, c);
		h->pos++;
		return EGRET_HTTP_MORE;
	case HTTP_FIELD_VALUE:
		/* Any visible byte, obs-text, space or tab. */
		if (c < 0x20 && c != '\t')
			return egret_http_refuse(h);
		if (c == 0x7f)
			return egret_http_refuse(h);
		/* A trailer line is what a server that does not read trailers
		 * reads as its next request line. */
		if ((h->flags & HTTP_TRAILERS) && egret_http_version_seen(h, c))
			return egret_http_refuse(h);
		return EGRET_HTTP_MORE;
	case HTTP_TOKEN:
		if (ws) {
			if (h->pos)
				h->state = HTTP_TOKEN_TAIL;
			return EGRET_HTTP_MORE;		/* OWS */
		}
		/* Exactly the word, in its case: "Chunked", "chunked, x",
		 * "gzip, chunked" are refused. */
		if (c == 0 || c != egret_http_word(h->fields, h->pos))
			return egret_http_refuse(h);
		h->pos++;
		return EGRET_HTTP_MORE;
	case HTTP_HOST:
	case HTTP_HOST_PORT:
		return egret_http_host_byte(h, c, ws, name);
	case HTTP_HOST_TAIL:
	case HTTP_LENGTH_TAIL:
	case HTTP_TOKEN_TAIL:
		return ws ? EGRET_HTTP_MORE : egret_http_refuse(h);
	case HTTP_LENGTH:
		if (ws) {
			if (h->pos)
				h->state = HTTP_LENGTH_TAIL;
			return EGRET_HTTP_MORE;
		}
		if (c < '0' || c > '9')
			return egret_http_refuse(h);	/* "1, 1", "-1", "0x10" */
		h->body = h->body * 10 + (c - '0');
		h->pos++;
		if (h->body >= EGRET_HTTP_BODY_MAX)
			return egret_http_refuse(h);
		return EGRET_HTTP_MORE;
	}
	return egret_http_refuse(h);
}

#endif /* EGRET_HTTP_FIELD_H */
