// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_launch.c - exit codes, and --user resolution (needs passwd "nobody"). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>

#include "launch/launch.h"

#define NOBODY 65534

static void exit_code(void **state)
{
	assert_int_equal(launch_exit_code(CLD_EXITED, 0), 0);
	assert_int_equal(launch_exit_code(CLD_EXITED, 3), 3);
	assert_int_equal(launch_exit_code(CLD_EXITED, 255), 255);
	assert_int_equal(launch_exit_code(CLD_KILLED, SIGKILL), 137);
	assert_int_equal(launch_exit_code(CLD_KILLED, SIGTERM), 143);
	assert_int_equal(launch_exit_code(CLD_DUMPED, SIGSEGV), 139);
}

static void user_by_name_and_number(void **state)
{
	struct launch_user u = {};
	int i;
	bool has_own = false;

	assert_int_equal(launch_user_parse("nobody", &u), 0);
	assert_true(u.set);
	assert_int_equal(u.uid, NOBODY);
	assert_int_equal(u.gid, NOBODY);
	assert_in_range(u.ngroups, 1, LAUNCH_MAX_GROUPS);
	for (i = 0; i < u.ngroups; i++)
		has_own |= u.groups[i] == NOBODY;
	assert_true(has_own);

	u = (struct launch_user){};
	assert_int_equal(launch_user_parse("65534", &u), 0);
	assert_true(u.set);
	assert_int_equal(u.uid, NOBODY);
	assert_int_equal(u.gid, NOBODY);
}

static void user_with_group(void **state)
{
	struct launch_user u = {};

	assert_int_equal(launch_user_parse("nobody:nogroup", &u), 0);
	assert_int_equal(u.uid, NOBODY);
	assert_int_equal(u.gid, NOBODY);
	assert_int_equal(u.ngroups, 1);
	assert_int_equal(u.groups[0], NOBODY);

	/* An explicit group replaces the user's own, numbers allowed. */
	assert_int_equal(launch_user_parse("nobody:424243", &u), 0);
	assert_int_equal(u.uid, NOBODY);
	assert_int_equal(u.gid, 424243);
	assert_int_equal(u.ngroups, 1);
	assert_int_equal(u.groups[0], 424243);
}

static void user_unknown_uid(void **state)
{
	struct launch_user u = {};

	assert_int_equal(launch_user_parse("424242", &u), 0);
	assert_true(u.set);
	assert_int_equal(u.uid, 424242);
	assert_int_equal(u.gid, 424242);
	assert_int_equal(u.ngroups, 1);
	assert_int_equal(u.groups[0], 424242);
}

static void user_refused(void **state)
{
	struct launch_user u = { .uid = 777 };

	assert_int_equal(launch_user_parse("root", &u), -EPERM);
	assert_int_equal(launch_user_parse("0", &u), -EPERM);
	assert_int_equal(launch_user_parse("root:nogroup", &u), -EPERM);
	assert_int_equal(launch_user_parse("no-such-user", &u), -ESRCH);
	assert_int_equal(launch_user_parse("nobody:no-such-group", &u), -ESRCH);
	assert_int_equal(launch_user_parse("nobody:", &u), -ESRCH);
	assert_true(launch_user_parse("", &u) < 0);
	assert_true(launch_user_parse("-1", &u) < 0);
	assert_true(launch_user_parse("4294967295", &u) < 0);
	/* Out-parameters are written only on success. */
	assert_int_equal(u.uid, 777);
	assert_false(u.set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exit_code),
		cmocka_unit_test(user_by_name_and_number),
		cmocka_unit_test(user_with_group),
		cmocka_unit_test(user_unknown_uid),
		cmocka_unit_test(user_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
