/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * socket.h - which sockets the attempt may create, and which options it
 * may set on them.
 *
 * The connect and sendmsg hooks only see TCP and UDP. A raw socket, an
 * ICMP "ping" socket or SCTP sends without them, so those are refused at
 * creation. Options that send a packet somewhere other than the address
 * the hooks judged (IPv4 source routes, IPv6 routing headers) are refused
 * when set; the egress backstop drops such packets however they were made.
 */
#ifndef EGRET_BPF_SOCKET_H
#define EGRET_BPF_SOCKET_H

#define SOCK_STREAM	1
#define SOCK_DGRAM	2

#define IPPROTO_IP_	0	/* "the default for the type" */
#define IPPROTO_TCP_	6
#define IPPROTO_UDP_	17
#define IPPROTO_MPTCP_	262

#define SOL_IP_		0
#define SOL_IPV6_	41
#define IP_OPTIONS_	4
#define IPV6_2292RTHDR_		5
#define IPV6_2292PKTOPTIONS_	6
#define IPV6_RTHDR_		57

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

/* Options that steer a packet past the judged destination. IPV6_2292-
 * PKTOPTIONS sets sticky options in cmsg form, routing header included. */
static __always_inline int sockopt_redirects(__s32 level, __s32 optname)
{
	if (level == SOL_IP_)
		return optname == IP_OPTIONS_;
	if (level == SOL_IPV6_)
		return optname == IPV6_RTHDR_ || optname == IPV6_2292RTHDR_ ||
		       optname == IPV6_2292PKTOPTIONS_;
	return 0;
}

#endif /* EGRET_BPF_SOCKET_H */
