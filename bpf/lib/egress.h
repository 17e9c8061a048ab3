/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * egress.h - the backstop: every packet leaving a socket of the attempt is
 * judged again, whatever path made it.
 *
 * The connect/sendmsg hooks judge addresses handed to system calls; this
 * judges the packet on the wire. It catches what the hooks cannot see: a
 * routing header or IP options added through ancillary data, replies of a
 * listener inside the attempt (a listener is a channel too), anything a
 * future kernel path sends without those hooks.
 *
 * A TCP segment without SYN passes at once: it belongs to a connection
 * whose first segment - the SYN of a connect(), the SYN-ACK of a listener
 * - was judged here in full, and nothing the attempt can do changes a TCP
 * connection's addresses after that (TCP_REPAIR needs CAP_NET_ADMIN). So
 * an established flow costs two header loads per packet, and outlives the
 * allow entry that let it start. Every other packet passes if
 *  1. it is a datagram of a UDP socket whose connect() was allowed (the
 *     socket remembers where: its flow outlives its allow entry), or
 *  2. it goes to egret's DNS proxy, or
 *  3. its destination address and port are allowed now, or
 *  4. it is TCP from loopback to loopback from an allowed address and port
 *     (a server inside the attempt answering a client the policy let in;
 *     TCP only: a TCP socket reaches another peer only through connect(),
 *     which is judged, while a UDP socket bound to that port and connected
 *     elsewhere sends with no hook judging the send);
 * and it is TCP or UDP, carries no IPv4 options and no IPv6 routing header
 * (other IPv6 extension headers, at most IPV6_EXT_MAX, are stepped over),
 * and its source is one of the host's own addresses (a forged source would
 * have an allowed host answer someone else: IPV6_FREEBIND and the like).
 * A later fragment carries no ports: it is judged by its address alone.
 */
#ifndef EGRET_BPF_EGRESS_H
#define EGRET_BPF_EGRESS_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "egret.h"
#include "egret_match.h"
#include "lib/verdict.h"
#include "lib/net.h"
#include "lib/events.h"
#include "lib/host.h"
#include "lib/allow.h"
#include "lib/dns.h"
#include "lib/conn.h"
#include "lib/pin.h"
#include "lib/http.h"

#define IPV6_EXT_MAX	6	/* extension headers walked before giving up */

/* An address for a global function: a pointer argument must point to a
 * sized type (a bare __u32 * would be 4 bytes). */
struct egress_addr {
	__u32 a[4];		/* network order; IPv4 in a[0] */
};

/*
 * A packet the backstop refuses: counted, logged (no task context: this
 * may run in softirq), dropped - or, in audit mode, let through. Global,
 * so its event's stack is counted once, not in every caller's frame: the
 * call chains down to Host pinning's must fit the verifier's 512 bytes.
 * @dst: NULL when the packet has no address egret could read.
 */
__noinline int egress_refuse_at(int family, const struct egress_addr *dst,
				__u32 dport_be, __u32 proto, __u32 reason)
{
	struct event_info in = {
		.hook = EGRET_HOOK_EGRESS, .family = dst ? family : 0,
		.addr = dst ? dst->a : NULL, .port = bpf_ntohs((__u16)dport_be),
		.proto = (__u8)proto, .reason = (enum egret_reason)reason, .no_task = 1,
	};

	return event_decide(&in) ? SKB_PASS : SKB_DROP;
}

static __always_inline int egress_refuse(int family, const __u32 dst[4],
					 __u16 dport_be, __u8 proto,
					 enum egret_reason reason)
{
	int verdict = egress_refuse_at(family, (const struct egress_addr *)dst,
				       dport_be, proto, reason);

	return verdict == SKB_PASS ? SKB_PASS : SKB_DROP;
}

static __always_inline int egress_deny(int family, const __u32 dst[4],
				       __u16 dport_be, __u8 proto)
{
	return egress_refuse(family, dst, dport_be, proto, EGRET_REASON_PACKET);
}

#define TCP_FLAGS_OFF	13	/* in the TCP header */
#define TCP_SYN_		0x02

/* The L4 ports at @off, and for TCP whether the segment carries SYN: 0,
 * or -1 when the packet ends before them. Callers skip this for a later
 * fragment, which carries no ports. */
static __always_inline int load_l4(struct __sk_buff *skb, __u32 off, __u8 proto,
				   __u16 *sport_be, __u16 *dport_be, int *syn)
{
	__u8 hdr[TCP_FLAGS_OFF + 1];
	__u16 ports[2];

	if (proto == IPPROTO_TCP_) {
		if (bpf_skb_load_bytes(skb, off, hdr, sizeof(hdr)) < 0)
			return -1;
		__builtin_memcpy(ports, hdr, sizeof(ports));
		*syn = hdr[TCP_FLAGS_OFF] & TCP_SYN_;
	} else if (bpf_skb_load_bytes(skb, off, ports, sizeof(ports)) < 0) {
		return -1;
	}
	*sport_be = ports[0];
	*dport_be = ports[1];
	return 0;
}

/*
 * A TCP segment to a pinned port: its TLS hello (pin.h) or its HTTP
 * requests (http.h) judged. SKB_PASS to judge it further as any other,
 * or the verdict.
 */
static __always_inline int egress_pinned(struct __sk_buff *skb, __u32 l4off,
					 int syn, int family, const __u32 dst[4],
					 __u16 dport_be)
{
	struct egret_attempt *cfg = attempt_cfg();
	__u32 port = bpf_ntohs(dport_be);
	struct pin_segment g = {
		.dst = { dst[0], dst[1], dst[2], dst[3] },
		.l4off = l4off, .port = port, .syn = !!syn, .family = (__u32)family,
	};
	enum egret_reason unjudged;
	int pin;

	if (pin_port(cfg, port)) {
		pin = pin_wire_at(skb, &g);
		unjudged = EGRET_REASON_NOT_TLS;
	} else if (http_port(cfg, port)) {
		pin = http_wire(skb, &g);
		unjudged = EGRET_REASON_NOT_HTTP;
	} else {
		return SKB_PASS;
	}
	if (pin == PIN_WIRE_DROP)
		return SKB_DROP;
	if (pin == PIN_WIRE_UNJUDGED)
		return egress_refuse(family, dst, dport_be, IPPROTO_TCP_, unjudged);
	return SKB_PASS;
}

__noinline int egress4(struct __sk_buff *skb)
{
	struct iphdr iph;
	__u16 sport = 0, dport = 0;
	__u32 dst[4] = {}, src;
	enum egret_reason reason;
	int pin, lasting, syn = 1;

	if (bpf_skb_load_bytes(skb, 0, &iph, sizeof(iph)) < 0)
		return egress_deny(4, NULL, 0, 0);
	dst[0] = iph.daddr;
	src = iph.saddr;
	/* Options (source routes and the like), other protocols: refused. */
	if (iph.ihl != 5 ||
	    (iph.protocol != IPPROTO_TCP_ && iph.protocol != IPPROTO_UDP_))
		return egress_deny(4, dst, 0, iph.protocol);
	/* A later fragment has no ports: judge it by its first's address. */
	if (!(iph.frag_off & bpf_htons(0x1fff))) {
		if (load_l4(skb, sizeof(iph), iph.protocol, &sport, &dport, &syn) < 0)
			return egress_deny(4, dst, 0, iph.protocol);
		if (iph.protocol == IPPROTO_TCP_) {
			pin = egress_pinned(skb, sizeof(iph), syn, 4, dst, dport);
			if (pin != SKB_PASS)
				return pin;
		}
		if (iph.protocol == IPPROTO_TCP_ && !syn)
			return SKB_PASS;	/* an established connection */
	}
	if (!(host4_flags(src) & EGRET_HOST_LOCAL))
		return egress_refuse(4, dst, 0, iph.protocol, EGRET_REASON_SOURCE);

	if (dport && iph.protocol == IPPROTO_UDP_ && conn_matches(skb, 4, dst, dport))
		return SKB_PASS;
	if (dport && dns_is_proxy4(dst[0], dport))
		return SKB_PASS;
	reason = allow4_judge(dst[0], dport ? bpf_ntohs(dport) : EGRET_PORT_ANY, &lasting);
	if (dport && iph.protocol == IPPROTO_UDP_)
		reason = pin_quic4(reason, dst[0], bpf_ntohs(dport));
	if (reason == EGRET_REASON_ALLOWED)
		return SKB_PASS;
	if (sport && iph.protocol == IPPROTO_TCP_ &&
	    egret_classify4(dst[0]) == EGRET_ADDR_LOOPBACK &&
	    egret_classify4(src) == EGRET_ADDR_LOOPBACK &&
	    allow4_port(src, bpf_ntohs(sport)))
		return SKB_PASS;
	/* Why the destination is refused (a connected UDP socket's
	 * datagrams are judged here first). */
	return egress_refuse(4, dst, dport, iph.protocol, reason);
}

__noinline int egress6(struct __sk_buff *skb)
{
	struct ipv6hdr ip6;
	__u16 sport = 0, dport = 0;
	__u32 dst[4], src[4], off = sizeof(ip6);
	enum egret_reason reason;
	int pin, lasting, syn = 1;
	__u8 next;
	int i, first = 1;

	if (bpf_skb_load_bytes(skb, 0, &ip6, sizeof(ip6)) < 0)
		return egress_deny(6, NULL, 0, 0);
	__builtin_memcpy(dst, &ip6.daddr, sizeof(dst));
	__builtin_memcpy(src, &ip6.saddr, sizeof(src));
	next = ip6.nexthdr;
	/* Walk the extension headers: a routing header is refused, others
	 * (hop-by-hop, destination options, fragment) are stepped over. */
	for (i = 0; i < IPV6_EXT_MAX; i++) {
		__u8 ext[8];

		if (next == NEXTHDR_TCP || next == NEXTHDR_UDP)
			break;
		if (next != NEXTHDR_HOP && next != NEXTHDR_DEST &&
		    next != NEXTHDR_FRAGMENT)	/* routing, or anything unknown */
			return egress_deny(6, dst, 0, next);
		if (bpf_skb_load_bytes(skb, off, ext, sizeof(ext)) < 0)
			return egress_deny(6, dst, 0, next);
		if (next == NEXTHDR_FRAGMENT) {
			if ((ext[2] << 8 | ext[3]) & 0xfff8)
				first = 0;	/* offset != 0: no ports here */
			off += 8;
		} else {
			off += ((__u32)ext[1] + 1) * 8;
		}
		next = ext[0];
	}
	if (next != NEXTHDR_TCP && next != NEXTHDR_UDP)
		return egress_deny(6, dst, 0, next);
	if (first) {
		if (load_l4(skb, off, next, &sport, &dport, &syn) < 0)
			return egress_deny(6, dst, 0, next);
		if (next == NEXTHDR_TCP) {
			pin = egress_pinned(skb, off, syn, 6, dst, dport);
			if (pin != SKB_PASS)
				return pin;
		}
		if (next == NEXTHDR_TCP && !syn)
			return SKB_PASS;	/* an established connection */
	}
	if (!(host6_flags(src) & EGRET_HOST_LOCAL))
		return egress_refuse(6, dst, 0, next, EGRET_REASON_SOURCE);

	if (dport && next == NEXTHDR_UDP && conn_matches(skb, 6, dst, dport))
		return SKB_PASS;
	if (dport && dns_is_proxy6(dst, dport))
		return SKB_PASS;
	reason = allow6_judge(dst, dport ? bpf_ntohs(dport) : EGRET_PORT_ANY, &lasting);
	if (dport && next == NEXTHDR_UDP)
		reason = pin_quic6(reason, dst, bpf_ntohs(dport));
	if (reason == EGRET_REASON_ALLOWED)
		return SKB_PASS;
	if (sport && next == NEXTHDR_TCP &&
	    egret_classify6(dst) == EGRET_ADDR_LOOPBACK &&
	    egret_classify6(src) == EGRET_ADDR_LOOPBACK &&
	    allow6_port(src, bpf_ntohs(sport)))
		return SKB_PASS;
	return egress_refuse(6, dst, dport, next, reason);
}

#endif /* EGRET_BPF_EGRESS_H */
