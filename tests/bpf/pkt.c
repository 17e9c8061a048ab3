// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* pkt.c - the packet builders of pkt.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>

#include "pkt.h"

/* Room for @n more bytes, zeroed; a test that builds too much fails. */
static void *pkt_put(struct pkt *p, size_t n)
{
	void *at;

	assert_true(p->len + n <= sizeof(p->buf));
	at = p->buf + p->len;
	memset(at, 0, n);
	p->len += n;
	return at;
}

/* The header being appended is of type @proto: say so in the one before. */
static void pkt_chain(struct pkt *p, uint8_t proto)
{
	assert_true(p->next_at != 0);
	p->buf[p->next_at] = proto;
}

void pkt_init(struct pkt *p, uint16_t ethertype)
{
	struct ethhdr *eth;

	memset(p, 0, sizeof(*p));
	eth = pkt_put(p, sizeof(*eth));
	memcpy(eth->h_dest, "\x02\x00\x00\x00\x00\x02", ETH_ALEN);
	memcpy(eth->h_source, "\x02\x00\x00\x00\x00\x01", ETH_ALEN);
	eth->h_proto = htons(ethertype);
	p->l3 = p->len;
}

void pkt_ip4(struct pkt *p, const char *src, const char *dst)
{
	struct iphdr *ip = pkt_put(p, sizeof(*ip));

	ip->version = 4;
	ip->ihl = 5;
	ip->ttl = 64;
	assert_int_equal(inet_pton(AF_INET, src, &ip->saddr), 1);
	assert_int_equal(inet_pton(AF_INET, dst, &ip->daddr), 1);
	p->family = 4;
	p->next_at = p->l3 + offsetof(struct iphdr, protocol);
}

void pkt_ip4_options(struct pkt *p, unsigned int words)
{
	struct iphdr *ip = (struct iphdr *)(p->buf + p->l3);
	uint8_t *opt;

	assert_int_equal(p->len, p->l3 + ip->ihl * 4);
	assert_true(ip->ihl + words <= 15);
	opt = pkt_put(p, words * 4);
	memset(opt, 1, words * 4);		/* NOP */
	opt[words * 4 - 1] = 0;			/* End of Options List */
	ip->ihl += words;
}

void pkt_ip4_frag(struct pkt *p, unsigned int offset8, int more)
{
	struct iphdr *ip = (struct iphdr *)(p->buf + p->l3);

	ip->frag_off = htons((more ? 0x2000 : 0) | (offset8 & 0x1fff));
}

void pkt_ip6(struct pkt *p, const char *src, const char *dst)
{
	struct ipv6hdr *ip6 = pkt_put(p, sizeof(*ip6));

	ip6->version = 6;
	ip6->hop_limit = 64;
	assert_int_equal(inet_pton(AF_INET6, src, &ip6->saddr), 1);
	assert_int_equal(inet_pton(AF_INET6, dst, &ip6->daddr), 1);
	p->family = 6;
	p->next_at = p->l3 + offsetof(struct ipv6hdr, nexthdr);
}

void pkt_ip6_ext(struct pkt *p, uint8_t type, uint8_t len8, uint8_t fill)
{
	size_t at = p->len, n = ((size_t)len8 + 1) * 8;
	uint8_t *ext;

	pkt_chain(p, type);
	ext = pkt_put(p, n);
	memset(ext, fill, n);
	ext[0] = 0;		/* the next header, written by the next builder */
	ext[1] = len8;
	p->next_at = at;
}

void pkt_ip6_frag(struct pkt *p, unsigned int offset8, int more)
{
	size_t at = p->len;
	uint8_t *frag;
	uint16_t off;

	pkt_chain(p, PKT_FRAGMENT);
	frag = pkt_put(p, 8);
	off = htons((uint16_t)((offset8 << 3) | (more ? 1 : 0)));
	memcpy(frag + 2, &off, 2);
	memcpy(frag + 4, "\x12\x34\x56\x78", 4);	/* identification */
	p->next_at = at;
}

void pkt_tcp(struct pkt *p, uint16_t sport, uint16_t dport)
{
	struct tcphdr *tcp;

	pkt_chain(p, PKT_TCP);
	p->tcp = p->len;
	tcp = pkt_put(p, sizeof(*tcp));
	tcp->source = htons(sport);
	tcp->dest = htons(dport);
	tcp->doff = 5;
	tcp->syn = 1;
	tcp->window = htons(65535);
	p->next_at = 0;
}

void pkt_tcp_flags(struct pkt *p, uint8_t flags)
{
	assert_true(p->tcp != 0);
	p->buf[p->tcp + 13] = flags;
}

void pkt_udp(struct pkt *p, uint16_t sport, uint16_t dport)
{
	struct udphdr *udp;

	pkt_chain(p, PKT_UDP);
	p->udp = p->len;
	udp = pkt_put(p, sizeof(*udp));
	udp->source = htons(sport);
	udp->dest = htons(dport);
	p->next_at = 0;
}

void pkt_proto(struct pkt *p, uint8_t proto, size_t hdr_len)
{
	pkt_chain(p, proto);
	pkt_put(p, hdr_len);
	p->next_at = 0;
}

void pkt_payload(struct pkt *p, size_t n, uint8_t fill)
{
	memset(pkt_put(p, n), fill, n);
}

/* RFC 1071, over the IPv4 header only (its checksum field zero). */
static uint16_t ip4_checksum(const uint8_t *hdr, size_t n)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)hdr[i] << 8 | hdr[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

void pkt_done(struct pkt *p)
{
	size_t ip_len = p->len - p->l3;

	if (p->family == 4) {
		struct iphdr *ip = (struct iphdr *)(p->buf + p->l3);

		ip->tot_len = htons((uint16_t)ip_len);
		ip->check = 0;
		ip->check = ip4_checksum(p->buf + p->l3, ip->ihl * 4);
	} else if (p->family == 6) {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)(p->buf + p->l3);

		ip6->payload_len = htons((uint16_t)(ip_len - sizeof(*ip6)));
	}
	if (p->udp) {
		struct udphdr *udp = (struct udphdr *)(p->buf + p->udp);

		udp->len = htons((uint16_t)(p->len - p->udp));
	}
}

void pkt_cut(struct pkt *p, size_t n)
{
	assert_true(p->l3 + n <= p->len);
	p->len = p->l3 + n;
}

void pkt_tcp4(struct pkt *p, const char *src, uint16_t sport,
	      const char *dst, uint16_t dport)
{
	pkt_init(p, PKT_ETH_IP);
	pkt_ip4(p, src, dst);
	pkt_tcp(p, sport, dport);
	pkt_done(p);
}

void pkt_udp4(struct pkt *p, const char *src, uint16_t sport,
	      const char *dst, uint16_t dport)
{
	pkt_init(p, PKT_ETH_IP);
	pkt_ip4(p, src, dst);
	pkt_udp(p, sport, dport);
	pkt_payload(p, 8, 0xab);
	pkt_done(p);
}

void pkt_tcp6(struct pkt *p, const char *src, uint16_t sport,
	      const char *dst, uint16_t dport)
{
	pkt_init(p, PKT_ETH_IP6);
	pkt_ip6(p, src, dst);
	pkt_tcp(p, sport, dport);
	pkt_done(p);
}

void pkt_udp6(struct pkt *p, const char *src, uint16_t sport,
	      const char *dst, uint16_t dport)
{
	pkt_init(p, PKT_ETH_IP6);
	pkt_ip6(p, src, dst);
	pkt_udp(p, sport, dport);
	pkt_payload(p, 8, 0xab);
	pkt_done(p);
}
