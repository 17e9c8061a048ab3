/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * net.h - the network numbers of the kernel's uapi that vmlinux.h lacks,
 * and where the TCP header's fields are.
 *
 * BTF carries the kernel's types and enums, never its #defines: address
 * families, ethertypes, IP protocol numbers, the TCP options sock_ops
 * sets and the TCP header's offsets are spelled here, once, for every
 * program and header under bpf/ (socket.h keeps the options it judges).
 * A trailing _ keeps a name apart from the enum constant vmlinux.h may
 * already have under it (IPPROTO_TCP).
 */
#ifndef EGRET_BPF_NET_H
#define EGRET_BPF_NET_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
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

/* The TCP header (RFC 9293, 3.1) as the backstop reads it, by byte:
 * where its fields are, and its flags. */
#define TCP_SEQ_OFF	4	/* the sequence number, 4 bytes, network order */
#define TCP_DOFF_OFF	12	/* its high 4 bits: the header's length in words */
#define TCP_FLAGS_OFF	13
#define TCP_HDR_MIN	20	/* the header without options */
#define TCP_FIN_	0x01	/* in the byte at TCP_FLAGS_OFF */
#define TCP_SYN_	0x02
#define TCP_RST_	0x04
#define TCP_ACK_	0x10
#define TCP_URG_	0x20

_Static_assert(__builtin_offsetof(struct tcphdr, seq) == TCP_SEQ_OFF, "TCP_SEQ_OFF");
_Static_assert(__builtin_offsetof(struct tcphdr, window) == TCP_FLAGS_OFF + 1, "TCP_FLAGS_OFF");
_Static_assert(sizeof(struct tcphdr) == TCP_HDR_MIN, "TCP_HDR_MIN");

/* The sequence number of the TCP header at @tcp (host order). */
static __always_inline __u32 tcp_hdr_seq(const __u8 *tcp)
{
	return (__u32)tcp[TCP_SEQ_OFF] << 24 | (__u32)tcp[TCP_SEQ_OFF + 1] << 16 |
	       (__u32)tcp[TCP_SEQ_OFF + 2] << 8 | tcp[TCP_SEQ_OFF + 3];
}

/* The length of the TCP header at @tcp, options included: where its
 * data starts. */
static __always_inline __u32 tcp_hdr_len(const __u8 *tcp)
{
	return (__u32)(tcp[TCP_DOFF_OFF] >> 4) * 4;
}

#define UDP_HDR_LEN	8

/* bpf_setsockopt() on a TCP socket: the level, and the options sock_ops
 * sets on a refused pinned connection (pin.h, http.h). */
#define SOL_TCP_		6	/* IPPROTO_TCP as a level */
#define TCP_SYNCNT_		7
#define TCP_USER_TIMEOUT_	18

/* An address for a global function: a pointer argument must point to a
 * sized type (a bare __u32 * would be 4 bytes). */
struct addr_words {
	__u32 a[4];		/* network order; IPv4 in a[0] */
};

/* 127.0.0.1 as the kernel hands it over (ctx->user_ip4). */
#define LOOPBACK4_BE	bpf_htonl(0x7f000001)

#endif /* EGRET_BPF_NET_H */
