// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "attempt/watchdog.h"
#include "lib/log.h"

/* What timeout(1) exits with when its command ran past the deadline. */
#define EXIT_TIMED_OUT	124

/* Entry @i of what the events kept: a name (names_out), then an address
 * (top). Its words into @buf and its count; false: none there, or not a
 * denial. */
static bool denial_at(const struct events *ev, size_t i, char *buf, size_t len,
		      uint64_t *ret_count)
{
	if (i < EVENTS_TOP) {
		const struct denied_name *n = &ev->names_out[i];

		if (i >= ev->nnames_out || n->failed)
			return false;
		snprintf(buf, len, "the name %s", n->name);
		*ret_count = n->count;
		return true;
	}
	i -= EVENTS_TOP;
	if (i >= ev->ntop)
		return false;
	const struct denied_dest *d = &ev->top[i];
	char a[INET6_ADDRSTRLEN] = "?";

	inet_ntop(d->family == 4 ? AF_INET : AF_INET6, d->addr, a, sizeof(a));
	if (d->name[0])
		snprintf(buf, len, "%s (%s%s%s port %u)", d->name, d->family == 6 ? "[" : "", a,
			 d->family == 6 ? "]" : "", (unsigned int)d->port);
	else
		snprintf(buf, len, "%s%s%s port %u", d->family == 6 ? "[" : "", a,
			 d->family == 6 ? "]" : "", (unsigned int)d->port);
	*ret_count = d->count;
	return true;
}

/* The destination denied most often, into @buf; 0 when there is none. */
static uint64_t most_denied(const struct events *ev, char *buf, size_t len)
{
	uint64_t best = 0;
	char what[DNS_NAME_MAX + 96];

	buf[0] = '\0';
	for (size_t i = 0; i < 2 * EVENTS_TOP; i++) {
		uint64_t n;

		if (denial_at(ev, i, what, sizeof(what), &n) && n > best) {
			best = n;
			snprintf(buf, len, "%s", what);
		}
	}
	return best;
}

static void on_tick(struct loop_source *src, uint32_t events)
{
	struct watchdog *w = container_of(src, struct watchdog, tick);
	uint64_t ticks, now = mono_us() / 1000;
	char what[DNS_NAME_MAX + 96];

	(void)events;
	if (read(src->fd, &ticks, sizeof(ticks)) < 0 ||
	    now - w->last_line_ms < WATCHDOG_QUIET_MS)
		return;
	for (size_t i = 0; i < 2 * EVENTS_TOP; i++) {
		uint64_t n;

		if (!denial_at(w->ev, i, what, sizeof(what), &n) ||
		    n < w->told_count[i] + WATCHDOG_REPEATS ||
		    (w->told_ms[i] && now - w->told_ms[i] < WATCHDOG_AGAIN_MS))
			continue;
		log_warn("COMMAND keeps trying %s, which this attempt denies (%llu times so far); it stays denied unless the policy or an operator's approval (egret requests) allows it",
			 what, (unsigned long long)n);
		w->told_count[i] = n;
		w->told_ms[i] = w->last_line_ms = now;
		return;		/* one line a tick */
	}
}

/* Past the deadline: COMMAND and everything it started, at once. */
static void on_deadline(struct loop_source *src, uint32_t events)
{
	struct watchdog *w = container_of(src, struct watchdog, deadline);
	char path[PATH_MAX];
	uint64_t ticks;
	int fd;

	(void)events;
	if (read(src->fd, &ticks, sizeof(ticks)) < 0 || w->timed_out)
		return;
	w->timed_out = true;
	snprintf(path, sizeof(path), "%s/cgroup.kill", w->cgroup);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "1", 1) != 1)
		log_error_errno(-errno, "--timeout: kill the attempt's processes (%s)", path);
	if (fd >= 0)
		close(fd);
}

static int arm(struct loop *loop, struct loop_source *src, void (*fn)(struct loop_source *, uint32_t),
	       uint64_t ms, bool periodic)
{
	int r;

	src->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	src->fn = fn;
	if (src->fd < 0)
		return -errno;
	r = timerfd_arm_ms(src->fd, ms, periodic);
	return r < 0 ? r : loop_watch(loop, src, EPOLLIN);
}

int watchdog_start(struct watchdog *w, struct loop *loop, const struct events *ev,
		   const char *cgroup, uint64_t timeout_ms, bool quiet)
{
	int r = 0;

	*w = (struct watchdog){ .deadline = { .fd = -1 }, .tick = { .fd = -1 }, .ev = ev,
				.cgroup = cgroup, .timeout_ms = timeout_ms, .quiet = quiet };
	if (timeout_ms)
		r = arm(loop, &w->deadline, on_deadline, timeout_ms, false);
	if (r == 0 && !quiet)
		r = arm(loop, &w->tick, on_tick, WATCHDOG_TICK_MS, true);
	return r;
}

void watchdog_stop(struct watchdog *w, struct loop *loop)
{
	if (w->deadline.fd >= 0)
		loop_source_close(loop, &w->deadline);
	if (w->tick.fd >= 0)
		loop_source_close(loop, &w->tick);
}

int watchdog_status(const struct watchdog *w, int status, FILE *out)
{
	char what[DNS_NAME_MAX + 96];
	uint64_t n;

	if (!w->timed_out)
		return status;
	n = most_denied(w->ev, what, sizeof(what));
	fprintf(out, "egret: COMMAND ran past --timeout (%llu s) and was ended with all it started",
		(unsigned long long)(w->timeout_ms / 1000));
	if (n)
		fprintf(out, "; it kept trying %s, which this attempt denies (%llu times)",
			what, (unsigned long long)n);
	fputs("\n", out);
	return EXIT_TIMED_OUT;
}
