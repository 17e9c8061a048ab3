/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * net.h - the network numbers of the kernel's uapi that vmlinux.h lacks.
 *
 * BTF carries the kernel's types and enums, never its #defines: address
 * families, ethertypes and IP protocol numbers are spelled here, once, for
 * every program and header under bpf/. A trailing _ keeps a name apart
 * from the enum constant vmlinux.h may already have under it (IPPROTO_TCP).
 */
#ifndef EGRET_BPF_NET_H
#define EGRET_BPF_NET_H

#include "vmlinux.h"
#include <bpf/bpf_endian.h>

/* sa_family_t values (ctx->user_family, sockaddr headers). */
#define AF_UNSPEC	0
#define AF_UNIX_	1
#define AF_INET		2
#define AF_INET6	10

/* skb->protocol: the ethertype, network order on the wire. */
#define ETH_P_IP_	0x0800
#define ETH_P_IPV6_	0x86DD

/* IPv4 protocols; the IPv6 next header of TCP and UDP is the same number. */
#define IPPROTO_IP_	0	/* "the default for the type" */
#define IPPROTO_TCP_	6
#define IPPROTO_UDP_	17
#define IPPROTO_MPTCP_	262

/* IPv6 next headers: TCP, UDP and the extension headers egress.h walks. */
#define NEXTHDR_HOP	0
#define NEXTHDR_TCP	IPPROTO_TCP_
#define NEXTHDR_UDP	IPPROTO_UDP_
#define NEXTHDR_ROUTING	43
#define NEXTHDR_FRAGMENT 44
#define NEXTHDR_DEST	60

/* An address for a global function: a pointer argument must point to a
 * sized type (a bare __u32 * would be 4 bytes). */
struct addr_words {
	__u32 a[4];		/* network order; IPv4 in a[0] */
};

/* 127.0.0.1 as the kernel hands it over (ctx->user_ip4). */
#define LOOPBACK4_BE	bpf_htonl(0x7f000001)

#endif /* EGRET_BPF_NET_H */
