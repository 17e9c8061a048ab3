/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attempt/watchdog.h - time and denials made visible while COMMAND runs.
 *
 * A denied model API costs minutes: egret refuses at once, and an agent
 * retries for as long as it likes (Claude Code 189 s, 108 lookups). So:
 *  - --timeout: past its deadline COMMAND and everything it started are
 *    killed (the attempt's cgroup.kill), egret exits 124 and the summary
 *    says so, with the destination it kept asking for;
 *  - while it runs, a line on stderr when COMMAND keeps failing on the
 *    same denied name or address (WATCHDOG_REPEATS more since it was last
 *    told, at most one line every WATCHDOG_QUIET_MS for any, and one per
 *    destination every WATCHDOG_AGAIN_MS), naming it and what would allow
 *    it.
 */
#ifndef EGRET_WATCHDOG_H
#define EGRET_WATCHDOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/loop.h"
#include "observe/events.h"

#define WATCHDOG_TICK_MS	1000
#define WATCHDOG_REPEATS	5
#define WATCHDOG_QUIET_MS	10000
#define WATCHDOG_AGAIN_MS	60000

struct watchdog {
	struct loop_source deadline;	/* timerfd: --timeout, or -1 */
	struct loop_source tick;	/* timerfd: the denial lines */
	const struct events *ev;
	const char *cgroup;		/* the attempt's, for cgroup.kill */
	uint64_t timeout_ms;
	bool timed_out;
	bool quiet;			/* -q: no denial lines */
	uint64_t last_line_ms;
	/* What was told, by the index of its events' slot (names_out,
	 * then top): the count then, and when. */
	uint64_t told_count[2 * EVENTS_TOP];
	uint64_t told_ms[2 * EVENTS_TOP];
};

/* Watch @ev's denials, and with @timeout_ms end @cgroup's processes after
 * it. 0 or -errno. */
int watchdog_start(struct watchdog *w, struct loop *loop, const struct events *ev,
		   const char *cgroup, uint64_t timeout_ms, bool quiet);

/* The timers closed; what was decided stays readable. */
void watchdog_stop(struct watchdog *w, struct loop *loop);

/* After COMMAND ended: its status as egret reports it (124 past the
 * deadline), with the line that says so on @out. */
int watchdog_status(const struct watchdog *w, int status, FILE *out);

#endif
