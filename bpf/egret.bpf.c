// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * egret.bpf.c - the programs of one attempt: cgroup hooks that deny every
 * destination the attempt's allow maps do not hold, send every DNS query
 * to egret, admit only the sockets, options and binds those hooks can
 * judge, and judge every packet again on its way out.
 *
 * Loaded once and attached (by bpf_link) to each attempt's cgroup, which
 * the programs tell apart by the attachment's cgroup storage
 * (lib/attempt.h); processes elsewhere, the miner included, never run
 * them. Each program is a thin wrapper: the logic is in lib/, one topic
 * per header.
 */
/* Only uapi structs are read, here and in lib/, at offsets the kernel
 * fixes: without CO-RE relocations libbpf need not load and parse the
 * kernel's BTF (about 20 ms of every launch). Defined before anything
 * includes vmlinux.h, which reads it (every lib/ header does). */
#define BPF_NO_PRESERVE_ACCESS_INDEX
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "egret.h"
#include "egret_match.h"
#include "lib/verdict.h"
#include "lib/net.h"
#include "lib/attempt.h"
#include "lib/events.h"
#include "lib/host.h"
#include "lib/allow.h"
#include "lib/names.h"
#include "lib/dns.h"
#include "lib/conn.h"
#include "lib/socket.h"
#include "lib/judge.h"
#include "lib/bind.h"
#include "lib/pin.h"
#include "lib/http.h"
#include "lib/account_map.h"
#include "lib/account.h"
#include "lib/account_ops.h"
#include "lib/egress.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * An allowed UDP connect: the socket remembers where, for the backstop -
 * unless a rule that never expires allowed it, which the backstop will
 * find in the maps for as long as the flow lives (and creating the
 * socket's storage is most of this program's cost). A TCP socket needs no
 * memory: the backstop judges its SYN, and passes the rest of its
 * connection (lib/egress.h).
 */
SEC("cgroup/connect4")
int egret_connect4(struct bpf_sock_addr *ctx)
{
	struct allow_hit hit;
	int verdict = sock4_connect_or_send(ctx, EGRET_HOOK_CONNECT, &hit);
	__u32 ip = ctx->user_ip4, port = ctx->user_port;
	__u32 addr[4] = {};

	if (verdict == SYS_UNJUDGED) {
		conn_forget(ctx);
		return SYS_PROCEED;
	}
	if (verdict != SYS_PROCEED || ctx->type == SOCK_STREAM)
		return refuse_with_errno(verdict);
	if (hit.lasting) {
		conn_forget(ctx);
		return verdict;
	}
	/* Loaded now, through the unmodified ctx pointer, as the verifier
	 * requires; after a DNS redirect they are the proxy's. */
	barrier_var(ip);
	barrier_var(port);
	addr[0] = ip;
	conn_remember(ctx, 4, addr, (__u16)port, hit.dest);
	return verdict;
}

SEC("cgroup/connect6")
int egret_connect6(struct bpf_sock_addr *ctx)
{
	__u32 addr[4];
	struct allow_hit hit;
	int verdict = sock6_connect_or_send(ctx, EGRET_HOOK_CONNECT, &hit);

	if (verdict == SYS_UNJUDGED) {
		conn_forget(ctx);
		return SYS_PROCEED;
	}
	if (verdict != SYS_PROCEED || ctx->type == SOCK_STREAM)
		return refuse_with_errno(verdict);
	if (hit.lasting) {
		conn_forget(ctx);
		return verdict;
	}
	/* After a DNS redirect these are the proxy's: fine, it passes too. */
	ctx_ip6(ctx, addr);
	if (egret_is_v4mapped(addr)) {
		__u32 v4[4] = { addr[3] };

		conn_remember(ctx, 4, v4, (__u16)ctx->user_port, hit.dest);
	} else {
		conn_remember(ctx, 6, addr, (__u16)ctx->user_port, hit.dest);
	}
	return verdict;
}

SEC("cgroup/sendmsg4")
int egret_sendmsg4(struct bpf_sock_addr *ctx)
{
	struct allow_hit hit;
	int verdict;

	if (sock4_no_destination(ctx))
		return refuse_with_errno(sock4_judge_peer(ctx));
	verdict = sock4_connect_or_send(ctx, EGRET_HOOK_SENDMSG, &hit);
	if (attempt_cfg()->audit && verdict == SYS_PROCEED)
		audit_remember4(ctx);
	return refuse_with_errno(verdict);
}

/* udpv6_sendmsg() drops an AF_UNSPEC msg_name and sends to the connected
 * peer, so for IPv6 AF_UNSPEC always means the peer. */
SEC("cgroup/sendmsg6")
int egret_sendmsg6(struct bpf_sock_addr *ctx)
{
	__u32 addr[4];
	struct allow_hit hit;
	int verdict;

	if (ctx->user_family == AF_UNSPEC)
		return refuse_with_errno(sock6_judge_peer(ctx));
	verdict = sock6_connect_or_send(ctx, EGRET_HOOK_SENDMSG, &hit);
	if (attempt_cfg()->audit && verdict == SYS_PROCEED) {
		/* As audit_remember4 (v4-mapped sends take the IPv4 path). */
		ctx_ip6(ctx, addr);
		conn_remember(ctx, 6, addr, (__u16)ctx->user_port, 0);
	}
	return refuse_with_errno(verdict);
}

/* recvmsg and getpeername programs must proceed; they only rewrite. */
SEC("cgroup/recvmsg4")
int egret_recvmsg4(struct bpf_sock_addr *ctx)
{
	dns_restore4(ctx);
	return SYS_PROCEED;
}

SEC("cgroup/recvmsg6")
int egret_recvmsg6(struct bpf_sock_addr *ctx)
{
	dns_restore6(ctx);
	return SYS_PROCEED;
}

SEC("cgroup/getpeername4")
int egret_getpeer4(struct bpf_sock_addr *ctx)
{
	dns_restore4(ctx);
	return SYS_PROCEED;
}

SEC("cgroup/getpeername6")
int egret_getpeer6(struct bpf_sock_addr *ctx)
{
	dns_restore6(ctx);
	return SYS_PROCEED;
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

/*
 * No source routes, routing headers or forged sources, no device binding,
 * no multicast source filters; group joins only for groups the policy
 * names (the kernel's reports carry the group to the network, and no
 * program of the attempt sees them).
 */
SEC("cgroup/setsockopt")
int egret_sockopt(struct bpf_sockopt *ctx)
{
	enum sockopt_kind kind = sockopt_classify(ctx->level, ctx->optname);
	__u32 group[4] = {};
	struct event_info in = {
		.hook = EGRET_HOOK_SOCKOPT, .reason = EGRET_REASON_SOCKOPT,
		.level = ctx->level, .optname = ctx->optname,
	};

	if (kind == SOCKOPT_PASS)
		return SYS_PROCEED;
	if (kind != SOCKOPT_REFUSE) {
		in.reason = sockopt_judge_join(ctx, kind, &in, group);
		if (in.family)
			in.addr = group;
	}
	return event_decide(&in) ? SYS_PROCEED : SYS_REJECT;
}

SEC("cgroup/bind4")
int egret_bind4(struct bpf_sock_addr *ctx)
{
	__u32 addr = ctx->user_ip4;
	__u16 port = bpf_ntohs(ctx->user_port);
	enum bind_action act = bind4_action(addr, ctx->type == SOCK_DGRAM && port);

	if (act == BIND_TO_LOOPBACK)
		ctx->user_ip4 = LOOPBACK4_BE;
	return bind4_apply(ctx, addr, port, act);
}

SEC("cgroup/bind6")
int egret_bind6(struct bpf_sock_addr *ctx)
{
	__u16 port = bpf_ntohs(ctx->user_port);
	int udp_port = ctx->type == SOCK_DGRAM && port;
	enum egret_addr_class cls;
	enum bind_action act;
	__u32 addr[4];

	ctx_ip6(ctx, addr);
	/* ::ffff:a.b.c.d binds the IPv4 address of a dual-stack socket. */
	if (egret_is_v4mapped(addr)) {
		act = bind4_action(addr[3], udp_port);
		if (act == BIND_TO_LOOPBACK)
			ctx->user_ip6[3] = LOOPBACK4_BE;
		return bind4_apply(ctx, addr[3], port, act);
	}
	cls = egret_classify6(addr);
	if (cls == EGRET_ADDR_LOOPBACK)
		return bind_pass();
	if (cls == EGRET_ADDR_UNSPECIFIED) {
		if (udp_port && !attempt_cfg()->audit) {
			ctx->user_ip6[0] = 0;
			ctx->user_ip6[1] = 0;
			ctx->user_ip6[2] = 0;
			ctx->user_ip6[3] = bpf_htonl(1);	/* ::1 */
		}
		return bind_pass();
	}
	if (cls == EGRET_ADDR_LINK_LOCAL)
		return bind_refuse(ctx, 6, addr, port, EGRET_REASON_LISTENER);
	if (!(host6_flags(addr) & EGRET_HOST_LOCAL))
		return bind_refuse(ctx, 6, addr, port, EGRET_REASON_SOURCE);
	if (udp_port)
		return bind_refuse(ctx, 6, addr, port, EGRET_REASON_LISTENER);
	return bind_pass();
}

/*
 * listen(): every TCP listener of the attempt is bound to the loopback
 * device, wherever it is bound (0.0.0.0, a host address, or nowhere:
 * listen() on an unbound socket picks a port without any bind hook). A
 * connection from elsewhere then finds no listener and gets the kernel's
 * RST, exactly as a port where nothing listens: the ports the attempt
 * listens on tell a prober nothing. Local clients (loopback, and so the
 * attempt itself) still connect. sock_ops cannot refuse a listen(); if the
 * binding fails (only a socket already bound to another device could,
 * and that option is refused) the event says so.
 */
#define LOOPBACK_IFINDEX	1

static __always_inline void listen_on_loopback(struct bpf_sock_ops *ctx)
{
	int lo = LOOPBACK_IFINDEX;
	struct event_info in = {
		.hook = EGRET_HOOK_LISTEN, .reason = EGRET_REASON_LISTENER,
		.port = (__u16)ctx->local_port, .proto = IPPROTO_TCP_,
	};

	if (bpf_setsockopt(ctx, SOL_SOCKET_, SO_BINDTOIFINDEX_, &lo, sizeof(lo)) == 0) {
		counter_add(EGRET_COUNTER(EGRET_HOOK_LISTEN, EGRET_VERDICT_ALLOW));
		return;
	}
	event_decide(&in);
}

/* Does sock_ops' connection go to egret's DNS proxy (a redirected
 * query over TCP)? */
static __always_inline int sockops_to_proxy(struct bpf_sock_ops *ctx)
{
	__u16 port_be = (__u16)(ctx->remote_port >> 16);
	__u32 ip6[4];

	if (ctx->family != AF_INET6)
		return dns_is_proxy4(ctx->remote_ip4, port_be);
	ip6[0] = ctx->remote_ip6[0];
	ip6[1] = ctx->remote_ip6[1];
	ip6[2] = ctx->remote_ip6[2];
	ip6[3] = ctx->remote_ip6[3];
	return dns_is_proxy6(ip6, port_be);
}

/* A TCP socket's life: its listen(), a TLS-pinned connection's connect,
 * establishment and segments (lib/pin.h), an HTTP-pinned one's connect
 * and segments (lib/http.h), an established active open's close (what
 * it received: lib/account_ops.h). sock_ops programs return 1. */
SEC("sockops")
int egret_sockops(struct bpf_sock_ops *ctx)
{
	switch (ctx->op) {
	case BPF_SOCK_OPS_TCP_LISTEN_CB:
		listen_on_loopback(ctx);
		break;
	case BPF_SOCK_OPS_TCP_CONNECT_CB:
		pin_connect(ctx);
		http_connect(ctx);
		break;
	case BPF_SOCK_OPS_STATE_CB:
		if (ctx->args[1] == BPF_TCP_CLOSE)
			acct_close(ctx);
		break;
	case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
		pin_established(ctx);
		acct_established(ctx, sockops_to_proxy(ctx));
		break;
	case BPF_SOCK_OPS_HDR_OPT_LEN_CB:
		if (http_port(attempt_cfg(), bpf_ntohl(ctx->remote_port)))
			http_segment(ctx);
		else
			pin_segment(ctx);
		break;
	}
	return 1;
}

/* A send() on a pinned connection before its first record was judged:
 * attached to egret_pin_socks, not to a cgroup. */
SEC("sk_msg")
int egret_tls(struct sk_msg_md *msg)
{
	return pin_msg(msg);
}

/* The backstop: every packet of the attempt's sockets, on the wire. */
SEC("cgroup_skb/egress")
int egret_egress(struct __sk_buff *skb)
{
	int verdict;

	/* egress4/6 are global functions (verified once each, with a stack
	 * of their own): the verifier takes their result as any scalar. */
	if (skb->protocol == bpf_htons(ETH_P_IP_))
		verdict = egress4(skb);
	else if (skb->protocol == bpf_htons(ETH_P_IPV6_))
		verdict = egress6(skb);
	else
		return egress_deny(0, NULL, 0, 0);
	return verdict == SKB_PASS ? SKB_PASS : SKB_DROP;
}
