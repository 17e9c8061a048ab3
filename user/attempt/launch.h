/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attempt/launch.h - start COMMAND inside the attempt's cgroup, unprivileged.
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

#include "attempt/landlock.h"
#include "attempt/user.h"
#include "attempt/world.h"

#define LAUNCH_MAX_KEEP_FDS 16

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
	int exit_fd;		/* > 2: COMMAND under a keeper that writes its
				 * status here (keeper.h); 0: none */
};

/* What stopped the child before exec, reported through a pipe. */
struct launch_error {
	int step;		/* enum launch_step */
	int err;		/* positive errno */
};

enum launch_step {
	LAUNCH_STEP_SIGNALS = 1,
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
};

const char *launch_step_name(int step);

/*
 * Spawn. On success ret_pid and ret_pidfd describe a process that has
 * exec'd COMMAND: our child, or with l->exit_fd the child of a keeper
 * (keeper.h), whose pidfd is then *@ret_keeper_pidfd (else -1). If COMMAND
 * failed before exec, the children have been reaped, @ret_error says
 * where, and -ECHILD is returned; other negative errnos mean clone3
 * itself failed.
 */
int launch_spawn(const struct launch *l, pid_t *ret_pid, int *ret_pidfd,
		 int *ret_keeper_pidfd, struct launch_error *ret_error);

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
