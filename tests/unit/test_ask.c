// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_ask.c - an agent's request from inside its attempt: the message
 * read (requests/ask.h), its reason made harmless, and the store's record
 * of it (a 17th field; older lines still read). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "requests/ask.h"
#include "requests/store.h"

static int parse(const char *target, const char *why, struct ask *a, char *err, size_t errlen)
{
	char msg[1024];
	size_t n = strlen(target);

	memcpy(msg, target, n + 1);
	strcpy(msg + n + 1, why);
	return ask_parse(msg, n + 1 + strlen(why), a, err, errlen);
}

static void test_targets(void **state)
{
	char err[200];
	struct ask a;

	(void)state;
	assert_int_equal(parse("Files.Example.NET:443,8443", "tarball", &a, err, sizeof(err)), 0);
	assert_int_equal(a.kind, REQUEST_NAME);
	assert_string_equal(a.target, "files.example.net");
	assert_int_equal(a.nports, 2);
	assert_int_equal(a.ports[0], 443);
	assert_int_equal(a.ports[1], 8443);
	assert_string_equal(a.why, "tarball");

	assert_int_equal(parse("pypi.org", "packages", &a, err, sizeof(err)), 0);
	assert_int_equal(a.nports, 0);

	assert_int_equal(parse("192.0.2.7:5432", "db", &a, err, sizeof(err)), 0);
	assert_int_equal(a.kind, REQUEST_ADDR);
	assert_string_equal(a.target, "192.0.2.7");
	assert_int_equal(a.ports[0], 5432);

	assert_int_equal(parse("[2001:db8::7]:443", "v6", &a, err, sizeof(err)), 0);
	assert_int_equal(a.kind, REQUEST_ADDR);
	assert_string_equal(a.target, "2001:db8::7");

	/* What a request cannot be. */
	assert_int_equal(parse("*.example.com", "x", &a, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a wildcard"));
	assert_int_equal(parse("10.0.0.0/8", "x", &a, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not the range"));
	assert_int_equal(parse("x.example:1000-2000", "x", &a, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "single ports"));
	assert_int_equal(parse("x.example:1,2,3,4,5", "x", &a, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse("x.example:0", "x", &a, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse("evil.example\n7 pending", "x", &a, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse("evil\x1b[2J.example", "x", &a, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse("", "x", &a, err, sizeof(err)), -EINVAL);
	assert_int_equal(parse("x.example", "", &a, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "say why"));
	assert_int_equal(parse("x.example", " \t\n ", &a, err, sizeof(err)), -EINVAL);
	/* No NUL: no reason. */
	assert_int_equal(ask_parse("x.example", 9, &a, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no reason"));
}

static void test_sizes(void **state)
{
	char msg[ASK_MSG_MAX + 2], err[200];
	struct ask a;

	(void)state;
	memset(msg, 'a', sizeof(msg));
	memcpy(msg, "x.example", 9);
	msg[9] = '\0';
	assert_int_equal(ask_parse(msg, ASK_MSG_MAX + 1, &a, err, sizeof(err)), -EINVAL);
	assert_int_equal(ask_parse(msg, ASK_MSG_MAX, &a, err, sizeof(err)), 0);
	assert_int_equal(strlen(a.why), ASK_WHY_MAX);
}

static void test_sanitize(void **state)
{
	char out[ASK_WHY_MAX + 1];
	/* ESC sequences, BEL, C1 CSI (0x9b, and UTF-8's c2 9b), DEL, tabs,
	 * newlines, runs of space, leading and trailing space. */
	const char in[] = "  \x1b]0;t\x07\x1b[2J\x9b" "31m\xc2\x9b" "1m\x7f a\t\tb\r\nc  ";

	(void)state;
	ask_sanitize(in, sizeof(in) - 1, out, sizeof(out));
	assert_string_equal(out, "?]0;t??[2J?31m??1m? a b c");
	for (const char *p = out; *p; p++)
		assert_true(*p >= 0x20 && *p < 0x7f);
	/* Bytes past a NUL are not the reason. */
	ask_sanitize("ok\0hidden", 9, out, sizeof(out));
	assert_string_equal(out, "ok");
	ask_sanitize("abcdef", 6, out, 4);
	assert_string_equal(out, "abc");
}

/* The reason is a record's 17th field, escaped like every string; lines
 * of 15 and 16 fields read as before, with none. */
static void test_record_why(void **state)
{
	struct request r = { .id = 3, .kind = REQUEST_NAME, .port = 443, .first = 1, .last = 2 },
		       back;
	char line[4096];

	(void)state;
	strcpy(r.target, "files.example.net");
	strcpy(r.proto, "tcp");
	strcpy(r.why, "fetch the release tarball - v2");
	assert_int_equal(request_format(&r, line, sizeof(line)), 0);
	assert_null(strchr(line, '\n'));
	assert_int_equal(request_parse(line, &back), 0);
	assert_string_equal(back.why, "fetch the release tarball - v2");
	assert_int_equal(back.count, 0);
	assert_int_equal(request_parse("1\tpending\tname\tx\t0\ttcp\t1\t1\t1\t1\t-\t9\tcurl\t-\t0\tcurl",
				       &back), 0);
	assert_string_equal(back.why, "");
	assert_int_equal(request_parse("1\tpending\tname\tx\t0\ttcp\t1\t1\t1\t1\t-\t9\tcurl\t-\t0",
				       &back), 0);
	assert_string_equal(back.why, "");
}

/* An ask folded into a request a refusal made keeps the refusal's proto
 * ("upload") and count, and adds the reason. */
static void test_merge_ask(void **state)
{
	struct request_store st = { .next_id = 5 };
	struct request_file f = {};
	struct request seen = { .kind = REQUEST_NAME, .port = 443, .count = 2, .first = 1, .last = 1 };

	(void)state;
	strcpy(f.repo, "owner/app");
	strcpy(seen.target, "files.example.net");
	strcpy(seen.proto, "upload");
	assert_int_equal(request_file_merge(&st, &f, &seen, "a1", true), 0);
	seen.count = 0;
	strcpy(seen.proto, "tcp");
	strcpy(seen.why, "push the build");
	assert_int_equal(request_file_merge(&st, &f, &seen, "a1", false), 0);
	assert_int_equal(f.n, 1);
	assert_string_equal(f.items[0].proto, "upload");
	assert_int_equal(f.items[0].count, 2);
	assert_string_equal(f.items[0].why, "push the build");
	request_file_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_targets),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_sanitize),
		cmocka_unit_test(test_record_why),
		cmocka_unit_test(test_merge_ask),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
