/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pin_addr.h - which destinations are pinned: a port the attempt pins,
 * on an address whose live rules for it are all pinned ones.
 *
 * The DNS proxy flags the rules it learns for a pinned name
 * EGRET_RULE_PINNED (egret.h); an address that another rule allows too
 * (an address-only one, egret_match.h) is not pinned. Asked by sock_ops
 * at connect (does the connection get SNI or Host pinning's storage:
 * pin.h, http.h), by the egress backstop of a SYN with no storage, and
 * by the connect, sendmsg and egress hooks of UDP, where a pinned
 * address refuses QUIC (pin_quic4/6).
 */
#ifndef EGRET_BPF_PIN_ADDR_H
#define EGRET_BPF_PIN_ADDR_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "egret.h"
#include "egret_match.h"
#include "lib/attempt.h"
#include "lib/allow.h"

/* Is @port (host order) one of @ports, an attempt's pinned ports (0:
 * an unused entry, never a port)? */
static __always_inline int pin_port_in(const __u16 ports[EGRET_PIN_PORTS], __u32 port)
{
	int i;

	if (!port)
		return 0;
	for (i = 0; i < EGRET_PIN_PORTS; i++)
		if (ports[i] == port)
			return 1;
	return 0;
}

/* Is @port (host order) one whose TLS the attempt pins? */
static __always_inline int pin_port(const struct egret_attempt *cfg, __u32 port)
{
	return pin_port_in(cfg->pin_ports, port);
}

/*
 * egret_allow_pin_mask() by bpf_loop: one verified body for the port
 * slots. Unrolled, the mask (precise at the comparison that uses it) kept
 * every combination of slots apart: a third of the egress program's
 * verification.
 */
struct pin_mask_walk {
	const struct egret_allow *allow;
	__u64 now;
	__u32 port;
	int mask;
};

static long pin_mask_step(__u64 i, void *arg)
{
	struct pin_mask_walk *w = arg;

	if (i >= EGRET_PORT_SLOTS || !w->allow)
		return 1;
	w->mask |= egret_rule_pin_mask(&w->allow->rules[i], w->port, w->now);
	return 0;
}

static __always_inline int pin_mask_of(void *map, const void *key, __u32 port,
				       __u64 now)
{
	struct pin_mask_walk w = { .now = now, .port = port };

	w.allow = bpf_map_lookup_elem(map, key);
	if (!w.allow)
		return 0;
	bpf_loop(EGRET_PORT_SLOTS, pin_mask_step, &w, 0);
	return w.mask;
}

/* Is a connection to @addr:@port (IPv4, network order; host order) pinned:
 * allowed by pinned rules, and by no other? */
static __always_inline int pin_addr4(__u32 addr, __u32 port)
{
	__u64 attempt = attempt_key(), now = bpf_ktime_get_coarse_ns();
	struct egret_lpm_key4 lpm_key = {
		.prefixlen = EGRET_LPM_ATTEMPT_BITS + 32, .addr = addr,
	};
	struct egret_key4 key = { .attempt = attempt, .addr = addr };

	egret_lpm_attempt(lpm_key.attempt, attempt);
	return (pin_mask_of(&egret_allow4, &key, port, now) |
		pin_mask_of(&egret_cidr4, &lpm_key, port, now)) ==
	       EGRET_PIN_MASK_PINNED;
}

static __always_inline int pin_addr6(const __u32 addr[4], __u32 port)
{
	struct egret_lpm_key6 lpm_key = { .prefixlen = EGRET_LPM_ATTEMPT_BITS + 128 };
	struct egret_key6 key = {};
	__u64 now = bpf_ktime_get_coarse_ns();

	if (egret_is_v4mapped(addr))
		return pin_addr4(addr[3], port);
	key.attempt = attempt_key();
	egret_lpm_attempt(lpm_key.attempt, key.attempt);
	__builtin_memcpy(key.addr, addr, sizeof(key.addr));
	__builtin_memcpy(lpm_key.addr, addr, sizeof(lpm_key.addr));
	return (pin_mask_of(&egret_allow6, &key, port, now) |
		pin_mask_of(&egret_cidr6, &lpm_key, port, now)) ==
	       EGRET_PIN_MASK_PINNED;
}

/* A pinned segment or connection for the global functions below and in
 * http.h: a global function takes at most five arguments, each a scalar
 * or a pointer to a sized struct. */
struct pin_segment {
	__u32 dst[4];		/* network order; IPv4 in dst[0] */
	__u32 l4off;		/* its TCP header (the wire only) */
	__u32 port;		/* destination, host order */
	__u32 syn;		/* it carries SYN (the wire only) */
	__u32 family;		/* 4 or 6 */
};

/* pin_addr4/6, global: the sock_ops and wire paths that ask it share one
 * verified copy of the lookups. */
__noinline int pin_addr_at(const struct pin_segment *g)
{
	if (!g)
		return 0;
	return g->family == 4 ? pin_addr4(g->dst[0], g->port) :
				pin_addr6(g->dst, g->port);
}

static __always_inline int pin_addr_of(int family, const __u32 addr[4], __u32 port)
{
	struct pin_segment g = {
		.dst = { addr[0], addr[1], addr[2], addr[3] },
		.family = (__u32)family, .port = port,
	};

	return pin_addr_at(&g);
}

/*
 * QUIC to a pinned address: its Initial is encrypted with keys derived
 * from the connection id, and egret cannot read the name in it here. A
 * UDP datagram to a pinned port of a pinned address is refused; clients
 * fall back to TCP. @reason: the judgement so far.
 */
static __always_inline enum egret_reason
pin_quic4(enum egret_reason reason, __u32 addr, __u32 port)
{
	if (reason == EGRET_REASON_ALLOWED && pin_port(attempt_cfg(), port) &&
	    pin_addr4(addr, port))
		return EGRET_REASON_QUIC;
	return reason;
}

static __always_inline enum egret_reason
pin_quic6(enum egret_reason reason, const __u32 addr[4], __u32 port)
{
	if (reason == EGRET_REASON_ALLOWED && pin_port(attempt_cfg(), port) &&
	    pin_addr6(addr, port))
		return EGRET_REASON_QUIC;
	return reason;
}

#endif /* EGRET_BPF_PIN_ADDR_H */
