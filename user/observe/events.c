// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "enforce/dests.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/percpu.h"
#include "lib/util.h"
#include "lib/vocab.h"
#include "observe/events.h"

static const char *const dns_why_names_[DNS_WHY_MAX] = {
	[DNS_WHY_NOT_ALLOWED] = "not-allowed", [DNS_WHY_CLASS] = "class",
	[DNS_WHY_TIMEOUT] = "upstream-timeout", [DNS_WHY_UPSTREAM] = "upstream-error",
	[DNS_WHY_MALFORMED] = "malformed-answer", [DNS_WHY_TOO_MANY] = "too-many-addresses",
	[DNS_WHY_MAP_FULL] = "map-full", [DNS_WHY_BUSY] = "busy",
	[DNS_WHY_QUIET] = "quiet",
};

static const char *const dns_why_texts_[DNS_WHY_MAX] = {
	[DNS_WHY_NOT_ALLOWED] = "not allowed by the policy",
	[DNS_WHY_CLASS] = "a class other than IN",
	[DNS_WHY_TIMEOUT] = "the upstream resolver did not answer",
	[DNS_WHY_UPSTREAM] = "the upstream resolver failed",
	[DNS_WHY_MALFORMED] = "the upstream answer did not parse",
	[DNS_WHY_TOO_MANY] = "more addresses than egret learns from one answer",
	[DNS_WHY_MAP_FULL] = "the allow map is full (raise --max-entries)",
	[DNS_WHY_BUSY] = "too many questions upstream at once",
	[DNS_WHY_QUIET] = "an agent's known noise (its profile's quiet list)",
};

static const char *dns_why_name(enum dns_why why)
{
	return why < DNS_WHY_MAX && dns_why_names_[why] ? dns_why_names_[why] : "unknown";
}

static const char *dns_why_text(unsigned int why)
{
	return why < DNS_WHY_MAX && dns_why_texts_[why] ? dns_why_texts_[why] : "unknown";
}

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* "2026-11-30T06:55:01.123Z" for a CLOCK_BOOTTIME instant. */
static void iso_time(const struct events *ev, uint64_t boot_ns, char *buf,
		     size_t len)
{
	int64_t real = (int64_t)boot_ns + ev->boot_to_real_ns;
	time_t secs = (time_t)(real / 1000000000LL);
	struct tm tm;

	gmtime_r(&secs, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ",
		 (tm.tm_year + 1900) % 10000, (tm.tm_mon + 1) % 100,
		 tm.tm_mday % 100, tm.tm_hour % 100, tm.tm_min % 100,
		 tm.tm_sec % 100,
		 (unsigned int)((uint64_t)real % 1000000000ULL / 1000000));
}

/* One line, one write: a crash never leaves half a line behind. */
static void write_line(struct events *ev, char *line, size_t n)
{
	if (ev->log_fd < 0)
		return;
	line[n++] = '\n';
	if (write(ev->log_fd, line, n) != (ssize_t)n)
		ev->write_errors++;
}

/* Does a record of @e carry a name after it (struct egret_tls_event)? A
 * TLS or HTTP decision: the name asked; an upload refused for its
 * destination: the destination's name (bpf/lib/account.h). */
static bool event_has_name(unsigned int hook, unsigned int reason)
{
	return egret_hook_named(hook) ||
	       (hook == EGRET_HOOK_EGRESS &&
		(reason == EGRET_REASON_BUDGET || reason == EGRET_REASON_UNCOUNTED));
}

/* The counts of the attempt's destination @name (a refusal's, rare). */
static int dest_figures_of(const struct events *ev, const char *name,
			   struct egret_dest_count *ret)
{
	struct dest_figures *all = NULL;
	size_t n = 0;
	int r = dests_read(ev->dests_fd, ev->counters_key, &all, &n);

	for (size_t i = 0; r == 0 && i < n; i++) {
		if (!strcmp(all[i].c.name, name)) {
			*ret = all[i].c;
			free(all);
			return 0;
		}
	}
	free(all);
	return -ENOENT;
}

static void remember_denial(struct events *ev, const struct egret_event *e,
			    const char *name, uint64_t count)
{
	size_t i, alen = e->family == 4 ? 4 : 16;
	__u8 named = egret_hook_named(e->hook) ? e->hook : 0;

	for (i = 0; i < ev->ntop; i++) {
		struct denied_dest *d = &ev->top[i];

		if (d->family == e->family && d->port == e->port &&
		    d->proto == e->proto && d->reason == e->reason &&
		    !memcmp(d->addr, e->addr, alen) && d->named == named &&
		    (!named || !strcmp(d->name, name ? name : ""))) {
			d->count += count;
			return;
		}
	}
	if (ev->ntop == EVENTS_TOP) {
		ev->top_overflow += count;
		return;
	}
	ev->top[ev->ntop++] = (struct denied_dest){
		.family = e->family, .proto = e->proto, .port = e->port,
		.reason = e->reason, .count = count, .named = named,
	};
	memcpy(ev->top[ev->ntop - 1].addr, e->addr, alen);
	snprintf(ev->top[ev->ntop - 1].name, DNS_NAME_MAX + 1, "%s",
		 name ? name : "");
}

/* One BPF event as a JSON line: the schema of docs/EVENTS.md. @repeats:
 * 0 for one event, else how many more of it BPF counted. */
static void log_bpf_event(struct events *ev, const struct egret_event *e,
			  const char *addr, const char *name, const char *sni,
			  uint64_t repeats)
{
	char line[1024], when[64], comm[17];
	const char *proto = egret_proto_name(e->proto);
	size_t off;

	iso_time(ev, e->time_ns, when, sizeof(when));
	memcpy(comm, e->comm, 16);
	comm[16] = '\0';
	off = (size_t)snprintf(line, sizeof(line),
		"{\"v\":%d,\"time\":\"%s\",\"attempt\":", EVENTS_SCHEMA, when);
	off = json_append(line, off, sizeof(line) - 1, ev->attempt);
	off += (size_t)snprintf(line + off, sizeof(line) - off,
		",\"kind\":\"%s\",\"verdict\":\"%s\",\"reason\":\"%s\"",
		egret_hook_name(e->hook),
		egret_verdict_name(e->verdict),
		egret_reason_name(e->reason));
	if (e->tgid) {
		off += (size_t)snprintf(line + off, sizeof(line) - off,
			",\"pid\":%u,\"tid\":%u,\"uid\":%u,\"comm\":", e->tgid,
			e->pid, e->uid);
		off = json_append(line, off, sizeof(line) - 1, comm);
	} else if (comm[0]) {
		/* A repeat line: the command its repeats were counted for. */
		off += (size_t)snprintf(line + off, sizeof(line) - off, ",\"comm\":");
		off = json_append(line, off, sizeof(line) - 1, comm);
	}
	if (proto)
		off += (size_t)snprintf(line + off, sizeof(line) - off,
					",\"proto\":\"%s\"", proto);
	else if (e->proto)
		off += (size_t)snprintf(line + off, sizeof(line) - off,
					",\"proto\":%u", e->proto);
	if (e->family) {
		off += (size_t)snprintf(line + off, sizeof(line) - off,
			",\"family\":%u,\"addr\":\"%s\",\"port\":%u,\"name\":",
			e->family, addr, e->port);
		if (name)
			off = json_append(line, off, sizeof(line) - 1, name);
		else
			off += (size_t)snprintf(line + off, sizeof(line) - off, "null");
	}
	if (event_has_name(e->hook, e->reason) && !egret_hook_named(e->hook)) {
		struct egret_dest_count c;

		off += (size_t)snprintf(line + off, sizeof(line) - off, ",\"destination\":");
		if (sni && sni[0])
			off = json_append(line, off, sizeof(line) - 1, sni);
		else
			off += (size_t)snprintf(line + off, sizeof(line) - off, "null");
		/* What it had sent, and its budget, when egret read them. */
		if (sni && sni[0] && dest_figures_of(ev, sni, &c) == 0)
			off += (size_t)snprintf(line + off, sizeof(line) - off,
						",\"sent\":%llu,\"budget\":%llu",
						(unsigned long long)c.sent,
						(unsigned long long)c.budget);
	}
	if (egret_hook_named(e->hook)) {
		off += (size_t)snprintf(line + off, sizeof(line) - off,
					e->hook == EGRET_HOOK_TLS ? ",\"sni\":" : ",\"host\":");
		if (sni && sni[0])
			off = json_append(line, off, sizeof(line) - 1, sni);
		else
			off += (size_t)snprintf(line + off, sizeof(line) - off, "null");
	}
	if (e->hook == EGRET_HOOK_SOCKET)
		off += (size_t)snprintf(line + off, sizeof(line) - off,
					",\"sock_type\":%u", e->sock_type);
	if (e->hook == EGRET_HOOK_SOCKOPT)
		off += (size_t)snprintf(line + off, sizeof(line) - off,
					",\"level\":%d,\"optname\":%d", e->level,
					e->optname);
	if (repeats)
		off += (size_t)snprintf(line + off, sizeof(line) - off,
					",\"repeats\":%llu", (unsigned long long)repeats);
	off += (size_t)snprintf(line + off, sizeof(line) - off, "}");
	if (off >= sizeof(line) - 1)
		off = sizeof(line) - 2;
	write_line(ev, line, off);
}

/* One BPF event, or (@count > 1, or a repeat) @count of the same. @sni:
 * a TLS decision's name (NULL: none). */
static void on_decision(struct events *ev, const struct egret_event *e,
			const char *sni, uint64_t count, bool repeat)
{
	char addr[INET6_ADDRSTRLEN] = "";
	const char *name = NULL;

	/* egret_sockops could not tie a listener to loopback (no hook can
	 * refuse listen()): from outside it would answer, so the attempt
	 * ends rather than go on with a port others can see. */
	if (e->hook == EGRET_HOOK_LISTEN && e->verdict == EGRET_VERDICT_DENY && ev->loop) {
		log_error("a listener of the attempt (port %u, pid %u) could not be bound to loopback: ending the attempt",
			  e->port, e->tgid);
		loop_stop(ev->loop, -EPROTO);
	}
	if (e->family == 4 || e->family == 6) {
		inet_ntop(e->family == 4 ? AF_INET : AF_INET6, e->addr, addr,
			  sizeof(addr));
		name = ev->names ? names_get(ev->names, e->family == 4 ?
					     AF_INET : AF_INET6, e->addr) : NULL;
	}
	/* A connection that passed its destination's upload budget: its
	 * segments are dropped from now on; end it at once (its cookie is
	 * in level/optname). */
	if (e->hook == EGRET_HOOK_EGRESS && e->reason == EGRET_REASON_BUDGET &&
	    e->verdict == EGRET_VERDICT_DENY && ev->on_over)
		ev->on_over(ev->denial_ctx, (uint64_t)(uint32_t)e->optname << 32 |
					    (uint32_t)e->level);
	if (e->verdict != EGRET_VERDICT_ALLOW && e->family) {
		/* A TLS or HTTP denial is of the name it asked: that is the
		 * host a request would be for; an upload refused for its
		 * budget, of its destination's name. */
		const char *who = event_has_name(e->hook, e->reason) && sni && sni[0] ?
				  sni : name;

		remember_denial(ev, e, who && who[0] ? who : NULL, count);
		if (ev->on_denial)
			ev->on_denial(ev->denial_ctx, e, who && who[0] ? who : NULL, count);
	}
	if (ev->log_fd >= 0)
		log_bpf_event(ev, e, addr, name, sni, repeat ? count : 0);
}

/* The repeat counts' key of a TLS event (bpf/lib/events.h fills it so). */
static void sni_key(const struct egret_event *e, struct egret_repeat_key *k)
{
	memset(k, 0, sizeof(*k));
	memcpy(k->addr, e->addr, sizeof(k->addr));
	k->port = e->port;
	k->family = e->family;
	k->proto = e->proto;
	k->hook = e->hook;
	k->verdict = e->verdict;
	k->reason = e->reason;
	k->sock_type = e->sock_type;
	k->level = e->level;
	k->optname = e->optname;
	memcpy(k->comm, e->comm, sizeof(k->comm));
}

static void sni_note(struct events *ev, const struct egret_event *e, const char *sni)
{
	struct events_sni *s = &ev->snis[ev->nsnis++ % EVENTS_SNIS];

	sni_key(e, &s->key);
	snprintf(s->sni, sizeof(s->sni), "%s", sni);
}

static const char *sni_find(const struct events *ev, const struct egret_repeat_key *k)
{
	for (unsigned int i = 0; i < EVENTS_SNIS && i < ev->nsnis; i++)
		if (!memcmp(&ev->snis[i].key, k, sizeof(*k)))
			return ev->snis[i].sni;
	return NULL;
}

static int on_bpf_event(void *ctx, void *data, size_t size)
{
	const struct egret_tls_event *t = data;
	char sni[sizeof(t->sni) + 1];

	if (size < sizeof(struct egret_event))
		return 0;
	if (!event_has_name(t->e.hook, t->e.reason) || size < sizeof(*t)) {
		on_decision(ctx, data, NULL, 1, false);
		return 0;
	}
	memcpy(sni, t->sni, sizeof(t->sni));
	sni[sizeof(t->sni)] = '\0';
	if (t->e.verdict != EGRET_VERDICT_ALLOW)
		sni_note(ctx, &t->e, sni);
	on_decision(ctx, &t->e, sni, 1, false);
	return 0;
}

/* Denials BPF counted without a record: one line, one summary entry. */
static void on_repeat(void *ctx, const struct egret_repeat_key *k, uint64_t more)
{
	struct events *ev = ctx;
	struct egret_event e = {
		.time_ns = (uint64_t)clock_ns(CLOCK_BOOTTIME), .port = k->port,
		.family = k->family, .proto = k->proto, .hook = k->hook,
		.verdict = k->verdict, .reason = k->reason,
		.sock_type = k->sock_type, .level = k->level, .optname = k->optname,
	};

	memcpy(e.addr, k->addr, sizeof(e.addr));
	memcpy(e.comm, k->comm, sizeof(e.comm));
	on_decision(ev, &e, event_has_name(k->hook, k->reason) ? sni_find(ev, k) : NULL,
		    more, true);
}

/* The ring first: a denial's own record comes before its repeats. */
static void read_all(struct events *ev)
{
	int r;

	if (ev->rb)
		ring_buffer__consume(ev->rb);
	r = repeats_poll(&ev->repeats, on_repeat, ev);
	if (r < 0 && !ev->repeats_failed) {
		log_errno(LOG_WARN, r, "read the repeat counts of denials (egret_repeats)");
		ev->repeats_failed = true;
	}
}

static void on_repeats_timer(struct loop_source *src, uint32_t events)
{
	struct events *ev = container_of(src, struct events, repeats_timer);
	uint64_t ticks;

	(void)events;
	if (read(src->fd, &ticks, sizeof(ticks)) < 0)
		return;
	read_all(ev);
}

static void remember_name(struct events *ev, const char *name, enum dns_why why,
			  bool failed)
{
	struct denied_name *d;

	for (size_t i = 0; i < ev->nnames_out; i++) {
		d = &ev->names_out[i];
		if (d->why == why && d->failed == failed && !strcmp(d->name, name)) {
			d->count++;
			return;
		}
	}
	if (ev->nnames_out == EVENTS_TOP) {
		ev->names_overflow++;
		return;
	}
	d = &ev->names_out[ev->nnames_out++];
	*d = (struct denied_name){ .why = (uint8_t)why, .failed = failed, .count = 1 };
	snprintf(d->name, sizeof(d->name), "%s", name[0] ? name : ".");
}

void events_dns(struct events *ev, const struct dns_decision *d)
{
	static const char *const verdicts[DNS_VERDICT_MAX] = {
		[DNS_VERDICT_ALLOW] = "allow", [DNS_VERDICT_DENY] = "deny",
		[DNS_VERDICT_WOULD_DENY] = "would-deny", [DNS_VERDICT_SERVFAIL] = "servfail",
	};
	const char *name = d->name, *verdict = verdicts[d->verdict < DNS_VERDICT_MAX ? d->verdict : DNS_VERDICT_SERVFAIL];
	enum dns_why why = d->why;
	char line[4096], when[64];
	size_t off;

	if (!ev)
		return;
	if (d->verdict != DNS_VERDICT_ALLOW)
		remember_name(ev, name, why, d->verdict == DNS_VERDICT_SERVFAIL);
	if (d->verdict == DNS_VERDICT_ALLOW)
		ev->dns_answered++;
	else if (why == DNS_WHY_QUIET)
		ev->dns_quiet++;	/* refused, and nothing to attend to */
	else if (d->verdict == DNS_VERDICT_DENY)
		ev->dns_denied++;
	else if (d->verdict == DNS_VERDICT_WOULD_DENY)
		ev->dns_would_deny++;
	else
		ev->dns_failed++;
	if (ev->log_fd < 0)
		return;
	iso_time(ev, (uint64_t)clock_ns(CLOCK_BOOTTIME), when, sizeof(when));
	off = (size_t)snprintf(line, sizeof(line),
		"{\"v\":%d,\"time\":\"%s\",\"attempt\":", EVENTS_SCHEMA, when);
	off = json_append(line, off, sizeof(line) - 1, ev->attempt);
	off += (size_t)snprintf(line + off, sizeof(line) - off,
		",\"kind\":\"dns\",\"verdict\":\"%s\",\"name\":", verdict);
	off = json_append(line, off, sizeof(line) - 1, name);
	off += (size_t)snprintf(line + off, sizeof(line) - off, ",\"qtype\":%u", d->qtype);
	if (why != DNS_WHY_NONE)
		off += (size_t)snprintf(line + off, sizeof(line) - off, ",\"reason\":\"%s\"",
					dns_why_name(why));
	off += (size_t)snprintf(line + off, sizeof(line) - off, ",\"addresses\":[");
	for (int i = 0; i < d->naddrs && off + 64 < sizeof(line); i++) {
		char a[INET6_ADDRSTRLEN];

		inet_ntop(d->addrs[i].family, d->addrs[i].addr, a, sizeof(a));
		off += (size_t)snprintf(line + off, sizeof(line) - off,
					"%s\"%s\"", i ? "," : "", a);
	}
	off += (size_t)snprintf(line + off, sizeof(line) - off, "]");
	if (d->naddrs > 0)
		off += (size_t)snprintf(line + off, sizeof(line) - off,
					",\"ttl\":%u", d->ttl);
	off += (size_t)snprintf(line + off, sizeof(line) - off, "}");
	if (off >= sizeof(line) - 1)
		off = sizeof(line) - 2;
	write_line(ev, line, off);
}

static void on_ring(struct loop_source *src, uint32_t events)
{
	struct events *ev = container_of(src, struct events, src);

	(void)events;
	ring_buffer__consume(ev->rb);
}

int events_open(struct events *ev, const char *log_path, const char *attempt,
		bool audit)
{
	*ev = (struct events){ .attempt = attempt, .log_fd = -1,
			       .counters_fd = -1, .dests_fd = -1, .tls_counts_fd = -1, .audit = audit,
			       .repeats_timer = { .fd = -1 } };
	repeats_init(&ev->repeats, -1);
	ev->boot_to_real_ns = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_BOOTTIME);
	if (!log_path)
		return 0;
	ev->log_fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC |
			  O_NOCTTY, 0600);
	return ev->log_fd < 0 ? -errno : 0;
}

int events_start(struct events *ev, struct loop *loop, int ringbuf_fd,
		 int counters_fd, uint64_t counters_key, int repeats_fd,
		 const struct names *names)
{
	int r;

	ev->counters_fd = counters_fd;
	ev->counters_key = counters_key;
	ev->names = names;
	ev->loop = loop;
	repeats_init(&ev->repeats, repeats_fd);
	ev->rb = ring_buffer__new(ringbuf_fd, on_bpf_event, ev, NULL);
	if (!ev->rb)
		return -errno;
	ev->src = (struct loop_source){ .fd = ring_buffer__epoll_fd(ev->rb),
					.fn = on_ring };
	r = loop_watch(loop, &ev->src, EPOLLIN);
	if (r < 0)
		return r;
	ev->repeats_timer = (struct loop_source){ .fn = on_repeats_timer,
		.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC) };
	if (ev->repeats_timer.fd < 0)
		return -errno;
	r = timerfd_arm_ms(ev->repeats_timer.fd, EVENTS_REPEATS_MS, true);
	if (r < 0)
		return r;
	return loop_watch(loop, &ev->repeats_timer, EPOLLIN);
}

void events_drain(struct events *ev)
{
	read_all(ev);
}

void events_set_tls(struct events *ev, int tls_counts_fd, uint32_t slot)
{
	ev->tls_counts_fd = tls_counts_fd;
	ev->slot = slot;
}

/* A counter of the attempt: TLS verdicts come from the slot's array,
 * the rest from the per-CPU cgroup storage. */
static uint64_t counter(const struct events *ev, uint32_t index)
{
	struct egret_tls_count tls = {};
	uint64_t n = percpu_counter(ev->counters_fd, ev->counters_key, index);

	if (ev->tls_counts_fd < 0 ||
	    ((index < EGRET_COUNTER(EGRET_HOOK_TLS, 0) ||
	      index >= EGRET_COUNTER(EGRET_HOOK_TLS + 1, 0)) &&
	     index != EGRET_COUNTER_DROPPED) ||
	    bpf_map_lookup_elem(ev->tls_counts_fd, &ev->slot, &tls) < 0)
		return n;
	if (index == EGRET_COUNTER_DROPPED)
		return n + tls.lost;
	return tls.n[(index - EGRET_COUNTER(EGRET_HOOK_TLS, 0)) % EGRET_VERDICT_MAX];
}

static int by_name_count(const void *a, const void *b)
{
	const struct denied_name *x = a, *y = b;
	bool xq = x->why == DNS_WHY_QUIET, yq = y->why == DNS_WHY_QUIET;

	/* What needs attention first; an agent's quiet noise last. */
	if (xq != yq)
		return xq ? 1 : -1;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : strcmp(x->name, y->name);
}

static int by_count(const void *a, const void *b)
{
	const struct denied_dest *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

/* One destination's figures, as text: "sent 84 KiB, received 31 MiB, 212
 * connections" and its budget. */
static void dest_line(FILE *out, const struct dest_figures *f, bool audit)
{
	char sent[32], recv[32], budget[32];

	dests_size_text(f->c.sent, sent, sizeof(sent));
	dests_size_text(f->c.received, recv, sizeof(recv));
	fprintf(out, "egret:   %s: sent %s, received %s, %llu connection%s", f->c.name,
		sent, recv, (unsigned long long)f->c.conns, f->c.conns == 1 ? "" : "s");
	if (f->c.budget) {
		dests_size_text(f->c.budget, budget, sizeof(budget));
		fprintf(out, " (upload budget %s%s)", budget,
			f->c.over ? audit ? ", would be exceeded" : ", exceeded: sends refused" : "");
	}
	fprintf(out, "\n");
}

/* The attempt's destinations as they ended, read from the shared map
 * once for the log's records and the summary (a walk of every attempt's
 * entries). NULL when none could be read. */
static const struct dest_figures *final_dests(struct events *ev, size_t *n)
{
	if (!ev->dests_read && dests_read(ev->dests_fd, ev->counters_key, &ev->dests,
					  &ev->ndests) == 0)
		ev->dests_read = true;
	*n = ev->ndests;
	return ev->dests;
}

/* The top destinations by bytes sent, then received. */
static void summary_destinations(struct events *ev, FILE *out)
{
	size_t n, shown = 0;
	const struct dest_figures *all = final_dests(ev, &n);

	for (size_t i = 0; i < n && shown < 10; i++) {
		if (!all[i].c.sent && !all[i].c.received && !all[i].c.conns && !all[i].c.over)
			continue;
		dest_line(out, &all[i], ev->audit);
		shown++;
	}
	if (n > shown && shown == 10)
		fprintf(out, "egret:   ... and more destinations (the log has each)\n");
}

void events_log_destinations(struct events *ev)
{
	const struct dest_figures *all;
	char line[1024], when[64];
	size_t n, off;

	if (ev->log_fd < 0)
		return;
	all = final_dests(ev, &n);
	iso_time(ev, (uint64_t)clock_ns(CLOCK_BOOTTIME), when, sizeof(when));
	for (size_t i = 0; i < n; i++) {
		const struct egret_dest_count *c = &all[i].c;

		off = (size_t)snprintf(line, sizeof(line),
			"{\"v\":%d,\"time\":\"%s\",\"attempt\":", EVENTS_SCHEMA, when);
		off = json_append(line, off, sizeof(line) - 1, ev->attempt);
		off += (size_t)snprintf(line + off, sizeof(line) - off,
					",\"kind\":\"destination\",\"name\":");
		off = json_append(line, off, sizeof(line) - 1, c->name);
		off += (size_t)snprintf(line + off, sizeof(line) - off,
			",\"sent\":%llu,\"received\":%llu,\"connections\":%llu,\"budget\":",
			(unsigned long long)c->sent, (unsigned long long)c->received,
			(unsigned long long)c->conns);
		off += (size_t)snprintf(line + off, sizeof(line) - off,
					c->budget ? "%llu" : "null", (unsigned long long)c->budget);
		off += (size_t)snprintf(line + off, sizeof(line) - off,
					",\"over_budget\":%s}", c->over ? "true" : "false");
		if (off >= sizeof(line) - 1)
			off = sizeof(line) - 2;
		write_line(ev, line, off);
	}
}

void events_summary(struct events *ev, FILE *out)
{
	uint64_t allowed = 0, denied = 0, would = 0, dropped;
	const char *deny_word = ev->audit ? "would be denied" : "denied";

	for (int h = EGRET_HOOK_CONNECT; h <= EGRET_HOOK_SENDMSG; h++) {
		allowed += counter(ev, EGRET_COUNTER(h, EGRET_VERDICT_ALLOW));
		denied += counter(ev, EGRET_COUNTER(h, EGRET_VERDICT_DENY));
		would += counter(ev, EGRET_COUNTER(h, EGRET_VERDICT_WOULD_DENY));
	}
	dropped = counter(ev, EGRET_COUNTER_DROPPED);
	fprintf(out, "egret: attempt %s: connections/datagrams %llu allowed, %llu %s; "
		"DNS %llu answered, %llu %s, ",
		ev->attempt, (unsigned long long)allowed,
		(unsigned long long)(ev->audit ? would : denied), deny_word,
		(unsigned long long)ev->dns_answered,
		(unsigned long long)(ev->audit ? ev->dns_would_deny : ev->dns_denied),
		ev->audit ? "would be denied" : "names denied");
	if (ev->dns_quiet)
		fprintf(out, "%llu quiet, ", (unsigned long long)ev->dns_quiet);
	fprintf(out, "%llu failed", (unsigned long long)ev->dns_failed);
	for (int h = EGRET_HOOK_SOCKET; h < EGRET_HOOK_MAX; h++) {
		uint64_t n = counter(ev, EGRET_COUNTER(h, ev->audit ?
					EGRET_VERDICT_WOULD_DENY : EGRET_VERDICT_DENY));

		if (n)
			fprintf(out, "; %llu %s %s", (unsigned long long)n,
				egret_hook_name(h), deny_word);
	}
	fprintf(out, "\n");
	if (dropped || ev->write_errors)
		fprintf(out, "egret:   %llu events lost (ring buffer and repeat counts full), %llu log writes failed\n",
			(unsigned long long)dropped,
			(unsigned long long)ev->write_errors);

	qsort(ev->top, ev->ntop, sizeof(ev->top[0]), by_count);
	for (size_t i = 0; i < ev->ntop && i < 10; i++) {
		const struct denied_dest *d = &ev->top[i];
		const char *proto = egret_proto_name(d->proto);
		char a[INET6_ADDRSTRLEN], dest[INET6_ADDRSTRLEN + 24];

		inet_ntop(d->family == 4 ? AF_INET : AF_INET6, d->addr, a, sizeof(a));
		snprintf(dest, sizeof(dest), d->family == 6 ? "[%s]:%u/%s" :
			 "%s:%u/%s", a, d->port, proto ? proto : "?");
		if (d->named)
			fprintf(out, "egret:   %s %6llu x %s to %s at %s: %s\n", deny_word,
				(unsigned long long)d->count,
				d->named == EGRET_HOOK_TLS ? "TLS" : "HTTP",
				d->name[0] ? d->name : "(no name)",
				dest, egret_reason_text(d->reason));
		else if (d->name[0])
			fprintf(out, "egret:   %s %6llu x %s (%s): %s\n", deny_word,
				(unsigned long long)d->count, d->name, dest,
				egret_reason_text(d->reason));
		else
			fprintf(out, "egret:   %s %6llu x %s (no name): %s\n",
				deny_word, (unsigned long long)d->count, dest,
				egret_reason_text(d->reason));
	}
	if (ev->ntop > 10 || ev->top_overflow)
		fprintf(out, "egret:   ... and %zu more destinations\n",
			ev->ntop > 10 ? ev->ntop - 10 : 0);
	summary_destinations(ev, out);
	/* The names, with why: what the user needs to widen the policy or
	 * fix the resolver (an index allowed, its files host not). */
	qsort(ev->names_out, ev->nnames_out, sizeof(ev->names_out[0]), by_name_count);
	for (size_t i = 0; i < ev->nnames_out && i < 10; i++) {
		const struct denied_name *d = &ev->names_out[i];

		fprintf(out, "egret:   %s %6llu x %s: %s\n",
			d->failed ? "DNS failed " : d->why == DNS_WHY_QUIET ? "quiet      " :
			ev->audit ? "name would be denied" : "name denied",
			(unsigned long long)d->count, d->name,
			dns_why_text(d->why));
	}
	if (ev->nnames_out > 10 || ev->names_overflow)
		fprintf(out, "egret:   ... and %zu more names\n",
			ev->nnames_out > 10 ? ev->nnames_out - 10 : 0);
}

void events_close(struct events *ev)
{
	ring_buffer__free(ev->rb);
	ev->rb = NULL;
	/* Its loop is gone by now (supervise closed it). */
	if (ev->repeats_timer.fd >= 0)
		close(ev->repeats_timer.fd);
	ev->repeats_timer.fd = -1;
	repeats_free(&ev->repeats);
	free(ev->dests);
	ev->dests = NULL;
	if (ev->log_fd >= 0)
		close(ev->log_fd);
	ev->log_fd = -1;
}
