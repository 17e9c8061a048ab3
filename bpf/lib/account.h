/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * account.h - bytes per destination, and upload budgets (docs/BUDGETS.md).
 *
 * Every allow entry carries the id of its destination (a learned name or
 * a static rule: egret_allow.dest); egret writes that destination's
 * entries (account_map.h) before any allow entry names it. The egress
 * backstop, which sees every packet of the attempt, counts:
 *  - at a TCP active open's SYN, the connection, against the destination
 *    of the entry that allowed it;
 *  - at each of its segments, the payload past what TCP already sent
 *    (a retransmission is counted once);
 *  - each UDP datagram's payload, against the entry that allowed it.
 * What a connection received is read from TCP's own counter
 * (bytes_received): at its close by sock_ops, and, for a connection with
 * socket storage, at its segments too (see acct_segment).
 *
 * Most connections keep nothing: one to a destination without a budget,
 * on a port that is not pinned, is a "bare" connection (acct_open_bare).
 * Its SYN writes the destination under its peer's address
 * (egret_addr_dest), its segments find it there, and what is new in a
 * segment is read from TCP's snd_nxt, which the segment leaves before
 * TCP moves it on. Its counts go to this CPU's tally (egret_dest_tally),
 * summed by egret when it reads them: no socket storage made at the SYN,
 * no atomic on a line both CPUs write, per packet. One that goes on to
 * send more than ACCT_UPLOAD_BYTES (an upload) gets socket storage then,
 * which spares each later segment the lookup of its peer (acct_upload).
 *
 * A connection to a destination with a budget, or on a pinned port (its
 * hello or request may move it to another name: acct_attribute), keeps
 * its account in socket storage (egret_acct_sock), and its bytes are
 * reserved before they leave: one atomic add on the destination's counts
 * entry, given back if the total would pass the budget - so at most the
 * budget leaves, however many CPUs send at once. A refused send is
 * dropped, the socket and the destination are marked over (every later
 * segment of the socket is dropped, later connects to the destination
 * refused) and an event tells egret, which destroys the socket.
 * Fail closed: a send whose destination has no counts entry, or a TCP
 * connection to a budget whose socket storage cannot be made, is refused.
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
#include "lib/account_map.h"

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
	__u8 pinned;		/* TCP: to a port SNI or Host pinning judges */
};

/* What TCP received is counted in steps of at least this many bytes while
 * its connection is established and sends no data (see acct_segment). */
#define ACCT_RECV_STEP	(64 * 1024)

/* A bare connection that has this many bytes acknowledged keeps its
 * account in socket storage from then on (acct_upload). */
#define ACCT_UPLOAD_BYTES	(512 * 1024)

static __always_inline struct egret_dest_count *acct_dest(__u32 dest)
{
	struct egret_dest_key key = { .attempt = attempt_key(), .dest = dest };

	if (!dest)
		return NULL;
	return bpf_map_lookup_elem(&egret_dest_counts, &key);
}

/* This CPU's tally of @dest; NULL when egret made none (fail closed). */
static __always_inline struct egret_dest_tally *acct_tally(__u32 dest)
{
	struct egret_dest_key key = { .attempt = attempt_key(), .dest = dest };

	if (!dest)
		return NULL;
	return bpf_map_lookup_elem(&egret_dest_tally, &key);
}

/* Atomic, though the line is this CPU's alone: a softirq on the same CPU
 * (an ACK, a retransmission) may run between a plain load and store. */
static __always_inline void acct_add(__u64 *n, __u64 v)
{
	__sync_fetch_and_add(n, v);
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
	struct egret_dest_tally *from, *to;
	struct egret_acct_sock *as;

	if (!sk || !dest)
		return;
	as = bpf_sk_storage_get(&egret_acct_sock, sk, 0, 0);
	if (!as || as->dest == dest)
		return;
	to = acct_tally(dest);
	if (!to)
		return;
	from = acct_tally(as->dest);
	if (from)
		acct_add(&from->conns, -1);
	acct_add(&to->conns, 1);
	as->dest = dest;
	as->no_budget = 0;	/* @dest's budget unread: acct_send reads it */
}

/*
 * Reserve @n bytes against @c's budget: 0, or -1 when they would pass it
 * - then nothing of them is counted and the destination is over. Two
 * CPUs reserving at once may both be refused where one would have
 * fitted: under the budget, never over it.
 */
static __always_inline int acct_reserve(struct egret_dest_count *c, __u64 n)
{
	__u64 before = __sync_fetch_and_add(&c->sent, n);

	if (before + n <= c->budget)
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

/* @n new bytes to @dest: SKB_PASS once counted - on this CPU's tally
 * without a budget, reserved against it with one. A socket whose storage
 * says @dest has no budget (a budget never changes) skips the counts
 * entry; its tally is still required (fail closed). */
static __always_inline int acct_send(__u32 dest, __u64 n, struct egret_acct_sock *as)
{
	struct egret_dest_tally *t;
	struct egret_dest_count *c = NULL;
	int audit;

	if (!n)
		return SKB_PASS;
	if (!as || !as->no_budget) {
		c = acct_dest(dest);
		if (!c)
			return ACCT_REFUSE + EGRET_REASON_UNCOUNTED;
	}
	if (!c || !c->budget) {
		t = acct_tally(dest);
		if (!t)
			return ACCT_REFUSE + EGRET_REASON_UNCOUNTED;
		acct_add(&t->sent, n);
		return SKB_PASS;
	}
	audit = attempt_cfg()->audit;
	/* Once refused, the destination takes no more: every connection
	 * to it is ended, not only the one that crossed the budget. */
	if ((!c->over || audit) && acct_reserve(c, n) == 0)
		return SKB_PASS;
	if (as && !audit)
		as->over = 1;
	return ACCT_REFUSE + EGRET_REASON_BUDGET;
}

/* The key of @family's peer @addr (network order; IPv4 in addr[0]) in
 * egret_addr_dest. */
static __always_inline void acct_addr_key(struct egret_name_key *key, __u32 family,
					  const __u32 addr[4])
{
	key->attempt = attempt_key();
	key->family = family;
	key->addr[0] = addr[0];
	if (family == 6) {
		key->addr[1] = addr[1];
		key->addr[2] = addr[2];
		key->addr[3] = addr[3];
	}
}

/* The destination bare connections to @p's peer count against; NULL:
 * none was opened to it. */
static __always_inline __u32 *acct_addr_dest(const struct acct_packet *p)
{
	struct egret_name_key key = {};

	acct_addr_key(&key, p->family, p->dst);
	return bpf_map_lookup_elem(&egret_addr_dest, &key);
}

/* A bare connection to @p's peer opens, for @p->dest: its peer's
 * destination from now on (a write only when it changes); @cur is its
 * entry in egret_addr_dest if the caller looked it up. 0 or -errno. */
static __always_inline int acct_addr_remember(const struct acct_packet *p, __u32 *cur)
{
	struct egret_name_key key = {};
	__u32 dest = p->dest;

	acct_addr_key(&key, p->family, p->dst);
	if (!cur)
		cur = bpf_map_lookup_elem(&egret_addr_dest, &key);
	if (cur) {
		if (*cur != dest)
			*cur = dest;
		return 0;
	}
	return (int)bpf_map_update_elem(&egret_addr_dest, &key, &dest, BPF_ANY);
}

/* acct_open_bare(): this connection needs socket storage after all. */
#define ACCT_WITH_STORAGE	0x200

/*
 * The SYN of a bare connection (see the top): its peer remembers its
 * destination, and the connection is counted at its first SYN - the one
 * TCP sends before it moves snd_nxt past the SYN's number; a
 * retransmitted SYN is below it. Data in the SYN (TCP Fast Open) is sent
 * too. ACCT_WITH_STORAGE when TCP's state cannot be read or the address
 * cannot be remembered (egret_addr_dest full): then the socket keeps its
 * account in storage, as one with a budget. @cur: the peer's entry in
 * egret_addr_dest, if the caller looked it up.
 */
static __always_inline int acct_open_bare(struct bpf_sock *sk, const struct acct_packet *p,
					  __u32 *cur)
{
	struct bpf_tcp_sock *tp = bpf_tcp_sock(sk);
	struct egret_dest_tally *t;

	if (!tp)
		return ACCT_WITH_STORAGE;
	t = acct_tally(p->dest);
	if (!t)
		return ACCT_REFUSE + EGRET_REASON_UNCOUNTED;
	if ((!cur || *cur != p->dest) && acct_addr_remember(p, cur) < 0)
		return ACCT_WITH_STORAGE;
	if (tp->snd_nxt != p->seq)
		return SKB_PASS;	/* a retransmitted SYN */
	acct_add(&t->conns, 1);
	if (p->payload)
		acct_add(&t->sent, p->payload);
	return SKB_PASS;
}

/*
 * The SYN of an active open that @p->dest's entry allowed: the
 * connection's accounting begins, bare or with socket storage (a
 * retransmitted SYN is the same connection). A listener's SYN-ACK (ACK
 * set) answers a connection the attempt did not open: not counted
 * (listeners are tied to loopback, lib/bind.h).
 */
__noinline int acct_open(struct __sk_buff *skb, const struct acct_packet *p)
{
	struct egret_dest_tally *t;
	struct egret_dest_count *c;
	struct egret_acct_sock *as;
	struct bpf_sock *sk;
	__u32 *cur = NULL;
	int r;

	if (!skb || !p)
		return SKB_DROP;
	if (p->proto != IPPROTO_TCP_)
		return acct_send(p->dest, p->payload, NULL);
	if (p->ack)
		return SKB_PASS;
	sk = skb->sk;
	if (sk)
		sk = bpf_sk_fullsock(sk);
	if (!sk)
		return ACCT_REFUSE + EGRET_REASON_UNCOUNTED;
	/* The peer's last bare connection counted against this destination:
	 * it has no budget (one never changes), so it is never over, and its
	 * counts entry need not be read; its tally still must be there. */
	if (!p->pinned) {
		cur = acct_addr_dest(p);
		if (cur && *cur == p->dest) {
			r = acct_open_bare(sk, p, cur);
			if (r != ACCT_WITH_STORAGE)
				return r;
		}
	}
	c = acct_dest(p->dest);
	if (!c)
		return ACCT_REFUSE + EGRET_REASON_UNCOUNTED;
	if (c->over)
		return ACCT_REFUSE + EGRET_REASON_BUDGET;
	if (!c->budget && !p->pinned) {
		r = acct_open_bare(sk, p, cur);
		if (r != ACCT_WITH_STORAGE)
			return r;
	}
	t = acct_tally(p->dest);
	as = bpf_sk_storage_get(&egret_acct_sock, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!as || !t)
		return ACCT_REFUSE + EGRET_REASON_UNCOUNTED;
	if (as->dest != p->dest || as->isn != p->seq || !as->sent_hi) {
		as->dest = p->dest;
		as->isn = p->seq;
		as->sent_hi = p->seq + 1;	/* the SYN takes one number */
		as->over = 0;
		as->received = 0;
		as->no_budget = !c->budget;
		acct_add(&t->conns, 1);
	}
	/* Data in the SYN (TCP Fast Open) is sent too. */
	if (p->payload && (__s32)(p->seq + 1 + p->payload - as->sent_hi) > 0) {
		r = acct_send(p->dest, p->payload, as);
		if (r != SKB_PASS)
			return r;
		as->sent_hi = p->seq + 1 + p->payload;
	}
	return SKB_PASS;
}

/*
 * A bare connection that has sent ACCT_UPLOAD_BYTES is an upload: it
 * gets socket storage now, so that each later segment reads its account
 * there (one lookup: the tally) instead of its peer's destination in
 * egret_addr_dest and then the tally. Everything up to this segment's
 * end was counted (it carried new bytes: TCP's snd_nxt is at most its
 * end); what it received was not, so the storage starts at none, and
 * its segments and its close count it as any other's. Its destination
 * is one without a budget (egret_addr_dest names no other). Without
 * storage (none can be made) it stays bare: counted all the same.
 */
static __always_inline void acct_upload(struct bpf_sock *sk, const struct acct_packet *p)
{
	struct egret_acct_sock *as;

	as = bpf_sk_storage_get(&egret_acct_sock, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!as)
		return;
	as->dest = p->dest;
	as->isn = 0;
	as->sent_hi = p->seq + p->payload;
	as->over = 0;
	as->received = 0;
	as->no_budget = 1;
}

/*
 * A later segment of a connection without socket storage: a bare one
 * (its new bytes, past TCP's snd_nxt, counted against its peer's
 * destination), or one the attempt did not open here - a request or
 * time-wait socket (no payload), a connection to egret's DNS proxy, or an
 * accepted one of the attempt's own loopback listeners - which may only
 * send to loopback (in audit mode, anywhere: the SYN may have been let
 * through unjudged). A retransmission passes: its bytes passed before.
 */
static __always_inline int acct_segment_bare(struct bpf_sock *sk, struct acct_packet *p)
{
	struct bpf_tcp_sock *tp = sk ? bpf_tcp_sock(sk) : NULL;
	struct egret_dest_tally *t;
	__s32 fresh = (__s32)p->payload;
	__u32 *dest;
	int loopback;

	if (tp)
		fresh = (__s32)(p->seq + p->payload - tp->snd_nxt);
	if (fresh <= 0)
		return SKB_PASS;
	if (fresh > (__s32)p->payload)
		fresh = (__s32)p->payload;
	dest = acct_addr_dest(p);
	if (!dest) {
		if (attempt_cfg()->audit)
			return SKB_PASS;
		loopback = p->family == 4 ?
			egret_classify4(p->dst[0]) == EGRET_ADDR_LOOPBACK :
			egret_classify6(p->dst) == EGRET_ADDR_LOOPBACK;
		return loopback ? SKB_PASS : ACCT_REFUSE + EGRET_REASON_UNCOUNTED;
	}
	p->dest = *dest;		/* for the refusal's event */
	t = acct_tally(p->dest);
	if (!t)
		return ACCT_REFUSE + EGRET_REASON_UNCOUNTED;
	acct_add(&t->sent, (__u32)fresh);
	if (sk && tp && tp->bytes_acked >= ACCT_UPLOAD_BYTES)
		acct_upload(sk, p);
	return SKB_PASS;
}

/*
 * Any later segment of a TCP connection. One with socket storage counts
 * its payload past the highest sequence number counted so far (a
 * retransmission once), and what TCP says it received since the last
 * count - at a segment that carries data, FIN or RST, at any segment
 * once the connection left ESTABLISHED, and otherwise once
 * ACCT_RECV_STEP bytes piled up: a download's ACKs read the socket's
 * storage and nothing more (and sock_ops adds the rest at its close).
 */
__noinline int acct_segment(struct __sk_buff *skb, struct acct_packet *p)
{
	struct egret_acct_sock *as = NULL;
	struct egret_dest_tally *t;
	struct bpf_tcp_sock *tp;
	struct bpf_sock *sk;
	__u64 recv;
	__s32 fresh;
	int r;

	if (!skb || !p)
		return SKB_DROP;
	sk = skb->sk;
	if (sk)
		sk = bpf_sk_fullsock(sk);
	if (sk)
		as = bpf_sk_storage_get(&egret_acct_sock, sk, 0, 0);
	if (!as)
		return p->payload ? acct_segment_bare(sk, p) : SKB_PASS;
	/* Refused once: nothing it sends carries data any more; its ACKs and
	 * the RST of egret ending it still go, so the far side ends too. */
	if (as->over && p->payload)
		return SKB_DROP;
	p->dest = as->dest;		/* for the refusal's event */
	tp = bpf_tcp_sock(sk);
	fresh = p->payload ? (__s32)(p->seq + p->payload - as->sent_hi) : 0;
	recv = tp && tp->bytes_received > as->received ? tp->bytes_received - as->received : 0;
	if (recv && !p->payload && !p->end && sk->state == BPF_TCP_ESTABLISHED &&
	    recv < ACCT_RECV_STEP)
		recv = 0;		/* counted at a later segment */
	if (recv) {
		t = acct_tally(as->dest);
		if (t)
			acct_add(&t->received, recv);
		as->received = tp->bytes_received;
	}
	/* An ACK, a FIN (its number is no byte), a retransmission. */
	if (fresh <= 0)
		return SKB_PASS;
	r = acct_send(as->dest, (__u32)fresh, as);
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
