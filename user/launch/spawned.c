// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * launch/spawned.c - what the clone3 child of launch_spawn() runs, never
 * returning: COMMAND's steps from birth to exec, or, under egretd, the
 * keeper's life (keeper.h). Only async-signal-safe calls, and the ids
 * changed by raw system calls: COMMAND's child may share egret's memory
 * until its exec (launch.c, spawn_shared), so it takes no lock, allocates
 * nothing and writes no global but environ (and errno); the keeper's is a
 * copy.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <linux/securebits.h>

#include "launch/environ.h"
#include "launch/keeper.h"
#include "launch/landlock.h"
#include "launch/launch.h"
#include "launch/launch_impl.h"
#include "launch/seccomp.h"
#include "launch/terminal.h"
#include "launch/view.h"
#include "launch/world.h"
#include "lib/exit.h"
#include "lib/fdpass.h"

/* (launch.h) Here, with the keeper, which exits with it. */
int launch_exit_code(int code, int status)
{
	if (code == CLD_EXITED)
		return status;
	return EXIT_SIGNAL_BASE + status;
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

/*
 * The child's steps between clone3 and exec, in order; only
 * async-signal-safe calls. A step that fails reports itself on @pipe_fd
 * and the child dies there (child_fail).
 *
 * First, as root: signals as a fresh process has them, the caller's
 * filesystem (world.h), the attempt's own mounts (view.h), a session of
 * its own and never egret's terminal (terminal.h).
 */
static void child_enter(const struct launch *l, int pipe_fd)
{
	sigset_t none;
	int r, step;

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
	/* The manifest is no enforcement: without it, no variable names
	 * files COMMAND cannot see. */
	if (l->view.on && view_place_limits(&l->view) < 0 && l->envp)
		environ_drop_egret(l->envp);
	/* Never egret's terminal: a session of its own, and its own pty
	 * as its controlling terminal if it gets one (terminal.h). */
	r = terminal_child_setup(l->terminal);
	if (r < 0)
		child_fail(pipe_fd, LAUNCH_STEP_SESSION, -r, 125);
}

/*
 * Root's capabilities never come back: not on exec of a setuid-root or
 * file-capability binary (bounding set empty, no_new_privs), not by uid 0
 * exec'ing (NOROOT), not through ambient or keep-caps. Then COMMAND's
 * user: its groups, gid and uid. @top: the highest capability.
 */
static void child_drop_root(const struct launch *l, int pipe_fd, int top)
{
	if (prctl(PR_SET_SECUREBITS,
		  SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
		  SECBIT_KEEP_CAPS_LOCKED |
		  SECBIT_NO_CAP_AMBIENT_RAISE |
		  SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) < 0)
		child_fail(pipe_fd, LAUNCH_STEP_SECUREBITS, errno, 125);
	for (int cap = 0; cap <= top; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			child_fail(pipe_fd, LAUNCH_STEP_BOUNDING, errno, 125);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		child_fail(pipe_fd, LAUNCH_STEP_AMBIENT, errno, 125);

	if (!l->user.set)
		return;
	/* Raw: libc's wrappers would signal egret's other threads to
	 * change theirs too (lib/child.h). */
	if (syscall(SYS_setgroups, (size_t)l->user.ngroups, l->user.groups) < 0)
		child_fail(pipe_fd, LAUNCH_STEP_GROUPS, errno, 125);
	if (syscall(SYS_setresgid, l->user.gid, l->user.gid, l->user.gid) < 0)
		child_fail(pipe_fd, LAUNCH_STEP_GID, errno, 125);
	if (syscall(SYS_setresuid, l->user.uid, l->user.uid, l->user.uid) < 0)
		child_fail(pipe_fd, LAUNCH_STEP_UID, errno, 125);
}

/* As COMMAND's user: its umask and start directory, no capabilities,
 * no_new_privs, its Landlock domain, the seccomp filter, only the fds it
 * is given. */
static void child_confine(const struct launch *l, int pipe_fd)
{
	const char *writable[VIEW_WRITABLE_MAX + 1];
	int r;

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
}

_Noreturn void spawned_command(const struct launch *l, int pipe_fd)
{
	int top;

	child_say(pipe_fd, LAUNCH_STEP_BORN, 0);
	top = last_cap();
	child_enter(l, pipe_fd);
	child_drop_root(l, pipe_fd, top);
	child_confine(l, pipe_fd);
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
 * Failures before COMMAND runs go to @pipe_fd as spawned_command()'s do.
 */
_Noreturn void spawned_keeper(const struct launch *l, int pipe_fd, int sock)
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
		spawned_command(&cmd, pipe_fd);
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
