// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <linux/securebits.h>

#include "launch/environ.h"
#include "launch/keeper.h"
#include "launch/world.h"
#include "launch/launch.h"
#include "launch/seccomp.h"
#include "launch/terminal.h"
#include "lib/exit.h"
#include "lib/fdpass.h"
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

int launch_exit_code(int code, int status)
{
	if (code == CLD_EXITED)
		return status;
	return EXIT_SIGNAL_BASE + status;
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

/* Runs in a child: one record on the error pipe (at most PIPE_BUF
 * bytes: never interleaved with another child's). */
static void child_say(int pipe_fd, int step, int err)
{
	struct launch_error e = { .step = step, .err = err };
	ssize_t n __attribute__((unused));

	n = write(pipe_fd, &e, sizeof(e));
}

/* Runs in the child: report where we failed, then die without atexit. */
static _Noreturn void child_fail(int pipe_fd, int step, int err, int code)
{
	child_say(pipe_fd, step, err);
	_exit(code);
}

static int drop_capabilities(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = {};

	return (int)syscall(SYS_capset, &hdr, data);
}

static int last_cap(void)
{
	char buf[16] = "";
	int fd, n;

	fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 63;	/* drop every bit the ABI can hold */
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoi(buf) : 63;
}

/*
 * Only 0-2 and the --keep-fd fds cross into COMMAND; the error pipe is
 * close-on-exec. Closes the gaps between the kept fds.
 */
static int close_inherited(const struct launch *l, int pipe_fd)
{
	int keep[LAUNCH_MAX_KEEP_FDS + 1], n = 0, i, j;
	unsigned int from = 3;

	/* The fds to keep, ascending: --keep-fd's and the error pipe. */
	for (i = 0; i < l->nkeep_fds; i++)
		keep[n++] = l->keep_fds[i];
	keep[n++] = pipe_fd;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int t = keep[j];

			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	for (i = 0; i < n; i++) {
		unsigned int k = (unsigned int)keep[i];

		if (k > from && close_range(from, k - 1, 0) < 0)
			return -1;
		/* The pipe stays close-on-exec; kept fds survive exec. */
		if (keep[i] != pipe_fd && fcntl(keep[i], F_SETFD, 0) < 0)
			return -1;
		from = k + 1;
	}
	return close_range(from, ~0U, 0);
}

/* The child between clone3 and exec: only async-signal-safe calls. */
static _Noreturn void child_run(const struct launch *l, int pipe_fd)
{
	const char *writable[VIEW_WRITABLE_MAX + 1];
	sigset_t none;
	int cap, r, top, step;

	child_say(pipe_fd, LAUNCH_STEP_BORN, 0);
	top = last_cap();
	sigemptyset(&none);
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		child_fail(pipe_fd, LAUNCH_STEP_SIGNALS, errno, 125);
	/* While root: the caller's filesystem from here (world.h). */
	r = world_enter_child(l->world);
	if (r < 0)
		child_fail(pipe_fd, LAUNCH_STEP_WORLD, -r, 125);
	/* Still root, in the caller's mounts: the attempt's own (view.h). */
	if (l->view.on && (r = view_apply_child(&l->view, l->user.uid, l->user.gid, &step)) < 0)
		child_fail(pipe_fd, LAUNCH_STEP_VIEW_NS + step, -r, 125);
	/* Never egret's terminal: a session of its own, and its own pty
	 * as its controlling terminal if it gets one (terminal.h). */
	r = terminal_child_setup(l->terminal);
	if (r < 0)
		child_fail(pipe_fd, LAUNCH_STEP_SESSION, -r, 125);

	/* Root's capabilities never come back: not on exec of a setuid-root
	 * or file-capability binary (bounding set empty, no_new_privs), not
	 * by uid 0 exec'ing (NOROOT), not through ambient or keep-caps. */
	if (prctl(PR_SET_SECUREBITS,
		  SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
		  SECBIT_KEEP_CAPS_LOCKED |
		  SECBIT_NO_CAP_AMBIENT_RAISE |
		  SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) < 0)
		child_fail(pipe_fd, LAUNCH_STEP_SECUREBITS, errno, 125);
	for (cap = 0; cap <= top; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			child_fail(pipe_fd, LAUNCH_STEP_BOUNDING, errno, 125);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		child_fail(pipe_fd, LAUNCH_STEP_AMBIENT, errno, 125);

	if (l->user.set) {
		if (setgroups((size_t)l->user.ngroups, l->user.groups) < 0)
			child_fail(pipe_fd, LAUNCH_STEP_GROUPS, errno, 125);
		if (setresgid(l->user.gid, l->user.gid, l->user.gid) < 0)
			child_fail(pipe_fd, LAUNCH_STEP_GID, errno, 125);
		if (setresuid(l->user.uid, l->user.uid, l->user.uid) < 0)
			child_fail(pipe_fd, LAUNCH_STEP_UID, errno, 125);
	}
	/* S_IWOTH from the start: nothing COMMAND makes is others' to write
	 * unless it clears its umask itself (the seccomp filter refuses it
	 * in a chmod; another attempt cannot write it anyway: landlock.h). */
	umask((l->umask >= 0 ? (mode_t)l->umask : umask(0)) | S_IWOTH);
	/* As COMMAND's user: its own permissions decide. */
	if (l->chdir && chdir(l->chdir) < 0)
		child_fail(pipe_fd, LAUNCH_STEP_CHDIR, errno, 125);
	if (drop_capabilities() < 0)
		child_fail(pipe_fd, LAUNCH_STEP_CAPS, errno, 125);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(pipe_fd, LAUNCH_STEP_NNP, errno, 125);
	r = landlock_apply(&l->landlock, l->view.on && !l->nested_sandbox ?
					 view_writable(&l->view, writable) : NULL);
	if (r < 0)
		child_fail(pipe_fd, LAUNCH_STEP_LANDLOCK, -r, 125);
	r = seccomp_install(l->nested_sandbox);
	if (r < 0)
		child_fail(pipe_fd, LAUNCH_STEP_SECCOMP, -r, 125);

	if (close_inherited(l, pipe_fd) < 0)
		child_fail(pipe_fd, LAUNCH_STEP_FDS, errno, 125);

	/* execvp() searches the PATH of environ, not of an envp it is not
	 * given: COMMAND's environment becomes ours first. */
	if (l->envp) {
		environ_filter_path(l->envp);
		environ = l->envp;
	}
	execvp(l->argv[0], l->argv);
	child_fail(pipe_fd, LAUNCH_STEP_EXEC, errno,
		   errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC);
}

static _Noreturn void keeper_fail(int pipe_fd, int step, int err)
{
	child_fail(pipe_fd, step, err, 125);
}

/* Close every fd from 3 but the @n in @keep (any order; < 0 skipped). */
static void close_all_but(int *keep, int n)
{
	unsigned int from = 3;

	/* Insertion sort: a handful. */
	for (int i = 1; i < n; i++)
		for (int k = i; k > 0 && keep[k - 1] > keep[k]; k--) {
			int t = keep[k];

			keep[k] = keep[k - 1];
			keep[k - 1] = t;
		}
	for (int i = 0; i < n; i++) {
		if (keep[i] < (int)from)
			continue;
		if ((unsigned int)keep[i] > from)
			close_range(from, (unsigned int)keep[i] - 1, 0);
		from = (unsigned int)keep[i] + 1;
	}
	close_range(from, ~0U, 0);
}

/*
 * The keeper (keeper.h), in the clone3 child: start COMMAND, hand its
 * pidfd over @sock, wait, write the status to l->exit_fd, exit with it.
 * Failures before COMMAND runs go to @pipe_fd as child_run()'s do.
 */
static _Noreturn void keeper_run(const struct launch *l, int pipe_fd, int sock)
{
	struct launch cmd = *l;
	struct clone_args args = { .flags = CLONE_PIDFD, .exit_signal = SIGCHLD };
	siginfo_t info = {};
	char text[KEEPER_STATUS_LEN + 1], ack;
	ssize_t written __attribute__((unused));
	int keep[2 + LAUNCH_MAX_HOLD_FDS], nkeep = 0;
	int pidfd = -1, r;
	sigset_t all;
	pid_t pid;

	child_say(pipe_fd, LAUNCH_STEP_BORN, 0);
	/* Only SIGKILL ends it: the attempt's teardown, or the OOM killer. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	/* The caller's namespaces, for COMMAND and for whoever re-adopts
	 * the attempt by this process (world.h). */
	r = world_enter_child(l->world);
	if (r < 0)
		keeper_fail(pipe_fd, LAUNCH_STEP_WORLD, -r);
	cmd.world = NULL;
	args.pidfd = (__u64)(unsigned long)&pidfd;
	pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0)
		keeper_fail(pipe_fd, LAUNCH_STEP_KEEPER, errno);
	if (pid == 0)
		child_run(&cmd, pipe_fd);
	close(pipe_fd);
	r = fd_send(sock, pidfd);
	if (r < 0)
		syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	/* COMMAND is not reaped before the supervisor has its pid: a reaped
	 * process's pidfd names no pid, and a fast COMMAND (`true`) would
	 * otherwise be gone before the supervisor looked. It says so by
	 * closing its end (or by dying). */
	while (r == 0 && read(sock, &ack, 1) < 0 && errno == EINTR)
		;
	close(sock);
	/* Held for a re-adopting egretd (launch.h): the rest goes. */
	keep[nkeep++] = l->exit_fd;
	keep[nkeep++] = pidfd;
	for (int i = 0; i < LAUNCH_MAX_HOLD_FDS; i++)
		if (l->hold_fds[i] > 2)
			keep[nkeep++] = l->hold_fds[i];
	close_all_but(keep, nkeep);
	while (waitid(P_PIDFD, (id_t)pidfd, &info, WEXITED) < 0 && errno == EINTR)
		;
	r = launch_exit_code(info.si_code, info.si_status);
	/* Over the placeholder the file was made with, in place: no block
	 * to allocate, so a full /run cannot lose it. Should it fail all
	 * the same, the status still goes out as ours: only a re-adopting
	 * egretd reads the file. */
	keeper_status_format(r, text);
	written = pwrite(l->exit_fd, text, KEEPER_STATUS_LEN, 0);
	_exit(r);
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

int launch_spawn(const struct launch *l, struct launch_child *ret,
		 struct launch_error *ret_error)
{
	_cleanup_close_ int pidfd = -1, sock = -1, pipe_rd = -1;
	bool keeper = l->exit_fd > 2;
	struct clone_args args = {};
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

	args.flags = CLONE_INTO_CGROUP | CLONE_PIDFD;
	args.pidfd = (__u64)(unsigned long)&pidfd;
	args.exit_signal = SIGCHLD;
	args.cgroup = (__u64)l->cgroup_fd;
	/* COMMAND, and nothing else we fork, in the caller's PID namespace. */
	r = world_pid_for_children(l->world, true);
	pid = r < 0 ? -1 : (pid_t)syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0) {
		int err = r < 0 ? r : -errno;

		world_pid_for_children(l->world, false);
		close(pipe_fds[1]);
		if (keeper)
			close(socks[1]);
		return err;
	}
	if (pid == 0) {
		close(pipe_fds[0]);
		if (keeper) {
			close(socks[0]);
			keeper_run(l, pipe_fds[1], socks[1]);
		}
		child_run(l, pipe_fds[1]);
	}

	close(pipe_fds[1]);
	if (keeper)
		close(socks[1]);
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
		/* clone3 numbered the keeper in our namespace; COMMAND's pid
		 * comes from its pidfd, which the keeper holds unreaped until
		 * our end of @sock closes. */
		keeper_pid = pid;
		keeper_pidfd = TAKE_FD(pidfd);
		r = keeper_take_pidfd(sock, &pidfd, &pid);
		close(TAKE_FD(sock));
		if (r < 0) {
			/* Nothing to supervise it by: it does not run. */
			syscall(SYS_pidfd_send_signal, keeper_pidfd, SIGKILL, NULL, 0);
			pidfd = TAKE_FD(keeper_pidfd);
		}
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
