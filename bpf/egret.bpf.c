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
#include "lib/host.h"
#include "lib/allow.h"
#include "lib/dns.h"
#include "lib/socket.h"
#include "lib/egress.h"

/* Verdicts of cgroup sock_addr programs: 0 makes the syscall fail EPERM. */
#define SYS_REJECT	0
#define SYS_PROCEED	1

/*
 * --deny-errno: what a refused connect() or sendmsg() fails with instead
 * of the kernel's EPERM. Clients decide from it whether to retry for
 * minutes and what to blame (docs/CLIENTS.md). bpf_set_retval() needs
 * Linux 5.18: egret probes for it before loading and sets have_set_retval,
 * so on an older kernel the verifier drops the call as dead code.
 */
const volatile __u8 have_set_retval;
volatile __s32 deny_errno;

static __always_inline int refuse_with_errno(int verdict)
{
	if (verdict == SYS_REJECT && have_set_retval && deny_errno > 0)
		bpf_set_retval(-deny_errno);
	return verdict;
}

#define AF_UNSPEC	0
#define AF_INET		2
#define AF_INET6	10

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * A UDP connect() sends nothing: getaddrinfo and Go's resolver connect
 * sockets to sort addresses (port 0, 9) and close them. Not egress, so no
 * denial: the connect proceeds, the socket forgets any earlier peer, and
 * every datagram it sends is judged on its way (the sendmsg hook with a
 * cmsg, the egress backstop without).
 */
#define SYS_UNJUDGED	2

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

	if (hook == EGRET_HOOK_CONNECT && proto == IPPROTO_UDP_ &&
	    in.reason != EGRET_REASON_ALLOWED)
		return SYS_UNJUDGED;
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
	if (hook == EGRET_HOOK_CONNECT && proto == IPPROTO_UDP_ &&
	    in.reason != EGRET_REASON_ALLOWED)
		return SYS_UNJUDGED;
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

	if (verdict == SYS_UNJUDGED) {
		conn_forget(ctx);
		return SYS_PROCEED;
	}
	if (verdict != SYS_PROCEED)
		return refuse_with_errno(verdict);
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

	if (verdict == SYS_UNJUDGED) {
		conn_forget(ctx);
		return SYS_PROCEED;
	}
	if (verdict != SYS_PROCEED)
		return refuse_with_errno(verdict);
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
		return refuse_with_errno(sock4_judge_peer(ctx));
	verdict = sock4_connect_or_send(ctx, EGRET_HOOK_SENDMSG, &lasting);
	if (audit && verdict == SYS_PROCEED)
		audit_remember4(ctx);
	return refuse_with_errno(verdict);
}

/* udpv6_sendmsg() drops an AF_UNSPEC msg_name and sends to the connected
 * peer, so for IPv6 AF_UNSPEC always means the peer. */
SEC("cgroup/sendmsg6")
int egret_sendmsg6(struct bpf_sock_addr *ctx)
{
	__u32 addr[4];
	int verdict, lasting;

	if (ctx->user_family == AF_UNSPEC)
		return refuse_with_errno(sock6_judge_peer(ctx));
	verdict = sock6_connect_or_send(ctx, EGRET_HOOK_SENDMSG, &lasting);
	if (audit && verdict == SYS_PROCEED) {
		/* As audit_remember4 (v4-mapped sends take the IPv4 path). */
		ctx_ip6(ctx, addr);
		conn_remember(ctx, 6, addr, (__u16)ctx->user_port);
	}
	return refuse_with_errno(verdict);
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

/* The group of a join (sockopt_classify): named by the policy, or not.
 * A group_req holds gr_interface, then an 8-aligned sockaddr_storage
 * whose family must be the level's. Too short or odd: refused. */
static __always_inline enum egret_reason sockopt_judge_join(struct bpf_sockopt *ctx,
							    enum sockopt_kind kind,
							    struct event_info *in,
							    __u32 group[4])
{
	__u8 *val = ctx->optval, *end = ctx->optval_end;
	int lasting;

	/* Beyond a page the program sees only a copy of the first one, and
	 * the kernel, left to itself, reads the caller's buffer again: a
	 * thread could swap the group in between. No join needs that much. */
	if (ctx->optlen > SOCKOPT_JUDGED_MAX)
		return EGRET_REASON_SOCKOPT;
	if (kind == SOCKOPT_JOIN4_MREQ || kind == SOCKOPT_JOIN4_GREQ) {
		if (kind == SOCKOPT_JOIN4_GREQ) {
			if (val + 16 > end || *(__u16 *)(val + 8) != AF_INET)
				return EGRET_REASON_SOCKOPT;
			val += 12;
		}
		if (val + 4 > end)
			return EGRET_REASON_SOCKOPT;
		group[0] = *(__u32 *)val;
		in->family = 4;
		return allow4_judge_at(group[0], EGRET_PORT_ANY, bpf_ktime_get_ns(),
				       &lasting);
	}
	if (kind == SOCKOPT_JOIN6_GREQ) {
		if (val + 32 > end || *(__u16 *)(val + 8) != AF_INET6)
			return EGRET_REASON_SOCKOPT;
		val += 16;
	}
	if (val + 16 > end)
		return EGRET_REASON_SOCKOPT;
	__builtin_memcpy(group, val, 16);
	in->family = 6;
	return allow6_judge_at(group, EGRET_PORT_ANY, bpf_ktime_get_ns(), &lasting);
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

/*
 * Binds. A bound address must be the host's own (with FREEBIND refused,
 * only net.ipv*.ip_nonlocal_bind would let one through). A UDP port bound
 * explicitly on a non-loopback address tells a prober that the attempt
 * listens (a datagram there is taken; elsewhere the kernel answers port
 * unreachable): on the wildcard it is moved to loopback, where a server
 * inside the attempt still works for local clients; on a host address it
 * is refused. TCP listeners are handled at listen() (egret_listen).
 * An IPv6 link-local bind would tie the socket to a device: refused.
 */
static __always_inline int bind_refuse(struct bpf_sock_addr *ctx, int family,
				       const __u32 addr[4], __u16 port,
				       enum egret_reason reason)
{
	struct event_info in = {
		.hook = EGRET_HOOK_BIND, .family = family, .addr = addr,
		.port = port, .proto = (__u8)ctx->protocol, .reason = reason,
	};

	return event_decide(&in) ? SYS_PROCEED : SYS_REJECT;
}

static __always_inline int bind_pass(void)
{
	counter_add(EGRET_COUNTER(EGRET_HOOK_BIND, EGRET_VERDICT_ALLOW));
	return SYS_PROCEED;
}

/* What a bind of IPv4 @addr (also ::ffff:@addr) gets. */
enum bind_action { BIND_PASS, BIND_TO_LOOPBACK, BIND_NOT_HOSTS, BIND_LISTENER };

static __always_inline enum bind_action bind4_action(__u32 addr, int udp_port)
{
	if (egret_classify4(addr) == EGRET_ADDR_LOOPBACK)
		return BIND_PASS;
	if (addr == 0)
		return udp_port && !audit ? BIND_TO_LOOPBACK : BIND_PASS;
	if (!(host4_flags(addr) & EGRET_HOST_LOCAL))
		return BIND_NOT_HOSTS;
	return udp_port ? BIND_LISTENER : BIND_PASS;
}

static __always_inline int bind4_apply(struct bpf_sock_addr *ctx, __u32 addr,
				       __u16 port, enum bind_action act)
{
	__u32 a[4] = { addr };

	if (act == BIND_NOT_HOSTS)
		return bind_refuse(ctx, 4, a, port, EGRET_REASON_SOURCE);
	if (act == BIND_LISTENER)
		return bind_refuse(ctx, 4, a, port, EGRET_REASON_LISTENER);
	return bind_pass();
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
		if (udp_port && !audit) {
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
#define SOCK_OPS_TCP_LISTEN_CB	11
#define LOOPBACK_IFINDEX	1

SEC("sockops")
int egret_listen(struct bpf_sock_ops *ctx)
{
	int lo = LOOPBACK_IFINDEX;
	struct event_info in = {
		.hook = EGRET_HOOK_LISTEN, .reason = EGRET_REASON_LISTENER,
		.port = (__u16)ctx->local_port, .proto = IPPROTO_TCP_,
	};

	if (ctx->op != SOCK_OPS_TCP_LISTEN_CB)
		return 1;
	if (bpf_setsockopt(ctx, SOL_SOCKET_, SO_BINDTOIFINDEX_, &lo, sizeof(lo)) == 0) {
		counter_add(EGRET_COUNTER(EGRET_HOOK_LISTEN, EGRET_VERDICT_ALLOW));
		return 1;
	}
	event_decide(&in);
	return 1;
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
