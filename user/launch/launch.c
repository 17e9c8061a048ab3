// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * launch/launch.c - the parent's side of starting COMMAND: what it may be
 * given (--keep-fd), clone3 into the cgroup (the child's side is
 * launch/spawned.c), the wait for its exec, a keeper's COMMAND taken.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/sched.h>

#include "launch/keeper.h"
#include "launch/launch.h"
#include "launch/launch_impl.h"
#include "launch/world.h"
#include "lib/child.h"
#include "lib/util.h"

const char *launch_step_name(int step)
{
	static const char *const names[] = {
		[LAUNCH_STEP_BORN] = "be born in the attempt's cgroup",
		[LAUNCH_STEP_SIGNALS] = "reset signals",
		[LAUNCH_STEP_WORLD] = "enter the caller's mount, UTS, IPC and cgroup namespaces",
		[LAUNCH_STEP_KEEPER] = "start it from its keeper process",
		[LAUNCH_STEP_SESSION] = "start a session of its own (and its terminal)",
		[LAUNCH_STEP_SECUREBITS] = "lock securebits",
		[LAUNCH_STEP_BOUNDING] = "drop capability bounding set",
		[LAUNCH_STEP_AMBIENT] = "clear ambient capabilities",
		[LAUNCH_STEP_GROUPS] = "set supplementary groups",
		[LAUNCH_STEP_GID] = "set group id",
		[LAUNCH_STEP_UID] = "set user id",
		[LAUNCH_STEP_CHDIR] = "enter its start directory (the directory egret run was started in, or its --chdir)",
		[LAUNCH_STEP_CAPS] = "drop capabilities",
		[LAUNCH_STEP_NNP] = "set no_new_privs",
		[LAUNCH_STEP_LANDLOCK] = "enter its Landlock domain",
		[LAUNCH_STEP_SECCOMP] = "install the seccomp filter",
		[LAUNCH_STEP_FDS] = "close inherited file descriptors",
		[LAUNCH_STEP_EXEC] = "execute command",
		[LAUNCH_STEP_VIEW_NS] = "make its own mount and IPC namespaces",
		[LAUNCH_STEP_VIEW_OWNER] = "map the start directory as its own: the directory must be its caller's (egretd lends no rights of its own)",
		[LAUNCH_STEP_VIEW_IDMAP] = "map the start directory (and its git directories) as its own with an idmapped mount",
		[LAUNCH_STEP_VIEW_OVERLAY] = "map the start directory as its own: it lies on overlayfs (a container's writable layer), which refuses idmapped mounts; keep worktrees on a volume or a tmpfs (docs/DEPLOYMENT.md)",
		[LAUNCH_STEP_VIEW_PRIVATE] = "give it private /tmp, /var/tmp, /dev/shm, /run/lock and /dev/mqueue",
		[LAUNCH_STEP_VIEW_HOME] = "make its HOME " VIEW_HOME " (and copy the home template into it: every entry the caller's, at most 10 000 and 256 MiB)",
		[LAUNCH_STEP_VIEW_GIT] = "pin git's pointers and make its configuration read-only (a file of it with another name, or not a plain file, is refused)",
		[LAUNCH_STEP_VIEW_CHANGED] = "map the start directory and its git directories: one is no longer the directory checked (it was moved or replaced during set-up)",
	};

	if (step <= 0 || step >= (int)ARRAY_SIZE(names) || !names[step])
		return "start command";
	return names[step];
}

int launch_keep_fd_check(int fd, char *err, size_t errlen)
{
	char link[64], target[128];
	struct statfs sfs;
	struct stat st;
	socklen_t len = sizeof(int);
	int domain;
	ssize_t n;

	if (fd <= 2 || fcntl(fd, F_GETFD) < 0) {
		snprintf(err, errlen, "fd %d is not open (or is 0-2, always passed)", fd);
		return -EBADF;
	}
	if (fstat(fd, &st) < 0 || fstatfs(fd, &sfs) < 0) {
		snprintf(err, errlen, "fd %d: %s", fd, strerror(errno));
		return -EBADF;
	}
	/* A socket is judged by the cgroup that made it, outside the attempt:
	 * only unix sockets (local, file-permission bound) may pass. */
	if (S_ISSOCK(st.st_mode) &&
	    (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 ||
	     domain != AF_UNIX)) {
		snprintf(err, errlen, "fd %d is a non-unix socket made outside the attempt: egret's programs would not judge it", fd);
		return -EPERM;
	}
	/* A terminal is egret's to relay, never COMMAND's to hold
	 * (terminal.h): it could type into the operator's shell. */
	if (isatty(fd)) {
		snprintf(err, errlen, "fd %d is a terminal: COMMAND never gets egret's terminal (it gets a pty of its own)", fd);
		return -EPERM;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = '\0';
	if (sfs.f_type == BPF_FS_MAGIC || sfs.f_type == CGROUP2_SUPER_MAGIC ||
	    sfs.f_type == CGROUP_SUPER_MAGIC || !strncmp(target, "anon_inode:bpf", 14)) {
		snprintf(err, errlen, "fd %d is a handle on BPF or cgroups (%s)", fd, target);
		return -EPERM;
	}
	return 0;
}

/*
 * Wait for the children to exec (the error pipe closes) or to report a
 * failure: 0, or -ECHILD with *@ret_error filled. Each child's first
 * record says it was born; a pipe that closes with none means the first
 * child died before it ran (killed at birth: launch.h).
 */
static int wait_for_exec(int pipe_fd, struct launch_error *ret_error)
{
	struct launch_error e;
	bool born = false;
	ssize_t n;

	for (;;) {
		n = read(pipe_fd, &e, sizeof(e));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(e))
			break;
		if (e.step != LAUNCH_STEP_BORN) {
			*ret_error = e;
			return -ECHILD;
		}
		born = true;
	}
	if (born)
		return 0;
	*ret_error = (struct launch_error){ .step = LAUNCH_STEP_BORN, .err = ESRCH };
	return -ECHILD;
}

/* What the child of a shared-memory spawn needs (spawn_shared). */
struct spawn_arg {
	const struct launch *l;
	const int *pipe_fds;
};

static void command_child(void *p)
{
	const struct spawn_arg *a = p;

	close(a->pipe_fds[0]);
	spawned_command(a->l, a->pipe_fds[1]);
}

/* COMMAND's stack in a shared-memory spawn: as deep as a forked child's
 * main stack may grow (its steps recurse through HOME's template,
 * view_home.c), only what is touched backed, a guard page below. Mapped
 * at the first spawn and kept: a process spawns one COMMAND, and its
 * exit unmaps it. */
#define SPAWN_STACK	(8UL << 20)

/*
 * COMMAND cloned sharing our memory (CLONE_VM | CLONE_VFORK, as
 * posix_spawn does) on a stack of its own, while we wait for its exec:
 * no copy of egret's page tables for a process that execs at once, no
 * copy-on-write faults in either after (issue 42). Its steps are system
 * calls (spawned.c). It is born with every signal blocked, so no handler
 * of ours runs on its stack before it resets them. The only global it
 * writes, environ (for execvp's PATH), is ours again once it has exec'd.
 * Its change of ids leaves this memory to root alone: only where
 * fs.suid_dumpable says so (child.h); elsewhere, and under a keeper,
 * spawn_child() copies as before. Its pid, or -errno (-ENOSYS: not here).
 */
static pid_t spawn_shared(struct clone_args *args, const struct launch *l,
			  const int pipe_fds[2])
{
	static void *stack;
	struct spawn_arg a = { .l = l, .pipe_fds = pipe_fds };
	char **env = environ;
	sigset_t all, old;
	pid_t pid;

	if (!stack)
		stack = child_stack_new(SPAWN_STACK);
	if (!stack)
		return -ENOSYS;
	sigfillset(&all);
	if (sigprocmask(SIG_SETMASK, &all, &old) < 0)
		return -errno;
	pid = child_clone3_vfork(args, stack, SPAWN_STACK, command_child, &a);
	environ = env;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return pid;
}

/*
 * clone3 into the attempt's cgroup, COMMAND in the caller's PID namespace
 * (world.h); its pidfd into *@pidfd. The child becomes the keeper, or
 * COMMAND, and never returns here. The child's pid, or -errno: clone3's,
 * or the namespace switch's (then we are back in our own).
 */
static pid_t spawn_child(const struct launch *l, int *pidfd, const int pipe_fds[2],
			 const int socks[2])
{
	struct clone_args args = {
		.flags = CLONE_INTO_CGROUP | CLONE_PIDFD,
		.pidfd = (__u64)(unsigned long)pidfd,
		.exit_signal = SIGCHLD,
		.cgroup = (__u64)l->cgroup_fd,
	};
	pid_t pid = -ENOSYS;
	int r;

	/* COMMAND, and nothing else we fork, in the caller's PID namespace. */
	r = world_pid_for_children(l->world, true);
	if (r < 0)
		pid = r;
	else if (l->exit_fd <= 2 && child_ids_change_keeps_memory_ours())
		pid = spawn_shared(&args, l, pipe_fds);
	if (r == 0 && pid == -ENOSYS) {
		pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
		if (pid < 0)
			pid = -errno;
	}
	if (pid < 0) {
		world_pid_for_children(l->world, false);
		return pid;
	}
	if (pid == 0) {
		close(pipe_fds[0]);
		if (l->exit_fd > 2) {
			close(socks[0]);
			spawned_keeper(l, pipe_fds[1], socks[1]);
		}
		spawned_command(l, pipe_fds[1]);
	}
	return pid;
}

/*
 * The keeper's COMMAND, taken: clone3 numbered the keeper in our
 * namespace (its pidfd moves from *@pidfd to *@keeper_pidfd); COMMAND's
 * pid comes from its pidfd, which the keeper holds unreaped until our end
 * of *@sock (closed here) closes. Failing that, the keeper is killed and
 * its pidfd is *@pidfd again, for the caller to reap.
 */
static int keeper_handover(int *sock, int *pidfd, pid_t *pid, int *keeper_pidfd)
{
	int r;

	*keeper_pidfd = TAKE_FD(*pidfd);
	r = keeper_take_pidfd(*sock, pidfd, pid);
	close(TAKE_FD(*sock));
	if (r < 0) {
		/* Nothing to supervise it by: it does not run. */
		syscall(SYS_pidfd_send_signal, *keeper_pidfd, SIGKILL, NULL, 0);
		*pidfd = TAKE_FD(*keeper_pidfd);
	}
	return r;
}

int launch_spawn(const struct launch *l, struct launch_child *ret,
		 struct launch_error *ret_error)
{
	_cleanup_close_ int pidfd = -1, sock = -1, pipe_rd = -1;
	bool keeper = l->exit_fd > 2;
	int pipe_fds[2], socks[2] = { -1, -1 }, keeper_pidfd = -1, r;
	pid_t pid, keeper_pid = 0;

	/* The error pipe must sit above 2: the child closes 3.. around it. */
	if (pipe2(pipe_fds, O_CLOEXEC) < 0)
		return -errno;
	pipe_rd = pipe_fds[0];
	if (keeper && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, socks) < 0) {
		r = -errno;
		close(pipe_fds[1]);
		return r;
	}
	sock = socks[0];
	pid = spawn_child(l, &pidfd, pipe_fds, socks);
	close(pipe_fds[1]);
	if (keeper)
		close(socks[1]);
	if (pid < 0)
		return pid;
	/* Back to our own: a later fork (a spare's maker) must not land in
	 * the caller's. Failing that, COMMAND does not run. */
	r = world_pid_for_children(l->world, false);
	if (r < 0)
		syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	if (r == 0)
		r = wait_for_exec(pipe_rd, ret_error);
	else
		wait_for_exec(pipe_rd, ret_error);
	if (r == 0 && keeper) {
		keeper_pid = pid;
		r = keeper_handover(&sock, &pidfd, &pid, &keeper_pidfd);
	}
	if (r < 0) {
		/* A keeper whose COMMAND failed before exec waits for our end
		 * of @sock to close before it reaps and exits: close it
		 * first, or both wait for ever. */
		if (sock >= 0)
			close(TAKE_FD(sock));
		waitid(P_PIDFD, (id_t)pidfd, &(siginfo_t){}, WEXITED);
		return r;
	}
	*ret = (struct launch_child){ .pid = pid, .pidfd = TAKE_FD(pidfd),
				      .keeper_pid = keeper_pid,
				      .keeper_pidfd = keeper_pidfd };
	return 0;
}
