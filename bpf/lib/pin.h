/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pin.h - SNI pinning: a TLS connection to an address the attempt learned
 * from DNS may name only a host whose answer held that address.
 *
 * An address of a CDN serves many tenants; the connect hook can only say
 * "this address, this port". So a TCP connection to a pinned port, on an
 * address whose every live rule for that port is pinned (egret.h,
 * EGRET_RULE_PINNED), carries socket storage from its connect on
 * (egret_pin_sock), and its first TLS record is judged twice:
 *
 *  - by sk_msg (egret_tls) on the writer's send(): the first record is
 *    held back (corked) until it is whole, and a refused one fails the
 *    send with EACCES before a byte is queued - the client sees the error;
 *  - on the wire (pin_wire(), from the egress backstop): the first data
 *    segment, or the data of a SYN (TCP Fast Open), must hold the whole
 *    record and pass the same judgement. Data written before sk_msg saw
 *    the socket (a send() blocked in connect, TFO) is judged only here. A
 *    refused segment is dropped, the socket is marked and drops all else,
 *    and sock_ops gives it a 1 ms user timeout on its next retransmission:
 *    the kernel then aborts it (ETIMEDOUT).
 *
 * The judgement (pin_judge()): one ClientHello, whole, in the first
 * record, with exactly one host_name, no encrypted_client_hello, and the
 * name - lower-cased - in egret_pins with this attempt and address and a
 * live rule for the port: the DNS proxy wrote that pair when the name's
 * answer held the address. Once a connection has passed on the wire,
 * sock_ops takes it out of the sockhash and drops its storage at its next
 * segment: the rest of the connection costs nothing more.
 */
#ifndef EGRET_BPF_PIN_H
#define EGRET_BPF_PIN_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "egret.h"
#include "egret_match.h"
#include "egret_tls.h"
#include "lib/verdict.h"
#include "lib/net.h"
#include "lib/attempt.h"
#include "lib/events.h"
#include "lib/account.h"
#include "lib/pin_map.h"
#include "lib/pin_addr.h"

/* ---- the record's buffer ----------------------------------------- */

/*
 * A buffer for one judgement of @sk's first record: a free slot of this
 * CPU's, or - when every one is taken by runs preempted or interrupted
 * mid-judgement on this CPU - socket storage of @sk's own, made now.
 * NULL: none (out of memory, or another run judges @sk in that storage
 * now); the caller refuses. Given back by pin_buf_free() before the run
 * ends, on every path.
 */
static __always_inline struct egret_pin_buf *pin_buf_claim(struct bpf_sock *sk)
{
	struct egret_pin_buf *b;
	__u32 i;

	for (i = 0; i < EGRET_PIN_BUFS; i++) {
		b = bpf_map_lookup_elem(&egret_pin_bufs, &i);
		if (b && __sync_val_compare_and_swap(&b->busy, PIN_BUF_FREE,
						     PIN_BUF_CPU) == PIN_BUF_FREE)
			return b;
	}
	b = bpf_sk_storage_get(&egret_pin_buf_sock, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!b || __sync_val_compare_and_swap(&b->busy, PIN_BUF_FREE,
					      PIN_BUF_SOCK) != PIN_BUF_FREE)
		return NULL;
	return b;
}

static __always_inline void pin_buf_free(struct bpf_sock *sk, struct egret_pin_buf *b)
{
	if (b->busy == PIN_BUF_SOCK) {
		bpf_sk_storage_delete(&egret_pin_buf_sock, sk);
		return;
	}
	/* Every read of the record is done before the slot is free. */
	asm volatile("" ::: "memory");
	b->busy = PIN_BUF_FREE;
}

/* ---- the judgement ------------------------------------------------ */

/* bpf_loop contexts: the parse lives on the stack, the record in a
 * claimed buffer, the name in the socket's storage. */
struct pin_walk {
	struct egret_pin_sock *ps;
	struct egret_pin_buf *b;
	struct egret_hello h;
	__u64 hash;		/* FNV-1a of the name: its denials' repeat key */
	int bad;
};

static long pin_ext_step(__u64 i, void *arg)
{
	struct pin_walk *w = arg;

	if (!w->b)
		return 1;
	return egret_hello_ext(&w->h, w->b->buf) ? 0 : 1;
}

static long pin_name_step(__u64 i, void *arg)
{
	struct pin_walk *w = arg;

	if (!w->ps || !w->b || i >= w->h.name_len)
		return 1;
	if (egret_hello_name_byte(&w->h, w->b->buf, (__u32)i, w->ps->key.name) < 0) {
		w->bad = 1;
		return 1;
	}
	w->hash = (w->hash ^ (__u8)w->ps->key.name[i & 255]) * 1099511628211ULL;
	return 0;
}

/* The first record, @len bytes in @b: may its connection go on? Global:
 * verified once, whichever buffer pin_buf_claim() gave. */
__noinline int pin_judge(struct egret_pin_sock *ps, struct egret_pin_buf *b, __u32 len)
{
	struct pin_walk w = { .ps = ps, .b = b, .hash = 14695981039346656037ULL };
	struct egret_allow *pair;

	if (!ps || !b)
		return EGRET_REASON_NOT_TLS;
	__builtin_memset(ps->key.name, 0, sizeof(ps->key.name));
	ps->key.len = 0;
	ps->name_hash = 0;
	if (egret_hello_begin(&w.h, b->buf, len) < 0)
		return (int)w.h.reason;
	bpf_loop(EGRET_HELLO_EXTS, pin_ext_step, &w, 0);
	if (egret_hello_sni(&w.h, b->buf) < 0)
		return (int)w.h.reason;
	bpf_loop(EGRET_SNI_MAX, pin_name_step, &w, 0);
	if (w.bad) {
		__builtin_memset(ps->key.name, 0, sizeof(ps->key.name));
		return EGRET_REASON_NOT_TLS;
	}
	ps->key.len = w.h.name_len;
	ps->name_hash = w.hash;
	pair = bpf_map_lookup_elem(&egret_pins, &ps->key);
	if (!pair)
		return EGRET_REASON_SNI;
	if (egret_allow_match(pair, ps->port, bpf_ktime_get_coarse_ns(), 0) !=
	    EGRET_REASON_ALLOWED)
		return EGRET_REASON_SNI;
	ps->dest = pair->dest;
	return EGRET_REASON_ALLOWED;
}

/* Count, log, and turn @reason into the connection's state: 1 if its
 * data may go. */
static __always_inline int pin_decide(struct egret_pin_sock *ps,
				      enum egret_reason reason, int no_task)
{
	struct egret_tls_count *count;
	__u32 slot = ps->slot;
	struct event_info in = {
		.hook = EGRET_HOOK_TLS, .family = (int)ps->key.family,
		.addr = ps->key.addr, .port = ps->port, .proto = IPPROTO_TCP_,
		.reason = reason, .no_task = no_task,
		/* Repeats of a denial are one name's: its hash is in the
		 * repeat key (a collision merges two names' counts in the
		 * log, never a verdict). */
		.level = (__s32)(__u32)ps->name_hash,
		.optname = (__s32)(__u32)(ps->name_hash >> 32),
	};
	struct event_sink to = {
		.slot = slot, .log_allowed = ps->log_allowed, .sni = ps->key.name,
	};
	int go;

	if (reason == EGRET_REASON_ALLOWED)
		in.verdict = EGRET_VERDICT_ALLOW;
	else
		in.verdict = ps->audit ? EGRET_VERDICT_WOULD_DENY : EGRET_VERDICT_DENY;
	go = in.verdict != EGRET_VERDICT_DENY;
	ps->state = go ? PIN_PASSED : PIN_DENIED;
	count = bpf_map_lookup_elem(&egret_tls_counts, &slot);
	if (count) {
		if (in.verdict < EGRET_VERDICT_MAX)
			__sync_fetch_and_add(&count->n[in.verdict], 1);
		to.lost = &count->lost;
	}
	event_emit_to(&in, &to);
	return go;
}

/* ---- sock_ops: the connection's life ------------------------------ */

/* The peer of a sock_ops connection, as the pin maps key it: IPv4 (a
 * v4-mapped peer too) in @addr[0] and 4, or IPv6 and 6. */
static __always_inline int sockops_peer(const struct bpf_sock_ops *ctx, __u32 addr[4])
{
	addr[1] = addr[2] = addr[3] = 0;
	if (ctx->family == AF_INET) {
		addr[0] = ctx->remote_ip4;
		return 4;
	}
	addr[0] = ctx->remote_ip6[0];
	addr[1] = ctx->remote_ip6[1];
	addr[2] = ctx->remote_ip6[2];
	addr[3] = ctx->remote_ip6[3];
	if (!egret_is_v4mapped(addr))
		return 6;
	addr[0] = addr[3];
	addr[1] = addr[2] = addr[3] = 0;
	return 4;
}

/* A pinned connection's key: its attempt and peer (the name comes with
 * each judgement). */
static __always_inline void pin_key_init(struct egret_pin_key *key,
					 const struct egret_attempt *cfg, int family,
					 const __u32 addr[4])
{
	key->attempt = cfg->key;
	key->family = (__u32)family;
	key->addr[0] = addr[0];
	key->addr[1] = addr[1];
	key->addr[2] = addr[2];
	key->addr[3] = addr[3];
}

/* An active open (connect(), or TCP Fast Open's sendto()) of the
 * attempt, before its SYN: pinned, it gets its storage and the header
 * callback that lets sock_ops see each of its segments. */
static __always_inline void pin_connect(struct bpf_sock_ops *ctx)
{
	struct egret_attempt *cfg = attempt_cfg();
	__u32 port = bpf_ntohl(ctx->remote_port);
	struct egret_pin_sock *ps;
	struct bpf_sock *sk = ctx->sk;
	__u32 addr[4] = {};
	int family, pinned;

	if (!sk || !pin_port(cfg, port))
		return;
	family = sockops_peer(ctx, addr);
	pinned = pin_addr_of(family, addr, port);
	if (!pinned) {
		/* A socket connects again after a failed or undone connect:
		 * an earlier connection's judgement is not this one's. */
		if (bpf_sk_storage_delete(&egret_pin_sock, sk) == 0)
			bpf_sock_ops_cb_flags_set(ctx, ctx->bpf_sock_ops_cb_flags &
						  ~BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
		return;
	}
	/* No storage (out of memory): the backstop drops its SYN, as it
	 * does every pinned SYN without one. */
	ps = bpf_sk_storage_get(&egret_pin_sock, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!ps)
		return;
	pin_key_init(&ps->key, cfg, family, addr);
	ps->slot = cfg->slot;
	ps->port = (__u16)port;
	ps->audit = cfg->audit;
	ps->log_allowed = cfg->log_allowed;
	ps->have_isn = 0;
	ps->msg_passed = 0;
	ps->in_hash = 0;
	ps->state = PIN_PENDING;
	bpf_sock_ops_cb_flags_set(ctx, ctx->bpf_sock_ops_cb_flags |
				  BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
}

/* Established: into the sockhash, so its writes meet egret_tls. If that
 * fails, the wire judges alone. */
static __always_inline void pin_established(struct bpf_sock_ops *ctx)
{
	struct bpf_sock *sk = ctx->sk;
	struct egret_pin_sock *ps;
	__u64 cookie;

	if (!sk)
		return;
	ps = bpf_sk_storage_get(&egret_pin_sock, sk, 0, 0);
	if (!ps || ps->state != PIN_PENDING)
		return;
	cookie = bpf_get_socket_cookie(ctx);
	if (bpf_sock_hash_update(ctx, &egret_pin_socks, &cookie, BPF_NOEXIST) == 0)
		ps->in_hash = 1;
}

/*
 * Each segment it builds (while the header callback is on): once it has
 * passed, out of the sockhash (sk_msg may not do that itself), storage
 * and callback gone; once refused, a 1 ms user timeout, so its next
 * retransmission timeout aborts it.
 */
static __always_inline void pin_segment(struct bpf_sock_ops *ctx)
{
	struct bpf_sock *sk = ctx->sk;
	struct egret_pin_sock *ps;
	int one = 1;
	__u64 cookie;

	if (!sk)
		return;
	ps = bpf_sk_storage_get(&egret_pin_sock, sk, 0, 0);
	if (ps && ps->state == PIN_DENIED) {
		bpf_setsockopt(ctx, SOL_TCP_, TCP_USER_TIMEOUT_, &one, sizeof(one));
		bpf_setsockopt(ctx, SOL_TCP_, TCP_SYNCNT_, &one, sizeof(one));
		return;
	}
	if (ps && ps->state == PIN_PENDING)
		return;
	/* Passed (or no storage left): nothing more to watch. */
	if (ps) {
		if (ps->in_hash) {
			cookie = bpf_get_socket_cookie(ctx);
			bpf_map_delete_elem(&egret_pin_socks, &cookie);
		}
		bpf_sk_storage_delete(&egret_pin_sock, sk);
	}
	bpf_sock_ops_cb_flags_set(ctx, ctx->bpf_sock_ops_cb_flags &
				  ~BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
}

/* ---- the wire ----------------------------------------------------- */

enum pin_wire_verdict {
	PIN_WIRE_ON,		/* not pinned, or passed: judge it as any other */
	PIN_WIRE_DROP,		/* refused (and logged, the first time) */
	PIN_WIRE_UNJUDGED,	/* a pinned SYN with no storage: refuse it */
};

/* The first record, at @data_off of @skb, read into @b and judged: it
 * must be whole in this segment. */
static __always_inline enum egret_reason
pin_wire_record(struct __sk_buff *skb, struct egret_pin_sock *ps,
		struct egret_pin_buf *b, __u32 data_off)
{
	int need;

	if (bpf_skb_load_bytes(skb, data_off, b->buf, TLS_RECORD_HEADER) < 0)
		return EGRET_REASON_NOT_TLS;
	need = egret_hello_need(b->buf, TLS_RECORD_HEADER);
	if (need <= 0 || (__u32)need > skb->len - data_off)
		return EGRET_REASON_NOT_TLS;	/* not TLS, or not whole in its first segment */
	if (need > (int)EGRET_HELLO_MAX)
		return EGRET_REASON_NOT_TLS;
	barrier_var(need);
	if (bpf_skb_load_bytes(skb, data_off, b->buf, (__u32)need) < 0)
		return EGRET_REASON_NOT_TLS;
	return (enum egret_reason)pin_judge(ps, b, (__u32)need);
}

/*
 * The egress backstop, for a TCP segment to a pinned port (@g: its TCP
 * header's offset, whether it carries SYN, where it goes). A pinned
 * connection's first data - in its SYN or the first segment after - must
 * be its whole first record and pass pin_judge(); data at any other
 * sequence number before that is dropped.
 */
static __always_inline enum pin_wire_verdict
pin_wire(struct __sk_buff *skb, const struct pin_segment *g)
{
	__u32 l4off = g->l4off;
	int syn = (int)g->syn;
	struct bpf_sock *sk = skb->sk;
	struct egret_pin_sock *ps;
	struct egret_pin_buf *b;
	enum egret_reason reason;
	__u32 seq, data_off, first;
	__u8 tcp[TCP_FLAGS_OFF + 1];

	if (sk)
		sk = bpf_sk_fullsock(sk);
	if (!sk)
		return PIN_WIRE_ON;	/* a request or time-wait socket */
	ps = bpf_sk_storage_get(&egret_pin_sock, sk, 0, 0);
	if (!ps) {
		/* A pinned SYN without its storage: refused, as its data
		 * could not be judged. Otherwise not pinned, or passed. */
		if (syn && pin_addr_at(g))
			return PIN_WIRE_UNJUDGED;
		return PIN_WIRE_ON;
	}
	if (ps->state == PIN_PASSED)
		return PIN_WIRE_ON;
	if (ps->state != PIN_PENDING)
		return PIN_WIRE_DROP;
	/* The TCP header up to its flags: a SYN or an ACK without data
	 * needs no record buffer. */
	if (bpf_skb_load_bytes(skb, l4off, tcp, sizeof(tcp)) < 0)
		goto refuse;
	seq = tcp_hdr_seq(tcp);
	data_off = l4off + tcp_hdr_len(tcp);
	/* Urgent data (MSG_OOB) is taken out of the stream by most
	 * receivers: the server would read other bytes than were judged. */
	if (tcp[TCP_FLAGS_OFF] & TCP_URG_)
		goto refuse;
	if (syn) {
		ps->isn = seq;
		ps->have_isn = 1;
		seq += 1;	/* a SYN's data starts after it */
	}
	if (data_off >= skb->len)
		return PIN_WIRE_ON;	/* no data: SYN, ACK, FIN */
	first = ps->isn + 1;
	if (!ps->have_isn || seq != first)
		goto refuse;
	b = pin_buf_claim(sk);
	if (!b)
		goto refuse;
	reason = pin_wire_record(skb, ps, b, data_off);
	pin_buf_free(sk, b);
	/* Its bytes count against the name it named, from this one on. */
	if (reason == EGRET_REASON_ALLOWED)
		acct_attribute(sk, ps->dest);
	return pin_decide(ps, reason, 1) ? PIN_WIRE_ON : PIN_WIRE_DROP;
refuse:
	return pin_decide(ps, EGRET_REASON_NOT_TLS, 1) ? PIN_WIRE_ON : PIN_WIRE_DROP;
}

/* pin_wire(), global: its judgement's stack (the hello walk, the event)
 * is its own, not in every egress path's frame. */
__noinline int pin_wire_at(struct __sk_buff *skb, struct pin_segment *g)
{
	if (!skb || !g)
		return PIN_WIRE_DROP;
	return pin_wire(skb, g);
}

/* ---- sk_msg: the writer's send() ---------------------------------- */

/*
 * Let the message go, and forget any cork: the kernel keeps the corked
 * message, cork_bytes and all, for the sends after it, and a later short
 * send would be held back for bytes that never come (and lost at close).
 */
static __always_inline int pin_msg_pass(struct sk_msg_md *msg)
{
	bpf_msg_cork_bytes(msg, 0);
	return SK_PASS;
}

/*
 * A send on a pinned connection still in the sockhash: hold the first
 * record back until it is whole (the program runs again on it then),
 * judge it, and fail the send (EACCES) if it is refused. A record that
 * passes here is still judged on the wire; later sends pass until
 * sock_ops takes the socket out.
 */
static __always_inline int pin_msg(struct sk_msg_md *msg)
{
	__u8 head[TLS_RECORD_HEADER];
	enum egret_reason reason;
	struct egret_pin_sock *ps;
	struct egret_pin_buf *b;
	void *data, *end;
	int need;

	if (!msg->sk)
		return SK_PASS;
	ps = bpf_sk_storage_get(&egret_pin_sock, msg->sk, 0, 0);
	if (!ps || ps->state == PIN_PASSED || ps->msg_passed)
		return pin_msg_pass(msg);
	if (ps->state != PIN_PENDING)
		return SK_DROP;
	if (msg->size < TLS_RECORD_HEADER) {
		bpf_msg_cork_bytes(msg, TLS_RECORD_HEADER);
		return SK_PASS;
	}
	if (bpf_msg_pull_data(msg, 0, TLS_RECORD_HEADER, 0) < 0)
		goto refuse;
	data = msg->data;
	end = msg->data_end;
	if (data + TLS_RECORD_HEADER > end)
		goto refuse;
	__builtin_memcpy(head, data, TLS_RECORD_HEADER);
	need = egret_hello_need(head, TLS_RECORD_HEADER);
	if (need <= 0 || need > (int)EGRET_HELLO_MAX)
		goto refuse;
	if (msg->size < (__u32)need) {
		bpf_msg_cork_bytes(msg, (__u32)need);
		return SK_PASS;
	}
	if (bpf_msg_pull_data(msg, 0, (__u32)need, 0) < 0)
		goto refuse;
	data = msg->data;
	end = msg->data_end;
	barrier_var(need);
	if (need > (int)EGRET_HELLO_MAX || data + need > end)
		goto refuse;
	b = pin_buf_claim(msg->sk);
	if (!b)
		goto refuse;
	reason = EGRET_REASON_NOT_TLS;
	if (bpf_probe_read_kernel(b->buf, (__u32)need, data) == 0)
		reason = (enum egret_reason)pin_judge(ps, b, (__u32)need);
	pin_buf_free(msg->sk, b);
	if (reason == EGRET_REASON_ALLOWED) {
		ps->msg_passed = 1;	/* the wire counts and logs it */
		return pin_msg_pass(msg);
	}
	return pin_decide(ps, reason, 0) ? pin_msg_pass(msg) : SK_DROP;
refuse:
	return pin_decide(ps, EGRET_REASON_NOT_TLS, 0) ? pin_msg_pass(msg) : SK_DROP;
}

#endif /* EGRET_BPF_PIN_H */
