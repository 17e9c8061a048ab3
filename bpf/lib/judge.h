/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * judge.h - where a connect() or sendmsg() goes, judged: the destination
 * the system call names (or, for a connected UDP socket, its peer) against
 * the allow maps, unless it is DNS, which goes to egret's proxy instead.
 * A refusal fails with the errno --deny-errno chose.
 */
#ifndef EGRET_BPF_JUDGE_H
#define EGRET_BPF_JUDGE_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "egret.h"
#include "egret_match.h"
#include "lib/verdict.h"
#include "lib/net.h"
#include "lib/events.h"
#include "lib/allow.h"
#include "lib/dns.h"
#include "lib/conn.h"
#include "lib/pin_addr.h"
#include "lib/account.h"

/*
 * --deny-errno: what a refused connect() or sendmsg() fails with instead
 * of the kernel's EPERM. Clients decide from it whether to retry for
 * minutes and what to blame (docs/CLIENTS.md). bpf_set_retval() needs
 * Linux 5.18: egret probes for it before loading and sets have_set_retval,
 * so on an older kernel the verifier drops the call as dead code.
 */
const volatile __u8 have_set_retval;

static __always_inline int refuse_with_errno(int verdict)
{
	__s32 deny_errno;

	if (verdict != SYS_REJECT || !have_set_retval)
		return verdict;
	deny_errno = attempt_cfg()->deny_errno;
	if (deny_errno > 0)
		bpf_set_retval(-deny_errno);
	return verdict;
}

/*
 * A UDP connect() sends nothing: getaddrinfo and Go's resolver connect
 * sockets to sort addresses (port 0, 9) and close them. Not egress, so no
 * denial: the connect proceeds, the socket forgets any earlier peer, and
 * every datagram it sends is judged on its way (the sendmsg hook with a
 * cmsg, the egress backstop without). A value of judge4/6's own, never
 * returned to the kernel: the connect programs turn it into SYS_PROCEED.
 */
#define SYS_UNJUDGED	2

/*
 * Judge @addr:@port (host order) for @hook, count it, log it. @hit: what
 * allowed it. A destination over its upload budget is refused here too.
 * Global: verified once per program, not once per path of the connect and
 * sendmsg programs that reaches it (those paths multiplied the states of
 * the lookups, the budget check and the event by each other).
 */
__noinline int judge4_at(__u32 hook, __u32 addr, __u32 port, __u32 proto,
			 struct allow_hit *hit)
{
	struct event_args ev = { .addr = { addr }, .hook = hook, .family = 4,
				 .port = port, .proto = proto };

	if (!hit)
		return SYS_REJECT;
	ev.reason = allow4_judge(addr, port, hit);
	if (proto == IPPROTO_UDP_)
		ev.reason = pin_quic4(ev.reason, addr, port);
	ev.reason = acct_judge(ev.reason, hit->dest);

	if (hook == EGRET_HOOK_CONNECT && proto == IPPROTO_UDP_ &&
	    ev.reason != EGRET_REASON_ALLOWED)
		return SYS_UNJUDGED;
	return event_decide_judged(&ev) ? SYS_PROCEED : SYS_REJECT;
}

__noinline int judge6_at(__u32 hook, const struct addr_words *addr, __u32 port,
			 __u32 proto, struct allow_hit *hit)
{
	struct event_args ev = { .hook = hook, .family = 6, .port = port, .proto = proto };

	if (!addr || !hit)
		return SYS_REJECT;
	__builtin_memcpy(ev.addr, addr->a, sizeof(ev.addr));
	ev.reason = allow6_judge(addr->a, port, hit);
	if (proto == IPPROTO_UDP_)
		ev.reason = pin_quic6(ev.reason, addr->a, port);
	ev.reason = acct_judge(ev.reason, hit->dest);
	if (hook == EGRET_HOOK_CONNECT && proto == IPPROTO_UDP_ &&
	    ev.reason != EGRET_REASON_ALLOWED)
		return SYS_UNJUDGED;
	return event_decide_judged(&ev) ? SYS_PROCEED : SYS_REJECT;
}

/* The verifier takes a global function's result as any scalar: one of
 * the verdicts @hook can have (SYS_UNJUDGED: a UDP connect only), or a
 * refusal. */
static __always_inline int judge_verdict(enum egret_hook hook, int r)
{
	if (r == SYS_PROCEED || (r == SYS_UNJUDGED && hook == EGRET_HOOK_CONNECT))
		return r;
	return SYS_REJECT;
}

static __always_inline int judge4(enum egret_hook hook, __u32 addr, __u16 port,
				  __u8 proto, struct allow_hit *hit)
{
	return judge_verdict(hook, judge4_at(hook, addr, port, proto, hit));
}

static __always_inline int judge6(enum egret_hook hook, const __u32 addr[4],
				  __u16 port, __u8 proto, struct allow_hit *hit)
{
	/* ::ffff:a.b.c.d is routed, and so judged and logged, as IPv4
	 * (here, not in judge6_at: one global calling another would add its
	 * frame to a chain that must fit 512 bytes). */
	if (egret_is_v4mapped(addr))
		return judge4(hook, addr[3], port, proto, hit);
	return judge_verdict(hook, judge6_at(hook, (const struct addr_words *)addr, port,
				       proto, hit));
}

static __always_inline void ctx_ip6(const struct bpf_sock_addr *ctx, __u32 addr[4])
{
	addr[0] = ctx->user_ip6[0];
	addr[1] = ctx->user_ip6[1];
	addr[2] = ctx->user_ip6[2];
	addr[3] = ctx->user_ip6[3];
}

/*
 * A sendmsg without msg_name on a connected UDP socket normally skips the
 * hook, but one carrying a cmsg (IP_TTL, IP_PKTINFO...) runs it with an
 * all-zero, AF_UNSPEC address: the datagram goes to the connected peer, so
 * judge that peer instead of denying the "0.0.0.0:0" the kernel shows us.
 */
static __always_inline int sock4_judge_peer(struct bpf_sock_addr *ctx)
{
	struct bpf_sock *sk = ctx->sk;
	__u32 peer[4] = {};
	struct allow_hit hit = {};

	if (!sk)
		return SYS_REJECT;
	peer[0] = sk->dst_ip4;
	if (dns_is_proxy4(peer[0], sk->dst_port))
		return SYS_PROCEED;
	/* The peer its connect() was allowed to: a flow, like TCP's, that
	 * outlives the allow entry (QUIC sends every datagram with cmsgs). */
	if (conn_remembered(sk, 4, peer, sk->dst_port, NULL))
		return SYS_PROCEED;
	return judge4(EGRET_HOOK_SENDMSG, peer[0], bpf_ntohs(sk->dst_port),
		      (__u8)ctx->protocol, &hit);
}

static __always_inline int sock6_judge_peer(struct bpf_sock_addr *ctx)
{
	struct bpf_sock *sk = ctx->sk;
	__u32 addr[4];
	struct allow_hit hit = {};

	if (!sk)
		return SYS_REJECT;
	addr[0] = sk->dst_ip6[0];
	addr[1] = sk->dst_ip6[1];
	addr[2] = sk->dst_ip6[2];
	addr[3] = sk->dst_ip6[3];
	if (dns_is_proxy6(addr, sk->dst_port))
		return SYS_PROCEED;
	if (egret_is_v4mapped(addr)) {
		__u32 v4[4] = { addr[3] };

		if (conn_remembered(sk, 4, v4, sk->dst_port, NULL))
			return SYS_PROCEED;
	} else if (conn_remembered(sk, 6, addr, sk->dst_port, NULL)) {
		return SYS_PROCEED;
	}
	return judge6(EGRET_HOOK_SENDMSG, addr, bpf_ntohs(sk->dst_port),
		      (__u8)ctx->protocol, &hit);
}

/* A DNS destination goes to the proxy; anything else is judged. */
static __always_inline int sock4_connect_or_send(struct bpf_sock_addr *ctx,
						 enum egret_hook hook, struct allow_hit *hit)
{
	int r = dns_redirect4(ctx);

	hit->lasting = 0;
	hit->dest = 0;
	if (r)
		return r > 0 ? SYS_PROCEED : SYS_REJECT;
	return judge4(hook, ctx->user_ip4, bpf_ntohs(ctx->user_port),
		      (__u8)ctx->protocol, hit);
}

static __always_inline int sock6_connect_or_send(struct bpf_sock_addr *ctx,
						 enum egret_hook hook, struct allow_hit *hit)
{
	__u32 addr[4];
	int r = dns_redirect6(ctx);

	hit->lasting = 0;
	hit->dest = 0;
	if (r)
		return r > 0 ? SYS_PROCEED : SYS_REJECT;
	ctx_ip6(ctx, addr);
	return judge6(hook, addr, bpf_ntohs(ctx->user_port), (__u8)ctx->protocol,
		      hit);
}

/*
 * udp_sendmsg() takes a msg_name of family AF_UNSPEC as AF_INET and sends
 * to its address, while the hook sees user_family AF_UNSPEC just as for a
 * send with no address at all. Only an all-zero address means "no msg_name"
 * (the kernel refuses port 0 before the hook); anything else is judged as
 * the destination it is, or a socket connected to an allowed peer could
 * send anywhere.
 */
static __always_inline int sock4_no_destination(struct bpf_sock_addr *ctx)
{
	return ctx->user_family == AF_UNSPEC && ctx->user_ip4 == 0 &&
	       ctx->user_port == 0;
}

/*
 * In audit mode a datagram the policy refuses is logged here and let
 * through; remembering its destination on the socket keeps the backstop
 * from logging the same datagram a second time on the wire.
 */
static __always_inline void audit_remember4(struct bpf_sock_addr *ctx)
{
	__u32 ip = ctx->user_ip4, port = ctx->user_port;
	__u32 addr[4] = {};

	barrier_var(ip);
	barrier_var(port);
	addr[0] = ip;
	conn_remember(ctx, 4, addr, (__u16)port, 0);
}

#endif /* EGRET_BPF_JUDGE_H */
