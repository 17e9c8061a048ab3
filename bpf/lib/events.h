/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * events.h - every decision, counted per hook and sent to egret.
 *
 * Denials (and, with --log-allowed, allows) go through the attempt's ring
 * buffer to egret's event loop (lib/attempt.h). A denial is sent once per
 * thing denied: its repeats (the same destination, hook and reason) are
 * only counted, in the attempt's egret_repeats, which egret reads every
 * second - a burst of 100 000 refused connects is one record and one
 * count, not 100 000 records racing for the ring. A full ring buffer
 * never changes a verdict: the event is counted as a repeat, or, when
 * that map is full too, as dropped; the decision stands.
 */
#ifndef EGRET_BPF_EVENTS_H
#define EGRET_BPF_EVENTS_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "egret.h"
#include "lib/attempt.h"

static __always_inline void counter_add(__u32 index)
{
	struct egret_counts *c = attempt_counts();

	if (c && index < EGRET_NCOUNTERS)
		c->n[index] += 1;	/* per-CPU: no other writer on this CPU */
}

/* What one decision was about. Fields that do not apply stay zero. */
struct event_info {
	enum egret_hook hook;
	enum egret_verdict verdict;
	enum egret_reason reason;
	int family;			/* 4 or 6 when there is an address */
	const __u32 *addr;		/* network order, 4 words, or NULL */
	__u16 port;			/* host order */
	__u8 proto;
	__u8 sock_type;
	__s32 level;
	__s32 optname;
	int no_task;			/* softirq context: no pid or comm */
};

static __always_inline void repeat_key_of(const struct event_info *in,
					  struct egret_repeat_key *key)
{
	__builtin_memset(key, 0, sizeof(*key));
	if (in->addr) {
		key->addr[0] = in->addr[0];
		key->addr[1] = in->addr[1];
		key->addr[2] = in->addr[2];
		key->addr[3] = in->addr[3];
		key->family = (__u8)in->family;
	}
	key->port = in->port;
	key->proto = in->proto;
	key->hook = (__u8)in->hook;
	key->verdict = (__u8)in->verdict;
	key->reason = (__u8)in->reason;
	key->sock_type = in->sock_type;
	key->level = in->level;
	key->optname = in->optname;
	if (!in->no_task)
		bpf_get_current_comm(key->comm, sizeof(key->comm));
}

/* An event's fields from its repeat key (the inverse of repeat_key_of():
 * what was decided, without time or process). */
static __always_inline void event_of_key(struct egret_event *e,
					 const struct egret_repeat_key *key)
{
	__builtin_memset(e, 0, sizeof(*e));
	e->time_ns = bpf_ktime_get_boot_ns();
	e->addr[0] = key->addr[0];
	e->addr[1] = key->addr[1];
	e->addr[2] = key->addr[2];
	e->addr[3] = key->addr[3];
	e->family = key->family;
	e->port = key->port;
	e->proto = key->proto;
	e->hook = key->hook;
	e->verdict = key->verdict;
	e->reason = key->reason;
	e->sock_type = key->sock_type;
	e->level = key->level;
	e->optname = key->optname;
	__builtin_memcpy(e->comm, key->comm, sizeof(e->comm));
}

/* Count one more of a denial egret already knows of; 0 if it knows none. */
static __always_inline int repeat_count(void *repeats,
					const struct egret_repeat_key *key)
{
	__u64 *n = bpf_map_lookup_elem(repeats, key);

	if (!n)
		return 0;
	__sync_fetch_and_add(n, 1);	/* other CPUs count the same key */
	return 1;
}

/* Where a decision goes: the attempt's ring buffer and repeat counts (its
 * slot), and its counters - none for a TLS decision, counted per slot
 * instead (lib/pin_map.h: sk_msg programs have no cgroup storage). @sni: the
 * name a ClientHello asked for, in map memory, or NULL. */
struct event_sink {
	__u32 slot;
	__u8 log_allowed;
	struct egret_counts *counts;
	__u64 *lost;		/* without @counts: where a lost event is counted */
	const char *sni;
};

/* Count the decision and, unless it is an allow nobody asked to log,
 * queue an event - for a denial, only the first of its kind. */
static __always_inline void event_emit_to(const struct event_info *in,
					  const struct event_sink *to)
{
	struct egret_repeat_key key;
	void *ring, *repeats = NULL;
	struct egret_event *e;
	__u32 slot = to->slot, size = sizeof(*e);
	__u32 index = EGRET_COUNTER(in->hook, in->verdict);
	__u64 zero = 0;
	int tracked = 0;

	if (to->counts && index < EGRET_NCOUNTERS)
		to->counts->n[index] += 1;	/* per-CPU: no other writer here */
	if (in->verdict == EGRET_VERDICT_ALLOW && !to->log_allowed)
		return;
	if (in->verdict != EGRET_VERDICT_ALLOW)
		repeats = bpf_map_lookup_elem(&egret_repeat_of, &slot);
	if (repeats) {
		repeat_key_of(in, &key);
		if (repeat_count(repeats, &key))
			return;
		/* The first: its key from now on (another CPU may have made
		 * it meanwhile - then two records, never none). */
		tracked = bpf_map_update_elem(repeats, &key, &zero,
					      BPF_NOEXIST) == 0;
	}
	if (to->sni)
		size = sizeof(struct egret_tls_event);
	ring = bpf_map_lookup_elem(&egret_rings, &slot);
	e = ring ? bpf_ringbuf_reserve(ring, size, 0) : NULL;
	if (!e) {
		if (tracked && repeats && repeat_count(repeats, &key))
			return;
		if (to->counts)
			to->counts->n[EGRET_COUNTER_DROPPED] += 1;
		else if (to->lost)
			__sync_fetch_and_add(to->lost, 1);
		return;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->time_ns = bpf_ktime_get_boot_ns();
	if (!in->no_task) {
		__u64 id = bpf_get_current_pid_tgid();

		e->pid = (__u32)id;
		e->tgid = id >> 32;
		e->uid = (__u32)bpf_get_current_uid_gid();
		bpf_get_current_comm(e->comm, sizeof(e->comm));
	}
	if (in->addr) {
		e->addr[0] = in->addr[0];
		e->addr[1] = in->addr[1];
		e->addr[2] = in->addr[2];
		e->addr[3] = in->addr[3];
		e->family = (__u8)in->family;
	}
	e->port = in->port;
	e->proto = in->proto;
	e->sock_type = in->sock_type;
	e->level = in->level;
	e->optname = in->optname;
	e->hook = (__u8)in->hook;
	e->verdict = (__u8)in->verdict;
	e->reason = (__u8)in->reason;
	if (to->sni)
		__builtin_memcpy(((struct egret_tls_event *)e)->sni, to->sni,
				 sizeof(((struct egret_tls_event *)e)->sni));
	bpf_ringbuf_submit(e, 0);
}

static __always_inline void event_emit(const struct event_info *in)
{
	struct egret_attempt *cfg = attempt_cfg();
	struct event_sink to = {
		.slot = cfg->slot, .log_allowed = cfg->log_allowed,
		.counts = attempt_counts(),
	};

	event_emit_to(in, &to);
}

/* Turn a judgement into a verdict with its event: in audit mode a policy
 * denial is logged as would-deny and let through. Returns 1 to proceed. */
static __always_inline int event_decide(struct event_info *in)
{
	int audit;

	if (in->reason == EGRET_REASON_ALLOWED) {
		in->verdict = EGRET_VERDICT_ALLOW;
		event_emit(in);
		return 1;
	}
	audit = attempt_cfg()->audit;
	in->verdict = audit ? EGRET_VERDICT_WOULD_DENY : EGRET_VERDICT_DENY;
	event_emit(in);
	return audit;
}

/*
 * event_decide() as a global function, for the judges of the connect and
 * sendmsg programs (task context): verified once per program instead of
 * inline in each judge, where it took half of their verified
 * instructions. Its argument holds no pointer (a global function's memory
 * argument is plain bytes to the verifier): the address is copied in.
 */
struct event_args {
	__u32 addr[4];			/* network order */
	__u32 hook, reason, family, port, proto;
};

__noinline int event_decide_judged(struct event_args *a)
{
	struct event_info in = {};

	if (!a)
		return 0;
	/* The verifier sees any scalar here: the two hooks that judge. */
	in.hook = a->hook == EGRET_HOOK_CONNECT ? EGRET_HOOK_CONNECT : EGRET_HOOK_SENDMSG;
	in.reason = (enum egret_reason)a->reason;
	in.family = a->family == 6 ? 6 : 4;
	in.addr = a->addr;
	in.port = (__u16)a->port;
	in.proto = (__u8)a->proto;
	return event_decide(&in);
}

#endif /* EGRET_BPF_EVENTS_H */
