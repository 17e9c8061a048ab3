/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * launch/launch.h - start COMMAND inside the attempt's cgroup, unprivileged.
 *
 * The child is born in the cgroup (clone3 + CLONE_INTO_CGROUP): it never
 * runs a single instruction outside enforcement.
 */
#ifndef EGRET_LAUNCH_H
#define EGRET_LAUNCH_H

#include <stdbool.h>
#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "launch/landlock.h"
#include "launch/user.h"
#include "launch/view.h"

#define LAUNCH_MAX_KEEP_FDS 16
#define LAUNCH_MAX_HOLD_FDS 6

struct attempt_world;
struct terminal;

struct launch {
	char *const *argv;
	int cgroup_fd;
	const struct terminal *terminal;	/* session and pty (terminal.h) */
	struct landlock_plan landlock;		/* its domain (landlock.h) */
	char **envp;				/* its environment (environ.h) */
	const char *chdir;			/* --chdir, as COMMAND's user */
	struct launch_user user;
	int keep_fds[LAUNCH_MAX_KEEP_FDS];	/* ascending, > 2 */
	int nkeep_fds;
	const struct attempt_world *world;	/* NULL: ours (world.h) */
	struct launch_view view;		/* its own mounts (view.h) */
	int umask;				/* -1: ours */
	bool nested_sandbox;			/* user namespaces (seccomp.h) */
	int exit_fd;		/* > 2: COMMAND under a keeper that writes its
				 * status here (keeper.h); 0: none */
	/* With a keeper: fds (> 2) it holds open for as long as COMMAND
	 * runs, under the same numbers, for an egretd that re-adopts the
	 * attempt (daemon/adopt.h); entries below 3 are none. */
	int hold_fds[LAUNCH_MAX_HOLD_FDS];
};

/* What stopped the child before exec, reported through a pipe. */
struct launch_error {
	int step;		/* enum launch_step */
	int err;		/* positive errno */
};

enum launch_step {
	/* Not a failure: each child's first word, so that a child killed
	 * before it ran (it never said it) is told from one that exec'd. */
	LAUNCH_STEP_BORN = 1,
	LAUNCH_STEP_SIGNALS,
	LAUNCH_STEP_WORLD,
	LAUNCH_STEP_KEEPER,
	LAUNCH_STEP_SESSION,
	LAUNCH_STEP_SECUREBITS,
	LAUNCH_STEP_BOUNDING,
	LAUNCH_STEP_AMBIENT,
	LAUNCH_STEP_GROUPS,
	LAUNCH_STEP_GID,
	LAUNCH_STEP_UID,
	LAUNCH_STEP_CHDIR,
	LAUNCH_STEP_CAPS,
	LAUNCH_STEP_NNP,
	LAUNCH_STEP_LANDLOCK,
	LAUNCH_STEP_SECCOMP,
	LAUNCH_STEP_FDS,
	LAUNCH_STEP_EXEC,
	LAUNCH_STEP_VIEW_NS,
	LAUNCH_STEP_VIEW_OWNER,
	LAUNCH_STEP_VIEW_IDMAP,
	LAUNCH_STEP_VIEW_OVERLAY,
	LAUNCH_STEP_VIEW_PRIVATE,
	LAUNCH_STEP_VIEW_HOME,
	LAUNCH_STEP_VIEW_GIT,
	LAUNCH_STEP_VIEW_CHANGED,
};
_Static_assert(LAUNCH_STEP_VIEW_CHANGED - LAUNCH_STEP_VIEW_NS == VIEW_STEP_CHANGED - VIEW_STEP_NS,
	       "launch.h numbers view.h's steps in their order");

const char *launch_step_name(int step);

/* What launch_spawn() started. */
struct launch_child {
	pid_t pid;		/* COMMAND, as our PID namespace numbers it */
	int pidfd;
	pid_t keeper_pid;	/* with l->exit_fd, its keeper (keeper.h); else 0 */
	int keeper_pidfd;	/* or -1 */
};

/*
 * Spawn. On success @ret describes a process that has exec'd COMMAND
 * (it may have ended since): our child, or with l->exit_fd the child of
 * a keeper. If COMMAND failed before exec, the children have been
 * reaped, @ret_error says where, and -ECHILD is returned (step
 * LAUNCH_STEP_BORN: the first child was killed before it ran a single
 * instruction); other negative errnos mean clone3 itself failed.
 */
int launch_spawn(const struct launch *l, struct launch_child *ret,
		 struct launch_error *ret_error);

/*
 * May the launcher hand fd @fd (--keep-fd) to COMMAND? Refused: fds that
 * are not open, sockets other than unix (created outside the attempt's
 * cgroup, they are judged by that cgroup's programs, or, like packet and
 * vsock sockets, by none: a way around egret), terminals (egret relays
 * them: terminal.h), BPF objects and anything on bpffs or cgroupfs
 * (handles on enforcement itself).
 * Returns 0 or -EBADF/-EPERM with a reason in @err.
 */
int launch_keep_fd_check(int fd, char *err, size_t errlen);

/* Exit status egret reports for a wait status: code, or 128+signal. */
int launch_exit_code(int code, int status);

#endif
