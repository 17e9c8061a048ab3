// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_expo.c - the Prometheus text exposition: label values escaped as
 * the format asks (a repository name is the caller's data), HELP text,
 * histograms, and the bound on the text. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "lib/expo.h"

static void test_escape(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(expo_escape("octo/app", out, sizeof(out)), 8);
	assert_string_equal(out, "octo/app");
	expo_escape("a\\b", out, sizeof(out));
	assert_string_equal(out, "a\\\\b");
	expo_escape("say \"hi\"", out, sizeof(out));
	assert_string_equal(out, "say \\\"hi\\\"");
	expo_escape("two\nlines", out, sizeof(out));
	assert_string_equal(out, "two\\nlines");
	/* Other control bytes and anything past ASCII: '?', never raw. */
	expo_escape("t\tab\r\x01\xc3\xa9", out, sizeof(out));
	assert_string_equal(out, "t?ab???\?");
	/* Cut short, still terminated; the length it needs. */
	assert_int_equal(expo_escape("\"\"\"\"", out, 5), 8);
	assert_string_equal(out, "\\\"\\\"");
}

static void test_samples(void **state)
{
	struct expo e;
	const struct expo_label l[] = { { "repository", "evil\"} 9\nx{a=\"" },
					{ "category", "other" } };

	(void)state;
	expo_init(&e, 1 << 16);
	expo_family(&e, "egret_x_total", "counter", "Back\\slash and\nnewline \"quoted\".");
	expo_sample(&e, "egret_x_total", NULL, 0, 7);
	expo_sample(&e, "egret_x_total", l, 2, 18446744073709551615ULL);
	assert_false(e.full);
	assert_string_equal(e.buf,
		"# HELP egret_x_total Back\\\\slash and\\nnewline \"quoted\".\n"
		"# TYPE egret_x_total counter\n"
		"egret_x_total 7\n"
		"egret_x_total{repository=\"evil\\\"} 9\\nx{a=\\\"\",category=\"other\"} 18446744073709551615\n");
	expo_free(&e);
	expo_free(&e);	/* twice: harmless */
}

static void test_histogram(void **state)
{
	static const unsigned int bounds[] = { 1, 250, 1000 };
	const uint64_t counts[] = { 2, 0, 1, 3 };
	struct expo e;

	(void)state;
	expo_init(&e, 4096);
	expo_histogram(&e, "egret_s", bounds, 3, counts, 2500123);
	assert_string_equal(e.buf,
		"egret_s_bucket{le=\"0.001\"} 2\n"
		"egret_s_bucket{le=\"0.250\"} 2\n"
		"egret_s_bucket{le=\"1.000\"} 3\n"
		"egret_s_bucket{le=\"+Inf\"} 6\n"
		"egret_s_sum 2.500123\n"
		"egret_s_count 6\n");
	expo_free(&e);
}

/* Past its bound the text stops at a whole line, and says it is full. */
static void test_bound(void **state)
{
	struct expo e;

	(void)state;
	expo_init(&e, 40);
	for (int i = 0; i < 10; i++)
		expo_sample(&e, "egret_y", NULL, 0, (uint64_t)i);
	assert_true(e.full);
	assert_string_equal(e.buf, "egret_y 0\negret_y 1\negret_y 2\n");
	expo_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_histogram),
		cmocka_unit_test(test_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
