// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/vocab.h"
#include "requests/ask.h"
#include "requests/export.h"
#include "requests/log.h"
#include "requests/sockowner.h"

int request_log_open(struct request_log *l, const char *dir, const char *repo,
		     const char *attempt, const char *cgroup)
{
	*l = (struct request_log){ .dir = dir, .repo = repo, .attempt = attempt,
				   .cgroup = cgroup, .timer = { .fd = -1 }, .json_fd = -1 };
	l->seen = calloc(REQUEST_LOG_MAX, sizeof(*l->seen));
	return l->seen ? 0 : -ENOMEM;
}

static void on_timer(struct loop_source *src, uint32_t events)
{
	struct request_log *l = container_of(src, struct request_log, timer);
	uint64_t ticks;

	(void)events;
	if (read(src->fd, &ticks, sizeof(ticks)) < 0)
		return;
	l->armed = false;
	if (request_log_flush(l, false) == -EAGAIN && !l->armed &&
	    timerfd_arm_ms(l->timer.fd, REQUEST_LOG_FLUSH_MS, false) == 0)
		l->armed = true;	/* the store was busy: try again */
}

int request_log_start(struct request_log *l, struct loop *loop)
{
	l->loop = loop;
	l->timer.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (l->timer.fd < 0)
		return -errno;
	l->timer.fn = on_timer;
	return loop_watch(loop, &l->timer, EPOLLIN);
}

static struct request_seen *find(struct request_log *l, enum request_kind kind,
				 const char *target, uint16_t port)
{
	for (size_t i = 0; l->seen && i < l->n; i++) {
		struct request *r = &l->seen[i].r;

		if (r->kind == kind && r->port == port && !strcmp(r->target, target))
			return &l->seen[i];
	}
	return NULL;
}

void request_log_attribute(struct request_log *l, const char *name,
			   const struct sockaddr *client, bool tcp)
{
	struct request_seen *s;
	char comm[REQUEST_COMM_MAX + 1];
	uint32_t pid;

	/* Bounded: it reads /proc in the loop that also serves DNS. */
	if (!l || !l->cgroup || l->owner_lookups >= REQUEST_LOG_OWNER_LOOKUPS ||
	    !(s = find(l, REQUEST_NAME, name, 0)) || s->owner_tried || s->r.pid)
		return;
	s->owner_tried = true;
	l->owner_lookups++;
	if (sock_owner_find(l->cgroup, client, tcp, &pid, comm, sizeof(comm)) == 0) {
		s->r.pid = pid;
		memcpy(s->r.comm, comm, sizeof(comm));
		request_add_command(&s->r, comm);
	}
}

static struct request_seen *note(struct request_log *l, enum request_kind kind,
				 const char *target, uint16_t port, const char *proto,
				 uint32_t pid, const char *comm, uint64_t count)
{
	int64_t now = (int64_t)time(NULL);
	struct request_seen *s;

	if (!l || !l->seen || !target[0])
		return NULL;
	s = find(l, kind, target, port);
	if (!s && l->n == REQUEST_LOG_MAX) {
		l->overflow++;
		return NULL;
	}
	if (!s) {
		s = &l->seen[l->n++];
		s->r = (struct request){ .kind = kind, .port = port, .first = now };
		snprintf(s->r.target, sizeof(s->r.target), "%s", target);
	}
	s->r.last = now;
	if (count || !s->r.proto[0])	/* an ask keeps a refusal's proto */
		snprintf(s->r.proto, sizeof(s->r.proto), "%s", proto);
	/* The first process seen keeps the example: it is the one to ask. */
	if (pid && !s->r.pid) {
		s->r.pid = pid;
		snprintf(s->r.comm, sizeof(s->r.comm), "%s", comm ? comm : "");
	}
	request_add_command(&s->r, comm);
	s->unflushed += count;
	if (!l->armed && l->timer.fd >= 0 &&
	    timerfd_arm_ms(l->timer.fd, REQUEST_LOG_FLUSH_MS, false) == 0)
		l->armed = true;
	return s;
}

int request_log_ask(struct request_log *l, const struct ask *a, uint32_t pid,
		    const char *comm)
{
	unsigned int n = a->nports ? a->nports : 1;
	const char *proto = a->nports ? "tcp" : "dns";
	struct request_seen *s;

	/* All of it or none: the agent hears one answer. */
	for (unsigned int i = 0, fresh = 0; i < n; i++)
		if (!find(l, a->kind, a->target, a->nports ? a->ports[i] : 0) &&
		    l->n + ++fresh > REQUEST_LOG_MAX)
			return -ENOSPC;
	for (unsigned int i = 0; i < n; i++) {
		s = note(l, a->kind, a->target, a->nports ? a->ports[i] : 0, proto, pid,
			 comm, 0);
		if (!s)
			return -ENOSPC;
		memcpy(s->r.why, a->why, sizeof(s->r.why));
		s->asked = true;
	}
	return 0;
}

void request_log_note(struct request_log *l, enum request_kind kind,
		      const char *target, uint16_t port, const char *proto,
		      uint32_t pid, const char *comm)
{
	note(l, kind, target, port, proto, pid, comm, 1);
}

/* What was folded into the store, also on json_fd: once per flush. A
 * full pipe loses the line, never blocks the attempt. */
static void export_line(struct request_log *l, const struct request_seen *s)
{
	char line[REQUEST_LINE_MAX];
	struct request delta = s->r;
	ssize_t w __attribute__((unused));
	int n;

	if (l->json_fd < 0 || (!s->unflushed && !s->asked))
		return;
	delta.count = s->unflushed;
	n = request_export_format(l->repo, l->attempt, &delta, !s->stored, line, sizeof(line));
	if (n > 0)
		w = write(l->json_fd, line, (size_t)n);
}

static int flush_locked(struct request_log *l, struct request_store *st)
{
	struct request_file f;
	char err[512] = "";
	int r;

	r = request_file_load(st, l->repo, &f, err, sizeof(err));
	if (r < 0) {
		if (err[0] && !l->warned)
			log_warn("requests: %s; not recording", err);
		l->warned = l->warned || err[0];
		return r;
	}
	for (size_t i = 0; i < l->n && r == 0; i++) {
		struct request_seen *s = &l->seen[i];
		struct request delta = s->r;

		if (!s->unflushed && !s->asked)
			continue;
		delta.count = s->unflushed;
		r = request_file_merge(st, &f, &delta, l->attempt, !s->stored);
		if (r == -ENOSPC)
			r = 0;	/* counted in the file's "dropped" */
	}
	if (r == 0)
		r = request_file_save(st, &f);
	if (r == 0)
		for (size_t i = 0; i < l->n; i++) {
			export_line(l, &l->seen[i]);
			l->seen[i].stored = l->seen[i].stored || l->seen[i].unflushed ||
					    l->seen[i].asked;
			l->seen[i].unflushed = 0;
			l->seen[i].asked = false;
		}
	request_file_free(&f);
	return r;
}

int request_log_flush(struct request_log *l, bool wait)
{
	struct request_store st;
	bool pending = false;
	int r;

	for (size_t i = 0; l->seen && i < l->n; i++)
		pending = pending || l->seen[i].unflushed || l->seen[i].asked;
	if (!pending)
		return 0;
	r = request_store_open(&st, l->dir, wait ? REQUESTS_LOCK_WAIT_MS : 0);
	if (r == 0)
		r = flush_locked(l, &st);
	request_store_close(&st);
	if (r < 0 && (r != -EAGAIN || wait) && !l->warned) {
		log_warn("requests: cannot record in %s: %s (enforcement is unaffected)",
			 l->dir, strerror(-r));
		l->warned = true;
	}
	return r;
}

void request_log_detach(struct request_log *l)
{
	loop_source_close(l->loop, &l->timer);
	l->loop = NULL;
	l->armed = false;
}

void request_log_close(struct request_log *l)
{
	request_log_detach(l);
	if (l->seen)
		request_log_flush(l, true);
	if (l->overflow)
		log_warn("requests: %llu more distinct denials than the %d recorded per attempt",
			 (unsigned long long)l->overflow, REQUEST_LOG_MAX);
	free(l->seen);
	*l = (struct request_log){ .timer = { .fd = -1 } };
}

void request_log_event(struct request_log *l, const struct egret_event *e,
		       const char *name, uint64_t count)
{
	const char *proto = egret_proto_name(e->proto);
	char addr[INET6_ADDRSTRLEN] = "", comm[17];

	/* Port 0 is no destination (and would read as a lookup request).
	 * The backstop's UDP denials are the datagrams of sockets whose
	 * connect() was let through unjudged: requests too. */
	if (l && ((e->hook == EGRET_HOOK_TLS && e->reason == EGRET_REASON_SNI) ||
		  (e->hook == EGRET_HOOK_HTTP && e->reason == EGRET_REASON_HOST)) && name) {
		/* A name the attempt asked for at an address another name
		 * taught: the request is for that name. */
		memcpy(comm, e->comm, 16);
		comm[16] = '\0';
		note(l, REQUEST_NAME, name, e->port, "tcp", e->tgid, comm, count);
		return;
	}
	/* A send refused for its destination's upload budget: a request
	 * for a larger one (proto "upload"), the operator's to give in the
	 * policy (docs/POLICY.md, "Upload budgets"). */
	if (l && e->hook == EGRET_HOOK_EGRESS && e->reason == EGRET_REASON_BUDGET &&
	    e->verdict != EGRET_VERDICT_ALLOW && name) {
		note(l, REQUEST_NAME, name, e->port, "upload", 0, NULL, count);
		return;
	}
	if (!l || !e->port || (e->family != 4 && e->family != 6) ||
	    (e->hook != EGRET_HOOK_CONNECT && e->hook != EGRET_HOOK_SENDMSG &&
	     !(e->hook == EGRET_HOOK_EGRESS && e->proto == 17)) ||
	    (e->reason != EGRET_REASON_NO_ENTRY && e->reason != EGRET_REASON_PORT &&
	     e->reason != EGRET_REASON_SPECIAL))
		return;
	if (!name)
		inet_ntop(e->family == 4 ? AF_INET : AF_INET6, e->addr, addr, sizeof(addr));
	memcpy(comm, e->comm, 16);
	comm[16] = '\0';
	note(l, name ? REQUEST_NAME : REQUEST_ADDR, name ? name : addr,
	     e->port, proto ? proto : "?", e->tgid, comm, count);
}

void request_log_lookup(struct request_log *l, const struct dns_decision *d)
{
	/* Only address lookups ask for a host; PTR, TXT and the rest of a
	 * refused name's traffic stay in the log. An agent's known noise
	 * (quiet) asks for nothing: the operator has nothing to decide. */
	if (!l || (d->verdict != DNS_VERDICT_DENY && d->verdict != DNS_VERDICT_WOULD_DENY) ||
	    d->why == DNS_WHY_QUIET ||
	    (d->qtype != DNS_TYPE_A && d->qtype != DNS_TYPE_AAAA))
		return;
	request_log_note(l, REQUEST_NAME, d->name, 0, "dns", 0, NULL);
	if (d->client)
		request_log_attribute(l, d->name, d->client, d->client_tcp);
}
