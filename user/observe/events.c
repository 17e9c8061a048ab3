// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * observe/events.c - the attempt's decisions as they come: BPF's ring
 * buffer and repeat counts, the DNS proxy's; each counted and kept for
 * the summary (observe/summary.c), handed on, and logged.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "dns/decision.h"
#include "dns/names.h"
#include "enforce/dests.h"
#include "lib/log.h"
#include "lib/vocab.h"
#include "observe/dns_words.h"
#include "observe/events.h"
#include "observe/jsonl.h"

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
	int r = dests_read(ev->dests_fd, ev->tally_fd, ev->counters_key, &all, &n);

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

/* Who: the process, or (a repeat line) the command its repeats were
 * counted for. */
static void put_who(struct jsonl *l, const struct egret_event *e)
{
	char comm[17];

	memcpy(comm, e->comm, 16);
	comm[16] = '\0';
	if (e->tgid) {
		jsonl_put(l, ",\"pid\":%u,\"tid\":%u,\"uid\":%u,\"comm\":", e->tgid,
			  e->pid, e->uid);
		jsonl_str(l, comm);
	} else if (comm[0]) {
		jsonl_put(l, ",\"comm\":");
		jsonl_str(l, comm);
	}
}

/* Where to: the protocol, the address and port, the name that taught
 * the address (null: none). */
static void put_where(struct jsonl *l, const struct egret_event *e, const char *addr,
		      const char *name)
{
	const char *proto = egret_proto_name(e->proto);

	if (proto)
		jsonl_put(l, ",\"proto\":\"%s\"", proto);
	else if (e->proto)
		jsonl_put(l, ",\"proto\":%u", e->proto);
	if (!e->family)
		return;
	jsonl_put(l, ",\"family\":%u,\"addr\":\"%s\",\"port\":%u,\"name\":",
		  e->family, addr, e->port);
	if (name)
		jsonl_str(l, name);
	else
		jsonl_put(l, "null");
}

/* The name the record carried (@sni): an upload refused for its
 * destination, with what it had sent and its budget when egret read them;
 * or the name a TLS or HTTP decision asked. */
static void put_named(struct jsonl *l, const struct events *ev,
		      const struct egret_event *e, const char *sni)
{
	struct egret_dest_count c;
	bool has = sni && sni[0];

	if (egret_hook_named(e->hook)) {
		jsonl_put(l, e->hook == EGRET_HOOK_TLS ? ",\"sni\":" : ",\"host\":");
		jsonl_str_or_null(l, sni);
		return;
	}
	if (!event_has_name(e->hook, e->reason))
		return;
	jsonl_put(l, ",\"destination\":");
	jsonl_str_or_null(l, sni);
	if (has && dest_figures_of(ev, sni, &c) == 0)
		jsonl_put(l, ",\"sent\":%llu,\"budget\":%llu", (unsigned long long)c.sent,
			  (unsigned long long)c.budget);
}

/* One BPF event as a JSON line: the schema of docs/EVENTS.md. @repeats:
 * 0 for one event, else how many more of it BPF counted. */
static void log_bpf_event(struct events *ev, const struct egret_event *e,
			  const char *addr, const char *name, const char *sni,
			  uint64_t repeats)
{
	char line[1024];
	struct jsonl l = { .buf = line, .len = sizeof(line) };

	jsonl_start(&l, &ev->log, e->time_ns);
	jsonl_put(&l, ",\"kind\":\"%s\",\"verdict\":\"%s\",\"reason\":\"%s\"",
		  egret_hook_name(e->hook), egret_verdict_name(e->verdict),
		  egret_reason_name(e->reason));
	put_who(&l, e);
	put_where(&l, e, addr, name);
	put_named(&l, ev, e, sni);
	if (e->hook == EGRET_HOOK_SOCKET)
		jsonl_put(&l, ",\"sock_type\":%u", e->sock_type);
	if (e->hook == EGRET_HOOK_SOCKOPT)
		jsonl_put(&l, ",\"level\":%d,\"optname\":%d", e->level, e->optname);
	if (repeats)
		jsonl_put(&l, ",\"repeats\":%llu", (unsigned long long)repeats);
	jsonl_end(&ev->log, &l);
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
	if (e->verdict == EGRET_VERDICT_DENY && e->reason < EGRET_REASON_MAX)
		ev->fig.refused[e->reason][fig_proto_of(e->hook, e->proto)] += count;
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
	if (ev->log.fd >= 0)
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
		.time_ns = jsonl_boot_ns(), .port = k->port,
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

/* Counted for the summary: answered, refused (an agent's quiet noise
 * apart), would-be refused, failed. */
static void count_dns(struct events *ev, const struct dns_decision *d)
{
	if (d->verdict != DNS_VERDICT_ALLOW)
		remember_name(ev, d->name, d->why, d->verdict == DNS_VERDICT_SERVFAIL);
	if (d->verdict == DNS_VERDICT_DENY && d->why < DNS_WHY_MAX)
		ev->fig.dns_refused[d->why]++;
	ev->fig.dns[d->verdict == DNS_VERDICT_SERVFAIL ? FIG_DNS_FAILED :
		    d->verdict == DNS_VERDICT_DENY ? FIG_DNS_DENIED : FIG_DNS_ANSWERED]++;
	if (d->verdict == DNS_VERDICT_ALLOW)
		ev->dns_answered++;
	else if (d->why == DNS_WHY_QUIET)
		ev->dns_quiet++;	/* refused, and nothing to attend to */
	else if (d->verdict == DNS_VERDICT_DENY)
		ev->dns_denied++;
	else if (d->verdict == DNS_VERDICT_WOULD_DENY)
		ev->dns_would_deny++;
	else
		ev->dns_failed++;
}

void events_dns(struct events *ev, const struct dns_decision *d)
{
	static const char *const verdicts[DNS_VERDICT_MAX] = {
		[DNS_VERDICT_ALLOW] = "allow", [DNS_VERDICT_DENY] = "deny",
		[DNS_VERDICT_WOULD_DENY] = "would-deny", [DNS_VERDICT_SERVFAIL] = "servfail",
	};
	const char *verdict = verdicts[d->verdict < DNS_VERDICT_MAX ? d->verdict :
				       DNS_VERDICT_SERVFAIL];
	char line[4096];
	struct jsonl l = { .buf = line, .len = sizeof(line) };

	if (!ev)
		return;
	count_dns(ev, d);
	if (ev->log.fd < 0)
		return;
	jsonl_start(&l, &ev->log, jsonl_boot_ns());
	jsonl_put(&l, ",\"kind\":\"dns\",\"verdict\":\"%s\",\"name\":", verdict);
	jsonl_str(&l, d->name);
	jsonl_put(&l, ",\"qtype\":%u", d->qtype);
	if (d->why != DNS_WHY_NONE)
		jsonl_put(&l, ",\"reason\":\"%s\"", dns_why_name(d->why));
	jsonl_put(&l, ",\"addresses\":[");
	for (int i = 0; i < d->naddrs && l.off + 64 < l.len; i++) {
		char a[INET6_ADDRSTRLEN];

		inet_ntop(d->addrs[i].family, d->addrs[i].addr, a, sizeof(a));
		jsonl_put(&l, "%s\"%s\"", i ? "," : "", a);
	}
	jsonl_put(&l, "]");
	if (d->naddrs > 0)
		jsonl_put(&l, ",\"ttl\":%u", d->ttl);
	jsonl_end(&ev->log, &l);
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
	/* Only what is not zero: @ev comes zeroed (events.h), and writing
	 * all 47 KiB of it faulted in every page of its tables at every
	 * start (issue 42). */
	ev->log.fd = -1;
	ev->log.attempt = attempt;
	ev->counters_fd = ev->dests_fd = ev->tally_fd = ev->tls_counts_fd = -1;
	ev->audit = audit;
	ev->repeats_timer.fd = -1;
	repeats_init(&ev->repeats, -1);
	ev->log.boot_to_real_ns = jsonl_boot_to_real_ns();
	if (!log_path)
		return 0;
	ev->log.fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC |
			  O_NOCTTY, 0600);
	return ev->log.fd < 0 ? -errno : 0;
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
	if (ev->log.fd >= 0)
		close(ev->log.fd);
	ev->log.fd = -1;
}
