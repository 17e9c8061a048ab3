// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * egret.bpf.c - cgroup sock_addr programs that deny every destination the
 * attempt's allow maps do not hold, and send every DNS query to egret.
 *
 * Attached (by bpf_link) to one attempt's cgroup only; processes elsewhere,
 * the miner included, never run these programs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "egret.h"
#include "egret_match.h"
#include "lib/allow.h"
#include "lib/dns.h"
#include "lib/socket.h"
#include "lib/egress.h"

/* Verdicts of cgroup sock_addr programs: 0 makes the syscall fail EPERM. */
#define SYS_REJECT	0
#define SYS_PROCEED	1

#define AF_UNSPEC	0
#define AF_INET		2
#define AF_INET6	10

char LICENSE[] SEC("license") = "Dual BSD/GPL";

static __always_inline int reason_to_verdict(enum egret_reason reason)
{
	return reason == EGRET_REASON_ALLOWED ? SYS_PROCEED : SYS_REJECT;
}

static __always_inline int sock4_judge_ctx(struct bpf_sock_addr *ctx)
{
	return reason_to_verdict(allow4_judge(ctx->user_ip4,
					      bpf_ntohs(ctx->user_port)));
}

static __always_inline int sock6_judge_ctx(struct bpf_sock_addr *ctx)
{
	__u32 addr[4];

	addr[0] = ctx->user_ip6[0];
	addr[1] = ctx->user_ip6[1];
	addr[2] = ctx->user_ip6[2];
	addr[3] = ctx->user_ip6[3];
	return reason_to_verdict(allow6_judge(addr, bpf_ntohs(ctx->user_port)));
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

	if (!sk)
		return SYS_REJECT;
	if (dns_is_proxy4(sk->dst_ip4, sk->dst_port))
		return SYS_PROCEED;
	return reason_to_verdict(allow4_judge(sk->dst_ip4,
					      bpf_ntohs(sk->dst_port)));
}

static __always_inline int sock6_judge_peer(struct bpf_sock_addr *ctx)
{
	struct bpf_sock *sk = ctx->sk;
	__u32 addr[4];

	if (!sk)
		return SYS_REJECT;
	addr[0] = sk->dst_ip6[0];
	addr[1] = sk->dst_ip6[1];
	addr[2] = sk->dst_ip6[2];
	addr[3] = sk->dst_ip6[3];
	if (dns_is_proxy6(addr, sk->dst_port))
		return SYS_PROCEED;
	return reason_to_verdict(allow6_judge(addr, bpf_ntohs(sk->dst_port)));
}

/* A DNS destination goes to the proxy; anything else is judged. */
static __always_inline int sock4_connect_or_send(struct bpf_sock_addr *ctx)
{
	int r = dns_redirect4(ctx);

	if (r)
		return r > 0 ? SYS_PROCEED : SYS_REJECT;
	return sock4_judge_ctx(ctx);
}

static __always_inline int sock6_connect_or_send(struct bpf_sock_addr *ctx)
{
	int r = dns_redirect6(ctx);

	if (r)
		return r > 0 ? SYS_PROCEED : SYS_REJECT;
	return sock6_judge_ctx(ctx);
}

/* An allowed connect: the socket remembers where, for the backstop. */
SEC("cgroup/connect4")
int egret_connect4(struct bpf_sock_addr *ctx)
{
	int verdict = sock4_connect_or_send(ctx);
	__u32 addr[4] = { ctx->user_ip4 };	/* the proxy's after a redirect */

	if (verdict == SYS_PROCEED)
		conn_remember(ctx, 4, addr, (__u16)ctx->user_port);
	return verdict;
}

SEC("cgroup/connect6")
int egret_connect6(struct bpf_sock_addr *ctx)
{
	__u32 addr[4];
	int verdict = sock6_connect_or_send(ctx);

	if (verdict != SYS_PROCEED)
		return verdict;
	/* After a DNS redirect these are the proxy's: fine, it passes too. */
	addr[0] = ctx->user_ip6[0];
	addr[1] = ctx->user_ip6[1];
	addr[2] = ctx->user_ip6[2];
	addr[3] = ctx->user_ip6[3];
	if (egret_is_v4mapped(addr)) {
		__u32 v4[4] = { addr[3] };

		conn_remember(ctx, 4, v4, (__u16)ctx->user_port);
	} else {
		conn_remember(ctx, 6, addr, (__u16)ctx->user_port);
	}
	return verdict;
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

SEC("cgroup/sendmsg4")
int egret_sendmsg4(struct bpf_sock_addr *ctx)
{
	if (sock4_no_destination(ctx))
		return sock4_judge_peer(ctx);
	return sock4_connect_or_send(ctx);
}

/* udpv6_sendmsg() drops an AF_UNSPEC msg_name and sends to the connected
 * peer, so for IPv6 AF_UNSPEC always means the peer. */
SEC("cgroup/sendmsg6")
int egret_sendmsg6(struct bpf_sock_addr *ctx)
{
	if (ctx->user_family == AF_UNSPEC)
		return sock6_judge_peer(ctx);
	return sock6_connect_or_send(ctx);
}

/* recvmsg and getpeername programs must return 1; they only rewrite. */
SEC("cgroup/recvmsg4")
int egret_recvmsg4(struct bpf_sock_addr *ctx)
{
	dns_restore4(ctx);
	return 1;
}

SEC("cgroup/recvmsg6")
int egret_recvmsg6(struct bpf_sock_addr *ctx)
{
	dns_restore6(ctx);
	return 1;
}

SEC("cgroup/getpeername4")
int egret_getpeer4(struct bpf_sock_addr *ctx)
{
	dns_restore4(ctx);
	return 1;
}

SEC("cgroup/getpeername6")
int egret_getpeer6(struct bpf_sock_addr *ctx)
{
	dns_restore6(ctx);
	return 1;
}

/* Only socket kinds the hooks enforce: no raw, ping, SCTP or UDP-Lite. */
SEC("cgroup/sock_create")
int egret_socket(struct bpf_sock *ctx)
{
	if (ctx->family != AF_INET && ctx->family != AF_INET6)
		return SYS_PROCEED;	/* only inet sockets reach this hook */
	return socket_type_enforced(ctx->type, ctx->protocol) ?
		       SYS_PROCEED : SYS_REJECT;
}

/* No source routes or routing headers: they redirect past the verdict. */
SEC("cgroup/setsockopt")
int egret_sockopt(struct bpf_sockopt *ctx)
{
	return sockopt_redirects(ctx->level, ctx->optname) ? SYS_REJECT :
							     SYS_PROCEED;
}

/* The backstop: every packet of the attempt's sockets, on the wire. */
SEC("cgroup_skb/egress")
int egret_egress(struct __sk_buff *skb)
{
	if (skb->protocol == bpf_htons(ETH_P_IP_))
		return egress4(skb);
	if (skb->protocol == bpf_htons(ETH_P_IPV6_))
		return egress6(skb);
	return SKB_DROP;
}
