/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * socket.h - which sockets the attempt may create, and which options it
 * may set on them.
 *
 * The connect and sendmsg hooks only see TCP and UDP. A raw socket, an
 * ICMP "ping" socket or SCTP sends without them, so those are refused at
 * creation. Options that send a packet somewhere other than the address
 * the hooks judged (IPv4 source routes, IPv6 routing headers) or from a
 * source that is not the host's are refused when set, and so are
 * multicast joins the policy does not name (the kernel's membership
 * reports carry the group, and no hook of the attempt sees them); the
 * egress backstop drops such packets however they were made.
 */
#ifndef EGRET_BPF_SOCKET_H
#define EGRET_BPF_SOCKET_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "egret.h"
#include "egret_match.h"
#include "lib/net.h"
#include "lib/events.h"
#include "lib/allow.h"

#define SOL_SOCKET_	1
#define SOL_IP_		0
#define SOL_IPV6_	41
#define SO_BINDTODEVICE_	25
#define SO_BINDTOIFINDEX_	62
#define SO_ZEROCOPY_		60
#define TCP_ULP_		31
#define IP_OPTIONS_	4
#define IP_FREEBIND_	15
#define IP_TRANSPARENT_	19
#define IP_ADD_MEMBERSHIP_	35
#define IP_DROP_MEMBERSHIP_	36
#define IP_UNBLOCK_SOURCE_	37	/* ... through IP_MSFILTER_ */
#define IP_MSFILTER_	41
#define MCAST_JOIN_GROUP_	42	/* SOL_IP and SOL_IPV6 alike */
#define MCAST_LEAVE_GROUP_	45
#define MCAST_MSFILTER_	48	/* 43-48: source filters, leaves */
#define IPV6_2292RTHDR_		5
#define IPV6_2292PKTOPTIONS_	6
#define IPV6_ADD_MEMBERSHIP_	20
#define IPV6_DROP_MEMBERSHIP_	21
#define IPV6_JOIN_ANYCAST_	27
#define IPV6_RTHDR_		57
#define IPV6_TRANSPARENT_	75
#define IPV6_FREEBIND_		78

/* TCP, MPTCP (TCP on the wire) and UDP: what the hooks enforce. */
static __always_inline int socket_type_enforced(__u32 type, __u32 protocol)
{
	if (type == SOCK_STREAM)
		return protocol == IPPROTO_IP_ || protocol == IPPROTO_TCP_ ||
		       protocol == IPPROTO_MPTCP_;
	if (type == SOCK_DGRAM)
		return protocol == IPPROTO_IP_ || protocol == IPPROTO_UDP_;
	return 0;
}

/* The longest option value egret judges by its contents: a page is what
 * the kernel copies for the program (a group_source_req is 264 bytes). */
#define SOCKOPT_JUDGED_MAX	4096

/* What egret_sockopt does with an option. */
enum sockopt_kind {
	SOCKOPT_PASS = 0,
	SOCKOPT_REFUSE,		/* never, whatever its value */
	SOCKOPT_JOIN4_MREQ,	/* IP_ADD_MEMBERSHIP: the group at offset 0 */
	SOCKOPT_JOIN4_GREQ,	/* MCAST_JOIN_GROUP, SOL_IP: a group_req */
	SOCKOPT_JOIN6_MREQ,	/* IPV6_ADD_MEMBERSHIP: the group at offset 0 */
	SOCKOPT_JOIN6_GREQ,	/* MCAST_JOIN_GROUP, SOL_IPV6 */
};

/*
 * Options refused outright: those that steer a packet past the judged
 * destination (IPv4 source routes, IPv6 routing headers; IPV6_2292-
 * PKTOPTIONS sets sticky options in cmsg form, routing header included),
 * those that let a socket use a source the host does not have (FREEBIND,
 * TRANSPARENT), binding to a device (a listener bound to one would escape
 * being bound to loopback: egret_sockops), zero-copy sends (SO_ZEROCOPY:
 * the bytes SNI pinning judged would stay COMMAND's to rewrite), upper
 * layer protocols on TCP (TCP_ULP: kTLS offload sends other bytes than
 * the stack judged, "smc" leaves the IP stack), and
 * every multicast source filter (its sources are as free as the group).
 * A group join is judged: its group must be named by the policy. Leaving
 * a group is always fine.
 */
static __always_inline enum sockopt_kind sockopt_classify(__s32 level, __s32 optname)
{
	if (level == SOL_SOCKET_)
		return optname == SO_BINDTODEVICE_ || optname == SO_BINDTOIFINDEX_ ||
		       optname == SO_ZEROCOPY_ ? SOCKOPT_REFUSE : SOCKOPT_PASS;
	if (level == SOL_TCP_)
		return optname == TCP_ULP_ ? SOCKOPT_REFUSE : SOCKOPT_PASS;
	if (level == SOL_IP_) {
		if (optname == IP_ADD_MEMBERSHIP_)
			return SOCKOPT_JOIN4_MREQ;
		if (optname == MCAST_JOIN_GROUP_)
			return SOCKOPT_JOIN4_GREQ;
		if (optname == IP_OPTIONS_ || optname == IP_FREEBIND_ ||
		    optname == IP_TRANSPARENT_ ||
		    (optname >= IP_UNBLOCK_SOURCE_ && optname <= IP_MSFILTER_) ||
		    (optname > MCAST_JOIN_GROUP_ && optname <= MCAST_MSFILTER_ &&
		     optname != MCAST_LEAVE_GROUP_))
			return SOCKOPT_REFUSE;
		return SOCKOPT_PASS;
	}
	if (level == SOL_IPV6_) {
		if (optname == IPV6_ADD_MEMBERSHIP_)
			return SOCKOPT_JOIN6_MREQ;
		if (optname == MCAST_JOIN_GROUP_)
			return SOCKOPT_JOIN6_GREQ;
		if (optname == IPV6_RTHDR_ || optname == IPV6_2292RTHDR_ ||
		    optname == IPV6_2292PKTOPTIONS_ || optname == IPV6_FREEBIND_ ||
		    optname == IPV6_TRANSPARENT_ || optname == IPV6_JOIN_ANYCAST_ ||
		    (optname > MCAST_JOIN_GROUP_ && optname <= MCAST_MSFILTER_ &&
		     optname != MCAST_LEAVE_GROUP_))
			return SOCKOPT_REFUSE;
		return SOCKOPT_PASS;
	}
	return SOCKOPT_PASS;
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
	struct allow_hit hit = {};

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
				       &hit);
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
	return allow6_judge_at(group, EGRET_PORT_ANY, bpf_ktime_get_ns(), &hit);
}

#endif /* EGRET_BPF_SOCKET_H */
