// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_run_options.c - egret run's option table (attempt/run_options.def)
 * and what is derived from it: the usage, the wire's OPTION check and its
 * refusal, the lists the client prints.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attempt/run_options.h"
#include "daemon/wire.h"

/* Each row: a name of its own, a short letter of its own, help, and
 * either egret run's alone or how it reaches egretd's attempts. */
static void rows_well_formed(void **state)
{
	(void)state;
	assert_true(run_option_nrows > 0);
	for (size_t i = 0; i < run_option_nrows; i++) {
		const struct run_option_row *row = &run_option_rows[i];

		assert_true(row->name[0] && row->name[0] != '-');
		assert_true(row->help && row->help[0]);
		assert_ptr_equal(run_option_find(row->name, strlen(row->name)), row);
		assert_true(row->via && !(row->via & ~(unsigned int)RUN_VIA_ANY));
		if (row->via & RUN_VIA_LOCAL)
			assert_int_equal(row->via, RUN_VIA_LOCAL);
		for (size_t j = 0; j < i; j++)
			assert_false(row->short_name &&
				     row->short_name == run_option_rows[j].short_name);
	}
	assert_null(run_option_find("allo", 4));
	assert_null(run_option_find("", 0));
}

/* The wire carries exactly the RUN_VIA_OPTION rows: NAME=VALUE for one
 * that takes an argument, NAME alone for one that does not. */
static void wire_options_are_the_table(void **state)
{
	char v[64];

	(void)state;
	for (size_t i = 0; i < run_option_nrows; i++) {
		const struct run_option_row *row = &run_option_rows[i];
		bool passed = row->via & RUN_VIA_OPTION;

		snprintf(v, sizeof(v), "%s=x", row->name);
		assert_int_equal(wire_option_valid(v, strlen(v)), passed && row->metavar);
		assert_int_equal(wire_option_valid(row->name, strlen(row->name)),
				 passed && !row->metavar);
		snprintf(v, sizeof(v), "%s=", row->name);
		assert_false(wire_option_valid(v, strlen(v)));
	}
	assert_true(wire_option_valid("pty-size=80x24", 14));
	/* @len bounds the name: "clean-env" within "clean-envx". */
	assert_true(wire_option_valid("clean-envx", 9));
	assert_false(wire_option_valid("clean-envx", 10));
}

/* A refused OPTION names what is passed on, from the table. */
static void wire_refusal_lists_the_table(void **state)
{
	static struct wire_msg m;
	static uint8_t buf[1024];
	char err[512], names[384];

	(void)state;
	m.type = WIRE_RUN;
	m.run.argc = 1;
	m.run.argv[0] = "true";
	m.run.cwd = "/";
	m.run.noption = 1;
	m.run.option[0] = "view";
	assert_int_equal(wire_encode(&m, buf, sizeof(buf), err, sizeof(err)), -EINVAL);
	assert_true(run_options_join(names, sizeof(names), RUN_VIA_OPTION, "", "=") > 0);
	assert_non_null(strstr(err, "OPTION[0]: not an option egretd passes on ("));
	assert_non_null(strstr(err, names));
	assert_non_null(strstr(names, "upload-limit="));
	assert_non_null(strstr(names, "clean-env"));
	assert_null(strstr(names, "view"));
}

/* The list checks its room: -E2BIG, nothing past @size. */
static void join_checked(void **state)
{
	char big[1024], small[16];
	int n;

	(void)state;
	n = run_options_join(big, sizeof(big), RUN_VIA_CALLER, "--", "");
	assert_int_equal(n, (int)strlen(big));
	assert_non_null(strstr(big, "--allow, "));
	assert_non_null(strstr(big, "--clean-env"));
	assert_null(strstr(big, "--user"));
	memset(small, 'z', sizeof(small));
	assert_int_equal(run_options_join(small, sizeof(small) - 4, RUN_VIA_CALLER, "--", ""),
			 -E2BIG);
	assert_int_equal(small[sizeof(small) - 4], 'z');
	assert_int_equal(run_options_join(small, 0, RUN_VIA_CALLER, "", ""), -E2BIG);
}

/* getopt_long's table of the rows asked for; each answer leads back to
 * its row. */
static void getopt_from_rows(void **state)
{
	struct option *opts = calloc(run_option_nrows + 1, sizeof(*opts));
	char *shorts = calloc(2 * run_option_nrows + 1, 1);
	size_t n;

	(void)state;
	assert_non_null(opts);
	assert_non_null(shorts);
	n = run_options_getopt(opts, shorts, RUN_VIA_ANY);
	assert_int_equal(n, run_option_nrows);
	assert_null(opts[n].name);
	assert_string_equal(shorts, "vqh");
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(opts[i].name, run_option_rows[i].name);
		assert_int_equal(run_option_index(opts[i].val), (int)i);
		assert_int_equal(opts[i].has_arg, run_option_rows[i].metavar ?
				 required_argument : no_argument);
	}
	n = run_options_getopt(opts, NULL, RUN_VIA_CALLER);
	assert_int_equal(n, run_options_count(RUN_VIA_CALLER));
	for (size_t i = 0; i < n; i++)
		assert_true(run_option_rows[run_option_index(opts[i].val)].via & RUN_VIA_CALLER);
	assert_int_equal(run_option_index('?'), -1);
	assert_int_equal(run_option_index(RUN_OPTION_VAL_BASE + (int)run_option_nrows), -1);
	free(opts);
	free(shorts);
}

/* Does the usage of the rows with @via's bits list @row? */
static bool usage_lists(unsigned int via, const struct run_option_row *row)
{
	char *text = NULL, line[96];
	size_t len = 0;
	bool found;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	fputc('\n', f);
	run_options_usage(f, via);
	fclose(f);
	/* "\n  -v, --verbose " or "\n  --allow SPEC ": a space after it, so
	 * that --pty is not --pty-size. */
	if (row->short_name)
		snprintf(line, sizeof(line), "\n  -%c, --%s ", row->short_name, row->name);
	else
		snprintf(line, sizeof(line), "\n  --%s%s%s ", row->name,
			 row->metavar ? " " : "", row->metavar ? row->metavar : "");
	found = strstr(text, line);
	free(text);
	return found;
}

/* Every row is in egret run's usage; the client's lists what it sends. */
static void usage_from_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < run_option_nrows; i++) {
		const struct run_option_row *row = &run_option_rows[i];

		assert_true(usage_lists(RUN_VIA_ANY, row));
		assert_int_equal(usage_lists(RUN_VIA_CALLER, row), !!(row->via & RUN_VIA_CALLER));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rows_well_formed),
		cmocka_unit_test(wire_options_are_the_table),
		cmocka_unit_test(wire_refusal_lists_the_table),
		cmocka_unit_test(join_checked),
		cmocka_unit_test(getopt_from_rows),
		cmocka_unit_test(usage_from_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
