// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_names.c - the learned-address -> name table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "dns/names.h"

static void put_get(void **state)
{
	struct names *t = calloc(1, sizeof(*t));
	uint8_t a4[4], b4[4], a6[16];

	inet_pton(AF_INET, "203.0.113.10", a4);
	inet_pton(AF_INET, "203.0.113.11", b4);
	inet_pton(AF_INET6, "2001:db8:2::10", a6);
	assert_null(names_get(t, AF_INET, a4));
	names_put(t, AF_INET, a4, "github.com");
	names_put(t, AF_INET6, a6, "github.com");
	assert_string_equal(names_get(t, AF_INET, a4), "github.com");
	assert_string_equal(names_get(t, AF_INET6, a6), "github.com");
	assert_null(names_get(t, AF_INET, b4));
	/* A later answer re-attributes the address; the same name again is
	 * no change (and no write to the kernel's copy). */
	assert_true(names_put(t, AF_INET, a4, "www.github.com"));
	assert_string_equal(names_get(t, AF_INET, a4), "www.github.com");
	assert_false(names_put(t, AF_INET, a4, "www.github.com"));
	assert_true(names_put(t, AF_INET, b4, "www.github.com"));
	free(t);
}

static void bounded_when_full(void **state)
{
	struct names *t = calloc(1, sizeof(*t));
	uint32_t i, last = 4 * NAMES_SLOTS;

	/* Four times the capacity: no crash, the newest are findable. */
	for (i = 1; i <= last; i++) {
		uint32_t be = htonl(0xcb007100u + i);

		names_put(t, AF_INET, &be, "n.test");
	}
	for (i = last - 16; i <= last; i++) {
		uint32_t be = htonl(0xcb007100u + i);

		assert_non_null(names_get(t, AF_INET, &be));
	}
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(put_get),
		cmocka_unit_test(bounded_when_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
