// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_request_export.c - request lines for fleets: what egretd writes is
 * what import reads back, and anything else is refused or passed over. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "requests/export.h"

static struct request sample(void)
{
	struct request r = { .kind = REQUEST_NAME, .port = 443, .count = 3,
			     .first = 1764547200, .last = 1764547201, .pid = 412 };

	strcpy(r.target, "files.example.net");
	strcpy(r.proto, "tcp");
	strcpy(r.comm, "cu\"rl\\\x01\xff");	/* bytes json_append escapes */
	request_add_command(&r, r.comm);
	request_add_command(&r, "npm");
	return r;
}

static void round_trip(void **state)
{
	struct request r = sample();
	struct request_line l;
	char line[REQUEST_LINE_MAX], err[256], prefixed[REQUEST_LINE_MAX + 64];
	int n = request_export_format("octo/app", "ab12cd34", &r, true, line, sizeof(line));

	assert_true(n > 0);
	assert_int_equal(line[n - 1], '\n');
	assert_int_equal(request_export_parse(line, &l, err, sizeof(err)), 1);
	assert_string_equal(l.repo, "octo/app");
	assert_string_equal(l.attempt, "ab12cd34");
	assert_int_equal(l.r.kind, REQUEST_NAME);
	assert_string_equal(l.r.target, "files.example.net");
	assert_int_equal(l.r.port, 443);
	assert_string_equal(l.r.proto, "tcp");
	assert_int_equal(l.r.count, 3);
	assert_int_equal(l.r.first, 1764547200);
	assert_int_equal(l.r.last, 1764547201);
	assert_int_equal(l.r.pid, 412);
	assert_string_equal(l.r.comm, r.comm);
	/* Every distinct command, not only the example's. */
	assert_int_equal(l.r.ncommands, 2);
	assert_string_equal(l.r.commands[0], r.comm);
	assert_string_equal(l.r.commands[1], "npm");
	assert_true(l.new_attempt);
	/* A log pipeline's prefix before it is fine. */
	snprintf(prefixed, sizeof(prefixed), "2026-12-01T00:00:00Z stdout F %s", line);
	assert_int_equal(request_export_parse(prefixed, &l, err, sizeof(err)), 1);
}

static void other_lines_pass(void **state)
{
	struct request_line l;
	char err[256];

	assert_int_equal(request_export_parse("egret: attempt ab12: exit status 0\n", &l,
					      err, sizeof(err)), 0);
	assert_int_equal(request_export_parse("{\"egret\":\"other\"}\n", &l, err, sizeof(err)), 0);
}

/* @from replaced by @to in a good line must be refused with @want. */
static void refused(const char *from, const char *to, const char *want)
{
	struct request r = sample();
	struct request_line l;
	char line[REQUEST_LINE_MAX], bad[REQUEST_LINE_MAX + 64], err[256] = "";
	char *at;

	request_export_format("octo/app", "ab12cd34", &r, false, line, sizeof(line));
	at = strstr(line, from);
	assert_non_null(at);
	snprintf(bad, sizeof(bad), "%.*s%s%s", (int)(at - line), line, to, at + strlen(from));
	assert_int_equal(request_export_parse(bad, &l, err, sizeof(err)), -EBADMSG);
	if (!strstr(err, want))
		fail_msg("want '%s' in '%s' for %s", want, err, bad);
}

static void broken_lines_refused(void **state)
{
	/* What replaces what in a good line, and what the refusal says. */
	static const struct { const char *from, *to, *want; } cases[] = {
		{ "\"port\":443", "\"prot\":443", "unknown key 'prot'" },
		{ "\"port\":443", "\"port\":65536", "out of range" },
		{ "\"port\":443", "\"port\":\"443\"", "want a number" },
		{ "\"count\":3", "\"count\":0", "count 0 and no why" },
		{ "\"repo\":\"octo/app\"", "\"repo\":\"../x\"", "not a repository name" },
		{ "\"attempt\":\"ab12cd34\"", "\"attempt\":\"../x\"", "not an attempt id" },
		{ "\"kind\":\"name\"", "\"kind\":\"host\"", "kind is name or address" },
		{ "\"new_attempt\":false", "\"new_attempt\":0", "want true or false" },
		{ ",\"proto\":\"tcp\"", "", "no 'proto'" },
		{ "\"proto\":\"tcp\"", "\"proto\":\"tcp\",\"proto\":\"udp\"", "twice" },
		{ "}\n", "} trailing\n", "bytes after" },
		{ "\"target\":\"files.example.net\"", "\"target\":\"a\\u0000b\"", "\\u escape" },
		{ "\"target\":\"files.example.net\"", "\"target\":\"files.example.net", "" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		refused(cases[i].from, cases[i].to, cases[i].want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(other_lines_pass),
		cmocka_unit_test(broken_lines_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
