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
#include "lib/pin_addr.h"
#include "lib/pin.h"
#include "lib/http.h"
#include "lib/account.h"

#define IPV6_EXT_MAX	6	/* extension headers walked before giving up */

/*
 * A packet the backstop refuses: counted, logged (no task context: this
 * may run in softirq), dropped - or, in audit mode, let through. Global,
 * so its event's stack is counted once, not in every caller's frame: the
 * call chains down to Host pinning's must fit the verifier's 512 bytes.
 * @dst: NULL when the packet has no address egret could read.
 */
__noinline int egress_refuse_at(int family, const struct addr_words *dst,
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
	int verdict = egress_refuse_at(family, (const struct addr_words *)dst,
				       dport_be, proto, reason);

	return verdict == SKB_PASS ? SKB_PASS : SKB_DROP;
}

static __always_inline int egress_deny(int family, const __u32 dst[4],
				       __u16 dport_be, __u8 proto)
{
	return egress_refuse(family, dst, dport_be, proto, EGRET_REASON_PACKET);
}

/* The transport header at @off into @p (lib/account.h): 0, or -1 when
 * the packet ends before it. Callers skip this for a later fragment,
 * which carries no ports. */
static __always_inline int load_l4(struct __sk_buff *skb, __u32 off, __u8 proto,
				   struct acct_packet *p)
{
	__u8 hdr[TCP_FLAGS_OFF + 1];
	__u16 ports[2];
	__u32 seq;

	if (proto == IPPROTO_TCP_) {
		if (bpf_skb_load_bytes(skb, off, hdr, sizeof(hdr)) < 0)
			return -1;
		__builtin_memcpy(ports, hdr, sizeof(ports));
		__builtin_memcpy(&seq, hdr + TCP_SEQ_OFF, sizeof(seq));
		p->syn = !!(hdr[TCP_FLAGS_OFF] & TCP_SYN_);
		p->ack = !!(hdr[TCP_FLAGS_OFF] & TCP_ACK_);
		p->end = !!(hdr[TCP_FLAGS_OFF] & (TCP_FIN_ | TCP_RST_));
		p->seq = bpf_ntohl(seq);
		p->hdr_len = tcp_hdr_len(hdr);
	} else {
		if (bpf_skb_load_bytes(skb, off, ports, sizeof(ports)) < 0)
			return -1;
		p->hdr_len = UDP_HDR_LEN;
	}
	p->sport_be = ports[0];
	p->dport_be = ports[1];
	p->payload = skb->len > off + p->hdr_len ? skb->len - off - p->hdr_len : 0;
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

/*
 * A packet the maps allow, to @dest: a TCP SYN opens its connection's
 * account (with socket storage on a pinned port: its hello or request
 * may move it to another name), a datagram is counted (lib/account.h).
 * A later fragment (no transport header read) was counted with its
 * first. In audit mode a datagram remembered without a destination (let
 * through unjudged) is not counted.
 */
static __always_inline int egress_count(struct __sk_buff *skb, struct acct_packet *p,
					__u32 dest)
{
	struct egret_attempt *cfg = attempt_cfg();
	__u32 port = bpf_ntohs((__u16)p->dport_be);

	if (!p->hdr_len || (!dest && cfg->audit))
		return SKB_PASS;
	p->dest = dest;
	p->pinned = p->proto == IPPROTO_TCP_ && (pin_port(cfg, port) || http_port(cfg, port));
	return acct_verdict(skb, p, acct_open(skb, p));
}

/* As egress6_dest(), for IPv4: @src is the packet's source address. */
__noinline int egress4_dest(struct __sk_buff *skb, struct acct_packet *p, __u32 src)
{
	struct allow_hit hit = {};
	enum egret_reason reason;
	__u32 dst[4] = {}, dest = 0;
	__u16 dport;
	__u8 proto;

	if (!skb || !p)
		return SKB_DROP;
	dst[0] = p->dst[0];
	dport = (__u16)p->dport_be;
	proto = (__u8)p->proto;
	if (!(host4_flags(src) & EGRET_HOST_LOCAL))
		return egress_refuse(4, dst, 0, proto, EGRET_REASON_SOURCE);

	/* egret's DNS proxy first: a socket connected to a resolver was
	 * redirected there, and its datagrams are egret's to answer. */
	if (dport && dns_is_proxy4(dst[0], dport))
		return SKB_PASS;
	if (dport && proto == IPPROTO_UDP_ && conn_matches(skb, 4, dst, dport, &dest))
		return egress_count(skb, p, dest);
	reason = allow4_judge(dst[0], dport ? bpf_ntohs(dport) : EGRET_PORT_ANY, &hit);
	if (dport && proto == IPPROTO_UDP_)
		reason = pin_quic4(reason, dst[0], bpf_ntohs(dport));
	if (reason == EGRET_REASON_ALLOWED)
		return egress_count(skb, p, hit.dest);
	if (p->sport_be && proto == IPPROTO_TCP_ &&
	    egret_classify4(dst[0]) == EGRET_ADDR_LOOPBACK &&
	    egret_classify4(src) == EGRET_ADDR_LOOPBACK &&
	    allow4_port(src, bpf_ntohs(p->sport_be)))
		return SKB_PASS;
	/* Why the destination is refused (a connected UDP socket's
	 * datagrams are judged here first). */
	return egress_refuse(4, dst, dport, proto, reason);
}

__noinline int egress4(struct __sk_buff *skb)
{
	struct acct_packet ap = { .family = 4, .syn = 1 };
	struct iphdr iph;
	__u32 dst[4] = {};
	int pin;

	if (bpf_skb_load_bytes(skb, 0, &iph, sizeof(iph)) < 0)
		return egress_deny(4, NULL, 0, 0);
	dst[0] = iph.daddr;
	ap.dst[0] = iph.daddr;
	ap.proto = iph.protocol;
	/* Options (source routes and the like), other protocols: refused. */
	if (iph.ihl != 5 ||
	    (iph.protocol != IPPROTO_TCP_ && iph.protocol != IPPROTO_UDP_))
		return egress_deny(4, dst, 0, iph.protocol);
	/* A later fragment has no ports: judge it by its first's address. */
	if (!(iph.frag_off & bpf_htons(0x1fff))) {
		if (load_l4(skb, sizeof(iph), iph.protocol, &ap) < 0)
			return egress_deny(4, dst, 0, iph.protocol);
		if (iph.protocol == IPPROTO_TCP_) {
			pin = egress_pinned(skb, sizeof(iph), ap.syn, 4, dst,
					    (__u16)ap.dport_be);
			if (pin != SKB_PASS)
				return pin;
		}
		/* An established connection: only counted. */
		if (iph.protocol == IPPROTO_TCP_ && !ap.syn)
			return acct_verdict(skb, &ap, acct_segment(skb, &ap));
	}
	return egress4_dest(skb, &ap, iph.saddr);
}

/* allow6_judge(), its keys in a frame of their own. */
__noinline int egress_allow6(const struct addr_words *dst, __u32 port,
			     struct allow_hit *hit)
{
	if (!dst || !hit)
		return EGRET_REASON_NO_ENTRY;
	return allow6_judge(dst->a, port, hit);
}

/*
 * The rest of an IPv6 packet's judgement, once its headers are read (@p)
 * and it is not a later segment of a connection: its source, then its
 * destination. Global, so egress6's frame - on the call chain down to
 * Host pinning's - holds none of the lookups' keys.
 */
__noinline int egress6_dest(struct __sk_buff *skb, struct acct_packet *p,
			    const struct addr_words *src)
{
	struct allow_hit hit = {};
	enum egret_reason reason;
	const __u32 *dst;
	__u32 dest = 0;
	__u16 dport;
	__u8 next;

	if (!skb || !p || !src)
		return SKB_DROP;
	dst = p->dst;
	dport = (__u16)p->dport_be;
	next = (__u8)p->proto;
	if (!(host6_flags(src->a) & EGRET_HOST_LOCAL))
		return egress_refuse(6, dst, 0, next, EGRET_REASON_SOURCE);

	/* egret's DNS proxy first: a socket connected to a resolver was
	 * redirected there, and its datagrams are egret's to answer. */
	if (dport && dns_is_proxy6(dst, dport))
		return SKB_PASS;
	if (dport && next == NEXTHDR_UDP && conn_matches(skb, 6, dst, dport, &dest))
		return egress_count(skb, p, dest);
	reason = egress_allow6((const struct addr_words *)dst,
			       dport ? bpf_ntohs(dport) : EGRET_PORT_ANY, &hit);
	if (dport && next == NEXTHDR_UDP)
		reason = pin_quic6(reason, dst, bpf_ntohs(dport));
	if (reason == EGRET_REASON_ALLOWED)
		return egress_count(skb, p, hit.dest);
	if (p->sport_be && next == NEXTHDR_TCP &&
	    egret_classify6(dst) == EGRET_ADDR_LOOPBACK &&
	    egret_classify6(src->a) == EGRET_ADDR_LOOPBACK &&
	    allow6_port(src->a, bpf_ntohs(p->sport_be)))
		return SKB_PASS;
	return egress_refuse(6, dst, dport, next, reason);
}

__noinline int egress6(struct __sk_buff *skb)
{
	struct ipv6hdr ip6;
	struct acct_packet ap = { .family = 6, .syn = 1 };
	__u32 off = sizeof(ip6);
	int pin;
	__u8 next;
	int i, first = 1;

	if (bpf_skb_load_bytes(skb, 0, &ip6, sizeof(ip6)) < 0)
		return egress_deny(6, NULL, 0, 0);
	__builtin_memcpy(ap.dst, &ip6.daddr, sizeof(ap.dst));
	next = ip6.nexthdr;
	/* Walk the extension headers: a routing header is refused, others
	 * (hop-by-hop, destination options, fragment) are stepped over. */
	for (i = 0; i < IPV6_EXT_MAX; i++) {
		__u8 ext[8];

		if (next == NEXTHDR_TCP || next == NEXTHDR_UDP)
			break;
		if (next != NEXTHDR_HOP && next != NEXTHDR_DEST &&
		    next != NEXTHDR_FRAGMENT)	/* routing, or anything unknown */
			return egress_deny(6, ap.dst, 0, next);
		if (bpf_skb_load_bytes(skb, off, ext, sizeof(ext)) < 0)
			return egress_deny(6, ap.dst, 0, next);
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
		return egress_deny(6, ap.dst, 0, next);
	ap.proto = next;
	if (first) {
		if (load_l4(skb, off, next, &ap) < 0)
			return egress_deny(6, ap.dst, 0, next);
		if (next == NEXTHDR_TCP) {
			pin = egress_pinned(skb, off, ap.syn, 6, ap.dst, (__u16)ap.dport_be);
			if (pin != SKB_PASS)
				return pin;
		}
		if (next == NEXTHDR_TCP && !ap.syn)
			return acct_verdict(skb, &ap, acct_segment(skb, &ap));
	}
	return egress6_dest(skb, &ap, (const struct addr_words *)&ip6.saddr);
}

#endif /* EGRET_BPF_EGRESS_H */
