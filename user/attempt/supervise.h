/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attempt/supervise.h - serve the attempt while COMMAND runs.
 */
#ifndef EGRET_ATTEMPT_SUPERVISE_H
#define EGRET_ATTEMPT_SUPERVISE_H

#include <sys/types.h>

#include "attempt/attempt.h"
#include "launch/terminal.h"
#include "lib/loop.h"

/*
 * A channel from whoever asked for the attempt (egretd's client), watched
 * by the same loop: @src is the caller's (fd and handler); supervise()
 * fills @child_pidfd before watching it, so that the handler can signal
 * COMMAND, and @loop, so that it can end the attempt.
 */
#define SUPERVISE_REPORT_MS	1000

struct figures;

struct attempt_control {
	struct loop_source src;
	int child_pidfd;
	struct loop *loop;
	/* COMMAND's environment starts from this one (NULL-terminated), not
	 * from this process's: egretd's caller's stays out of egretd. */
	char *const *env;
	/* The lock of COMMAND's uid (preflight_uid_lock), taken by whoever
	 * chose the uid, or -1; the attempt takes it over. */
	int uid_lock_fd;
	/* The caller's namespaces, when they are not ours (world.h). */
	const struct attempt_world *world;
	/* The caller's uid, for the record (a re-adopting egretd gives the
	 * attempt back to this uid only). With a control, COMMAND runs
	 * under a keeper (keeper.h), so that it can be re-adopted. */
	uid_t caller;
	/* The egretd it belongs to (attempt/instance.h), for the record. */
	const char *instance;
	/* Called once COMMAND runs and the record says so: egretd tells
	 * its caller the attempt's id. May be NULL. */
	void (*started)(struct attempt_control *control, const char *id);
	/* One more source for the same loop (a re-adopter's timer), or NULL. */
	struct loop_source *extra;
	/* Where the attempt's requests also go as JSON lines (egretd's
	 * stdout, for fleets: requests/export.h), or -1. */
	int json_fd;
	/* The caller's receipt file (--receipt through egretd), opened by
	 * the caller; receipt_fd is taken only with @receipt set. */
	bool receipt;
	int receipt_fd;
	/* Called once COMMAND has ended, before the attempt is taken down (a
	 * re-adopter waits there for its caller to come back). May be NULL. */
	void (*ended)(struct attempt_control *control);
	/* Called with the status the attempt ends with (COMMAND's, or
	 * EXIT_SETUP when it could not start), before the attempt is taken
	 * down while its record still stands: egretd tells its caller now,
	 * so that an egretd killed during the teardown costs the caller
	 * nothing (a re-adopter finishes the teardown). What the teardown
	 * then leaves is egretd's to log and retry, not the caller's status.
	 * May be NULL. */
	void (*finished)(struct attempt_control *control, int status);
	/* Called when the suspend key stopped COMMAND in its pty, the
	 * caller's terminal already given back its settings: egretd tells
	 * its client, which stops as a job would and continues COMMAND
	 * (SIGCONT) when it is continued, or at once if it cannot stop.
	 * May be NULL. */
	void (*suspended)(struct attempt_control *control);
	/* egretd's metrics (observe/figures.h): called every
	 * SUPERVISE_REPORT_MS while COMMAND runs with what the attempt
	 * counted so far, and once more with @final after it ended (its
	 * bytes too; @timed_out: --timeout ended it). May be NULL. */
	void (*report)(struct attempt_control *control, const struct figures *fig,
		       bool final, bool timed_out);
	/* COMMAND's terminal (filled by supervise()), or NULL. */
	struct terminal *term;
};

/*
 * A signal the caller sent on (egretd's client): SIGWINCH resizes
 * COMMAND's pty from the caller's terminal, SIGCONT continues COMMAND and
 * gives its pty the terminal again, SIGINT, SIGTERM, SIGHUP and SIGQUIT
 * go to COMMAND, followed by SIGCONT (as a shell's kill does for a
 * stopped job: stopped, COMMAND would keep them pending).
 */
void attempt_control_signal(struct attempt_control *control, int sig);

/* Serve DNS, events, requests and approvals for @a, relay @term and the
 * signals of @sigfd, and @control if not NULL, until COMMAND (@pid,
 * @pidfd) exits. Returns its exit status, or -errno. */
int supervise(struct attempt *a, const struct run_opts *o, pid_t pid,
	      int pidfd, int sigfd, struct terminal *term,
	      struct attempt_control *control);

#endif
