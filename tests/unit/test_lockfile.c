// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_lockfile.c - lock files that leave with their last holder
 * (lib/lockfile.h): held, refused, dropped with their name, and never
 * held on an inode whose name was dropped meanwhile.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/lockfile.h"

static char dir[] = "/tmp/egret-unit-lockfile-XXXXXX";
static char path[PATH_MAX];

static int setup(void **state)
{
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/lock", dir);
	return 0;
}

static int teardown(void **state)
{
	unlink(path);
	rmdir(dir);
	return 0;
}

static void held_refused_dropped(void **state)
{
	int a, b;
	pid_t pid;
	int ws;

	a = lockfile_take(path, LOCK_EX | LOCK_NB);
	assert_true(a >= 0);
	assert_int_equal(lockfile_held(path), 1);
	/* Another open file description (a child's) is refused. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(lockfile_take(path, LOCK_EX | LOCK_NB) == -EWOULDBLOCK ? 0 : 1);
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	lockfile_drop(path, a);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(lockfile_held(path), 0);
	/* Made anew by the next taker. */
	b = lockfile_take(path, LOCK_SH);
	assert_true(b >= 0);
	assert_int_equal(lockfile_held(path), 0);	/* shared: no exclusive holder */
	close(b);
	unlink(path);
}

/* A taker that opened the file, then waited in flock() while the holder
 * dropped it, must not hold the unlinked inode: it takes the file the
 * name points to now. */
static void dropped_inode_not_held(void **state)
{
	int a, ready[2], ws;
	char c;
	pid_t pid;

	a = lockfile_take(path, LOCK_EX);
	assert_true(a >= 0);
	assert_int_equal(pipe(ready), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct stat mine, named;
		int fd;

		close(ready[0]);
		close(a);	/* the parent's lock, not ours to hold */
		assert_int_equal(write(ready[1], "r", 1), 1);
		fd = lockfile_take(path, LOCK_EX);	/* blocks until dropped */
		if (fd < 0 || fstat(fd, &mine) < 0 || stat(path, &named) < 0)
			_exit(2);
		_exit(mine.st_nlink > 0 && mine.st_ino == named.st_ino ? 0 : 3);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	/* The child is in its flock() on the old inode by now. */
	poll(NULL, 0, 200);
	lockfile_drop(path, a);
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws));
	assert_int_equal(WEXITSTATUS(ws), 0);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(held_refused_dropped),
		cmocka_unit_test(dropped_inode_not_held),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
