// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/json.h"

static void escapes_like_fputs(void **state)
{
	const char *in = "a\"b\\c\n\x01\xff!";
	char buf[64], *mem = NULL;
	size_t n, memlen = 0;
	FILE *f = open_memstream(&mem, &memlen);

	assert_non_null(f);
	json_fputs(f, in);
	fclose(f);
	n = json_append(buf, 0, sizeof(buf), in);
	buf[n] = '\0';
	assert_string_equal(buf, "\"a\\\"b\\\\c\\u000a\\u0001\\u00ff!\"");
	assert_string_equal(mem, buf);
	free(mem);
}

/* Cut short, the string still ends in a quote and no escape is split. */
static void cuts_between_escapes(void **state)
{
	char buf[10];
	size_t n = json_append(buf, 0, sizeof(buf), "ab\x01" "cdef");

	assert_true(n < sizeof(buf));
	buf[n] = '\0';
	assert_string_equal(buf, "\"ab\"");
	n = json_append(buf, 0, sizeof(buf), "abcdefghijk");
	buf[n] = '\0';
	assert_string_equal(buf, "\"abcdefg\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(escapes_like_fputs),
		cmocka_unit_test(cuts_between_escapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
