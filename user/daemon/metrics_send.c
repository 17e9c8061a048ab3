// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * daemon/metrics_send.c - an attempt's process telling the accept loop
 * what its attempt counted (daemon/metrics.h).
 */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>

#include <stdio.h>
#include <string.h>

#include "daemon/metrics.h"
#include "lib/exit.h"
#include "lib/loop.h"

enum metrics_end metrics_end_of(int status, bool started, bool timed_out)
{
	if (timed_out)
		return METRICS_END_TIMEOUT;
	if (!started)
		return METRICS_END_SETUP;
	if (status == 0)
		return METRICS_END_OK;
	return status > EXIT_SIGNAL_BASE ? METRICS_END_SIGNAL : METRICS_END_FAILED;
}

void metrics_send(int fd, const struct metrics_report *rep, bool last)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	if (fd < 0)
		return;
	if (send(fd, rep, sizeof(*rep), MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)sizeof(*rep) ||
	    !last || errno != EAGAIN)
		return;
	/* The loop reads as it polls: a full channel is a loop busy for a
	 * moment, or gone. */
	if (poll(&p, 1, 1000) == 1)
		(void)send(fd, rep, sizeof(*rep), MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* This process's attempt (one a process). */
static struct {
	int fd;
	uint64_t granted_us;
	bool started, timed_out;
	struct metrics_report rep;
} me = { .fd = -1 };

void metrics_attempt_begin(int fd, const char *repo, uint64_t granted_us)
{
	me.fd = fd;
	me.granted_us = granted_us;
	me.started = !granted_us;
	me.rep = (struct metrics_report){ .magic = METRICS_MAGIC };
	snprintf(me.rep.repo, sizeof(me.rep.repo), "%s", repo ? repo : "");
}

void metrics_attempt_started(void)
{
	uint64_t us = mono_us() - me.granted_us;

	if (me.started)
		return;
	me.started = true;
	me.rep.setup_us = us ? us : 1;
	metrics_send(me.fd, &me.rep, false);
}

void metrics_attempt_report(struct attempt_control *ctl, const struct figures *fig,
			    bool final, bool timed_out)
{
	(void)ctl;
	if (final)
		me.timed_out = timed_out;
	if (!memcmp(&me.rep.fig, fig, sizeof(*fig)))
		return;
	me.rep.fig = *fig;
	if (!final)	/* the final figures go with the end */
		metrics_send(me.fd, &me.rep, false);
}

void metrics_attempt_finished(int status)
{
	if (me.rep.end != METRICS_END_NONE)
		return;
	me.rep.end = metrics_end_of(status, me.started, me.timed_out);
	metrics_send(me.fd, &me.rep, true);
}
