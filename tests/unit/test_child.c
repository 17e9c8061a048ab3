// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_child.c - children that share egret's memory (lib/child.h): what
 * the child returns is its status, what it writes through its argument
 * the parent reads (one memory), a killed child is -ECHILD, and ids the
 * child drops stay the child's: the parent is still root after.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "lib/child.h"

static int returns_arg(void *arg)
{
	return *(int *)arg;
}

static int writes_arg(void *arg)
{
	*(int *)arg = 42;
	return 0;
}

static int dies(void *arg)
{
	(void)arg;
	raise(SIGKILL);
	return 0;
}

/* Becomes nobody (65534), says whether it did. */
static int becomes_nobody(void *arg)
{
	(void)arg;
	if (child_become(65534, 65534, 0, NULL) < 0)
		return 1;
	return getuid() == 65534 && geteuid() == 65534 && getgid() == 65534 ? 0 : 2;
}

static void test_status(void **state)
{
	int v = 7;

	(void)state;
	assert_int_equal(child_run(returns_arg, &v), 7);
	assert_int_equal(child_run_as(returns_arg, &v), 7);
	assert_int_equal(child_run(dies, NULL), -ECHILD);
}

static void test_shares_memory(void **state)
{
	int v = 0;

	(void)state;
	assert_int_equal(child_run(writes_arg, &v), 0);
	assert_int_equal(v, 42);
}

static void test_ids_stay_the_childs(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(child_run(becomes_nobody, NULL), 0);
	assert_int_equal(geteuid(), 0);
	assert_int_equal(getuid(), 0);
	assert_int_equal(child_run_as(becomes_nobody, NULL), 0);
	assert_int_equal(geteuid(), 0);
	assert_int_equal(getgid(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_shares_memory),
		cmocka_unit_test(test_ids_stay_the_childs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
