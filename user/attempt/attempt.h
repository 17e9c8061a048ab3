/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attempt/attempt.h - one attempt: everything it owns, made by
 * attempt_open() and torn down in reverse by attempt_close(). `egret run`
 * makes one per process; egretd will hold many.
 */
#ifndef EGRET_ATTEMPT_ATTEMPT_H
#define EGRET_ATTEMPT_ATTEMPT_H

#include <stdbool.h>
#include <stdint.h>

#include "attempt/inbox.h"
#include "attempt/limits.h"
#include "attempt/state.h"
#include "enforce/hostaddr.h"
#include "enforce/loader.h"
#include "observe/events.h"
#include "observe/feed.h"
#include "requests/log.h"

struct dns_proxy;
struct launch_user;
struct run_opts;

/* Everything an attempt owns, torn down in reverse by attempt_close(). */

struct attempt {
	struct attempt_state st;
	int state_fd;
	int uid_lock_fd;		/* COMMAND's uid is this attempt's */
	uid_t uid_locked;		/* ... that uid */
	int cgroup_fd;
	bool cgroup_made;
	bool pins_made;
	struct loader ld;
	struct dns_proxy *dns;
	struct events ev;
	struct hostaddr host;		/* the host maps, kept current */
	struct request_log requests;	/* only with --repo */
	struct request_inbox inbox;	/* what the agent asks for (--repo) */
	bool requests_on;
	uint64_t load_us;		/* getting the set of programs */
	/* egretd's attempts: COMMAND's keeper (keeper.h) and the file it
	 * writes COMMAND's status to; -1 without. */
	int keeper_pidfd;
	int exit_fd;
	struct limits limits;		/* the manifest COMMAND reads */
	struct feed feed;		/* and its refusals, as they come */
	bool timed_out;			/* --timeout ended COMMAND */
};

/* Fds -1 and nothing made: what attempt_close() accepts at any point. */
void attempt_init(struct attempt *a);

/* The same, in zero pages of its own: only the pages written are faulted
 * in. NULL without memory. attempt_free() unmaps it. */
struct attempt *attempt_new(void);
void attempt_free(struct attempt *a);

/* Make the attempt for @o (COMMAND to run as @user): after it, COMMAND
 * may start in a->cgroup_fd. Logs its own one-line failure; the caller
 * calls attempt_close() either way. */
int attempt_open(struct attempt *a, const struct run_opts *o,
		 const struct launch_user *user);

/*
 * Take over the attempt of record @st (its lock held in @state_fd, which
 * @a takes), whose egret died while COMMAND runs on: its cgroup and pins
 * as they are, the DNS proxy on the port the programs send DNS to (its
 * listeners @dns_fds as the keeper held them, taken; or bound anew), the
 * pinned maps for learning and events. Logs its one-line failure; the
 * caller calls attempt_close() either way, which tears it down.
 */
int attempt_reopen(struct attempt *a, const struct run_opts *o,
		   const struct attempt_state *st, int state_fd, int *dns_fds);

/* Undo attempt_open(), whatever it reached. <0 if something stays (the
 * record is then kept, so gc retries). */
int attempt_close(struct attempt *a);

#endif
