/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * http.h - Host pinning: a plain-HTTP request to an address the attempt
 * learned from DNS may name only hosts whose answer held that address.
 *
 * SNI pinning (pin.h) judges the one ClientHello a TLS connection starts
 * with. Plain HTTP names its host per request, and a connection carries
 * many (keep-alive, pipelining), so a TCP connection to an HTTP-pinned
 * port (`pinning: http_ports:`, 80 by default) on a pinned address is
 * judged on the wire for its whole life, by the egress backstop
 * (http_wire()): every byte it sends, in sequence order, goes through
 * the request reader of include/egret_http.h (its field lines in
 * egret_http_field.h), which reports each name - an absolute-form
 * target's authority, each request's one Host - as its line ends; the
 * name must be in egret_pins with this attempt and address
 * and a live rule for the port, as a TLS name must. Bodies are stepped
 * over by count - a counted body after its first line, a chunked body's
 * data chunk by chunk, its chunk lines and trailers read - never read
 * whole (include/egret_http_body.h).
 *
 * Only bytes the reader has judged leave: a segment past the judged
 * stream with a gap before it is refused, a retransmission of bytes
 * already judged passes (the kernel sends copies of what was judged: the
 * send-path rules of SNI pinning, docs/SECURITY.md), and urgent data is
 * refused. A refused segment is dropped, the connection marked so all it
 * sends after is dropped, and at its next try sock_ops gives it a 1 ms
 * user timeout: the kernel aborts it (ETIMEDOUT), as pin.h does. Bytes
 * of a head before the line that refused it have left by then: an
 * unfinished head, which no server acts on.
 *
 * No sk_msg here: the writer's send() succeeds and the connection fails
 * after. Judging every send of a connection's life in sk_msg would hold
 * each head back (corked) until whole - a cost on every request for an
 * error code (docs/SECURITY.md, "Host pinning").
 */
#ifndef EGRET_BPF_HTTP_H
#define EGRET_BPF_HTTP_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "egret.h"
#include "egret_match.h"
#include "egret_http.h"
#include "lib/verdict.h"
#include "lib/net.h"
#include "lib/attempt.h"
#include "lib/events.h"
#include "lib/allow.h"
#include "lib/pin_map.h"
#include "lib/pin_addr.h"
#include "lib/pin.h"

#define HTTP_WINDOW	256	/* the segment's bytes read at a time */

/* A pinned plain-HTTP connection, for its life. */
struct egret_http_sock {
	struct egret_pin_key key;	/* name: the one being read */
	struct egret_http h;
	__u32 isn;		/* its SYN's sequence number */
	__u32 next;		/* the first sequence number not yet judged */
	__u16 port;		/* host order */
	__u8 state;		/* enum pin_state: PENDING while it is judged */
	__u8 audit;
	__u8 log_allowed;
	__u8 have_isn;
	__u8 named;		/* key.name holds this head's judged name */
	__u8 pad;
	__u32 ok_len;		/* ok_name's bytes; 0: none yet */
	__u32 dest;		/* the last allowed request's destination (lib/account.h) */
	__u32 ok_dest;		/* ok_name's */
	char ok_name[EGRET_HTTP_NAME_BUF];	/* the last host allowed here */
	struct egret_repeat_key rkey;	/* http_decide()'s scratch */
	__u8 win[HTTP_WINDOW];
};

/* HTTP-pinned TCP socket -> its request reader's state; written by BPF (sock_ops, egress). */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct egret_http_sock);
} egret_http_sock SEC(".maps");

/* Is @port (host order) one whose plain HTTP the attempt pins? */
static __always_inline int http_port(const struct egret_attempt *cfg, __u32 port)
{
	return pin_port_in(cfg->http_ports, port);
}

/* ---- the decision -------------------------------------------------- */

struct http_hash {
	const char *name;
	__u64 hash;
};

static long http_hash_step(__u64 i, void *arg)
{
	struct http_hash *w = arg;
	__u8 c;

	if (!w->name)
		return 1;
	c = (__u8)w->name[i & 255];
	if (!c)
		return 1;
	w->hash = (w->hash ^ c) * 1099511628211ULL;
	return 0;
}

/*
 * The functions below that take the connection's state are global: the
 * verifier checks each once, on its own, rather than on every path of
 * the byte loop that calls it (inlined, the reader's branches times the
 * loop's states were over a million instructions to verify).
 */

/*
 * Count and log one judgement of a request (@reason); its connection's
 * state follows. 1 if it may go on. The event is written here rather
 * than through event_emit_to(): its repeat key lives in the connection's
 * storage, not on the stack, which is short this deep in the egress
 * program's calls. The same record and repeat rules (events.h).
 */
__noinline int http_decide(struct egret_http_sock *hs, __u32 reason)
{
	struct http_hash w = { .hash = 14695981039346656037ULL };
	struct egret_counts *counts = attempt_counts();
	struct egret_tls_event *e;
	void *ring, *repeats = NULL;
	__u32 slot, verdict, index;
	__u64 zero = 0;
	int tracked = 0;

	if (!hs)
		return 0;
	slot = attempt_cfg()->slot;
	if (reason == EGRET_REASON_ALLOWED)
		verdict = EGRET_VERDICT_ALLOW;
	else
		verdict = hs->audit ? EGRET_VERDICT_WOULD_DENY : EGRET_VERDICT_DENY;
	if (verdict == EGRET_VERDICT_DENY)
		hs->state = PIN_DENIED;
	else if (verdict == EGRET_VERDICT_WOULD_DENY)
		hs->state = PIN_PASSED;	/* --audit: nothing more to judge */
	index = EGRET_COUNTER(EGRET_HOOK_HTTP, verdict);
	if (counts && index < EGRET_NCOUNTERS)
		counts->n[index] += 1;	/* per-CPU: no other writer here */
	if (verdict == EGRET_VERDICT_ALLOW && !hs->log_allowed)
		return 1;
	/* A refusal names the host only once its line was whole. */
	if (reason == EGRET_REASON_NOT_HTTP && !hs->named)
		__builtin_memset(hs->key.name, 0, sizeof(hs->key.name));
	w.name = hs->key.name;
	bpf_loop(EGRET_HTTP_NAME_BUF, http_hash_step, &w, 0);
	/* The repeat key (events.h, repeat_key_of()): repeats are one
	 * name's, its hash in level and optname as pin_decide() does. */
	__builtin_memset(&hs->rkey, 0, sizeof(hs->rkey));
	hs->rkey.addr[0] = hs->key.addr[0];
	hs->rkey.addr[1] = hs->key.addr[1];
	hs->rkey.addr[2] = hs->key.addr[2];
	hs->rkey.addr[3] = hs->key.addr[3];
	hs->rkey.family = (__u8)hs->key.family;
	hs->rkey.port = hs->port;
	hs->rkey.proto = IPPROTO_TCP_;
	hs->rkey.hook = EGRET_HOOK_HTTP;
	hs->rkey.verdict = (__u8)verdict;
	hs->rkey.reason = (__u8)reason;
	hs->rkey.level = (__s32)(__u32)w.hash;
	hs->rkey.optname = (__s32)(__u32)(w.hash >> 32);
	if (verdict != EGRET_VERDICT_ALLOW)
		repeats = bpf_map_lookup_elem(&egret_repeat_of, &slot);
	if (repeats) {
		if (repeat_count(repeats, &hs->rkey))
			return verdict != EGRET_VERDICT_DENY;
		tracked = bpf_map_update_elem(repeats, &hs->rkey, &zero, BPF_NOEXIST) == 0;
	}
	ring = bpf_map_lookup_elem(&egret_rings, &slot);
	e = ring ? bpf_ringbuf_reserve(ring, sizeof(*e), 0) : NULL;
	if (!e) {
		if (!(tracked && repeats && repeat_count(repeats, &hs->rkey)) && counts)
			counts->n[EGRET_COUNTER_DROPPED] += 1;
		return verdict != EGRET_VERDICT_DENY;
	}
	event_of_key(&e->e, &hs->rkey);
	__builtin_memcpy(e->sni, hs->key.name, sizeof(e->sni));
	bpf_ringbuf_submit(e, 0);
	return verdict != EGRET_VERDICT_DENY;
}

/* One byte of the stream for the reader (egret_http_byte()). */
__noinline int http_parse(struct egret_http_sock *hs, __u32 c)
{
	if (!hs)
		return EGRET_HTTP_REFUSE;
	return egret_http_byte(&hs->h, c & 0xff, hs->key.name);
}

/* Is the name just read the host this connection was last allowed? Both
 * buffers are zero past their names. */
static __always_inline int http_same_host(const struct egret_http_sock *hs)
{
	const __u64 *a = (const __u64 *)hs->key.name, *b = (const __u64 *)hs->ok_name;
	int i;

	if (!hs->ok_len || hs->ok_len != hs->key.len)
		return 0;
	for (i = 0; i < EGRET_HTTP_NAME_BUF / 8; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/*
 * A name the reader found (hs->key.name, hs->h.name_len bytes): its
 * reason, allowed ones counted (and logged, --log-allowed) here. The host
 * the connection was last allowed passes again without a lookup: a later
 * request on a kept-alive connection is part of an established flow,
 * which outlives its entry (docs/SECURITY.md, "Established flows"); any
 * other host needs a live pair.
 */
__noinline int http_judge_name(struct egret_http_sock *hs)
{
	struct egret_allow *pair;

	if (!hs)
		return EGRET_REASON_NOT_HTTP;
	hs->key.len = hs->h.name_len;
	hs->named = 1;
	if (!http_same_host(hs)) {
		pair = bpf_map_lookup_elem(&egret_pins, &hs->key);
		if (!pair)
			return EGRET_REASON_HOST;
		if (egret_allow_match(pair, hs->port, bpf_ktime_get_coarse_ns(), 0) !=
		    EGRET_REASON_ALLOWED)
			return EGRET_REASON_HOST;
		__builtin_memcpy(hs->ok_name, hs->key.name, sizeof(hs->ok_name));
		hs->ok_len = hs->key.len;
		hs->ok_dest = pair->dest;
	}
	hs->dest = hs->ok_dest;
	http_decide(hs, EGRET_REASON_ALLOWED);	/* counted, logged if asked */
	return EGRET_REASON_ALLOWED;
}

/* ---- the wire ------------------------------------------------------ */

/* bpf_loop context: the segment's bytes [off, end), read into the
 * storage's window a HTTP_WINDOW at a time. */
struct http_walk {
	struct __sk_buff *skb;
	struct egret_http_sock *hs;
	__u32 off;
	__u32 end;
	__u32 win_off;		/* the skb offset of win[0] */
	__u32 win_len;
	__u32 reason;		/* EGRET_REASON_ALLOWED while all is well */
};

static long http_step(__u64 i, void *arg)
{
	struct http_walk *w = arg;
	struct egret_http_sock *hs = w->hs;
	__u32 n, c;
	int r;

	if (!hs || w->off >= w->end)
		return 1;
	if (hs->h.state == HTTP_BODY) {
		/* A counted body's rest, a chunk's data: by count. */
		w->off += egret_http_skip(&hs->h, w->end - w->off);
		return 0;
	}
	if (w->off < w->win_off || w->off - w->win_off >= w->win_len) {
		n = w->end - w->off;
		if (n > HTTP_WINDOW)
			n = HTTP_WINDOW;
		/* 1..HTTP_WINDOW, as the verifier can tell (off < end). */
		n = ((n - 1) & (HTTP_WINDOW - 1)) + 1;
		if (bpf_skb_load_bytes(w->skb, w->off, hs->win, n) < 0) {
			w->reason = EGRET_REASON_NOT_HTTP;
			return 1;
		}
		w->win_off = w->off;
		w->win_len = n;
	}
	c = hs->win[(w->off - w->win_off) & (HTTP_WINDOW - 1)];
	w->off++;
	r = http_parse(hs, c);
	if (r == EGRET_HTTP_REFUSE) {
		w->reason = EGRET_REASON_NOT_HTTP;
		return 1;
	}
	if (r == EGRET_HTTP_NAME) {
		w->reason = (__u32)http_judge_name(hs);
		if (w->reason != EGRET_REASON_ALLOWED)
			return 1;
	} else if (r == EGRET_HTTP_HEAD) {
		hs->named = 0;
	}
	return 0;
}

/*
 * The egress backstop, for a TCP segment to an HTTP-pinned port: judge
 * the bytes of it the reader has not seen yet. Same verdicts as
 * pin_wire(). Global: verified once for IPv4 and IPv6 both.
 */
__noinline int http_wire(struct __sk_buff *skb, struct pin_segment *g)
{
	struct http_walk w = { .skb = skb, .reason = EGRET_REASON_ALLOWED };
	struct egret_http_sock *hs;
	struct bpf_sock *sk;
	__u32 seq, data_off, len;
	__u8 *tcp;

	if (!skb || !g)
		return PIN_WIRE_DROP;
	sk = skb->sk;
	if (sk)
		sk = bpf_sk_fullsock(sk);
	if (!sk)
		return PIN_WIRE_ON;	/* a request or time-wait socket */
	hs = bpf_sk_storage_get(&egret_http_sock, sk, 0, 0);
	if (!hs) {
		if (g->syn && pin_addr_at(g))
			return PIN_WIRE_UNJUDGED;
		return PIN_WIRE_ON;
	}
	if (hs->state == PIN_PASSED)
		return PIN_WIRE_ON;
	if (hs->state != PIN_PENDING)
		return PIN_WIRE_DROP;
	w.hs = hs;
	/* The TCP header, in the window (the verifier's stack is short). */
	tcp = hs->win;
	if (bpf_skb_load_bytes(skb, g->l4off, tcp, TCP_HDR_MIN) < 0)
		goto refuse;
	seq = tcp_hdr_seq(tcp);
	data_off = g->l4off + tcp_hdr_len(tcp);
	/* Urgent data is taken out of the stream by most receivers. */
	if (tcp[TCP_FLAGS_OFF] & TCP_URG_)
		goto refuse;
	if (g->syn) {
		/* Its first SYN only: a retransmitted one's data (TCP Fast
		 * Open) was judged with it. */
		if (!hs->have_isn) {
			hs->isn = seq;
			hs->next = seq + 1;
			hs->have_isn = 1;
		}
		seq += 1;
	}
	if (data_off >= skb->len)
		return PIN_WIRE_ON;	/* no data: SYN, ACK, FIN */
	if (!hs->have_isn)
		goto refuse;
	len = skb->len - data_off;
	if ((__s32)(seq + len - hs->next) <= 0)
		return PIN_WIRE_ON;	/* judged already: a retransmission */
	if ((__s32)(seq - hs->next) > 0)
		goto refuse;		/* bytes before it were never judged */
	w.off = data_off + (hs->next - seq);
	w.end = skb->len;
	w.win_off = w.end;	/* the window holds no data yet */
	bpf_loop(w.end - w.off + 1, http_step, &w, 0);
	if (w.reason != EGRET_REASON_ALLOWED)
		return http_decide(hs, w.reason) ? PIN_WIRE_ON : PIN_WIRE_DROP;
	if (w.off < w.end)
		goto refuse;
	hs->next = seq + len;
	/* Its bytes count against the host its last request named. */
	acct_attribute(sk, hs->dest);
	return PIN_WIRE_ON;
refuse:
	return http_decide(hs, EGRET_REASON_NOT_HTTP) ? PIN_WIRE_ON : PIN_WIRE_DROP;
}

/* ---- sock_ops ------------------------------------------------------ */

/* An active open of the attempt, before its SYN: to an HTTP-pinned port
 * of a pinned address, it gets its storage, and the header callback that
 * aborts it once refused (http_segment()). */
static __always_inline void http_connect(struct bpf_sock_ops *ctx)
{
	struct egret_attempt *cfg = attempt_cfg();
	__u32 port = bpf_ntohl(ctx->remote_port);
	struct bpf_sock *sk = ctx->sk;
	struct egret_http_sock *hs;
	__u32 addr[4] = {};
	int family, pinned = 0;

	if (!sk)
		return;
	family = sockops_peer(ctx, addr);
	if (http_port(cfg, port))
		pinned = pin_addr_of(family, addr, port);
	if (!pinned) {
		/* A socket connects again after a failed connect: an earlier
		 * connection's judgement is not this one's. (The header
		 * callback stays if it is SNI pinning's now.) */
		if (bpf_sk_storage_delete(&egret_http_sock, sk) == 0 && !pin_port(cfg, port))
			bpf_sock_ops_cb_flags_set(ctx, ctx->bpf_sock_ops_cb_flags &
						  ~BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
		return;
	}
	/* No storage (out of memory): the backstop drops its SYN. */
	hs = bpf_sk_storage_get(&egret_http_sock, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!hs)
		return;
	__builtin_memset(&hs->h, 0, sizeof(hs->h));
	__builtin_memset(hs->key.name, 0, sizeof(hs->key.name));
	hs->ok_len = 0;
	pin_key_init(&hs->key, cfg, family, addr);
	hs->key.len = 0;
	hs->port = (__u16)port;
	hs->audit = cfg->audit;
	hs->log_allowed = cfg->log_allowed;
	hs->have_isn = 0;
	hs->named = 0;
	hs->state = PIN_PENDING;
	bpf_sock_ops_cb_flags_set(ctx, ctx->bpf_sock_ops_cb_flags |
				  BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
}

/*
 * Each segment it builds: once refused, a 1 ms user timeout (and one SYN
 * retry), so the kernel aborts it at its next try. A segment the backstop
 * drops is not sent, in TCP's eyes: it is tried again by the zero-window
 * probe timer, never the retransmission timer, so the retransmission
 * callback would not do; the header callback runs for every segment,
 * probes included. (The cost: one sock_ops run per segment of a pinned
 * plain-HTTP connection, BENCHMARKS.md.)
 */
static __always_inline void http_segment(struct bpf_sock_ops *ctx)
{
	struct bpf_sock *sk = ctx->sk;
	struct egret_http_sock *hs;
	int one = 1;

	if (!sk)
		return;
	hs = bpf_sk_storage_get(&egret_http_sock, sk, 0, 0);
	if (!hs || hs->state == PIN_PASSED) {
		/* --audit let it through: nothing more to watch. */
		bpf_sock_ops_cb_flags_set(ctx, ctx->bpf_sock_ops_cb_flags &
					  ~BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
		return;
	}
	if (hs->state != PIN_DENIED)
		return;
	bpf_setsockopt(ctx, SOL_TCP_, TCP_USER_TIMEOUT_, &one, sizeof(one));
	bpf_setsockopt(ctx, SOL_TCP_, TCP_SYNCNT_, &one, sizeof(one));
}

#endif /* EGRET_BPF_HTTP_H */
