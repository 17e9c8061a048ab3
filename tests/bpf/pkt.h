/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pkt.h - hand-built packets for BPF_PROG_TEST_RUN, header by header.
 *
 * As the kernel's test run wants them for a cgroup_skb program: an
 * Ethernet header (its ethertype becomes skb->protocol, then it is pulled
 * off), then the IP packet the program sees from offset 0. Each builder
 * appends one header and writes its protocol number into the header
 * before (IPv4 protocol, IPv6 next header), so a test reads as the packet
 * does: pkt_ip6(), pkt_ip6_ext(NEXTHDR_HOP), pkt_tcp(). pkt_done() fills in
 * the lengths. Addresses are text ("192.0.2.2", "2001:db8::1").
 */
#ifndef EGRET_TEST_PKT_H
#define EGRET_TEST_PKT_H

#include <stddef.h>
#include <stdint.h>

#define PKT_MAX		4096

/* Protocol numbers the builders write (the kernel's values). */
#define PKT_ETH_IP	0x0800
#define PKT_ETH_IP6	0x86DD
#define PKT_ETH_ARP	0x0806
#define PKT_HOP		0
#define PKT_ICMP	1
#define PKT_TCP		6
#define PKT_UDP		17
#define PKT_ROUTING	43
#define PKT_FRAGMENT	44
#define PKT_ICMP6	58
#define PKT_DEST	60

struct pkt {
	uint8_t buf[PKT_MAX];
	size_t len;
	size_t l3;		/* where the IP header starts */
	size_t udp;		/* where pkt_udp() put a UDP header, 0 if not */
	size_t tcp;		/* where pkt_tcp() put a TCP header, 0 if not */
	size_t next_at;		/* the byte the next header's number goes in */
	int family;		/* 4 or 6, once an IP header is in */
};

/* A new packet: Ethernet header with @ethertype, nothing else. */
void pkt_init(struct pkt *p, uint16_t ethertype);

/* IPv4 header (IHL 5, DF clear, TTL 64); pkt_ip4_options() makes it longer. */
void pkt_ip4(struct pkt *p, const char *src, const char *dst);
/* @words 32-bit words of options (NOPs, then End of Options): IHL 5+@words. */
void pkt_ip4_options(struct pkt *p, unsigned int words);
/* Fragment offset in 8-byte units, and the More Fragments flag. */
void pkt_ip4_frag(struct pkt *p, unsigned int offset8, int more);

void pkt_ip6(struct pkt *p, const char *src, const char *dst);
/* An extension header of type @type, (@len8 + 1) * 8 bytes long (a
 * routing, hop-by-hop or destination options header), its body @fill. */
void pkt_ip6_ext(struct pkt *p, uint8_t type, uint8_t len8, uint8_t fill);
/* A fragment header: offset in 8-byte units, More Fragments flag. */
void pkt_ip6_frag(struct pkt *p, unsigned int offset8, int more);

/* L4 headers, ports host order. pkt_proto(): any other protocol, or the
 * protocol of a later fragment, which has no header of its own (@hdr_len
 * zeroed bytes, 0 for none). */
void pkt_tcp(struct pkt *p, uint16_t sport, uint16_t dport);
/* The TCP header's flags byte (pkt_tcp() writes a SYN). */
#define PKT_FIN		0x01
#define PKT_SYN		0x02
#define PKT_RST		0x04
#define PKT_PSH		0x08
#define PKT_ACK		0x10
void pkt_tcp_flags(struct pkt *p, uint8_t flags);
void pkt_udp(struct pkt *p, uint16_t sport, uint16_t dport);
void pkt_proto(struct pkt *p, uint8_t proto, size_t hdr_len);
void pkt_payload(struct pkt *p, size_t n, uint8_t fill);

/* Fill in the IPv4 total length and checksum, the IPv6 payload length
 * and the UDP length. */
void pkt_done(struct pkt *p);

/* Cut the packet to @n bytes of IP packet (after pkt_done: a truncated
 * packet's lengths still claim the whole). */
void pkt_cut(struct pkt *p, size_t n);

/* Whole packets in one call: Ethernet, IP, TCP or UDP, done. */
void pkt_tcp4(struct pkt *p, const char *src, uint16_t sport,
	      const char *dst, uint16_t dport);
void pkt_udp4(struct pkt *p, const char *src, uint16_t sport,
	      const char *dst, uint16_t dport);
void pkt_tcp6(struct pkt *p, const char *src, uint16_t sport,
	      const char *dst, uint16_t dport);
void pkt_udp6(struct pkt *p, const char *src, uint16_t sport,
	      const char *dst, uint16_t dport);

#endif /* EGRET_TEST_PKT_H */
