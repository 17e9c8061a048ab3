// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_http.c - the request reader Host pinning compiles into BPF
 * (include/egret_http.h, egret_http_field.h, egret_http_body.h), driven as
 * bpf/lib/http.h drives it: byte by byte, bodies and chunks stepped over by
 * count, the stream cut at every offset. What clients send is read and
 * every name reported; every shape a server could read differently is
 * refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <linux/types.h>

#include "egret.h"
#include "egret_http.h"

#define NAMES_MAX	16

/* What a stream read to: the names reported, in order, heads ended, and
 * whether (and after how many bytes) it was refused. */
struct reading {
	char names[NAMES_MAX][EGRET_HTTP_NAME_BUF];
	int nnames;
	int heads;
	int refused;		/* 1: refused */
	size_t refused_at;	/* the byte that refused it */
};

/* Feed @len bytes, in pieces of @cut bytes (0: whole), as segments
 * arrive: the state carries over between pieces, as socket storage does. */
static void read_stream(const char *s, size_t len, size_t cut, struct reading *r)
{
	struct egret_http h = {};
	char name[EGRET_HTTP_NAME_BUF] = {};
	size_t off = 0;

	memset(r, 0, sizeof(*r));
	while (off < len) {
		size_t end = cut ? off + cut : len;

		if (end > len)
			end = len;
		while (off < end) {
			int res;

			if (h.state == HTTP_BODY) {
				off += egret_http_skip(&h, (__u32)(end - off));
				continue;
			}
			res = egret_http_byte(&h, (__u8)s[off++], name);
			if (res == EGRET_HTTP_REFUSE) {
				assert_int_equal(h.reason, EGRET_REASON_NOT_HTTP);
				r->refused = 1;
				r->refused_at = off - 1;
				return;
			}
			if (res == EGRET_HTTP_NAME && r->nnames < NAMES_MAX) {
				assert_int_equal(strlen(name), h.name_len);
				memcpy(r->names[r->nnames++], name, sizeof(name));
			}
			if (res == EGRET_HTTP_HEAD)
				r->heads++;
		}
	}
}

/* Every cut gives the same reading as the whole stream. */
static void read_all_cuts(const char *s, struct reading *r)
{
	struct reading whole, piece;
	size_t len = strlen(s);

	read_stream(s, len, 0, &whole);
	for (size_t cut = 1; cut <= len; cut++) {
		read_stream(s, len, cut, &piece);
		assert_int_equal(piece.refused, whole.refused);
		assert_int_equal(piece.heads, whole.heads);
		assert_int_equal(piece.nnames, whole.nnames);
		for (int i = 0; i < whole.nnames; i++)
			assert_string_equal(piece.names[i], whole.names[i]);
	}
	*r = whole;
}

static void assert_names(const char *s, int heads, int nnames, ...)
{
	struct reading r;
	va_list ap;

	read_all_cuts(s, &r);
	if (r.refused)
		fail_msg("refused at byte %zu: %s", r.refused_at, s);
	assert_int_equal(r.heads, heads);
	assert_int_equal(r.nnames, nnames);
	va_start(ap, nnames);
	for (int i = 0; i < nnames; i++)
		assert_string_equal(r.names[i], va_arg(ap, const char *));
	va_end(ap);
}

static void assert_refused(const char *s)
{
	struct reading r;

	read_all_cuts(s, &r);
	if (!r.refused)
		fail_msg("not refused: %s", s);
}

/* Refused, by a byte of the first @at in @s, however the stream is cut:
 * the refusal meant, not another one on the way. */
static void assert_refused_in(const char *s, const char *at)
{
	const char *p = strstr(s, at);
	struct reading r;
	size_t from;

	assert_non_null(p);
	from = (size_t)(p - s);
	read_all_cuts(s, &r);
	if (!r.refused)
		fail_msg("not refused: %s", s);
	if (r.refused_at < from || r.refused_at >= from + strlen(at))
		fail_msg("refused at byte %zu, not in \"%s\" (from byte %zu): %s",
			 r.refused_at, at, from, s);
}

/* What clients send: apt, curl, pip's and git's plain-HTTP requests. */
static void clients(void **state)
{
	(void)state;
	assert_names("GET /debian/dists/bookworm/InRelease HTTP/1.1\r\n"
		     "Host: deb.debian.org\r\nCache-Control: max-age=0\r\n"
		     "Accept: text/*\r\nUser-Agent: Debian APT-HTTP/1.3 (2.6.1)\r\n\r\n",
		     1, 1, "deb.debian.org");
	assert_names("GET / HTTP/1.1\r\nHost: Mirror.Test:80\r\nUser-Agent: curl/7.88.1\r\n"
		     "Accept: */*\r\n\r\n", 1, 1, "mirror.test");
	assert_names("HEAD /x HTTP/1.0\nhost:\tmirror.test \t\n\n", 1, 1, "mirror.test");
	assert_names("OPTIONS * HTTP/1.1\r\nHost: a.b\r\n\r\n", 1, 1, "a.b");
	/* A path in raw UTF-8 (not percent-encoded), as sloppy clients send. */
	assert_names("GET /caf\xc3\xa9 HTTP/1.1\r\nHost: a.b\r\n\r\n", 1, 1, "a.b");
	/* Empty lines before a request line are skipped (RFC 9112, 2.2). */
	assert_names("\r\n\r\nGET / HTTP/1.1\r\nHost: a.b\r\n\r\n", 1, 1, "a.b");
	/* Field names of any length (longer than every word the reader
	 * compares), in any case; fields the reader does not judge. */
	assert_names("GET / HTTP/1.1\r\nHost: a.b\r\n"
		     "X-Amz-Server-Side-Encryption-Customer-Algorithm: AES256\r\n"
		     "Access-Control-Request-Headers-And-Then-Some-More: x\r\n\r\n",
		     1, 1, "a.b");
	/* Field names in any case; fields the reader does not judge. */
	assert_names("GET / HTTP/1.1\r\nhOsT: a.b\r\nX-Hostname: c.d\r\nHosts: e\r\n"
		     "Content-Type: text/plain; charset=\"utf-8\"\r\nX-Empty:\r\n\r\n",
		     1, 1, "a.b");
}

/* Every request of a connection: keep-alive, pipelined, with bodies
 * stepped over by count (a body is never read as requests). */
static void streams(void **state)
{
	(void)state;
	assert_names("GET /1 HTTP/1.1\r\nHost: a.test\r\n\r\n"
		     "GET /2 HTTP/1.1\r\nHost: b.test\r\n\r\n"
		     "HEAD /3 HTTP/1.1\r\nHost: c.test\r\n\r\n", 3, 3, "a.test", "b.test", "c.test");
	assert_names("POST /a HTTP/1.1\r\nHost: a.test\r\nContent-Length: 38\r\n\r\n"
		     "{\"host\":\"evil.test\",\"url\":\"http://x/\"}"
		     "GET / HTTP/1.1\r\nHost: b.test\r\n\r\n", 2, 2, "a.test", "b.test");
	assert_names("POST /a HTTP/1.1\r\nHost: a.test\r\nContent-Length: 0\r\n\r\n"
		     "GET / HTTP/1.1\r\nHost: b.test\r\n\r\n", 2, 2, "a.test", "b.test");
	assert_names("PUT /a HTTP/1.1\r\nContent-Length:  007 \r\nHost: a.test\r\n\r\n1234567"
		     "GET / HTTP/1.1\r\nHost: b.test\r\n\r\n", 2, 2, "a.test", "b.test");
	assert_names("PATCH /a HTTP/1.1\r\nHost: a.test\r\nContent-Length: 2\r\n\r\nab"
		     "GET / HTTP/1.1\r\nHost: b.test\r\n\r\n", 2, 2, "a.test", "b.test");
	/* Any method may say Content-Length: 0; CONNECTX is no CONNECT. */
	assert_names("GET / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 0\r\n\r\n"
		     "CONNECTX / HTTP/1.1\r\nHost: b.test\r\n\r\n", 2, 2, "a.test", "b.test");
}

/* Absolute-form: the authority is judged (RFC 9112 says a server uses it
 * over Host), and the Host too. */
static void absolute_form(void **state)
{
	(void)state;
	assert_names("GET http://evil.test/x HTTP/1.1\r\nHost: mirror.test\r\n\r\n",
		     1, 2, "evil.test", "mirror.test");
	assert_names("GET HTTPS://Evil.Test:8080?q HTTP/1.1\r\nHost: m.test\r\n\r\n",
		     1, 2, "evil.test", "m.test");
	assert_names("GET http://a.test HTTP/1.1\r\nHost: a.test\r\n\r\n", 1, 2,
		     "a.test", "a.test");
	assert_refused("GET http://user@evil.test/ HTTP/1.1\r\nHost: m.test\r\n\r\n");
	assert_refused("GET http://[2001:db8::1]/ HTTP/1.1\r\nHost: m.test\r\n\r\n");
	assert_refused("GET http:///x HTTP/1.1\r\nHost: m.test\r\n\r\n");
	assert_refused("GET http://a.test:/x HTTP/1.1\r\nHost: m.test\r\n\r\n");
	assert_refused("GET http://a.test./x HTTP/1.1\r\nHost: m.test\r\n\r\n");
	assert_refused("GET ftp://a.test/ HTTP/1.1\r\nHost: m.test\r\n\r\n");
	assert_refused("GET httpx://a.test/ HTTP/1.1\r\nHost: m.test\r\n\r\n");
	assert_refused("GET evil.test:80 HTTP/1.1\r\nHost: m.test\r\n\r\n");
}

/* What a server could read as another host, or as another request. */
static void refused(void **state)
{
	(void)state;
	/* No host, or two. */
	assert_refused("GET / HTTP/1.1\r\n\r\n");
	assert_refused("GET / HTTP/1.0\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nHost: a.test\r\nHost: evil.test\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nHost: a.test\r\nhost: a.test\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nHost:\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nHost: a.test, evil.test\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nHost: a.test evil.test\r\n\r\n");
	/* An IPv6 literal (an IPv4 one reads as a name, and no DNS answer
	 * taught it: the pin lookup refuses it). */
	assert_refused("GET / HTTP/1.1\r\nHost: [::1]\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nHost: a..test\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nHost: .a.test\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nHost: a.test.\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nHost: a.test:\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nHost: a.test:80x\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nHost: a.test:123456\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nHost: a\\test\r\n\r\n");
	/* Field names a server may read as Host, or not. */
	assert_refused("GET / HTTP/1.1\r\nHost : evil.test\r\nHost: a.test\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\n Host: evil.test\r\nHost: a.test\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nHost: a.test\r\n evil.test\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nHost: a.test\r\n\tx\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\n: x\r\nHost: a.test\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nNoColon\r\nHost: a.test\r\n\r\n");
	/* Bare CR, NUL, control bytes. */
	assert_refused("GET / HTTP/1.1\r\nHost: a.test\rHost: evil.test\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nX: a\rb\r\nHost: a.test\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nX: \x01\r\nHost: a.test\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nX: \x7f\r\nHost: a.test\r\n\r\n");
	/* Bodies egret cannot follow by count, and other protocols. */
	assert_refused("POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx");
	assert_refused("POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1, 1\r\n\r\nx");
	assert_refused("POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: -1\r\n\r\n");
	assert_refused("POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 0x10\r\n\r\n");
	assert_refused("POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length:\r\n\r\n");
	assert_refused("POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 4294967296\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nHost: a.test\r\nUpgrade: h2c\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nHost: a.test\r\nupgrade: websocket\r\n\r\n");
	assert_refused("CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n");
	/* A body only on POST, PUT and PATCH: servers disagree on whether a
	 * GET's Content-Length frames a body (a "0.CL" desync). */
	assert_refused("GET / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\n\r\nhello");
	assert_refused("HEAD / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1\r\n\r\nx");
	assert_refused("POSTX / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1\r\n\r\nx");
	assert_refused("POS / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1\r\n\r\nx");
	assert_refused("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
	/* Headers front ends take the host from. */
	assert_refused("GET / HTTP/1.1\r\nHost: a.test\r\nX-Forwarded-Host: evil.test\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nHost: a.test\r\nForwarded: host=evil.test\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nHost: a.test\r\nX-Host: evil.test\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nHost: a.test\r\nX-Original-Host: evil.test\r\n\r\n");
	/* Request lines egret does not read. */
	assert_refused("GET /\r\n\r\n");			/* HTTP/0.9 */
	assert_refused("GET / HTTP/1.2\r\nHost: a.test\r\n\r\n");
	assert_refused("GET / HTTP/1.10\r\nHost: a.test\r\n\r\n");
	assert_refused("GET / http/1.1\r\nHost: a.test\r\n\r\n");
	assert_refused("GET  / HTTP/1.1\r\nHost: a.test\r\n\r\n");
	assert_refused("GET /\t HTTP/1.1\r\nHost: a.test\r\n\r\n");
	assert_refused("get / HTTP/1.1\r\nHost: a.test\r\n\r\n");
	assert_refused("GET x HTTP/1.1\r\nHost: a.test\r\n\r\n");
	assert_refused("GET *x HTTP/1.1\r\nHost: a.test\r\n\r\n");
	assert_refused("\x16\x03\x01\x00\x05hello");		/* TLS on port 80 */
	assert_refused("SSH-2.0-OpenSSH_9.2\r\n");
	/* A second request after a good one, in the same stream. */
	assert_refused("GET / HTTP/1.1\r\nHost: a.test\r\n\r\nGET / HTTP/1.1\r\n\r\n");
	assert_refused("GET / HTTP/1.1\r\nHost: a.test\r\n\r\nhello");
}

/* A head is at most EGRET_HTTP_HEAD_MAX bytes; the count starts again
 * with each request. */
static void head_limit(void **state)
{
	static char big[EGRET_HTTP_HEAD_MAX + 256];
	struct reading r;
	size_t n;

	(void)state;
	n = (size_t)snprintf(big, sizeof(big), "GET / HTTP/1.1\r\nHost: a.test\r\nX: ");
	memset(big + n, 'x', EGRET_HTTP_HEAD_MAX - n - 4);
	memcpy(big + EGRET_HTTP_HEAD_MAX - 4, "\r\n\r\n", 5);
	read_stream(big, strlen(big), 0, &r);
	assert_false(r.refused);
	assert_int_equal(r.heads, 1);
	memcpy(big + EGRET_HTTP_HEAD_MAX - 4, "x\r\n\r\n", 6);
	read_stream(big, strlen(big), 0, &r);
	assert_true(r.refused);
	assert_int_equal(r.refused_at, EGRET_HTTP_HEAD_MAX);
}

/* A name of EGRET_SNI_MAX bytes is read whole; one more is refused. */
static void name_limit(void **state)
{
	char req[600], name[EGRET_SNI_MAX + 2];
	struct reading r;

	(void)state;
	memset(name, 'a', sizeof(name));
	for (int i = 63; i < EGRET_SNI_MAX; i += 64)
		name[i] = '.';
	name[EGRET_SNI_MAX] = '\0';
	snprintf(req, sizeof(req), "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", name);
	read_stream(req, strlen(req), 0, &r);
	assert_false(r.refused);
	assert_string_equal(r.names[0], name);
	name[EGRET_SNI_MAX] = 'a';
	name[EGRET_SNI_MAX + 1] = '\0';
	snprintf(req, sizeof(req), "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", name);
	read_stream(req, strlen(req), 0, &r);
	assert_true(r.refused);
}

/* A shorter name after a longer one leaves none of the longer's bytes
 * in the buffer (the pin key compares all of it). */
static void name_buffer(void **state)
{
	struct egret_http h = {};
	char name[EGRET_HTTP_NAME_BUF];
	const char *s = "GET http://a-long-name.test/ HTTP/1.1\r\nHost: b.test\r\n\r\n";
	int res = 0;

	(void)state;
	memset(name, 'z', sizeof(name));
	for (const char *p = s; *p && res != EGRET_HTTP_HEAD; p++) {
		res = egret_http_byte(&h, (__u8)*p, name);
		assert_int_not_equal(res, EGRET_HTTP_REFUSE);
	}
	assert_string_equal(name, "b.test");
	for (size_t i = strlen("b.test"); i < sizeof(name); i++)
		assert_int_equal(name[i], 0);
}

/* ---- bodies: counted, chunked, behind Expect ------------------------- */

#define CHUNKED_HEAD	"POST /up HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
#define NEXT_REQUEST	"GET / HTTP/1.1\r\nHost: b.test\r\n\r\n"

/* A request whose Transfer-Encoding is @value, then an empty chunked body. */
static void te_refused(const char *value, const char *at)
{
	char s[256];

	snprintf(s, sizeof(s), "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding:%s\r\n\r\n"
		 "0\r\n\r\n", value);
	assert_refused_in(s, at);
}

/* A chunked request whose body is @body, refused in @at. */
static void chunks_refused(const char *body, const char *at)
{
	char s[512];

	snprintf(s, sizeof(s), "%s%s", CHUNKED_HEAD, body);
	assert_refused_in(s, at);
}

/* Chunked bodies are followed chunk by chunk: the next request is found
 * where a server finds it, whatever the chunks hold. */
static void chunked(void **state)
{
	(void)state;
	assert_names(CHUNKED_HEAD "5\r\nhello\r\n0\r\n\r\n" NEXT_REQUEST, 2, 2, "a.test", "b.test");
	/* What curl sends for `--data-binary @-` with the header set. */
	assert_names("POST /up HTTP/1.1\r\nHost: a.test\r\nUser-Agent: curl/7.88.1\r\n"
		     "Accept: */*\r\nTransfer-Encoding: chunked\r\n"
		     "Content-Type: application/x-www-form-urlencoded\r\n"
		     "Expect: 100-continue\r\n\r\n"
		     "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n" NEXT_REQUEST,
		     2, 2, "a.test", "b.test");
	/* Chunk data is data: a request in it, or a last chunk, is stepped
	 * over by count. */
	assert_names(CHUNKED_HEAD "23\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n\r\n"
		     "a\r\n0\r\n\r\nxxxxx\r\n0\r\n\r\n" NEXT_REQUEST, 2, 2, "a.test", "b.test");
	/* Hex in either case, leading zeros up to 8 digits, chunks of a
	 * byte, the last chunk as "00". */
	assert_names(CHUNKED_HEAD "A\r\n0123456789\r\n0000000a\r\n0123456789\r\n"
		     "1\r\na\r\n1\r\nb\r\n1F\r\n0123456789abcdef0123456789abcde\r\n"
		     "00\r\n\r\n" NEXT_REQUEST, 2, 2, "a.test", "b.test");
	/* Extensions: names, token and quoted values, a quoted-pair. */
	assert_names(CHUNKED_HEAD "5;a\r\nhello\r\n5;a=b;c=\"d\\\"e;f=g\"\r\nhello\r\n"
		     "5;name=\"\"\r\nhello\r\n0;last=1\r\n\r\n" NEXT_REQUEST,
		     2, 2, "a.test", "b.test");
	/* Trailers: field lines up to the empty line. */
	assert_names(CHUNKED_HEAD "5\r\nhello\r\n0\r\nX-Checksum: sha256=abc\r\n"
		     "Server-Timing: x;dur=1\r\nX-Empty:\r\n\r\n" NEXT_REQUEST,
		     2, 2, "a.test", "b.test");
	/* PUT and PATCH; OWS around the value; two chunked requests in a
	 * row; a chunk larger than what was sent so far. */
	assert_names("PUT /f HTTP/1.1\r\nTransfer-Encoding: \tchunked \r\nHost: a.test\r\n\r\n"
		     "1\r\nx\r\n0\r\n\r\n"
		     "PATCH /f HTTP/1.1\r\nHost: b.test\r\ntransfer-encoding:chunked\r\n\r\n"
		     "ffffffff\r\n" NEXT_REQUEST, 2, 2, "a.test", "b.test");
	/* LF-only heads stay as they were; a chunked body's lines do not
	 * (chunked_refused). */
	assert_names("POST / HTTP/1.1\nHost: a.test\nTransfer-Encoding: chunked\n\n"
		     "2\r\nab\r\n0\r\n\r\n", 1, 1, "a.test");
}

/* Framing a server could read another way than egret: refused. */
static void chunked_refused(void **state)
{
	(void)state;
	/* Two framings (RFC 9112, 6.3: CL.TE and TE.CL), or one twice. */
	assert_refused_in("POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\n"
			  "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "Transfer-Encoding:");
	assert_refused_in("POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n"
			  "Content-Length: 5\r\n\r\n0\r\n\r\n", "Content-Length:");
	assert_refused_in("POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n"
			  "transfer-encoding: chunked\r\n\r\n0\r\n\r\n", "transfer-encoding:");
	/* Exactly "chunked", alone and last: anything else is a coding
	 * egret cannot frame, or one servers read differently. */
	te_refused(" Chunked", "Chunked");
	te_refused(" CHUNKED", "CHUNKED");
	te_refused(" chunked, chunked", ", chunked");
	te_refused(" gzip, chunked", "gzip");
	te_refused(" chunked, gzip", ", gzip");
	te_refused(" identity", "identity");
	te_refused(" xchunked", "xchunked");
	te_refused(" chunkedx", "x\r\n");
	te_refused(" chunked;q=1", ";q=1");
	te_refused(" chunk", "chunk\r\n");
	te_refused(" \"chunked\"", "\"chunked\"");
	te_refused("", ":\r\n");
	te_refused(" chunked x", " x\r\n");
	te_refused("\r\n chunked", "\r\n chunked");		/* obs-fold */
	assert_refused_in("POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding : chunked\r\n\r\n"
			  "0\r\n\r\n", "Encoding :");
	/* A chunked body on a method that takes none, or on HTTP/1.0. */
	assert_refused_in("GET / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
			  "0\r\n\r\n", "\r\n\r\n");
	assert_refused_in("HEAD / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
			  "0\r\n\r\n", "\r\n\r\n");
	assert_refused_in("POST / HTTP/1.0\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
			  "0\r\n\r\n", "\r\n\r\n");
	/* Chunk sizes: hex digits only, at most 8 of them (a 64-bit parser
	 * reads 0x10000000000000005 as 5). */
	chunks_refused("000000005\r\nhello\r\n0\r\n\r\n", "000000005");
	chunks_refused("100000000\r\n", "100000000");
	chunks_refused("10000000000000005\r\nhello\r\n0\r\n\r\n", "10000000000000005");
	chunks_refused("0x5\r\nhello\r\n0\r\n\r\n", "x5");
	chunks_refused("+5\r\nhello\r\n0\r\n\r\n", "+5");
	chunks_refused("-5\r\nhello\r\n0\r\n\r\n", "-5");
	chunks_refused(" 5\r\nhello\r\n0\r\n\r\n", " 5");
	chunks_refused("5 \r\nhello\r\n0\r\n\r\n", "5 ");
	chunks_refused("5\t\r\nhello\r\n0\r\n\r\n", "5\t");
	chunks_refused("5g\r\nhello\r\n0\r\n\r\n", "5g");
	chunks_refused("\r\n5\r\nhello\r\n0\r\n\r\n", "\r\n\r\n\r\n");
	/* Every line of a chunked body ends in CRLF. */
	chunks_refused("5\nhello\r\n0\r\n\r\n", "5\n");
	chunks_refused("5\r\nhello\n0\r\n\r\n", "hello\n");
	chunks_refused("5\r\nhello\r\n0\n\r\n", "0\n");
	chunks_refused("5\r\nhello\r\n0\r\n\n", "0\r\n\n");
	chunks_refused("5\r\nhello\r\n0\r\nX: y\n\r\n", "y\n");
	chunks_refused("5\rhello\r\n0\r\n\r\n", "5\rh");
	/* The CRLF after a chunk's data is that CRLF, nothing else. */
	chunks_refused("5\r\nhelloXX0\r\n\r\n", "XX");
	chunks_refused("5\r\nhello\r0\r\n\r\n", "\r0");
	chunks_refused("5\r\nhello\r\n\r\n0\r\n\r\n", "hello\r\n\r\n");
	chunks_refused("3\r\nhello\r\n0\r\n\r\n", "lo");
	/* Extensions: no white space anywhere, no empty name or value, no
	 * unclosed or multi-line quoted string, visible bytes only. */
	chunks_refused("5;\r\nhello\r\n0\r\n\r\n", ";\r\n");
	chunks_refused("5;;a\r\nhello\r\n0\r\n\r\n", ";;");
	chunks_refused("5;=b\r\nhello\r\n0\r\n\r\n", ";=");
	chunks_refused("5;a=\r\nhello\r\n0\r\n\r\n", "=\r\n");
	chunks_refused("5;a==b\r\nhello\r\n0\r\n\r\n", "==");
	chunks_refused("5;a b\r\nhello\r\n0\r\n\r\n", " b");
	chunks_refused("5 ;a\r\nhello\r\n0\r\n\r\n", " ;");
	chunks_refused("5; a\r\nhello\r\n0\r\n\r\n", "; a");
	chunks_refused("5;a =b\r\nhello\r\n0\r\n\r\n", " =");
	chunks_refused("5;a= b\r\nhello\r\n0\r\n\r\n", " b");
	chunks_refused("5;a=\"b c\"\r\nhello\r\n0\r\n\r\n", "b c");
	chunks_refused("5;a=\"b\r\nhello\r\n0\r\n\r\n", "\"b\r\n");
	chunks_refused("5;a=\"b\\\r\nhello\r\n0\r\n\r\n", "\\\r\n");
	chunks_refused("5;a=\"b\\ \"\r\nhello\r\n0\r\n\r\n", "\\ ");
	chunks_refused("5;a=b\"c\"\r\nhello\r\n0\r\n\r\n", "\"c");
	chunks_refused("5;a=\"b\"c\r\nhello\r\n0\r\n\r\n", "\"c");
	chunks_refused("5;a=\"\x80\"\r\nhello\r\n0\r\n\r\n", "\x80");
	chunks_refused("5;a=\"\x7f\"\r\nhello\r\n0\r\n\r\n", "\x7f");
	chunks_refused("5;a=\"\x01\"\r\nhello\r\n0\r\n\r\n", "\x01");
	chunks_refused("5;a/b\r\nhello\r\n0\r\n\r\n", "/b");
	/* A bare LF in an extension: a server that ends the line there
	 * reads "GET ..." as the chunk's data, or as its next request. */
	chunks_refused("5;a\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n\r\nhello\r\n0\r\n\r\n",
		       "a\n");
	/* Trailers: none that egret reads in a head (a server may merge
	 * trailers into it), none a server could take for a request line. */
	chunks_refused("0\r\nHost: evil.test\r\n\r\n", "Host: evil");
	chunks_refused("0\r\nContent-Length: 5\r\n\r\n", "Content-Length:");
	chunks_refused("0\r\ntransfer-encoding: chunked\r\n\r\n", "transfer-encoding:");
	chunks_refused("0\r\nExpect: 100-continue\r\n\r\n", "Expect:");
	chunks_refused("0\r\nUpgrade: h2c\r\n\r\n", "Upgrade:");
	chunks_refused("0\r\nX-Forwarded-Host: evil.test\r\n\r\n", "X-Forwarded-Host:");
	chunks_refused("0\r\nX_Forwarded_Host: evil.test\r\n\r\n", "X_Forwarded_Host:");
	chunks_refused("0\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n", "GET ");
	chunks_refused("0\r\nX: GET http://evil.test/ HTTP/1.1\r\n\r\n", "HTTP/1.1\r\n\r\n");
	chunks_refused("0\r\nx: get / http/1.1\r\n\r\n", "http/");
	chunks_refused("0\r\nX: a\r\n b\r\n\r\n", "\r\n b");
	chunks_refused("0\r\nNoColon\r\n\r\n", "NoColon\r\n");
	chunks_refused("0\r\nX: a\rb\r\n\r\n", "\rb");
	chunks_refused("0\r\nX: \x01\r\n\r\n", "\x01");
	/* What follows a chunked body is a request like any other. */
	chunks_refused("0\r\n\r\nGET / HTTP/1.1\r\nHost: a.test\r\n\r\nhello", "hello");
}

/* Expect: 100-continue frames nothing: the body that follows is read as
 * any other. Anything but that one expectation is refused. */
static void expect(void **state)
{
	(void)state;
	/* curl -T FILE: a counted body after the head. */
	assert_names("PUT /f HTTP/1.1\r\nHost: a.test\r\nUser-Agent: curl/7.88.1\r\n"
		     "Accept: */*\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"
		     "hello" NEXT_REQUEST, 2, 2, "a.test", "b.test");
	assert_names("POST /f HTTP/1.1\r\nExpect:  100-continue \t\r\nContent-Length: 5\r\n"
		     "Host: a.test\r\n\r\nhello" NEXT_REQUEST, 2, 2, "a.test", "b.test");
	assert_names("POST /f HTTP/1.0\r\nHost: a.test\r\nexpect: 100-continue\r\n"
		     "Content-Length: 5\r\n\r\nhello" NEXT_REQUEST, 2, 2, "a.test", "b.test");
	/* Without a body it asks for nothing a server could misread. */
	assert_names("GET / HTTP/1.1\r\nHost: a.test\r\nExpect: 100-continue\r\n\r\n"
		     NEXT_REQUEST, 2, 2, "a.test", "b.test");
	/* One expectation, exactly, once. */
	assert_refused_in("PUT / HTTP/1.1\r\nHost: a.test\r\nExpect: 100-Continue\r\n"
			  "Content-Length: 1\r\n\r\nx", "Continue");
	assert_refused_in("PUT / HTTP/1.1\r\nHost: a.test\r\nExpect: 100-continue, x\r\n"
			  "Content-Length: 1\r\n\r\nx", ", x");
	assert_refused_in("PUT / HTTP/1.1\r\nHost: a.test\r\nExpect: y 100-continue\r\n"
			  "Content-Length: 1\r\n\r\nx", "y 100");
	assert_refused_in("PUT / HTTP/1.1\r\nHost: a.test\r\nExpect: 100-continued\r\n"
			  "Content-Length: 1\r\n\r\nx", "d\r\n");
	assert_refused_in("PUT / HTTP/1.1\r\nHost: a.test\r\nExpect: 100\r\n"
			  "Content-Length: 1\r\n\r\nx", "100\r\n");
	assert_refused_in("PUT / HTTP/1.1\r\nHost: a.test\r\nExpect:\r\n"
			  "Content-Length: 1\r\n\r\nx", "Expect:\r\n");
	assert_refused_in("PUT / HTTP/1.1\r\nHost: a.test\r\nExpect: 100-continue\r\n"
			  "expect: 100-continue\r\nContent-Length: 1\r\n\r\nx", "expect:");
	assert_refused_in("PUT / HTTP/1.1\r\nHost: a.test\r\nExpect:\r\n 100-continue\r\n"
			  "Content-Length: 1\r\n\r\nx", "Expect:\r\n");
}

/* A counted body whose first line holds "HTTP/" begins like a request: a
 * server that answered before the body (an Expect, an early error) and
 * did not read it reads that request next. Refused; any other body is
 * stepped over by count. */
static void body_first_line(void **state)
{
	(void)state;
	assert_refused_in("PUT / HTTP/1.1\r\nHost: a.test\r\nExpect: 100-continue\r\n"
			  "Content-Length: 35\r\n\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n",
			  "HTTP/1.1\r\nHost: evil");
	assert_refused_in("POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 39\r\n\r\n"
			  "\r\n \t\r\nget http://evil.test/ http/1.1\r\n\r\n", "http/");
	assert_refused_in("POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 18\r\n\r\n"
			  "xx\rGET / HTTP/1.0\n", "HTTP/1.0");
	/* The first hidden request naming the allowed host changes nothing:
	 * the next could name any. */
	assert_refused_in("POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 66\r\n\r\n"
			  "GET / HTTP/1.1\r\nHost: a.test\r\n\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n",
			  "HTTP/1.1\r\nHost: a.test\r\n\r\nGET");
	/* "HTTP/" whole only: "HTTP" at the body's end, "http:/" pass. */
	assert_names("POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 4\r\n\r\nHTTP"
		     NEXT_REQUEST, 2, 2, "a.test", "b.test");
	assert_refused_in("POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\n\r\nHTTP/"
			  NEXT_REQUEST, "/GET");
	assert_names("POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 21\r\n\r\n"
		     "url=http://a.test/x?y" NEXT_REQUEST, 2, 2, "a.test", "b.test");
	assert_names("POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 12\r\n\r\n"
		     "hhttphttp:/h" NEXT_REQUEST, 2, 2, "a.test", "b.test");
	/* Only the first line: a server finds no request in "hello". */
	assert_names("POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 41\r\n\r\n"
		     "hello\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n" NEXT_REQUEST,
		     2, 2, "a.test", "b.test");
	/* A body of white space only; binary bodies. */
	assert_names("POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 4\r\n\r\n\r\n\r\n"
		     NEXT_REQUEST, 2, 2, "a.test", "b.test");
	assert_names("PUT / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 12\r\n\r\n"
		     "\x89PNG\r\n\x1a\n\x01\x02\x03\xff" NEXT_REQUEST, 2, 2, "a.test", "b.test");
}

/* A field egret reads, spelt with '_' for '-': some servers fold it
 * (CGI's HTTP_X_FORWARDED_HOST), some do not. */
static void underscore(void **state)
{
	(void)state;
	assert_refused_in("POST / HTTP/1.1\r\nHost: a.test\r\nTransfer_Encoding: chunked\r\n"
			  "Content-Length: 5\r\n\r\n0\r\n\r\n", "Transfer_Encoding:");
	assert_refused_in("POST / HTTP/1.1\r\nHost: a.test\r\nContent_Length: 5\r\n\r\nhello",
			  "Content_Length:");
	assert_refused_in("GET / HTTP/1.1\r\nHost: a.test\r\nX_Forwarded-Host: evil.test\r\n\r\n",
			  "X_Forwarded-Host:");
	assert_refused_in("GET / HTTP/1.1\r\nHost: a.test\r\nX-Forwarded_Host: evil.test\r\n\r\n",
			  "X-Forwarded_Host:");
	assert_refused_in("GET / HTTP/1.1\r\nHost: a.test\r\nX_Host: evil.test\r\n\r\n",
			  "X_Host:");
	/* Fields egret does not read may have one. */
	assert_names("GET / HTTP/1.1\r\nHost: a.test\r\nX_Custom: 1\r\nAccept_Language: x\r\n"
		     "Host_Name: evil.test\r\n\r\n", 1, 1, "a.test");
}

/* Reading a stream whole and cut in a few ways (the long ones: every cut
 * would be quadratic). */
static void read_some_cuts(const char *s, size_t len, struct reading *r)
{
	static const size_t cuts[] = { 1, 7, 4096 };
	struct reading piece;

	read_stream(s, len, 0, r);
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		read_stream(s, len, cuts[i], &piece);
		assert_int_equal(piece.refused, r->refused);
		assert_int_equal(piece.refused_at, r->refused_at);
		assert_int_equal(piece.heads, r->heads);
	}
}

/* The reader's state stays bounded: a chunk line and a trailer section
 * are at most EGRET_HTTP_HEAD_MAX bytes each, the count starting again
 * with each line; a counted body's first line is read for at most
 * EGRET_HTTP_LINE_MAX bytes. */
/* A chunked request whose first chunk line (@trailers: trailer section)
 * is @len bytes, CRLF included, then NEXT_REQUEST, into @buf; its length. */
static size_t long_chunk_lines(char *buf, size_t len, int trailers)
{
	const size_t head = strlen(CHUNKED_HEAD);
	size_t n = head;

	memcpy(buf, CHUNKED_HEAD, head);
	if (trailers) {
		memcpy(buf + n, "0\r\nX: ", 6);	/* the section: from "X" */
		memset(buf + n + 6, 'x', len - 7);
		n += len - 1;
		n += (size_t)sprintf(buf + n, "\r\n\r\n%s", NEXT_REQUEST);
	} else {
		memcpy(buf + n, "5;a=", 4);
		memset(buf + n + 4, 'x', len - 6);
		n += len - 2;
		n += (size_t)sprintf(buf + n, "\r\nhello\r\n0\r\n\r\n%s", NEXT_REQUEST);
	}
	return n;
}

static void body_limits(void **state)
{
	static char big[4 * EGRET_HTTP_LINE_MAX];
	const size_t head = strlen(CHUNKED_HEAD);
	struct reading r;
	size_t n;

	(void)state;
	/* A chunk line, or a trailer section, of EGRET_HTTP_HEAD_MAX bytes,
	 * CRLFs included; one byte more is refused at that byte. */
	for (int trailers = 0; trailers < 2; trailers++) {
		n = long_chunk_lines(big, EGRET_HTTP_HEAD_MAX, trailers);
		read_some_cuts(big, n, &r);
		assert_false(r.refused);
		assert_int_equal(r.heads, 2);
		n = long_chunk_lines(big, EGRET_HTTP_HEAD_MAX + 1, trailers);
		read_some_cuts(big, n, &r);
		assert_true(r.refused);
		assert_int_equal(r.refused_at, head + (trailers ? 3 : 0) + EGRET_HTTP_HEAD_MAX);
	}

	/* Many chunks: their lines together far over EGRET_HTTP_HEAD_MAX. */
	memcpy(big, CHUNKED_HEAD, head);
	for (n = head; n + 64 < sizeof(big); n += 6)
		memcpy(big + n, "1\r\na\r\n", 6);
	n += (size_t)sprintf(big + n, "0\r\n\r\n%s", NEXT_REQUEST);
	read_some_cuts(big, n, &r);
	assert_false(r.refused);
	assert_int_equal(r.heads, 2);

	/* A first line longer than EGRET_HTTP_LINE_MAX is read that far:
	 * "HTTP/" ending at its last byte is refused, one byte later not. */
	for (int late = 0; late < 2; late++) {
		size_t body = EGRET_HTTP_LINE_MAX + 16;

		n = (size_t)sprintf(big, "POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: %zu\r\n\r\n",
				    body);
		memset(big + n, 'x', body);
		memcpy(big + n + EGRET_HTTP_LINE_MAX - 5 + late, "HTTP/", 5);
		n += body;
		n += (size_t)sprintf(big + n, "%s", NEXT_REQUEST);
		read_some_cuts(big, n, &r);
		assert_int_equal(r.refused, !late);
		assert_int_equal(r.heads, late ? 2 : 1);
	}
	/* White space before the first line: EGRET_HTTP_LINE_MAX bytes of
	 * it are read, then refused (a server skipping empty lines may find
	 * a request after them). */
	for (int more = 0; more < 2; more++) {
		size_t body = EGRET_HTTP_LINE_MAX + (size_t)more;

		n = (size_t)sprintf(big, "POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: %zu\r\n\r\n",
				    body);
		for (size_t i = 0; i < body; i++)
			big[n + i] = "\r\n \t"[i % 4];
		n += body;
		n += (size_t)sprintf(big + n, "%s", NEXT_REQUEST);
		read_some_cuts(big, n, &r);
		assert_int_equal(r.refused, more);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(clients),
		cmocka_unit_test(streams),
		cmocka_unit_test(absolute_form),
		cmocka_unit_test(refused),
		cmocka_unit_test(head_limit),
		cmocka_unit_test(name_limit),
		cmocka_unit_test(name_buffer),
		cmocka_unit_test(chunked),
		cmocka_unit_test(chunked_refused),
		cmocka_unit_test(expect),
		cmocka_unit_test(body_first_line),
		cmocka_unit_test(underscore),
		cmocka_unit_test(body_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
