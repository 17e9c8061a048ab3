// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_text.c - lib/text.h: sizes as --upload-limit and upload_limit: take them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/text.h"

static uint64_t size_of(const char *text)
{
	uint64_t v = 12345;

	assert_int_equal(size_parse(text, &v), 0);
	return v;
}

static void refused(const char *text)
{
	uint64_t v = 12345;

	assert_int_equal(size_parse(text, &v), -EINVAL);
	assert_int_equal(v, 0);
}

static void sizes(void **state)
{
	(void)state;
	assert_int_equal(size_of("1"), 1);
	assert_int_equal(size_of("4096"), 4096);
	assert_int_equal(size_of("512K"), 512 * 1024);
	assert_int_equal(size_of("512k"), 512 * 1024);
	assert_int_equal(size_of("1M"), 1048576);
	assert_int_equal(size_of("1MiB"), 1048576);
	assert_int_equal(size_of("1MB"), 1048576);
	assert_int_equal(size_of("3G"), 3ULL << 30);
	assert_int_equal(size_of("1024T"), 1ULL << 50);
}

static void bad_sizes(void **state)
{
	(void)state;
	refused("");
	refused("0");
	refused("0K");
	refused("-1");
	refused("+1");
	refused(" 1");
	refused("1 M");
	refused("1.5M");
	refused("1Q");
	refused("1Mx");
	refused("K");
	refused("1025T");		/* over 2^50 */
	refused("99999999999999999999999");	/* strtoull's ERANGE */
	assert_int_equal(size_parse(NULL, &(uint64_t){ 0 }), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sizes),
		cmocka_unit_test(bad_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
