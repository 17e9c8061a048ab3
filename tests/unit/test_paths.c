// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_paths.c - attempt ids, and the private directories egret trusts. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/paths.h"
#include "lib/trust.h"

static void id_valid(void **state)
{
	char id[EGRET_ID_MAX + 2];

	assert_true(attempt_id_valid("a"));
	assert_true(attempt_id_valid("0"));
	assert_true(attempt_id_valid("Build_42.retry-1"));
	assert_true(attempt_id_valid("a.."));
	memset(id, 'z', EGRET_ID_MAX);
	id[EGRET_ID_MAX] = '\0';
	assert_true(attempt_id_valid(id));

	id[EGRET_ID_MAX] = 'z';
	id[EGRET_ID_MAX + 1] = '\0';
	assert_false(attempt_id_valid(id));
	assert_false(attempt_id_valid(""));
	assert_false(attempt_id_valid("."));
	assert_false(attempt_id_valid(".."));
	assert_false(attempt_id_valid(".x"));
	assert_false(attempt_id_valid("-x"));
	assert_false(attempt_id_valid("../x"));
	assert_false(attempt_id_valid("a/b"));
	assert_false(attempt_id_valid("a b"));
	assert_false(attempt_id_valid("a\n"));
	assert_false(attempt_id_valid("a:b"));
	assert_false(attempt_id_valid("caf\xc3\xa9"));
}

static void id_random(void **state)
{
	char a[EGRET_ID_MAX + 1], b[EGRET_ID_MAX + 1];
	size_t i;

	assert_int_equal(attempt_id_random(a, sizeof(a)), 0);
	assert_int_equal(attempt_id_random(b, sizeof(b)), 0);
	assert_int_equal(strlen(a), 16);
	assert_int_equal(strlen(b), 16);
	for (i = 0; i < 16; i++)
		assert_non_null(strchr("0123456789abcdef", a[i]));
	assert_string_not_equal(a, b);
	assert_true(attempt_id_valid(a));

	/* Exactly 17 bytes is enough; 16 is not and is left alone. */
	assert_int_equal(attempt_id_random(a, 17), 0);
	assert_int_equal(strlen(a), 16);
	strcpy(b, "untouched");
	assert_int_equal(attempt_id_random(b, 16), -ENOSPC);
	assert_string_equal(b, "untouched");
}

static char tmpdir[64];

static int dir_setup(void **state)
{
	strcpy(tmpdir, "/tmp/egret-test-paths-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int dir_teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	return st.st_mode & 07777;
}

static void private_dir(void **state)
{
	char path[128], file[128];

	snprintf(path, sizeof(path), "%s/run", tmpdir);
	assert_int_equal(private_dir_ensure(path), 0);
	assert_int_equal(mode_of(path), 0700);
	assert_int_equal(private_dir_ensure(path), 0);	/* idempotent */

	/* Our own directory with a loose mode is tightened. */
	assert_int_equal(chmod(path, 0777), 0);
	assert_int_equal(private_dir_ensure(path), 0);
	assert_int_equal(mode_of(path), 0700);

	snprintf(file, sizeof(file), "%s/file", tmpdir);
	fclose(fopen(file, "w"));
	assert_int_equal(private_dir_ensure(file), -ENOTDIR);

	/* A symlink to our own directory is not the directory. */
	snprintf(file, sizeof(file), "%s/link", tmpdir);
	assert_int_equal(symlink(path, file), 0);
	assert_int_equal(private_dir_ensure(file), -ENOTDIR);
}

static void private_dir_foreign(void **state)
{
	char path[128];

	if (geteuid() != 0) {
		print_message("skipped: chown to nobody needs root\n");
		skip();
	}
	snprintf(path, sizeof(path), "%s/theirs", tmpdir);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(private_dir_ensure(path), -EPERM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(id_valid),
		cmocka_unit_test(id_random),
		cmocka_unit_test_setup_teardown(private_dir, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(private_dir_foreign, dir_setup,
						dir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
