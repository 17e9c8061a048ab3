// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * daemon/metrics.c - the accept loop's registry of egretd's metrics and
 * their exposition (daemon/metrics.h; names, types and labels in
 * docs/EGRETD.md, "Metrics").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "daemon/metrics.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "lib/vocab.h"
#include "observe/dns_words.h"
#include "requests/store.h"

/* Set-up time buckets, in ms: egretd starts an attempt in a few ms when
 * the programs are warm, hundreds when it loads them. */
static const unsigned int setup_bounds_ms[] = { 1, 2, 5, 10, 20, 50, 100, 250, 500, 1000 };
_Static_assert(ARRAY_SIZE(setup_bounds_ms) + 1 <= ARRAY_SIZE(((struct metrics *)0)->setup),
	       "a count for every bucket and one beyond");

static const char *const end_names[METRICS_END_MAX] = {
	[METRICS_END_OK] = "ok", [METRICS_END_FAILED] = "command_failed",
	[METRICS_END_SIGNAL] = "signal", [METRICS_END_TIMEOUT] = "timeout",
	[METRICS_END_SETUP] = "setup_failed",
};

/* The last report of a live process, until it is reaped. */
struct metrics_live {
	struct metrics_live *prev, *next;
	struct metrics_report last;
	bool readopt;
	bool setup_seen;	/* its set-up time is in the histogram */
	bool folded;		/* its end came: its figures are in the totals */
};

int metrics_init(struct metrics *m, const struct daemon_config *cfg)
{
	*m = (struct metrics){ .cfg = cfg };
	m->repos = calloc(cfg->metrics.repositories + 1, sizeof(*m->repos));
	return m->repos ? 0 : -ENOMEM;
}

void metrics_free(struct metrics *m)
{
	while (m->live) {
		struct metrics_live *l = m->live;

		m->live = l->next;
		free(l);
	}
	free(TAKE_PTR(m->repos));
}

struct metrics_live *metrics_live_new(struct metrics *m, bool readopt)
{
	struct metrics_live *l = calloc(1, sizeof(*l));

	if (readopt)
		m->readopted++;
	else
		m->started++;
	if (!l)
		return NULL;
	l->readopt = readopt;
	l->next = m->live;
	if (m->live)
		m->live->prev = l;
	m->live = l;
	return l;
}

/* The bytes of @repo's ended attempt: its own label value while there is
 * room for one, else "_other" (the table's last entry). */
static void repo_add(struct metrics *m, const char *repo, const struct figures *f)
{
	unsigned int cap = m->cfg->metrics.repositories, i;
	const char *name = repo[0] ? repo : "_none";

	if (!cap)
		return;
	for (i = 0; i < m->nrepos && strcmp(m->repos[i].name, name); i++)
		;
	if (i == m->nrepos && m->nrepos < cap)
		snprintf(m->repos[m->nrepos++].name, sizeof(m->repos[0].name), "%s", name);
	else if (i == m->nrepos)
		i = cap;
	for (unsigned int c = 0; c < FIG_CAT_MAX; c++) {
		m->repos[i].sent += f->sent[c];
		m->repos[i].received += f->received[c];
	}
}

static void fold(struct metrics *m, struct metrics_live *l)
{
	if (l->folded)
		return;
	figures_add(&m->done, &l->last.fig);
	repo_add(m, l->last.repo, &l->last.fig);
	l->folded = true;
}

static void observe_setup(struct metrics *m, uint64_t us)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(setup_bounds_ms) && us > setup_bounds_ms[i] * 1000ULL; i++)
		;
	m->setup[i]++;
	m->setup_sum_us += us;
}

/* A report, taken if it is one. */
static void take(struct metrics *m, struct metrics_live *l, const struct metrics_report *r)
{
	if (l->folded || r->magic != METRICS_MAGIC || r->end >= METRICS_END_MAX)
		return;
	l->last = *r;
	l->last.repo[sizeof(l->last.repo) - 1] = '\0';
	if (r->setup_us && !l->setup_seen) {
		observe_setup(m, r->setup_us);
		l->setup_seen = true;
	}
	if (r->end != METRICS_END_NONE) {
		m->ended[r->end]++;
		fold(m, l);
	}
}

int metrics_live_read(struct metrics *m, struct metrics_live *l, int fd)
{
	static struct metrics_report r;

	/* Bounded: a report a second is what comes. */
	for (int i = 0; i < 64; i++) {
		ssize_t n = recv(fd, &r, sizeof(r), MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return -EPIPE;
		if (n < 0)
			break;
		if (l && n == (ssize_t)sizeof(r))
			take(m, l, &r);
	}
	return 0;
}

void metrics_live_end(struct metrics *m, struct metrics_live *l, int wstatus)
{
	if (!l)
		return;
	/* A RUN's process that exited without an end never got to COMMAND
	 * (refused after its slot). Killed, its attempt runs on under its
	 * keeper, and its re-adopter ends it; a re-adopter without an end
	 * found nothing to serve. */
	if (!l->folded && !l->readopt && l->last.end == METRICS_END_NONE && WIFEXITED(wstatus))
		m->ended[METRICS_END_SETUP]++;
	fold(m, l);
	if (l->prev)
		l->prev->next = l->next;
	else
		m->live = l->next;
	if (l->next)
		l->next->prev = l->prev;
	free(l);
}

/* The store's pending requests, read at most every METRICS_PENDING_MS;
 * a store busy now keeps the last count. */
static void pending_refresh(struct metrics *m)
{
	uint64_t now = mono_us() / 1000;
	struct request_store s;

	if (m->pending_known && now - m->pending_ms < METRICS_PENDING_MS)
		return;
	if (request_store_open(&s, m->cfg->state_dir, 0) < 0)
		return;
	m->pending = request_store_pending(&s);
	request_store_close(&s);
	m->pending_ms = now;
	m->pending_known = true;
}

/* ---- the exposition ----------------------------------------------- */

static void one(struct expo *e, const char *name, const char *type, const char *help,
		uint64_t v)
{
	expo_family(e, name, type, help);
	expo_sample(e, name, NULL, 0, v);
}

static void render_attempts(struct metrics *m, unsigned int running, struct expo *e)
{
	one(e, "egret_attempts_started_total", "counter",
	    "Attempts egretd started: a request admitted and given its slot.", m->started);
	one(e, "egret_attempts_readopted_total", "counter",
	    "Attempts a restarted egretd took back from an earlier one.", m->readopted);
	one(e, "egret_attempts_running", "gauge",
	    "Attempts running now, re-adopted ones included.", running);
	expo_family(e, "egret_attempts_ended_total", "counter",
		    "Attempts ended, by class: ok, command_failed (COMMAND exited non-zero), signal, timeout (--timeout), setup_failed (egret could not start it).");
	for (unsigned int c = METRICS_END_OK; c < METRICS_END_MAX; c++)
		expo_sample(e, "egret_attempts_ended_total",
			    &(struct expo_label){ "class", end_names[c] }, 1, m->ended[c]);
	expo_family(e, "egret_attempt_setup_seconds", "histogram",
		    "Time from a request's slot to COMMAND started.");
	expo_histogram(e, "egret_attempt_setup_seconds", setup_bounds_ms,
		       ARRAY_SIZE(setup_bounds_ms), m->setup, m->setup_sum_us);
}

static void render_refusals(const struct figures *f, struct expo *e)
{
	expo_family(e, "egret_refusals_total", "counter",
		    "Refusals by reason (docs/EVENTS.md) and protocol; DNS names egret refused as protocol dns.");
	for (unsigned int r = 0; r < EGRET_REASON_MAX; r++)
		for (unsigned int p = 0; p < FIG_PROTO_MAX; p++)
			if (f->refused[r][p])
				expo_sample(e, "egret_refusals_total", (const struct expo_label[]){
						{ "reason", egret_reason_name(r) },
						{ "protocol", fig_proto_name(p) } }, 2, f->refused[r][p]);
	for (unsigned int w = 0; w < DNS_WHY_MAX; w++)
		if (f->dns_refused[w])
			expo_sample(e, "egret_refusals_total", (const struct expo_label[]){
					{ "reason", dns_why_name(w) }, { "protocol", "dns" } }, 2,
				    f->dns_refused[w]);
	expo_family(e, "egret_dns_questions_total", "counter",
		    "DNS questions of attempts: answered, denied (NXDOMAIN by egret), failed (SERVFAIL).");
	for (unsigned int d = 0; d < FIG_DNS_MAX; d++)
		expo_sample(e, "egret_dns_questions_total",
			    &(struct expo_label){ "result", fig_dns_name(d) }, 1, f->dns[d]);
	one(e, "egret_budget_hits_total", "counter",
	    "Destinations whose upload budget an ended attempt used up.", f->budget_hits);
	one(e, "egret_events_lost_total", "counter",
	    "Decisions the ring buffer or the repeat counts had no room for.", f->lost);
}

static void render_bytes(struct metrics *m, const struct figures *f, struct expo *e)
{
	static const char *const names[2][2] = {
		{ "egret_sent_bytes_total", "egret_received_bytes_total" },
		{ "egret_repository_sent_bytes_total", "egret_repository_received_bytes_total" },
	};
	unsigned int cap = m->cfg->metrics.repositories;

	for (int dir = 0; dir < 2; dir++) {
		expo_family(e, names[0][dir], "counter", dir ?
			    "Bytes ended attempts received, by the destination's catalog category." :
			    "Bytes ended attempts sent, by the destination's catalog category.");
		for (unsigned int c = 0; c < FIG_CAT_MAX; c++)
			expo_sample(e, names[0][dir],
				    &(struct expo_label){ "category", fig_category_name(c) }, 1,
				    dir ? f->received[c] : f->sent[c]);
	}
	if (!cap)
		return;
	for (int dir = 0; dir < 2; dir++) {
		expo_family(e, names[1][dir], "counter",
			    "Bytes of ended attempts by repository (metrics.repositories of them; the rest as _other, none as _none).");
		for (unsigned int i = 0; i <= cap; i++) {
			const struct metrics_repo *r = &m->repos[i];

			if (i == cap ? r->sent || r->received : i < m->nrepos)
				expo_sample(e, names[1][dir], &(struct expo_label){ "repository",
					    i < cap ? r->name : "_other" }, 1,
					    dir ? r->received : r->sent);
		}
	}
}

void metrics_render(struct metrics *m, unsigned int running, struct expo *out)
{
	struct figures all = m->done;

	for (const struct metrics_live *l = m->live; l; l = l->next)
		if (!l->folded)
			figures_add(&all, &l->last.fig);
	pending_refresh(m);
	render_attempts(m, running, out);
	render_refusals(&all, out);
	render_bytes(m, &all, out);
	one(out, "egret_requests_pending", "gauge",
	    "Requests in the store (attempts.state_dir) waiting for an operator.", m->pending);
}
