// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_environ.c - the environment COMMAND starts with. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch/environ.h"
#include "launch/user.h"

static const struct launch_user alice = {
	.set = true, .uid = 1001, .gid = 1001, .name = "alice",
	.home = "/home/alice", .shell = "/usr/sbin/nologin",
};

static const char *get(char **envp, const char *name)
{
	size_t n = strlen(name);

	for (; *envp; envp++)
		if (!strncmp(*envp, name, n) && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

static size_t count(char **envp)
{
	size_t n = 0;

	while (envp[n])
		n++;
	return n;
}

static void users_own_identity(void **state)
{
	char *from[] = { "HOME=/root", "USER=root", "LOGNAME=root", "SHELL=/bin/bash",
			 "XDG_RUNTIME_DIR=/run/user/0", "MAIL=/var/mail/root",
			 "PIP_INDEX_URL=http://x", "PATH=/root/bin:/usr/bin", NULL };
	struct environ_opts o = {};
	char **envp;

	assert_int_equal(environ_build(from, &alice, &o, false, &envp), 0);
	assert_string_equal(get(envp, "HOME"), "/home/alice");
	assert_string_equal(get(envp, "USER"), "alice");
	assert_string_equal(get(envp, "LOGNAME"), "alice");
	assert_string_equal(get(envp, "SHELL"), "/bin/sh");	/* nologin */
	assert_null(get(envp, "XDG_RUNTIME_DIR"));
	assert_null(get(envp, "MAIL"));
	assert_string_equal(get(envp, "PIP_INDEX_URL"), "http://x");
	assert_string_equal(get(envp, "PATH"), "/root/bin:/usr/bin");	/* child filters */
	assert_int_equal(count(envp), 6);
	free(envp);

	/* --home, and a bare uid with no passwd entry: its number, HOME /. */
	struct launch_user bare = { .set = true, .uid = 270001, .gid = 270001 };

	o.home = "/srv/attempt-7";
	assert_int_equal(environ_build(from, &bare, &o, false, &envp), 0);
	assert_string_equal(get(envp, "HOME"), "/srv/attempt-7");
	assert_string_equal(get(envp, "USER"), "270001");
	free(envp);
	o.home = NULL;
	assert_int_equal(environ_build(from, &bare, &o, false, &envp), 0);
	assert_string_equal(get(envp, "HOME"), "/");
	free(envp);
}

static void clean_pass_set(void **state)
{
	char *from[] = { "TERM=xterm-256color", "LANG=C.UTF-8", "SECRET=token",
			 "PATH=/root/bin:/usr/bin", NULL };
	struct environ_opts o = { .clean = true, .pass = { "LANG" }, .npass = 1,
				  .set = { "SECRET=none", "NEW=1" }, .nset = 2 };
	char **envp;

	assert_int_equal(environ_build(from, &alice, &o, true, &envp), 0);
	assert_string_equal(get(envp, "LANG"), "C.UTF-8");
	assert_string_equal(get(envp, "TERM"), "xterm-256color");	/* a pty */
	assert_string_equal(get(envp, "PATH"), ENVIRON_CLEAN_PATH);
	assert_string_equal(get(envp, "SECRET"), "none");		/* --setenv */
	assert_string_equal(get(envp, "NEW"), "1");
	assert_string_equal(get(envp, "HOME"), "/home/alice");
	assert_int_equal(count(envp), 9);
	free(envp);
	/* No pty: no TERM; PATH passed when asked. */
	o.pass[1] = "PATH";
	o.npass = 2;
	assert_int_equal(environ_build(from, &alice, &o, false, &envp), 0);
	assert_null(get(envp, "TERM"));
	assert_string_equal(get(envp, "PATH"), "/root/bin:/usr/bin");
	free(envp);
}

static void assignments(void **state)
{
	assert_true(environ_assignment_valid("A=b", true));
	assert_true(environ_assignment_valid("_x1=", true));
	assert_true(environ_assignment_valid("A=b=c", true));
	assert_false(environ_assignment_valid("A", true));
	assert_false(environ_assignment_valid("1A=b", true));
	assert_false(environ_assignment_valid("A-B=c", true));
	assert_false(environ_assignment_valid("=x", true));
	assert_true(environ_assignment_valid("LANG", false));
	assert_false(environ_assignment_valid("LANG=C", false));
	assert_false(environ_assignment_valid("", false));
}

static void too_many(void **state)
{
	static char *from[ENVIRON_MAX_VARS + 2];
	static char names[ENVIRON_MAX_VARS + 1][16];
	struct environ_opts o = {};
	char **envp = NULL;

	for (int i = 0; i <= ENVIRON_MAX_VARS; i++) {
		snprintf(names[i], sizeof(names[i]), "V%d=1", i);
		from[i] = names[i];
	}
	assert_int_equal(environ_build(from, &alice, &o, false, &envp), -E2BIG);
	assert_null(envp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(users_own_identity),
		cmocka_unit_test(clean_pass_set),
		cmocka_unit_test(assignments),
		cmocka_unit_test(too_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
