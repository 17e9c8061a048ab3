/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * account.h - bytes per destination, and upload budgets (docs/BUDGETS.md).
 *
 * Every allow entry carries the id of its destination (a learned name or
 * a static rule: egret_allow.dest); egret writes that destination's entry
 * in egret_dest_counts before any allow entry names it. The egress
 * backstop, which sees every packet of the attempt, counts:
 *  - at a TCP active open's SYN, the connection, and the socket keeps
 *    which destination allowed it (egret_acct_sock);
 *  - at each of its segments, the payload past the highest sequence
 *    number counted so far (a retransmission is counted once), and what
 *    TCP says it received since the last count (its bytes_received: a
 *    receiver's ACKs leave through here, so no program runs per packet
 *    received) - at a segment that carries data, FIN or RST, at any
 *    segment once the connection left ESTABLISHED, and otherwise once
 *    ACCT_RECV_STEP bytes piled up: a download's ACKs read the socket's
 *    storage and nothing more, and every connection's count is whole
 *    from its last segment out;
 *  - each UDP datagram's payload, against the entry that allowed it.
 * A destination with a budget has its bytes reserved before they leave:
 * one atomic add, given back if the total would pass the budget - so at
 * most the budget leaves, however many CPUs send at once. A refused send
 * is dropped, the socket and the destination are marked over (every later
 * segment of the socket is dropped, later connects to the destination
 * refused) and an event tells egret, which destroys the socket.
 * Fail closed: a send whose destination has no counts entry, or a TCP
 * connection whose socket storage cannot be made, is refused.
 */
#ifndef EGRET_BPF_ACCOUNT_H
#define EGRET_BPF_ACCOUNT_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "egret.h"
#include "egret_match.h"
#include "lib/verdict.h"
#include "lib/net.h"
#include "lib/attempt.h"
#include "lib/events.h"

/* (Attempt, destination) -> its counts and budget; egret makes each entry, BPF counts. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EGRET_SHARED_DESTS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct egret_dest_key);
	__type(value, struct egret_dest_count);
} egret_dest_counts SEC(".maps");

/* Per actively opened TCP socket: what of it was counted, where. */
struct egret_acct_sock {
	__u32 dest;
	__u32 isn;		/* its SYN's sequence number */
	__u32 sent_hi;		/* the sequence number past the last byte counted */
	__u32 over;		/* a send passed the budget: drop all it sends */
	__u64 received;		/* bytes_received already counted */
};

/* TCP socket it opened -> what of it was counted, where; written by BPF (egress). */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct egret_acct_sock);
} egret_acct_sock SEC(".maps");

/* One TCP segment or UDP datagram, as the backstop read it. */
struct acct_packet {
	__u32 dst[4];		/* network order; IPv4 in dst[0] */
	__u32 family;		/* 4 or 6 */
	__u32 dport_be;
	__u32 proto;
	__u32 dest;		/* the allow entry's destination (opens, datagrams) */
	__u32 seq;		/* TCP, host order */
	__u32 payload;		/* transport payload bytes */
	__u32 hdr_len;		/* the transport header's bytes; 0: not read */
	__u16 sport_be;
	__u8 syn;		/* TCP: SYN set */
	__u8 ack;		/* TCP: ACK set */
	__u8 end;		/* TCP: FIN or RST set */
};

/* What TCP received is counted in steps of at least this many bytes while
 * its connection is established and sends no data (see acct_segment). */
#define ACCT_RECV_STEP	(64 * 1024)

static __always_inline struct egret_dest_count *acct_dest(__u32 dest)
{
	struct egret_dest_key key = { .attempt = attempt_key(), .dest = dest };

	if (!dest)
		return NULL;
	return bpf_map_lookup_elem(&egret_dest_counts, &key);
}

/*
 * A pinned connection's hello, or an HTTP request, named @dest's name and
 * was allowed: from now on the connection counts against that name - the
 * one the far side serves - not against the name that last taught the
 * address (a CDN address serves many). The connection moves with it. A
 * name without a counts entry leaves it where it was: counted, never not.
 */
static __always_inline void acct_attribute(struct bpf_sock *sk, __u32 dest)
{
	struct egret_dest_count *from, *to;
	struct egret_acct_sock *as;

	if (!sk || !dest)
		return;
	as = bpf_sk_storage_get(&egret_acct_sock, sk, 0, 0);
	if (!as || as->dest == dest)
		return;
	to = acct_dest(dest);
	if (!to)
		return;
	from = acct_dest(as->dest);
	if (from)
		__sync_fetch_and_add(&from->conns, -1);
	__sync_fetch_and_add(&to->conns, 1);
	as->dest = dest;
}

/*
 * Count @n bytes sent to @c: 0, or -1 when they would pass its budget -
 * then nothing of them is counted and the destination is over. Two CPUs
 * reserving at once may both be refused where one would have fitted:
 * under the budget, never over it.
 */
static __always_inline int acct_reserve(struct egret_dest_count *c, __u64 n)
{
	__u64 budget = c->budget, before;

	if (!budget) {
		__sync_fetch_and_add(&c->sent, n);
		return 0;
	}
	before = __sync_fetch_and_add(&c->sent, n);
	if (before + n <= budget)
		return 0;
	__sync_fetch_and_add(&c->sent, -n);
	c->over = 1;
	return -1;
}

/*
 * A send refused for its destination: counted and logged (the name from
 * the counts entry; the socket's cookie in level/optname, so egret can
 * destroy the socket, and repeats are one socket's), dropped - or, in
 * audit mode, let through with its bytes counted. Global: its event's
 * stack is counted once.
 */
__noinline int acct_refuse(struct __sk_buff *skb, const struct acct_packet *p,
			   __u32 reason)
{
	struct egret_attempt *cfg = attempt_cfg();
	struct egret_dest_count *c;
	__u64 cookie;
	struct event_info in = {
		.hook = EGRET_HOOK_EGRESS, .family = 0, .proto = 0,
		.reason = (enum egret_reason)reason, .no_task = 1,
	};
	struct event_sink to = {};

	if (!skb || !p || !cfg)
		return SKB_DROP;
	cookie = bpf_get_socket_cookie(skb);
	c = acct_dest(p->dest);
	in.family = (int)p->family;
	in.addr = p->dst;
	in.port = bpf_ntohs((__u16)p->dport_be);
	in.proto = (__u8)p->proto;
	in.level = (__s32)(__u32)cookie;
	in.optname = (__s32)(__u32)(cookie >> 32);
	in.verdict = cfg->audit ? EGRET_VERDICT_WOULD_DENY : EGRET_VERDICT_DENY;
	to.slot = cfg->slot;
	to.log_allowed = cfg->log_allowed;
	to.counts = attempt_counts();
	to.sni = c ? c->name : NULL;
	event_emit_to(&in, &to);
	if (!cfg->audit)
		return SKB_DROP;
	if (c)
		__sync_fetch_and_add(&c->sent, p->payload);
	return SKB_PASS;
}

/*
 * What acct_open() and acct_segment() return: SKB_PASS, SKB_DROP, or
 * ACCT_REFUSE + the reason, which their caller hands to acct_refuse() -
 * one call deep from egress4/6, not three: the verifier's 512 bytes of
 * stack hold the whole chain of frames.
 */
#define ACCT_REFUSE	0x100

/* @n new bytes to the destination counted in @c (NULL: it has no counts
 * entry): SKB_PASS once reserved. */
static __always_inline int acct_send(struct egret_dest_count *c, __u64 n,
				     struct egret_acct_sock *as)
{
	int audit;

	if (!n)
		return SKB_PASS;
	if (!c)
		return ACCT_REFUSE + EGRET_REASON_UNCOUNTED;
	audit = attempt_cfg()->audit;
	/* Once refused, the destination takes no more: every connection
	 * to it is ended, not only the one that crossed the budget. */
	if ((!c->over || audit) && acct_reserve(c, n) == 0)
		return SKB_PASS;
	if (as && !audit)
		as->over = 1;
	return ACCT_REFUSE + EGRET_REASON_BUDGET;
}

/*
 * The SYN of an active open that @p->dest's entry allowed: the socket's
 * accounting begins (a retransmitted SYN is the same connection). A
 * listener's SYN-ACK (ACK set) answers a connection the attempt did not
 * open: not counted (listeners are tied to loopback, lib/bind.h).
 */
__noinline int acct_open(struct __sk_buff *skb, const struct acct_packet *p)
{
	struct egret_dest_count *c;
	struct egret_acct_sock *as;
	struct bpf_sock *sk;
	int r;

	if (!skb || !p)
		return SKB_DROP;
	if (p->proto != IPPROTO_TCP_)
		return acct_send(acct_dest(p->dest), p->payload, NULL);
	if (p->ack)
		return SKB_PASS;
	sk = skb->sk;
	if (sk)
		sk = bpf_sk_fullsock(sk);
	c = acct_dest(p->dest);
	if (!sk || !c)
		return ACCT_REFUSE + EGRET_REASON_UNCOUNTED;
	if (c->over)
		return ACCT_REFUSE + EGRET_REASON_BUDGET;
	as = bpf_sk_storage_get(&egret_acct_sock, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!as)
		return ACCT_REFUSE + EGRET_REASON_UNCOUNTED;
	if (as->dest != p->dest || as->isn != p->seq || !as->sent_hi) {
		as->dest = p->dest;
		as->isn = p->seq;
		as->sent_hi = p->seq + 1;	/* the SYN takes one number */
		as->over = 0;
		as->received = 0;
		__sync_fetch_and_add(&c->conns, 1);
	}
	/* Data in the SYN (TCP Fast Open) is sent too. */
	if (p->payload && (__s32)(p->seq + 1 + p->payload - as->sent_hi) > 0) {
		r = acct_send(c, p->payload, as);
		if (r != SKB_PASS)
			return r;
		as->sent_hi = p->seq + 1 + p->payload;
	}
	return SKB_PASS;
}

/*
 * Any later segment of a TCP connection. A socket without accounting
 * state did not open the connection here: a request or time-wait socket
 * (no payload), a connection to egret's DNS proxy, or an accepted one of
 * the attempt's own loopback listeners - so it may only go to loopback
 * (in audit mode, anywhere: the SYN may have been let through unjudged).
 */
__noinline int acct_segment(struct __sk_buff *skb, struct acct_packet *p)
{
	struct egret_acct_sock *as = NULL;
	struct egret_dest_count *c = NULL;
	struct bpf_tcp_sock *tp;
	struct bpf_sock *sk;
	__u64 recv;
	__s32 fresh;
	int loopback, r;

	if (!skb || !p)
		return SKB_DROP;
	sk = skb->sk;
	if (sk)
		sk = bpf_sk_fullsock(sk);
	if (sk)
		as = bpf_sk_storage_get(&egret_acct_sock, sk, 0, 0);
	if (!as) {
		if (!p->payload || attempt_cfg()->audit)
			return SKB_PASS;
		loopback = p->family == 4 ?
			egret_classify4(p->dst[0]) == EGRET_ADDR_LOOPBACK :
			egret_classify6(p->dst) == EGRET_ADDR_LOOPBACK;
		return loopback ? SKB_PASS : ACCT_REFUSE + EGRET_REASON_UNCOUNTED;
	}
	/* Refused once: nothing it sends carries data any more; its ACKs and
	 * the RST of egret ending it still go, so the far side ends too. */
	if (as->over && p->payload)
		return SKB_DROP;
	p->dest = as->dest;		/* for the refusal's event */
	/* The destination's counts, looked up once, and only when there is
	 * something to count: received bytes due (see above) or new
	 * payload. */
	tp = bpf_tcp_sock(sk);
	fresh = p->payload ? (__s32)(p->seq + p->payload - as->sent_hi) : 0;
	recv = tp && tp->bytes_received > as->received ? tp->bytes_received - as->received : 0;
	if (recv && !p->payload && !p->end && sk->state == BPF_TCP_ESTABLISHED &&
	    recv < ACCT_RECV_STEP)
		recv = 0;		/* counted at a later segment */
	if (recv || fresh > 0)
		c = acct_dest(as->dest);
	if (recv) {
		if (c)
			__sync_fetch_and_add(&c->received, recv);
		as->received = tp->bytes_received;
	}
	/* An ACK, a FIN (its number is no byte), a retransmission. */
	if (fresh <= 0)
		return SKB_PASS;
	r = acct_send(c, (__u32)fresh, as);
	if (r != SKB_PASS)
		return r;
	as->sent_hi = p->seq + p->payload;
	return SKB_PASS;
}

/* acct_open()'s or acct_segment()'s @r as a verdict. */
static __always_inline int acct_verdict(struct __sk_buff *skb,
					const struct acct_packet *p, int r)
{
	if (r >= ACCT_REFUSE)
		return acct_refuse(skb, p, (__u32)(r - ACCT_REFUSE));
	return r == SKB_PASS ? SKB_PASS : SKB_DROP;
}

/*
 * A connect() or sendmsg() that @dest's entry allowed: refused if the
 * destination is over its budget (its connections are being ended), or
 * has no counts entry (fail closed).
 */
static __always_inline enum egret_reason acct_judge(enum egret_reason reason,
						    __u32 dest)
{
	struct egret_dest_count *c;

	if (reason != EGRET_REASON_ALLOWED)
		return reason;
	c = acct_dest(dest);
	if (!c)
		return EGRET_REASON_UNCOUNTED;
	return c->over ? EGRET_REASON_BUDGET : EGRET_REASON_ALLOWED;
}

#endif /* EGRET_BPF_ACCOUNT_H */
