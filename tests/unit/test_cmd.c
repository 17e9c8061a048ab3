// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_cmd.c - lib/cmd.h: cmd_select() runs the row named exactly argv[0]
 * with the whole argv (no abbreviations, no prefix), else the table's
 * 'unknown' answer, also for an empty command line; cmd_list() prints the
 * listed rows, a summary's own lines under its first, aliases not at all.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/cmd.h"
#include "lib/util.h"

static int last_argc;
static char **last_argv;

static int run_a(int argc, char **argv)
{
	last_argc = argc;
	last_argv = argv;
	return 10;
}

static int run_b(int argc, char **argv)
{
	return 11;
}

static int unknown(int argc, char **argv)
{
	last_argc = argc;
	return 99;
}

static const struct cmd cmds[] = {
	{ "alpha", run_a, "the first\nover two lines" },
	{ "beta", run_b, "the second" },
	{ "--alpha", run_a, NULL },
};

static void selects_by_exact_name(void **state)
{
	char *argv[] = { "alpha", "x", "y", NULL };
	char *alias[] = { "--alpha", NULL };

	(void)state;
	assert_int_equal(cmd_select(cmds, ARRAY_SIZE(cmds), 3, argv, unknown), 10);
	assert_int_equal(last_argc, 3);
	assert_ptr_equal(last_argv, argv);
	assert_int_equal(cmd_select(cmds, ARRAY_SIZE(cmds), 1, alias, unknown), 10);
	argv[0] = "beta";
	assert_int_equal(cmd_select(cmds, ARRAY_SIZE(cmds), 1, argv, unknown), 11);
}

static void unknown_answers_the_rest(void **state)
{
	char *prefix[] = { "alp", NULL }, *longer[] = { "alphas", NULL }, *none[] = { NULL };

	(void)state;
	assert_int_equal(cmd_select(cmds, ARRAY_SIZE(cmds), 1, prefix, unknown), 99);
	assert_int_equal(cmd_select(cmds, ARRAY_SIZE(cmds), 1, longer, unknown), 99);
	last_argc = 5;
	assert_int_equal(cmd_select(cmds, ARRAY_SIZE(cmds), 0, none, unknown), 99);
	assert_int_equal(last_argc, 0);
}

static void lists_rows_with_summaries(void **state)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	cmd_list(f, cmds, ARRAY_SIZE(cmds), 6);
	fclose(f);
	assert_string_equal(text, "  alpha  the first\n"
				  "         over two lines\n"
				  "  beta   the second\n");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(selects_by_exact_name),
		cmocka_unit_test(unknown_answers_the_rest),
		cmocka_unit_test(lists_rows_with_summaries),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
