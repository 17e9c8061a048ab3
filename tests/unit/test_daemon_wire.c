// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_daemon_wire.c - egret run <-> egretd messages: round trips, every refusal, limits. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "daemon/wire.h"

/* Large (a message is up to 64 KiB, a struct wire_msg more): static. */
static struct wire_msg msg, got;
static uint8_t buf[WIRE_MAX + 64], again[WIRE_MAX + 64];
static char err[256];
static char text[WIRE_MAX + 2];

/* A hand-made message, to say what the encoder never would. */
static struct raw {
	uint8_t b[WIRE_MAX + 64];
	size_t len;
} raw;

static void set16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void set32(uint8_t *p, uint32_t v)
{
	set16(p, (uint16_t)(v >> 16));
	set16(p + 2, (uint16_t)v);
}

static void raw_start(uint16_t type)
{
	memcpy(raw.b, "EGRT", 4);
	set16(raw.b + 4, WIRE_VERSION);
	set16(raw.b + 6, type);
	set32(raw.b + 8, 0);
	raw.len = WIRE_HEADER_LEN;
}

static void raw_field(uint16_t tag, const void *v, size_t len)
{
	assert_true(raw.len + 4 + len <= sizeof(raw.b));
	set16(raw.b + raw.len, tag);
	set16(raw.b + raw.len + 2, (uint16_t)len);
	memcpy(raw.b + raw.len + 4, v, len);
	raw.len += 4 + len;
	set32(raw.b + 8, (uint32_t)(raw.len - WIRE_HEADER_LEN));
}

static void raw_str(uint16_t tag, const char *s)
{
	raw_field(tag, s, strlen(s));
}

static void raw_u32(uint16_t tag, uint32_t v)
{
	uint8_t b[4];

	set32(b, v);
	raw_field(tag, b, 4);
}

/* @n bytes of @c after @prefix, in text[]. */
static char *fill(const char *prefix, char c, size_t n)
{
	size_t p = strlen(prefix);

	assert_true(p + n < sizeof(text));
	memcpy(text, prefix, p);
	memset(text + p, c, n);
	text[p + n] = '\0';
	return text;
}

static void accepted(const uint8_t *b, size_t len)
{
	int r = wire_decode(b, len, &got, err, sizeof(err));

	if (r < 0)
		fail_msg("refused (%d): %s", r, err);
}

/* Refused with @want and a reason holding @why; the message says nothing. */
static void refused(const uint8_t *b, size_t len, int want, const char *why)
{
	int r;

	err[0] = '\0';
	r = wire_decode(b, len, &got, err, sizeof(err));
	assert_int_equal(r, want);
	if (!strstr(err, why))
		fail_msg("reason \"%s\" lacks \"%s\"", err, why);
	assert_int_equal(got.type, WIRE_NONE);
}

static void raw_refused(int want, const char *why)
{
	refused(raw.b, raw.len, want, why);
}

static void raw_accepted(void)
{
	accepted(raw.b, raw.len);
}

/* A message of @type with the one field @tag (@len bytes of @v): refused. */
static void field_refused(uint16_t type, uint16_t tag, const void *v, size_t len,
			  const char *why)
{
	raw_start(type);
	raw_field(tag, v, len);
	raw_refused(-EBADMSG, why);
}

static void u32_refused(uint16_t type, uint16_t tag, uint32_t v, const char *why)
{
	uint8_t b[4];

	set32(b, v);
	field_refused(type, tag, b, sizeof(b), why);
}

static int encode(void)
{
	err[0] = '\0';
	return wire_encode(&msg, buf, sizeof(buf), err, sizeof(err));
}

static void encode_refused(int want, const char *why)
{
	assert_int_equal(encode(), want);
	if (!strstr(err, why))
		fail_msg("reason \"%s\" lacks \"%s\"", err, why);
}

/* Encode, decode, encode again: the same bytes both times. */
static int round_trip(void)
{
	int n = encode(), n2;

	if (n < 0)
		fail_msg("encode refused (%d): %s", n, err);
	accepted(buf, (size_t)n);
	assert_int_equal(got.type, msg.type);
	n2 = wire_encode(&got, again, sizeof(again), err, sizeof(err));
	assert_int_equal(n2, n);
	assert_memory_equal(again, buf, (size_t)n);
	return n;
}

/* msg as the least RUN there is: "true" in "/". */
static void run_min(void)
{
	memset(&msg, 0, offsetof(struct wire_msg, arena));
	msg.type = WIRE_RUN;
	msg.run.argc = 1;
	msg.run.argv[0] = "true";
	msg.run.cwd = "/";
}

static void run_set(char **argv, size_t argc, char **env, size_t envc, const char *cwd)
{
	run_min();
	msg.run.argc = argc;
	memcpy(msg.run.argv, argv, argc * sizeof(*argv));
	msg.run.envc = envc;
	memcpy(msg.run.env, env, envc * sizeof(*env));
	msg.run.cwd = cwd;
}

/* A minimal RUN, hand-made, with one @tag of @v in its place. */
static void raw_run_with(uint16_t tag, const char *v, size_t len)
{
	raw_start(WIRE_RUN);
	raw_field(WIRE_TAG_ARGV, tag == WIRE_TAG_ARGV ? v : "x", tag == WIRE_TAG_ARGV ? len : 1);
	if (tag == WIRE_TAG_ENV)
		raw_field(tag, v, len);
	raw_field(WIRE_TAG_CWD, tag == WIRE_TAG_CWD ? v : "/", tag == WIRE_TAG_CWD ? len : 1);
	if (tag > WIRE_TAG_CWD)
		raw_field(tag, v, len);
}

static void run_refused(uint16_t tag, const char *v, size_t len, const char *why)
{
	raw_run_with(tag, v, len);
	raw_refused(-EBADMSG, why);
}

static void test_exit_bytes(void **state)
{
	static const uint8_t want[] = {
		'E', 'G', 'R', 'T', 0, 1, 0, 5, 0, 0, 0, 8,	/* header, network order */
		0, 10, 0, 4, 0, 0, 0, 42,			/* STATUS 42 */
	};

	(void)state;
	msg.type = WIRE_EXIT;
	msg.exit.status = 42;
	assert_int_equal(round_trip(), sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
	assert_int_equal(got.exit.status, 42);
}

static void test_run_round_trip(void **state)
{
	static char *argv[] = { "sh", "", "-c", "echo \"$0\" 'x y'" };
	static char *env[] = { "PATH=/usr/bin:/bin", "EMPTY=", "A_1=a=b" };
	static const uint8_t first[] = { 0, 1, 0, 2, 's', 'h', 0, 1, 0, 0, 0, 1, 0, 2, '-', 'c' };

	(void)state;
	run_set(argv, 4, env, 3, "/home/miner/work tree");
	msg.run.repo = "acme/web.app";
	msg.run.nallow = 2;
	msg.run.allow[0] = "github.com:443";
	msg.run.allow[1] = "[2001:db8::1]:80-90";
	msg.run.audit = true;
	msg.run.pty = true;
	msg.run.noption = 3;
	msg.run.option[0] = "home=/tmp/h";
	msg.run.option[1] = "clean-env";
	msg.run.option[2] = "setenv=A=b c";
	msg.run.receipt = true;
	round_trip();
	assert_memory_equal(buf + WIRE_HEADER_LEN, first, sizeof(first));
	assert_int_equal(got.run.argc, 4);
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(got.run.argv[i], argv[i]);
	assert_null(got.run.argv[4]);
	assert_int_equal(got.run.envc, 3);
	for (size_t i = 0; i < 3; i++)
		assert_string_equal(got.run.env[i], env[i]);
	assert_null(got.run.env[3]);
	assert_string_equal(got.run.cwd, "/home/miner/work tree");
	assert_string_equal(got.run.repo, "acme/web.app");
	assert_int_equal(got.run.nallow, 2);
	assert_string_equal(got.run.allow[1], "[2001:db8::1]:80-90");
	assert_true(got.run.audit);
	assert_true(got.run.pty);
	assert_int_equal(got.run.noption, 3);
	assert_string_equal(got.run.option[1], "clean-env");
	assert_string_equal(got.run.option[2], "setenv=A=b c");
	assert_true(got.run.receipt);
	/* The strings are copies in the message's own arena. */
	assert_true(got.run.argv[0] >= got.arena && got.run.argv[0] < got.arena + WIRE_MAX);
}

static void test_run_minimal(void **state)
{
	(void)state;
	run_min();
	assert_int_equal(round_trip(), WIRE_HEADER_LEN + 4 + 4 + 4 + 1);
	assert_int_equal(got.run.argc, 1);
	assert_string_equal(got.run.argv[0], "true");
	assert_null(got.run.argv[1]);
	assert_int_equal(got.run.envc, 0);
	assert_null(got.run.env[0]);
	assert_null(got.run.repo);
	assert_int_equal(got.run.nallow, 0);
	assert_false(got.run.audit);
	assert_false(got.run.pty);
}

static void test_other_round_trips(void **state)
{
	(void)state;
	msg.type = WIRE_ATTACH;
	msg.attach.id = "a1b2c3d4e5f60718";
	assert_int_equal(round_trip(), WIRE_HEADER_LEN + 4 + 16);
	assert_string_equal(got.attach.id, "a1b2c3d4e5f60718");

	msg.type = WIRE_STARTED;
	msg.started.id = "job_7.retry-2";
	round_trip();
	assert_string_equal(got.started.id, "job_7.retry-2");

	msg.type = WIRE_SIGNAL;
	msg.signal.signo = 15;
	assert_int_equal(round_trip(), WIRE_HEADER_LEN + 8);
	assert_int_equal(buf[WIRE_HEADER_LEN + 7], 15);
	assert_int_equal(got.signal.signo, 15);

	msg.type = WIRE_ERROR;
	msg.error.text = "egret: --repo acme/x: no such repository in /etc/egret/policy.yaml";
	round_trip();
	assert_string_equal(got.error.text, msg.error.text);

	/* STATUS: both fields optional; an empty body is all attempts. */
	msg.type = WIRE_STATUS;
	msg.status.id = NULL;
	msg.status.json = false;
	assert_int_equal(round_trip(), WIRE_HEADER_LEN);
	assert_null(got.status.id);
	assert_false(got.status.json);
	msg.status.id = "a1b2c3d4e5f60718";
	msg.status.json = true;
	assert_int_equal(round_trip(), WIRE_HEADER_LEN + 4 + 16 + 4);
	assert_string_equal(got.status.id, "a1b2c3d4e5f60718");
	assert_true(got.status.json);

	assert_string_equal(wire_type_name(WIRE_STARTED), "STARTED");
	assert_string_equal(wire_type_name(WIRE_STATUS), "STATUS");
	assert_null(wire_type_name(WIRE_NONE));
	assert_null(wire_type_name(8));
}

/* An EXIT of 8 body bytes with one header word (at @off) changed to @v. */
static const struct header_case {
	size_t off;
	uint32_t v;
	const char *why;
} header_cases[] = {
	{ 0, 0x6567, "not an egret message" },		/* "egRT" */
	{ 2, 0x5255, "not an egret message" },		/* "EGRU" */
	{ 4, 2, "version 2, want 1" },
	{ 4, 0, "version 0, want 1" },
	{ 4, 0x0100, "version 256, want 1" },		/* 1, little-endian */
	{ 6, 0, "unknown type 0" },
	{ 6, 8, "unknown type 8" },
	{ 6, 0xffff, "unknown type 65535" },
	{ 8, 7, "body length 7, but 8 bytes follow" },
	{ 8, 9, "body length 9, but 8 bytes follow" },
	{ 8, 0x08000000, "body length 134217728, but 8 bytes follow" },
};

static void test_header_refused(void **state)
{
	(void)state;
	for (size_t n = 0; n < WIRE_HEADER_LEN; n++)
		refused((const uint8_t *)"EGRT\0\1\0\5\0\0\0\0", n, -EBADMSG, "truncated header");

	for (size_t i = 0; i < sizeof(header_cases) / sizeof(*header_cases); i++) {
		const struct header_case *c = &header_cases[i];

		raw_start(WIRE_EXIT);
		raw_u32(WIRE_TAG_STATUS, 0);
		raw_accepted();
		if (c->off == 8)
			set32(raw.b + c->off, c->v);
		else
			set16(raw.b + c->off, (uint16_t)c->v);
		raw_refused(-EBADMSG, c->why);
	}
	/* Trailing bytes: the body length is exactly what follows. */
	raw_start(WIRE_EXIT);
	raw_u32(WIRE_TAG_STATUS, 0);
	raw.b[raw.len++] = 0;
	raw_refused(-EBADMSG, "body length 8, but 9 bytes follow");
}

static void test_field_refused(void **state)
{
	(void)state;
	raw_start(WIRE_EXIT);
	raw_u32(WIRE_TAG_STATUS, 0);
	raw_u32(WIRE_TAG_MAX + 1, 0);
	raw_refused(-EBADMSG, "unknown tag 14");
	/* A known tag where its type has none. */
	raw_start(WIRE_EXIT);
	raw_u32(WIRE_TAG_STATUS, 0);
	raw_field(WIRE_TAG_OPTION, "umask=0", 7);
	raw_refused(-EBADMSG, "OPTION not allowed in EXIT");
	field_refused(WIRE_EXIT, 0, "", 0, "unknown tag 0");

	raw_start(WIRE_EXIT);
	raw_u32(WIRE_TAG_STATUS, 0);
	raw_str(WIRE_TAG_CWD, "/");
	raw_refused(-EBADMSG, "CWD not allowed in EXIT");
	field_refused(WIRE_RUN, WIRE_TAG_ID, "abc", strlen("abc"), "ID not allowed in RUN");

	raw_start(WIRE_EXIT);
	raw_u32(WIRE_TAG_STATUS, 0);
	raw_u32(WIRE_TAG_STATUS, 1);
	raw_refused(-EBADMSG, "STATUS given twice");
	raw_run_with(WIRE_TAG_CWD, "/a", 2);
	raw_str(WIRE_TAG_CWD, "/b");
	raw_refused(-EBADMSG, "CWD given twice");
	raw_run_with(WIRE_TAG_AUDIT, "", 0);
	raw_field(WIRE_TAG_AUDIT, "", 0);
	raw_refused(-EBADMSG, "AUDIT given twice");
	raw_run_with(WIRE_TAG_REPO, "a/b", 3);
	raw_field(WIRE_TAG_PTY, "", 0);
	raw_str(WIRE_TAG_REPO, "a/b");
	raw_refused(-EBADMSG, "REPO given twice");

	/* One spelling: tag order, a repeated field's items together. */
	raw_start(WIRE_RUN);
	raw_str(WIRE_TAG_CWD, "/");
	raw_str(WIRE_TAG_ARGV, "x");
	raw_refused(-EBADMSG, "ARGV after CWD (fields go in tag order)");
	raw_start(WIRE_RUN);
	raw_str(WIRE_TAG_ARGV, "x");
	raw_str(WIRE_TAG_ENV, "A=1");
	raw_str(WIRE_TAG_ARGV, "y");
	raw_str(WIRE_TAG_CWD, "/");
	raw_refused(-EBADMSG, "ARGV after ENV");
	raw_run_with(WIRE_TAG_PTY, "", 0);
	raw_field(WIRE_TAG_AUDIT, "", 0);
	raw_refused(-EBADMSG, "AUDIT after PTY");

	field_refused(WIRE_RUN, WIRE_TAG_CWD, "/", strlen("/"), "RUN without ARGV");
	field_refused(WIRE_RUN, WIRE_TAG_ARGV, "x", strlen("x"), "RUN without CWD");
	raw_start(WIRE_EXIT);
	raw_refused(-EBADMSG, "EXIT without STATUS");
	raw_start(WIRE_ATTACH);
	raw_refused(-EBADMSG, "ATTACH without ID");
	raw_start(WIRE_ERROR);
	raw_refused(-EBADMSG, "ERROR without TEXT");

	/* Fixed sizes are exact. */
	field_refused(WIRE_SIGNAL, WIRE_TAG_SIGNO, "\0\x0f", 2, "SIGNO: 2 bytes, want 4");
	field_refused(WIRE_SIGNAL, WIRE_TAG_SIGNO, "\0\0\0\0\0\0\0\x0f", 8, "SIGNO: 8 bytes, want 4");
	field_refused(WIRE_EXIT, WIRE_TAG_STATUS, "", 0, "STATUS: 0 bytes, want 4");
	run_refused(WIRE_TAG_AUDIT, "\1", 1, "AUDIT: 1 bytes, a flag has none");

	/* A field that runs past the body, a field header cut short. */
	raw_start(WIRE_EXIT);
	raw_u32(WIRE_TAG_STATUS, 0);
	set16(raw.b + WIRE_HEADER_LEN + 2, 5);
	raw_refused(-EBADMSG, "STATUS: 5 bytes, only 4 left");
	for (size_t n = 1; n < WIRE_FIELD_HEADER_LEN; n++) {
		raw_start(WIRE_EXIT);
		raw_u32(WIRE_TAG_STATUS, 0);
		memset(raw.b + raw.len, 0, n);
		raw.len += n;
		set32(raw.b + 8, (uint32_t)(raw.len - WIRE_HEADER_LEN));
		raw_refused(-EBADMSG, "truncated field header at byte 20");
	}
}

static void test_string_refused(void **state)
{
	(void)state;
	run_refused(WIRE_TAG_CWD, "/a\0b", 4, "CWD: holds a NUL byte");
	raw_start(WIRE_RUN);
	raw_str(WIRE_TAG_ARGV, "x");
	raw_field(WIRE_TAG_ARGV, "\0", 1);
	raw_str(WIRE_TAG_CWD, "/");
	raw_refused(-EBADMSG, "ARGV[1]: holds a NUL byte");

	run_refused(WIRE_TAG_ARGV, "", 0, "ARGV[0]: empty (it names COMMAND)");
	run_refused(WIRE_TAG_CWD, "", 0, "CWD: empty");
	run_refused(WIRE_TAG_ALLOW, "", 0, "ALLOW[0]: empty");
	run_refused(WIRE_TAG_ENV, "", 0, "ENV[0]: empty");
	run_refused(WIRE_TAG_REPO, "", 0, "REPO: empty");
	field_refused(WIRE_ATTACH, WIRE_TAG_ID, "", 0, "ID: empty");
	field_refused(WIRE_ERROR, WIRE_TAG_TEXT, "", 0, "TEXT: empty");

	/* Later arguments may be empty: "git commit -m ''". */
	raw_start(WIRE_RUN);
	raw_str(WIRE_TAG_ARGV, "x");
	raw_field(WIRE_TAG_ARGV, "", 0);
	raw_str(WIRE_TAG_CWD, "/");
	raw_accepted();
	assert_int_equal(got.run.argc, 2);
	assert_string_equal(got.run.argv[1], "");
}

static void test_value_refused(void **state)
{
	static const char *const bad_env[] = { "A", "=x", "1A=x", "A-B=1", "A.B=1", "A B=1",
					       "\xc3\xa9=1" };
	static const char *const bad_repo[] = { "noslash", "a/b/c", "/b", "a/", ".a/b", "a/.b",
						"a b/c", "a/b\n" };
	static const char *const bad_id[] = { "../x", ".x", "-x", "a/b", "a b", "x\x1b" };

	(void)state;
	for (size_t i = 0; i < sizeof(bad_env) / sizeof(*bad_env); i++) {
		run_refused(WIRE_TAG_ENV, bad_env[i], strlen(bad_env[i]), "ENV[0]: not NAME=VALUE");
	}
	raw_run_with(WIRE_TAG_ENV, "_a9=", 4);
	raw_accepted();
	assert_string_equal(got.run.env[0], "_a9=");

	run_refused(WIRE_TAG_CWD, "relative/dir", 12, "CWD: not an absolute path");

	for (size_t i = 0; i < sizeof(bad_repo) / sizeof(*bad_repo); i++) {
		run_refused(WIRE_TAG_REPO, bad_repo[i], strlen(bad_repo[i]), "REPO: not OWNER/NAME");
	}

	run_refused(WIRE_TAG_ALLOW, "a b", 3, "ALLOW[0]: not printable ASCII");
	run_refused(WIRE_TAG_ALLOW, "a\x7f", 2, "ALLOW[0]: not printable ASCII");
	run_refused(WIRE_TAG_ALLOW, "caf\xc3\xa9.example", 13, "ALLOW[0]: not printable ASCII");

	/* Only the options that shape COMMAND's own process: never the
	 * user, the policy, the view, the cgroup... */
	static const char *const bad_option[] = { "user=0", "policy=/p", "view", "view-owner=1:1",
						  "cgroup-parent=/x", "home", "home=", "clean-env=1",
						  "allow-root", "homex=/h", "=x", "upload-limit" };
	for (size_t i = 0; i < sizeof(bad_option) / sizeof(*bad_option); i++) {
		run_refused(WIRE_TAG_OPTION, bad_option[i], strlen(bad_option[i]),
			    "OPTION[0]: not an option egretd passes on");
	}
	raw_run_with(WIRE_TAG_OPTION, "umask=0002", 10);
	raw_accepted();
	assert_string_equal(got.run.option[0], "umask=0002");
	/* The upload budget: egret run keeps the smaller of egretd's
	 * ceiling and this one, so passing it on lowers, never raises. */
	raw_run_with(WIRE_TAG_OPTION, "upload-limit=1M", 15);
	raw_accepted();
	assert_string_equal(got.run.option[0], "upload-limit=1M");

	for (size_t i = 0; i < sizeof(bad_id) / sizeof(*bad_id); i++) {
		raw_start(WIRE_STARTED);
		raw_str(WIRE_TAG_ID, bad_id[i]);
		raw_refused(-EBADMSG, "ID: not an attempt id");
	}

	u32_refused(WIRE_SIGNAL, WIRE_TAG_SIGNO, 0, "SIGNO 0 out of range 1..64");
	u32_refused(WIRE_SIGNAL, WIRE_TAG_SIGNO, 65, "SIGNO 65 out of range 1..64");
	/* Little-endian 15 reads as 251658240. */
	field_refused(WIRE_SIGNAL, WIRE_TAG_SIGNO, "\x0f\0\0\0", 4, "SIGNO 251658240 out of range");
	for (uint32_t s = 1; s <= 64; s += 63) {
		raw_start(WIRE_SIGNAL);
		raw_u32(WIRE_TAG_SIGNO, s);
		raw_accepted();
		assert_int_equal(got.signal.signo, s);
	}

	u32_refused(WIRE_EXIT, WIRE_TAG_STATUS, 256, "STATUS 256 out of range 0..255");
	raw_start(WIRE_EXIT);
	raw_u32(WIRE_TAG_STATUS, 255);
	raw_accepted();
	assert_int_equal(got.exit.status, 255);

	field_refused(WIRE_ERROR, WIRE_TAG_TEXT, "two\nlines", strlen("two\nlines"), "TEXT: not printable ASCII");
	field_refused(WIRE_ERROR, WIRE_TAG_TEXT, "\x1b[2Jcleared", strlen("\x1b[2Jcleared"), "TEXT: not printable ASCII");
	field_refused(WIRE_ERROR, WIRE_TAG_TEXT, "tab\there", strlen("tab\there"), "TEXT: not printable ASCII");
}

/* @v as the one @tag of a minimal message of @type. */
static void set_str(enum wire_type type, enum wire_tag tag, char *v)
{
	run_min();
	msg.type = type;
	switch (tag) {
	case WIRE_TAG_ARGV:
		msg.run.argv[0] = v;
		break;
	case WIRE_TAG_CWD:
		msg.run.cwd = v;
		break;
	case WIRE_TAG_REPO:
		msg.run.repo = v;
		break;
	case WIRE_TAG_ALLOW:
		msg.run.allow[0] = v;
		msg.run.nallow = 1;
		break;
	case WIRE_TAG_ID:
		msg.attach.id = v;
		break;
	default:
		msg.error.text = v;
		break;
	}
}

/*
 * A string field at its longest and one byte longer, both ways: the
 * decoder and the encoder refuse the same N + 1 with -E2BIG. The string is
 * text[], filled to N, then to N + 1.
 */
static void string_limit(enum wire_type type, enum wire_tag tag, const char *prefix, size_t max,
			 const char *why)
{
	char *v = fill(prefix, 'a', max - strlen(prefix));

	set_str(type, tag, v);
	round_trip();
	if (type == WIRE_RUN) {
		raw_run_with(tag, v, max);
		raw_accepted();
	}
	fill(prefix, 'a', max + 1 - strlen(prefix));
	if (type == WIRE_RUN) {
		raw_run_with(tag, v, max + 1);
	} else {
		raw_start(type);
		raw_str(tag, v);
	}
	raw_refused(-E2BIG, why);
	encode_refused(-E2BIG, why);
}

static void test_string_limits(void **state)
{
	(void)state;
	string_limit(WIRE_RUN, WIRE_TAG_ARGV, "", WIRE_ARG_LEN_MAX,
		     "ARGV[0]: 4097 bytes, at most 4096");
	string_limit(WIRE_RUN, WIRE_TAG_CWD, "/", WIRE_CWD_MAX, "CWD: 4096 bytes, at most 4095");
	string_limit(WIRE_RUN, WIRE_TAG_REPO, "o/", WIRE_REPO_MAX, "REPO: 128 bytes, at most 127");
	string_limit(WIRE_RUN, WIRE_TAG_ALLOW, "", WIRE_ALLOW_LEN_MAX,
		     "ALLOW[0]: 256 bytes, at most 255");
	string_limit(WIRE_ATTACH, WIRE_TAG_ID, "", WIRE_ID_MAX, "ID: 65 bytes, at most 64");
	string_limit(WIRE_ERROR, WIRE_TAG_TEXT, "", WIRE_TEXT_MAX, "TEXT: 513 bytes, at most 512");
}

/* @n items of "a=1"-ish text of @tag in a hand-made RUN and in msg. */
static void raw_run_items(uint16_t tag, const char *item, size_t n)
{
	raw_start(WIRE_RUN);
	for (size_t i = 0; i < (tag == WIRE_TAG_ARGV ? n : 1); i++)
		raw_str(WIRE_TAG_ARGV, item);
	for (size_t i = 0; tag == WIRE_TAG_ENV && i < n; i++)
		raw_str(WIRE_TAG_ENV, item);
	raw_str(WIRE_TAG_CWD, "/");
	for (size_t i = 0; tag == WIRE_TAG_ALLOW && i < n; i++)
		raw_str(WIRE_TAG_ALLOW, item);
}

/* The items of @tag in @w and their count. */
static char **items_of(struct wire_msg *w, enum wire_tag tag, size_t **ret_n)
{
	switch (tag) {
	case WIRE_TAG_ARGV:
		*ret_n = &w->run.argc;
		return w->run.argv;
	case WIRE_TAG_ENV:
		*ret_n = &w->run.envc;
		return w->run.env;
	default:
		*ret_n = &w->run.nallow;
		return w->run.allow;
	}
}

/* @max items of @tag and one more, decoded and encoded; the encoder
 * counts before it reads an item. */
static void count_limit(enum wire_tag tag, char *item, size_t max, const char *why)
{
	size_t *n, *got_n;
	char **items = items_of(&msg, tag, &n), **got_items = items_of(&got, tag, &got_n);

	raw_run_items(tag, item, max);
	raw_accepted();
	assert_int_equal(*got_n, max);
	assert_string_equal(got_items[max - 1], item);
	raw_run_items(tag, item, max + 1);
	raw_refused(-E2BIG, why);

	run_min();
	for (size_t i = 0; i < max; i++)
		items[i] = item;
	*n = max;
	round_trip();
	assert_int_equal(*got_n, max);
	*n = max + 1;
	encode_refused(-E2BIG, why);
}

static void test_count_limits(void **state)
{
	(void)state;
	count_limit(WIRE_TAG_ARGV, "a", WIRE_ARGV_MAX, "more than 1024 ARGV items");
	assert_null(got.run.argv[WIRE_ARGV_MAX]);
	count_limit(WIRE_TAG_ENV, "A=", WIRE_ENV_MAX, "more than 1024 ENV items");
	assert_null(got.run.env[WIRE_ENV_MAX]);
	count_limit(WIRE_TAG_ALLOW, "x", WIRE_ALLOW_MAX, "more than 64 ALLOW items");
}

/* 15 full ARGV items and one of @last bytes: 65536 bytes when @last is 4015. */
static void run_of(size_t last)
{
	static char full[WIRE_ARG_LEN_MAX + 1], tail[WIRE_ARG_LEN_MAX + 1];

	memset(full, 'a', WIRE_ARG_LEN_MAX);
	memset(tail, 'b', last);
	tail[last] = '\0';
	run_min();
	for (size_t i = 0; i < 15; i++)
		msg.run.argv[i] = full;
	msg.run.argv[15] = tail;
	msg.run.argc = 16;
}

static void test_message_limit(void **state)
{
	(void)state;
	run_of(4015);
	assert_int_equal(round_trip(), WIRE_MAX);
	assert_int_equal(strlen(got.run.argv[15]), 4015);
	assert_int_equal(got.run.argv[15][4014], 'b');

	run_of(4016);
	encode_refused(-E2BIG, "CWD: the message would pass 65536 bytes");
	/* The same bytes as the decoder would get them. */
	raw_start(WIRE_RUN);
	for (size_t i = 0; i < 16; i++)
		raw_str(WIRE_TAG_ARGV, msg.run.argv[i]);
	raw_str(WIRE_TAG_CWD, "/");
	assert_int_equal(raw.len, WIRE_MAX + 1);
	raw_refused(-E2BIG, "65537 bytes, more than 65536");
}

static void test_encode_refused(void **state)
{
	uint8_t small[64];

	(void)state;
	memset(&msg, 0, offsetof(struct wire_msg, arena));
	encode_refused(-EINVAL, "unknown type 0");
	msg.type = (enum wire_type)9;
	encode_refused(-EINVAL, "unknown type 9");

	run_min();
	msg.run.argc = 0;
	encode_refused(-EINVAL, "RUN without ARGV");
	run_min();
	msg.run.cwd = NULL;
	encode_refused(-EINVAL, "RUN without CWD");
	run_min();
	msg.run.argc = 2;
	encode_refused(-EINVAL, "ARGV[1]: NULL");
	run_min();
	msg.run.argv[0] = "";
	encode_refused(-EINVAL, "ARGV[0]: empty");
	run_min();
	msg.run.envc = 1;
	msg.run.env[0] = "NOT-A-NAME=1";
	encode_refused(-EINVAL, "ENV[0]: not NAME=VALUE");
	run_min();
	msg.run.cwd = "here";
	encode_refused(-EINVAL, "CWD: not an absolute path");
	run_min();
	msg.run.repo = "acme";
	encode_refused(-EINVAL, "REPO: not OWNER/NAME");

	msg.type = WIRE_SIGNAL;
	msg.signal.signo = 0;
	encode_refused(-EINVAL, "SIGNO 0 out of range");
	msg.type = WIRE_EXIT;
	msg.exit.status = 300;
	encode_refused(-EINVAL, "STATUS 300 out of range");
	msg.type = WIRE_ERROR;
	msg.error.text = "bell\a";
	encode_refused(-EINVAL, "TEXT: not printable ASCII");
	msg.type = WIRE_STARTED;
	msg.started.id = NULL;
	encode_refused(-EINVAL, "STARTED without ID");

	/* A short buffer: refused, and nothing written past it. */
	msg.type = WIRE_EXIT;
	msg.exit.status = 1;
	memset(small, 0xee, sizeof(small));
	assert_int_equal(wire_encode(&msg, small, 11, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "holds no header"));
	assert_int_equal(wire_encode(&msg, small, 19, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "STATUS: the message would pass its buffer's 19 bytes"));
	for (size_t i = 19; i < sizeof(small); i++)
		assert_int_equal(small[i], 0xee);
	assert_int_equal(wire_encode(&msg, small, 20, err, sizeof(err)), 20);
	assert_int_equal(small[20], 0xee);
}

/*
 * No prefix of a message is one: cut anywhere, the header's length gives
 * it away; with the length made to fit, the fields do (the last field is
 * required, so no cut is a shorter message).
 */
static void test_prefixes_refused(void **state)
{
	static char *argv[] = { "make", "-j8" };
	static char *env[] = { "HOME=/home/m", "TERM=xterm" };
	size_t len;

	(void)state;
	run_set(argv, 2, env, 2, "/src");
	len = (size_t)round_trip();
	for (size_t n = 0; n < len; n++) {
		int r = wire_decode(buf, n, &got, err, sizeof(err));

		assert_int_equal(r, -EBADMSG);
		assert_int_equal(got.type, WIRE_NONE);
	}
	for (size_t n = WIRE_HEADER_LEN; n < len; n++) {
		memcpy(again, buf, n);
		set32(again + 8, (uint32_t)(n - WIRE_HEADER_LEN));
		assert_int_equal(wire_decode(again, n, &got, err, sizeof(err)), -EBADMSG);
	}

	msg.type = WIRE_ERROR;
	msg.error.text = "egret: cannot attach";
	len = (size_t)round_trip();
	for (size_t n = WIRE_HEADER_LEN; n < len; n++) {
		memcpy(again, buf, n);
		set32(again + 8, (uint32_t)(n - WIRE_HEADER_LEN));
		assert_int_equal(wire_decode(again, n, &got, err, sizeof(err)), -EBADMSG);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_bytes),
		cmocka_unit_test(test_run_round_trip),
		cmocka_unit_test(test_run_minimal),
		cmocka_unit_test(test_other_round_trips),
		cmocka_unit_test(test_header_refused),
		cmocka_unit_test(test_field_refused),
		cmocka_unit_test(test_string_refused),
		cmocka_unit_test(test_value_refused),
		cmocka_unit_test(test_string_limits),
		cmocka_unit_test(test_count_limits),
		cmocka_unit_test(test_message_limit),
		cmocka_unit_test(test_encode_refused),
		cmocka_unit_test(test_prefixes_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
