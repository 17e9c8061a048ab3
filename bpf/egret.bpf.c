// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * egret.bpf.c - cgroup sock_addr programs that deny every destination the
 * attempt's allow maps do not hold, and send every DNS query to egret.
 *
 * Attached (by bpf_link) to one attempt's cgroup only; processes elsewhere,
 * the miner included, never run these programs.
 */
/* Only uapi context structs are read here, at offsets the kernel fixes:
 * without CO-RE relocations libbpf need not load and parse the kernel's
 * BTF (about 20 ms of every launch). */
#define BPF_NO_PRESERVE_ACCESS_INDEX
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "egret.h"
#include "egret_match.h"
#include "lib/events.h"
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

/* Judge @addr:@port (host order) for @hook, count it, log it. *@lasting:
 * allowed by a rule that never expires. */
static __always_inline int judge4(enum egret_hook hook, __u32 addr, __u16 port,
				  __u8 proto, int *lasting)
{
	__u32 a[4] = { addr };
	struct event_info in = {
		.hook = hook, .family = 4, .addr = a, .port = port,
		.proto = proto, .reason = allow4_judge(addr, port, lasting),
	};

	return event_decide(&in) ? SYS_PROCEED : SYS_REJECT;
}

static __always_inline int judge6(enum egret_hook hook, const __u32 addr[4],
				  __u16 port, __u8 proto, int *lasting)
{
	struct event_info in = {
		.hook = hook, .family = 6, .addr = addr, .port = port,
		.proto = proto,
	};

	/* ::ffff:a.b.c.d is routed, and so judged and logged, as IPv4. */
	if (egret_is_v4mapped(addr))
		return judge4(hook, addr[3], port, proto, lasting);
	in.reason = allow6_judge(addr, port, lasting);
	return event_decide(&in) ? SYS_PROCEED : SYS_REJECT;
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
	int lasting;

	if (!sk)
		return SYS_REJECT;
	peer[0] = sk->dst_ip4;
	if (dns_is_proxy4(peer[0], sk->dst_port))
		return SYS_PROCEED;
	/* The peer its connect() was allowed to: a flow, like TCP's, that
	 * outlives the allow entry (QUIC sends every datagram with cmsgs). */
	if (conn_remembered(sk, 4, peer, sk->dst_port))
		return SYS_PROCEED;
	return judge4(EGRET_HOOK_SENDMSG, peer[0], bpf_ntohs(sk->dst_port),
		      (__u8)ctx->protocol, &lasting);
}

static __always_inline int sock6_judge_peer(struct bpf_sock_addr *ctx)
{
	struct bpf_sock *sk = ctx->sk;
	__u32 addr[4];
	int lasting;

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

		if (conn_remembered(sk, 4, v4, sk->dst_port))
			return SYS_PROCEED;
	} else if (conn_remembered(sk, 6, addr, sk->dst_port)) {
		return SYS_PROCEED;
	}
	return judge6(EGRET_HOOK_SENDMSG, addr, bpf_ntohs(sk->dst_port),
		      (__u8)ctx->protocol, &lasting);
}

/* A DNS destination goes to the proxy; anything else is judged. */
static __always_inline int sock4_connect_or_send(struct bpf_sock_addr *ctx,
						 enum egret_hook hook, int *lasting)
{
	int r = dns_redirect4(ctx);

	*lasting = 0;
	if (r)
		return r > 0 ? SYS_PROCEED : SYS_REJECT;
	return judge4(hook, ctx->user_ip4, bpf_ntohs(ctx->user_port),
		      (__u8)ctx->protocol, lasting);
}

static __always_inline int sock6_connect_or_send(struct bpf_sock_addr *ctx,
						 enum egret_hook hook, int *lasting)
{
	__u32 addr[4];
	int r = dns_redirect6(ctx);

	*lasting = 0;
	if (r)
		return r > 0 ? SYS_PROCEED : SYS_REJECT;
	ctx_ip6(ctx, addr);
	return judge6(hook, addr, bpf_ntohs(ctx->user_port), (__u8)ctx->protocol,
		      lasting);
}

/*
 * An allowed connect: the socket remembers where, for the backstop - unless
 * a rule that never expires allowed it, which the backstop will find in
 * the maps for as long as the flow lives (and creating the socket's storage
 * is most of this program's cost).
 */
SEC("cgroup/connect4")
int egret_connect4(struct bpf_sock_addr *ctx)
{
	int lasting;
	int verdict = sock4_connect_or_send(ctx, EGRET_HOOK_CONNECT, &lasting);
	__u32 ip = ctx->user_ip4, port = ctx->user_port;
	__u32 addr[4] = {};

	if (verdict != SYS_PROCEED)
		return verdict;
	if (lasting) {
		conn_forget(ctx);
		return verdict;
	}
	/* Loaded now, through the unmodified ctx pointer, as the verifier
	 * requires; after a DNS redirect they are the proxy's. */
	barrier_var(ip);
	barrier_var(port);
	addr[0] = ip;
	conn_remember(ctx, 4, addr, (__u16)port);
	return verdict;
}

SEC("cgroup/connect6")
int egret_connect6(struct bpf_sock_addr *ctx)
{
	__u32 addr[4];
	int lasting;
	int verdict = sock6_connect_or_send(ctx, EGRET_HOOK_CONNECT, &lasting);

	if (verdict != SYS_PROCEED)
		return verdict;
	if (lasting) {
		conn_forget(ctx);
		return verdict;
	}
	/* After a DNS redirect these are the proxy's: fine, it passes too. */
	ctx_ip6(ctx, addr);
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
	conn_remember(ctx, 4, addr, (__u16)port);
}

SEC("cgroup/sendmsg4")
int egret_sendmsg4(struct bpf_sock_addr *ctx)
{
	int verdict, lasting;

	if (sock4_no_destination(ctx))
		return sock4_judge_peer(ctx);
	verdict = sock4_connect_or_send(ctx, EGRET_HOOK_SENDMSG, &lasting);
	if (audit && verdict == SYS_PROCEED)
		audit_remember4(ctx);
	return verdict;
}

/* udpv6_sendmsg() drops an AF_UNSPEC msg_name and sends to the connected
 * peer, so for IPv6 AF_UNSPEC always means the peer. */
SEC("cgroup/sendmsg6")
int egret_sendmsg6(struct bpf_sock_addr *ctx)
{
	__u32 addr[4];
	int verdict, lasting;

	if (ctx->user_family == AF_UNSPEC)
		return sock6_judge_peer(ctx);
	verdict = sock6_connect_or_send(ctx, EGRET_HOOK_SENDMSG, &lasting);
	if (audit && verdict == SYS_PROCEED) {
		/* As audit_remember4 (v4-mapped sends take the IPv4 path). */
		ctx_ip6(ctx, addr);
		conn_remember(ctx, 6, addr, (__u16)ctx->user_port);
	}
	return verdict;
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
	struct event_info in = {
		.hook = EGRET_HOOK_SOCKET, .proto = (__u8)ctx->protocol,
		.sock_type = (__u8)ctx->type, .reason = EGRET_REASON_SOCKET,
	};

	/* Allowed sockets are counted, never logged: there are many. */
	if (socket_type_enforced(ctx->type, ctx->protocol)) {
		counter_add(EGRET_COUNTER(EGRET_HOOK_SOCKET, EGRET_VERDICT_ALLOW));
		return SYS_PROCEED;
	}
	return event_decide(&in) ? SYS_PROCEED : SYS_REJECT;
}

/* No source routes or routing headers: they redirect past the verdict. */
SEC("cgroup/setsockopt")
int egret_sockopt(struct bpf_sockopt *ctx)
{
	struct event_info in = {
		.hook = EGRET_HOOK_SOCKOPT, .reason = EGRET_REASON_SOCKOPT,
		.level = ctx->level, .optname = ctx->optname,
	};

	if (!sockopt_redirects(ctx->level, ctx->optname))
		return SYS_PROCEED;
	return event_decide(&in) ? SYS_PROCEED : SYS_REJECT;
}

/* The backstop: every packet of the attempt's sockets, on the wire. */
SEC("cgroup_skb/egress")
int egret_egress(struct __sk_buff *skb)
{
	if (skb->protocol == bpf_htons(ETH_P_IP_))
		return egress4(skb);
	if (skb->protocol == bpf_htons(ETH_P_IPV6_))
		return egress6(skb);
	return egress_deny(0, NULL, 0, 0);
}
