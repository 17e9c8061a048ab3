// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_spares.c - lib/spares.h: a freed object comes back for the next
 * get (the DNS proxy's per-query state), the newest first; at most
 * SPARES_MAX are kept; spares_free() leaves none.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/spares.h"

static void reused_newest_first(void **state)
{
	struct spares s = {};
	void *a = spares_get(&s, 300), *b = spares_get(&s, 300);

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	spares_put(&s, a);
	spares_put(&s, b);
	assert_int_equal(s.n, 2);
	assert_ptr_equal(spares_get(&s, 300), b);
	assert_ptr_equal(spares_get(&s, 300), a);
	assert_int_equal(s.n, 0);
	spares_put(&s, a);
	spares_put(&s, b);
	spares_free(&s);
	assert_null(s.head);
	assert_int_equal(s.n, 0);
}

static void kept_at_most_max(void **state)
{
	struct spares s = {};
	void *objs[SPARES_MAX + 5];

	(void)state;
	for (int i = 0; i < SPARES_MAX + 5; i++)
		assert_non_null(objs[i] = spares_get(&s, 64));
	for (int i = 0; i < SPARES_MAX + 5; i++)
		spares_put(&s, objs[i]);
	assert_int_equal(s.n, SPARES_MAX);
	spares_free(&s);
	assert_int_equal(s.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reused_newest_first),
		cmocka_unit_test(kept_at_most_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
