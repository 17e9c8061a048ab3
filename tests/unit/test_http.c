// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_http.c - the request reader Host pinning compiles into BPF
 * (include/egret_http.h), driven as bpf/lib/http.h drives it: byte by
 * byte, bodies stepped over by count, the stream cut at every offset.
 * What clients send is read and every name reported; every shape a
 * server could read differently is refused.
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
 * stepped over by count (a body never reads as a request). */
static void streams(void **state)
{
	(void)state;
	assert_names("GET /1 HTTP/1.1\r\nHost: a.test\r\n\r\n"
		     "GET /2 HTTP/1.1\r\nHost: b.test\r\n\r\n"
		     "HEAD /3 HTTP/1.1\r\nHost: c.test\r\n\r\n", 3, 3, "a.test", "b.test", "c.test");
	assert_names("POST /a HTTP/1.1\r\nHost: a.test\r\nContent-Length: 33\r\n\r\n"
		     "GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n"
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
	assert_refused("POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n");
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
	 * GET's Content-Length frames a body (a "0.CL" desync), and a server
	 * that answers an Expect early may not read the body it announced. */
	assert_refused("GET / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\n\r\nhello");
	assert_refused("HEAD / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1\r\n\r\nx");
	assert_refused("POSTX / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1\r\n\r\nx");
	assert_refused("POS / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1\r\n\r\nx");
	assert_refused("POST / HTTP/1.1\r\nHost: a.test\r\nExpect: 100-continue\r\n"
		       "Content-Length: 1\r\n\r\nx");
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
