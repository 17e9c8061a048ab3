/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attempt/run.h - one attempt from start to teardown: its record, cgroup,
 * programs, DNS proxy and event log; COMMAND started in it and supervised
 * until it exits; then everything removed.
 */
#ifndef EGRET_ATTEMPT_RUN_H
#define EGRET_ATTEMPT_RUN_H

#include "attempt/state.h"

struct attempt_control;
struct landlock_plan;
struct launch_user;
struct run_opts;

/* Run @o's COMMAND as @user under @landlock (@control: egretd's client,
 * or NULL). Returns COMMAND's exit
 * status (128+N for signal N), or EXIT_SETUP (125) when egret could not
 * enforce, after one line saying why. */
int attempt_run(const struct run_opts *o, const struct launch_user *user,
		const struct landlock_plan *landlock,
		struct attempt_control *control);

/* The attempt egretd re-adopts (what it found of it in @who), served as
 * attempt_run() serves its own until COMMAND's keeper exits, then torn
 * down. Returns COMMAND's status, or EXIT_SETUP after one line. */
struct attempt_adoptee {
	struct attempt_state st;	/* its record */
	int state_fd;			/* the record, its lock held; taken */
	int keeper_pidfd;		/* its keeper, or -1 if it has ended */
	int command_pidfd;		/* COMMAND, or -1 */
	int exit_fd;			/* the keeper's status file; taken */
	int dns_fds[STATE_HELD_DNS];	/* the DNS listeners the keeper held,
					 * or -1; taken */
	int pty_fd;			/* COMMAND's pty's master, or -1; taken */
};

int attempt_readopt(const struct run_opts *o, const struct launch_user *user,
		    struct attempt_adoptee *who, struct attempt_control *control);

#endif
