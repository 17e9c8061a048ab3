/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * daemon/metrics.h - egretd's metrics (docs/EGRETD.md, "Metrics").
 *
 * Each attempt is supervised by a process of its own (daemon/server.h), so
 * what it counts is that process's. It tells the accept loop over the
 * channel it already has there (the one that asked for its slot): a
 * struct metrics_report, whole each time, about every second while
 * figures change and once at its end. The channel is a socketpair between
 * egretd's own processes, nobody else's to write; a report is a fixed size
 * of fixed arrays over bounded vocabularies, so nothing a caller does can
 * grow what the loop keeps but the repository name, and that is held to
 * metrics.repositories label values. The loop keeps each live process's
 * last report and, once it is reaped, adds it to the totals: a scrape
 * reads memory only (and the request store, at most every
 * METRICS_PENDING_MS). Nothing here runs on the connect path.
 */
#ifndef EGRET_DAEMON_METRICS_H
#define EGRET_DAEMON_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/config.h"
#include "lib/expo.h"
#include "observe/figures.h"

/* How an attempt ended (egret_attempts_ended_total's class). */
enum metrics_end {
	METRICS_END_NONE = 0,		/* not yet */
	METRICS_END_OK,			/* COMMAND exited 0 */
	METRICS_END_FAILED,		/* COMMAND exited non-zero */
	METRICS_END_SIGNAL,		/* COMMAND died of a signal */
	METRICS_END_TIMEOUT,		/* --timeout ended it */
	METRICS_END_SETUP,		/* egret could not start it (125) */
	METRICS_END_MAX,
};

#define METRICS_MAGIC		0x65677231u	/* "egr1" */

/* What one attempt's process tells the loop. */
struct metrics_report {
	uint32_t magic;
	uint32_t end;			/* enum metrics_end */
	uint64_t setup_us;		/* slot granted to COMMAND started; 0: not yet */
	struct figures fig;
	char repo[POLICY_REPO_MAX];	/* its --repo, or "" */
};

/* ---- in the attempt's process -------------------------------------- */

/* The class of an attempt that ended with @status (COMMAND's, 128+N, or
 * 125), @started: COMMAND ran; @timed_out: --timeout ended it. */
enum metrics_end metrics_end_of(int status, bool started, bool timed_out);

/* @rep to the loop on @fd (-1: nobody listens); @last: the end, which
 * waits for room (up to a second) where a progress report is dropped
 * for the next. */
void metrics_send(int fd, const struct metrics_report *rep, bool last);

/*
 * This process's attempt, as the loop hears of it (a process of egretd's
 * serves one attempt, so its report is the process's): begun with its
 * channel @fd (-1: none) and @repo, its slot granted at @granted_us
 * (mono_us(); 0: re-adopted, running already); COMMAND started; its
 * figures (attempt/supervise.h: report, whose signature
 * metrics_attempt_report has); its end with @status.
 */
struct attempt_control;

void metrics_attempt_begin(int fd, const char *repo, uint64_t granted_us);
void metrics_attempt_started(void);
void metrics_attempt_report(struct attempt_control *ctl, const struct figures *fig,
			    bool final, bool timed_out);
void metrics_attempt_finished(int status);

/* ---- in the accept loop ------------------------------------------- */

#define METRICS_PENDING_MS	10000	/* the request store read at most this often */

struct metrics_live;

struct metrics {
	const struct daemon_config *cfg;
	uint64_t started, readopted;
	uint64_t ended[METRICS_END_MAX];
	uint64_t setup[12];		/* by bucket (metrics.c), the last beyond */
	uint64_t setup_sum_us;
	struct figures done;		/* of attempts whose process ended */
	struct metrics_repo {
		char name[POLICY_REPO_MAX];
		uint64_t sent, received;
	} *repos;			/* cfg->metrics.repositories + "_other" */
	unsigned int nrepos;
	struct metrics_live *live;	/* the live processes' last reports */
	uint64_t pending, pending_ms;	/* the store's pending requests, when */
	bool pending_known;
};

/* 0, or -ENOMEM. */
int metrics_init(struct metrics *m, const struct daemon_config *cfg);
void metrics_free(struct metrics *m);

/* A process that will report (a granted RUN, @readopt: a re-adoption):
 * its record, or NULL (out of memory: it is counted, its figures not). */
struct metrics_live *metrics_live_new(struct metrics *m, bool readopt);

/* Read what waits on @fd for @l: 0, or -EPIPE once the process closed it. */
int metrics_live_read(struct metrics *m, struct metrics_live *l, int fd);

/* Its process was reaped with @wstatus: its figures into the totals, its
 * end counted if it told none (exited: its set-up failed; killed: its
 * attempt lives on, for a re-adopter to end). Frees @l. */
void metrics_live_end(struct metrics *m, struct metrics_live *l, int wstatus);

/* The exposition, @running attempts now, into @out. */
void metrics_render(struct metrics *m, unsigned int running, struct expo *out);

#endif
