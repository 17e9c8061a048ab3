/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * bind.h - which addresses and ports the attempt's sockets may bind.
 *
 * A bound address must be the host's own (with FREEBIND refused, only
 * net.ipv*.ip_nonlocal_bind would let one through). A UDP port bound
 * explicitly on a non-loopback address tells a prober that the attempt
 * listens (a datagram there is taken; elsewhere the kernel answers port
 * unreachable): on the wildcard it is moved to loopback, where a server
 * inside the attempt still works for local clients; on a host address it
 * is refused. TCP listeners are handled at listen() (egret_sockops).
 * An IPv6 link-local bind would tie the socket to a device: refused.
 */
#ifndef EGRET_BPF_BIND_H
#define EGRET_BPF_BIND_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "egret.h"
#include "egret_match.h"
#include "lib/verdict.h"
#include "lib/events.h"
#include "lib/host.h"

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
		return udp_port && !attempt_cfg()->audit ? BIND_TO_LOOPBACK : BIND_PASS;
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

#endif /* EGRET_BPF_BIND_H */
