// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_keeper.c - COMMAND under a keeper (launch/keeper.h), as egretd
 * starts it: its status reaches the supervisor however fast COMMAND ends,
 * with /run full, and a child killed at birth is told for what it is.
 *
 * Real processes in real cgroups: needs root and cgroup v2 (skipped
 * without, a failure with CI=true). fd_recv() is wrapped (the Makefile
 * links this test with -Wl,--wrap=fd_recv) to take the keeper's pidfd
 * only after a pause: a COMMAND that exits at once is then certainly
 * over before the supervisor looks at it, the race egretd lost.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sched.h>

#include "attempt/cgroup.h"
#include "launch/keeper.h"
#include "launch/launch.h"

#define SUPERVISOR_PAUSE_MS	300

int __real_fd_recv(int sock);

int __wrap_fd_recv(int sock)
{
	poll(NULL, 0, SUPERVISOR_PAUSE_MS);
	return __real_fd_recv(sock);
}

struct fixture {
	char cgroup[PATH_MAX];		/* where COMMAND is born */
	char killed[PATH_MAX];		/* a cgroup that once got cgroup.kill */
	char dir[PATH_MAX];		/* a small tmpfs for the exit file */
	int cgroup_fd;
};

static int need_root(void)
{
	const char *ci = getenv("CI");

	if (geteuid() == 0)
		return 0;
	if (ci && !strcmp(ci, "true"))
		fail_msg("test_keeper needs root (CI=true: it must run)");
	print_message("skipped: starting COMMAND in a cgroup needs root\n");
	skip();
	return -1;
}

static int setup(void **state)
{
	static struct fixture f;
	char mnt[PATH_MAX - 64];

	if (geteuid() != 0) {
		*state = NULL;
		return 0;
	}
	assert_int_equal(cgroup2_mount(mnt, sizeof(mnt)), 0);
	snprintf(f.cgroup, sizeof(f.cgroup), "%s/egret-unit-keeper-%d", mnt, (int)getpid());
	snprintf(f.killed, sizeof(f.killed), "%s/egret-unit-killed-%d", mnt, (int)getpid());
	assert_int_equal(mkdir(f.cgroup, 0755), 0);
	f.cgroup_fd = open(f.cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(f.cgroup_fd >= 0);
	/* A mount namespace of our own: the tmpfs is ours alone. */
	assert_int_equal(unshare(CLONE_NEWNS), 0);
	assert_int_equal(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	snprintf(f.dir, sizeof(f.dir), "/tmp/egret-unit-keeper-%d", (int)getpid());
	assert_int_equal(mkdir(f.dir, 0700), 0);
	assert_int_equal(mount("tmpfs", f.dir, "tmpfs", 0, "size=64k"), 0);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (!f)
		return 0;
	close(f->cgroup_fd);
	rmdir(f->cgroup);
	rmdir(f->killed);
	umount(f->dir);
	rmdir(f->dir);
	return 0;
}

/* A new exit file in the fixture's tmpfs, its block reserved or not. */
static int exit_file(struct fixture *f, const char *name, bool reserve)
{
	char path[PATH_MAX + 32];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd > 2);
	if (reserve)
		assert_int_equal(keeper_status_reserve(fd), 0);
	return fd;
}

/* Room again, whatever an earlier test left. */
static void unfill(struct fixture *f)
{
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/filler", f->dir);
	assert_true(unlink(path) == 0 || errno == ENOENT);
}

/* Fill the tmpfs until it takes no more. */
static void fill(struct fixture *f)
{
	char path[PATH_MAX + 32], block[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/filler", f->dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	memset(block, 'x', sizeof(block));
	while (write(fd, block, sizeof(block)) > 0)
		;
	assert_int_equal(errno, ENOSPC);
	/* Not even a byte of a new block. */
	while (write(fd, block, 1) > 0)
		;
	close(fd);
}

/* Run @argv under a keeper writing to @exit_fd; the keeper's own exit
 * status (what the supervisor, its parent, reads) into *@ret_status. */
static int spawn(struct fixture *f, char *const *argv, int exit_fd,
		 struct launch_child *ret, struct launch_error *ret_error, int *ret_status)
{
	struct launch l = { .argv = argv, .cgroup_fd = f->cgroup_fd, .exit_fd = exit_fd };
	siginfo_t info = {};
	int r;

	*ret = (struct launch_child){ .pidfd = -1, .keeper_pidfd = -1 };
	r = launch_spawn(&l, ret, ret_error);
	if (r < 0)
		return r;
	assert_int_equal(waitid(P_PIDFD, (id_t)ret->keeper_pidfd, &info, WEXITED), 0);
	*ret_status = launch_exit_code(info.si_code, info.si_status);
	close(ret->pidfd);
	close(ret->keeper_pidfd);
	return 0;
}

/* COMMAND is over before the supervisor takes its pidfd: it still gets
 * COMMAND's pid, and the status, through the keeper and its file. */
static void fast_command_keeps_its_status(void **state)
{
	char *const t[] = { "true", NULL };
	char *const seven[] = { "sh", "-c", "exit 7", NULL };
	char *const term[] = { "sh", "-c", "kill -TERM $$", NULL };
	struct fixture *f = *state;
	struct launch_child c;
	struct launch_error e = {};
	int fd, status;

	if (need_root() < 0)
		return;
	unfill(f);
	fd = exit_file(f, "exit-fast", true);
	assert_int_equal(keeper_read_status(fd), -ENODATA);
	assert_int_equal(spawn(f, t, fd, &c, &e, &status), 0);
	assert_true(c.pid > 0);
	assert_true(c.keeper_pid > 0);
	assert_int_not_equal(c.pid, c.keeper_pid);
	assert_int_equal(status, 0);
	assert_int_equal(keeper_read_status(fd), 0);

	assert_int_equal(keeper_status_reserve(fd), 0);
	assert_int_equal(spawn(f, seven, fd, &c, &e, &status), 0);
	assert_int_equal(status, 7);
	assert_int_equal(keeper_read_status(fd), 7);

	assert_int_equal(keeper_status_reserve(fd), 0);
	assert_int_equal(spawn(f, term, fd, &c, &e, &status), 0);
	assert_int_equal(status, 128 + SIGTERM);
	assert_int_equal(keeper_read_status(fd), 128 + SIGTERM);
	close(fd);
}

/* /run full while COMMAND runs: the reserved file still takes the
 * status; an unreserved one cannot, and the keeper's own exit status is
 * COMMAND's all the same, never 125. */
static void full_run_keeps_the_status(void **state)
{
	char *const t[] = { "true", NULL };
	struct fixture *f = *state;
	struct launch_child c;
	struct launch_error e = {};
	int reserved, bare, status;

	if (need_root() < 0)
		return;
	unfill(f);
	reserved = exit_file(f, "exit-reserved", true);
	bare = exit_file(f, "exit-bare", false);
	fill(f);
	assert_int_equal(spawn(f, t, reserved, &c, &e, &status), 0);
	assert_int_equal(status, 0);
	assert_int_equal(keeper_read_status(reserved), 0);

	assert_int_equal(spawn(f, t, bare, &c, &e, &status), 0);
	assert_int_equal(status, 0);
	assert_int_equal(keeper_read_status(bare), -ENODATA);
	/* And a new exit file cannot be made ready at all: refused at once. */
	assert_int_equal(keeper_status_reserve(bare), -ENOSPC);
	close(reserved);
	close(bare);
}

/* Does this kernel kill a child clone3(CLONE_INTO_CGROUP) starts into
 * @dest from a cgroup that once received cgroup.kill? Asked of a bare
 * clone3, in the child we run in. */
static bool kernel_kills_at_birth(int dest_fd)
{
	struct clone_args args = { .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD,
				   .cgroup = (__u64)dest_fd };
	pid_t pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
	int ws;

	if (pid == 0)
		_exit(0);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	return WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL;
}

/* From a cgroup that once received cgroup.kill (a supervisor that reuses
 * its unit's cgroup), the keeper dies as it is born on this kernel: the
 * spawn says so (LAUNCH_STEP_BORN), never that COMMAND ran. */
static void killed_at_birth_is_told(void **state)
{
	char *const t[] = { "true", NULL };
	struct fixture *f = *state;
	char procs[PATH_MAX + 32], kill_file[PATH_MAX + 32];
	siginfo_t info = {};
	pid_t child;
	int fd;

	if (need_root() < 0)
		return;
	unfill(f);
	assert_int_equal(mkdir(f->killed, 0755), 0);
	snprintf(kill_file, sizeof(kill_file), "%s/cgroup.kill", f->killed);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", f->killed);
	fd = open(kill_file, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "1", 1), 1);
	close(fd);
	fd = exit_file(f, "exit-born", true);

	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct launch_child c;
		struct launch_error e = {};
		bool kills;
		int pfd = open(procs, O_WRONLY | O_CLOEXEC), status, r;

		if (pfd < 0 || write(pfd, "0", 1) != 1)
			_exit(10);
		close(pfd);
		kills = kernel_kills_at_birth(f->cgroup_fd);
		r = spawn(f, t, fd, &c, &e, &status);
		if (kills)
			_exit(r == -ECHILD && e.step == LAUNCH_STEP_BORN ? 0 : 11);
		_exit(r == 0 && status == 0 ? 0 : 12);
	}
	assert_int_equal(waitid(P_PID, (id_t)child, &info, WEXITED), 0);
	assert_int_equal(info.si_code, CLD_EXITED);
	assert_int_equal(info.si_status, 0);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fast_command_keeps_its_status),
		cmocka_unit_test(full_run_keeps_the_status),
		cmocka_unit_test(killed_at_birth_is_told),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
