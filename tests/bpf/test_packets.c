// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_packets.c - egret_egress parses what leaves the attempt: IPv4 with
 * and without options and fragments, IPv6 through its extension headers,
 * truncated and malformed headers, forged sources. Each case is one packet
 * and the exact verdict (and, for a drop, the reason logged).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <bpf/libbpf.h>

#include "egret.h"
#include "egret.skel.h"
#include "harness.h"
#include "pkt.h"

#define DST4		"203.0.113.10"	/* allowed: 443 and 8000-8100, TCP or UDP */
#define DST4_ANY	"203.0.113.20"	/* allowed: any port */
#define OTHER4		"203.0.113.11"	/* no entry */
#define DST6		"2001:db8:2::10"
#define DST6_ANY	"2001:db8:2::20"
#define OTHER6		"2001:db8:2::11"

/* Every test starts from these entries (besides the host's addresses). */
static int packets_setup(void **state)
{
	struct bpft *t;
	struct egret_allow a = {};
	int r = bpft_test_setup(state);

	if (r < 0)
		return r;
	t = *state;
	bpft_rule(&a, 443, 443, EGRET_EXPIRES_NEVER);
	bpft_rule(&a, 8000, 8100, EGRET_EXPIRES_NEVER);
	bpft_allow(t, DST4, &a);
	bpft_allow(t, DST6, &a);
	bpft_allow_rule(t, DST4_ANY, 0, 65535, EGRET_EXPIRES_NEVER, 0);
	bpft_allow_rule(t, DST6_ANY, 0, 65535, EGRET_EXPIRES_NEVER, 0);
	return 0;
}

static void ip4_tcp_udp_allowed(void **state)
{
	struct bpft *t = *state;
	struct pkt p;

	pkt_tcp4(&p, BPFT_HOST4, 40000, DST4, 443);
	expect_pass(t, &p);
	pkt_udp4(&p, BPFT_HOST4, 40000, DST4, 8050);
	expect_pass(t, &p);
	pkt_udp4(&p, BPFT_HOST4, 40000, DST4_ANY, 9);
	expect_pass(t, &p);
}

static void ip4_tcp_udp_denied(void **state)
{
	struct bpft *t = *state;
	const struct egret_event *e = &t->events[0];
	struct pkt p;
	__u32 dst;

	assert_int_equal(inet_pton(AF_INET, OTHER4, &dst), 1);
	pkt_tcp4(&p, BPFT_HOST4, 40000, OTHER4, 443);
	expect_drop(t, &p, EGRET_REASON_NO_ENTRY);
	assert_int_equal(e->family, 4);
	assert_int_equal(e->addr[0], dst);
	assert_int_equal(e->addr[1] | e->addr[2] | e->addr[3], 0);
	assert_int_equal(e->port, 443);
	assert_int_equal(e->proto, PKT_TCP);
	/* No task in softirq: the backstop never claims one. */
	assert_int_equal(e->pid, 0);
	assert_int_equal(e->tgid, 0);
	assert_int_equal(e->comm[0], 0);
	assert_true(e->time_ns > 0);

	pkt_udp4(&p, BPFT_HOST4, 40000, OTHER4, 8050);
	expect_drop(t, &p, EGRET_REASON_NO_ENTRY);
	assert_int_equal(e->proto, PKT_UDP);
	assert_int_equal(e->port, 8050);
	/* An entry, the wrong port: the reason says which. */
	pkt_tcp4(&p, BPFT_HOST4, 40000, DST4, 80);
	expect_drop(t, &p, EGRET_REASON_PORT);
	assert_int_equal(e->port, 80);
}

/* IPv4 options (source routes, timestamps: whatever ancillary data asked
 * for) are refused outright, even to an allowed destination and port:
 * the ports after them are never read. */
/*
 * The established-flow shortcut: a TCP segment without SYN passes unjudged,
 * because its connection began with a SYN (connect) or SYN-ACK (listener)
 * that was judged in full - so a SYN, whatever else it carries, never
 * takes it, and neither does anything the shortcut must not skip: IPv4
 * options, an IPv6 routing header, a later fragment, the flags read at
 * the wrong offset behind IPv6 extension headers.
 */
static void tcp_established_shortcut(void **state)
{
	struct bpft *t = *state;
	static const uint8_t established[] = {
		PKT_ACK, PKT_ACK | PKT_PSH, PKT_FIN | PKT_ACK, PKT_RST, PKT_RST | PKT_ACK,
	};
	struct pkt p;

	for (size_t i = 0; i < sizeof(established); i++) {
		pkt_tcp4(&p, BPFT_HOST4, 40000, OTHER4, 443);
		pkt_tcp_flags(&p, established[i]);
		expect_pass(t, &p);
	}
	pkt_tcp4(&p, BPFT_HOST4, 40000, OTHER4, 443);
	expect_drop(t, &p, EGRET_REASON_NO_ENTRY);		/* SYN */
	pkt_tcp_flags(&p, PKT_SYN | PKT_ACK);			/* a listener's reply */
	expect_drop(t, &p, EGRET_REASON_NO_ENTRY);
	pkt_tcp_flags(&p, PKT_SYN | PKT_ACK | PKT_PSH | PKT_FIN);
	expect_drop(t, &p, EGRET_REASON_NO_ENTRY);
	/* A SYN from a source not the host's, even to an allowed address. */
	pkt_tcp4(&p, "198.51.100.99", 40000, DST4, 443);
	expect_drop(t, &p, EGRET_REASON_SOURCE);

	pkt_init(&p, PKT_ETH_IP);
	pkt_ip4(&p, BPFT_HOST4, OTHER4);
	pkt_ip4_options(&p, 1);
	pkt_tcp(&p, 40000, 443);
	pkt_tcp_flags(&p, PKT_ACK);
	pkt_done(&p);
	expect_drop(t, &p, EGRET_REASON_PACKET);

	pkt_init(&p, PKT_ETH_IP);
	pkt_ip4(&p, BPFT_HOST4, OTHER4);
	pkt_ip4_frag(&p, 9, 0);
	pkt_proto(&p, PKT_TCP, 0);
	pkt_payload(&p, 64, 0);	/* zeroes where a TCP header's flags would be */
	pkt_done(&p);
	expect_drop(t, &p, EGRET_REASON_NO_ENTRY);

	/* IPv6: the flags found behind extension headers, and a SYN there
	 * still judged; a routing header refused whatever follows. */
	for (int syn = 0; syn <= 1; syn++) {
		pkt_init(&p, PKT_ETH_IP6);
		pkt_ip6(&p, BPFT_HOST6, OTHER6);
		pkt_ip6_ext(&p, PKT_HOP, 0, 0x01);
		pkt_ip6_ext(&p, PKT_DEST, 2, 0x01);
		pkt_tcp(&p, 40000, 443);
		pkt_tcp_flags(&p, syn ? PKT_SYN : PKT_ACK);
		pkt_done(&p);
		if (syn)
			expect_drop(t, &p, EGRET_REASON_NO_ENTRY);
		else
			expect_pass(t, &p);
	}
	pkt_init(&p, PKT_ETH_IP6);
	pkt_ip6(&p, BPFT_HOST6, OTHER6);
	pkt_ip6_ext(&p, PKT_ROUTING, 0, 0);
	pkt_tcp(&p, 40000, 443);
	pkt_tcp_flags(&p, PKT_ACK);
	pkt_done(&p);
	expect_drop(t, &p, EGRET_REASON_PACKET);
}

/* The maps are every attempt's: a program running for another attempt
 * (another key in its cgroup storage), or for a cgroup whose storage
 * egret never wrote (key 0), finds none of this attempt's entries. */
static void other_attempts_entries_unseen(void **state)
{
	struct bpft *t = *state;
	struct pkt p;

	pkt_tcp4(&p, BPFT_HOST4, 40000, DST4, 443);
	expect_pass(t, &p);
	bpft_set_attempt(t, BPFT_ATTEMPT + 1);
	assert_int_equal(bpft_egress(t, &p), BPFT_DROP);
	bpft_set_attempt(t, 0);
	assert_int_equal(bpft_egress(t, &p), BPFT_DROP);
	pkt_tcp6(&p, BPFT_HOST6, 40000, DST6, 443);
	assert_int_equal(bpft_egress(t, &p), BPFT_DROP);
	bpft_set_attempt(t, BPFT_ATTEMPT);
	expect_pass(t, &p);
}

/* A denial is queued once; its repeats are counted, exactly, until
 * something else is denied - which is queued in turn. */
static void repeats_counted_not_queued(void **state)
{
	struct bpft *t = *state;
	struct egret_repeat_key key = {
		.port = 443, .family = 4, .proto = PKT_TCP,
		.hook = EGRET_HOOK_EGRESS, .verdict = EGRET_VERDICT_DENY,
		.reason = EGRET_REASON_NO_ENTRY,
	};
	__u32 deny = EGRET_COUNTER(EGRET_HOOK_EGRESS, EGRET_VERDICT_DENY);
	__u64 denied = bpft_counter(t, deny);
	struct pkt p;

	assert_int_equal(inet_pton(AF_INET, OTHER4, &key.addr[0]), 1);
	t->keep_repeats = true;
	pkt_tcp4(&p, BPFT_HOST4, 40000, OTHER4, 443);
	expect_drop(t, &p, EGRET_REASON_NO_ENTRY);
	assert_int_equal(bpft_repeats(t, &key), 0);
	for (int i = 1; i <= 5; i++) {
		assert_int_equal(bpft_egress(t, &p), BPFT_DROP);
		assert_int_equal(t->nevents, 0);
		assert_int_equal(bpft_repeats(t, &key), i);
	}
	/* Another port is another destination: its own first record. */
	pkt_tcp4(&p, BPFT_HOST4, 40000, OTHER4, 444);
	expect_drop(t, &p, EGRET_REASON_NO_ENTRY);
	assert_int_equal(t->events[0].port, 444);
	assert_int_equal(bpft_repeats(t, &key), 5);
	assert_int_equal(bpft_counter(t, deny), denied + 7);
	assert_int_equal(bpft_counter(t, EGRET_COUNTER_DROPPED), 0);
}

static void ip4_options_refused(void **state)
{
	struct bpft *t = *state;
	static const unsigned int words[] = { 1, 2, 10 };
	struct pkt p;

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		pkt_init(&p, PKT_ETH_IP);
		pkt_ip4(&p, BPFT_HOST4, DST4_ANY);
		pkt_ip4_options(&p, words[i]);
		pkt_tcp(&p, 40000, 443);
		pkt_done(&p);
		expect_drop(t, &p, EGRET_REASON_PACKET);
		assert_int_equal(t->events[0].port, 0);
		assert_int_equal(t->events[0].proto, PKT_TCP);
	}
}

static void ip4_short_ihl_refused(void **state)
{
	struct bpft *t = *state;
	struct pkt p;

	pkt_tcp4(&p, BPFT_HOST4, 40000, DST4_ANY, 443);
	p.buf[p.l3] = 0x44;	/* version 4, IHL 4: shorter than a header */
	expect_drop(t, &p, EGRET_REASON_PACKET);
}

/*
 * Cut short. (Shorter than the IP header itself cannot be tried: the
 * kernel refuses such a test run, EINVAL on 6.18, as its stack never
 * sends one; egress4/egress6 would drop it.)
 */
static void ip4_truncated(void **state)
{
	struct bpft *t = *state;
	struct pkt p;

	/* A header, and three bytes of ports. */
	pkt_udp4(&p, BPFT_HOST4, 40000, DST4_ANY, 443);
	pkt_cut(&p, 20 + 3);
	expect_drop(t, &p, EGRET_REASON_PACKET);
	assert_int_equal(t->events[0].family, 4);
	/* Four bytes of ports are all it reads of UDP... */
	pkt_udp4(&p, BPFT_HOST4, 40000, DST4_ANY, 443);
	pkt_cut(&p, 20 + 4);
	expect_pass(t, &p);
	/* ... and of TCP, up to its flags: a segment that ends before them
	 * is no established one. */
	pkt_tcp4(&p, BPFT_HOST4, 40000, DST4_ANY, 443);
	pkt_tcp_flags(&p, PKT_ACK);
	pkt_cut(&p, 20 + 13);
	expect_drop(t, &p, EGRET_REASON_PACKET);
	pkt_tcp4(&p, BPFT_HOST4, 40000, DST4_ANY, 443);
	pkt_cut(&p, 20 + 14);
	expect_pass(t, &p);
}

static void ip4_other_protocols_refused(void **state)
{
	struct bpft *t = *state;
	static const uint8_t protos[] = { PKT_ICMP, 132 /* SCTP */, 136 /* UDP-Lite */ };
	struct pkt p;

	for (size_t i = 0; i < sizeof(protos); i++) {
		pkt_init(&p, PKT_ETH_IP);
		pkt_ip4(&p, BPFT_HOST4, DST4_ANY);
		pkt_proto(&p, protos[i], 8);
		pkt_done(&p);
		expect_drop(t, &p, EGRET_REASON_PACKET);
		assert_int_equal(t->events[0].proto, protos[i]);
	}
}

/* A source that is not the host's would have an allowed host answer
 * someone else: refused before the destination is looked at (after the
 * header's own checks: options are refused as they are). */
static void ip4_forged_source(void **state)
{
	struct bpft *t = *state;
	struct pkt p;

	pkt_tcp4(&p, "198.51.100.99", 40000, DST4_ANY, 443);
	expect_drop(t, &p, EGRET_REASON_SOURCE);
	assert_int_equal(t->events[0].port, 0);
	/* The subnet's broadcast is the host's, but never a source. */
	pkt_tcp4(&p, BPFT_BCAST4, 40000, DST4_ANY, 443);
	expect_drop(t, &p, EGRET_REASON_SOURCE);
	pkt_tcp4(&p, "0.0.0.0", 40000, DST4_ANY, 443);
	expect_drop(t, &p, EGRET_REASON_SOURCE);
	pkt_udp4(&p, "198.51.100.99", 40000, DST4_ANY, 443);
	expect_drop(t, &p, EGRET_REASON_SOURCE);
	pkt_init(&p, PKT_ETH_IP);
	pkt_ip4(&p, "198.51.100.99", DST4_ANY);
	pkt_ip4_options(&p, 1);
	pkt_udp(&p, 40000, 443);
	pkt_done(&p);
	expect_drop(t, &p, EGRET_REASON_PACKET);
}

/* A first fragment carries the ports; a later one none, so it is judged
 * by its address: any live rule of the entry will do. */
static void ip4_fragments(void **state)
{
	struct bpft *t = *state;
	struct pkt p;

	pkt_init(&p, PKT_ETH_IP);
	pkt_ip4(&p, BPFT_HOST4, DST4);
	pkt_ip4_frag(&p, 0, 1);
	pkt_udp(&p, 40000, 80);
	pkt_payload(&p, 64, 0);
	pkt_done(&p);
	expect_drop(t, &p, EGRET_REASON_PORT);
	assert_int_equal(t->events[0].port, 80);

	pkt_init(&p, PKT_ETH_IP);
	pkt_ip4(&p, BPFT_HOST4, DST4);
	pkt_ip4_frag(&p, 0, 1);
	pkt_udp(&p, 40000, 443);
	pkt_payload(&p, 64, 0);
	pkt_done(&p);
	expect_pass(t, &p);

	/* Later fragments: the bytes where ports would be (0x0050, port
	 * 80) are payload, never read. */
	pkt_init(&p, PKT_ETH_IP);
	pkt_ip4(&p, BPFT_HOST4, DST4);
	pkt_ip4_frag(&p, 9, 1);
	pkt_proto(&p, PKT_UDP, 0);
	pkt_payload(&p, 4, 0);
	p.buf[p.len - 1] = 80;
	pkt_done(&p);
	expect_pass(t, &p);

	pkt_init(&p, PKT_ETH_IP);
	pkt_ip4(&p, BPFT_HOST4, OTHER4);
	pkt_ip4_frag(&p, 9, 0);
	pkt_proto(&p, PKT_TCP, 0);
	pkt_payload(&p, 16, 0);
	pkt_done(&p);
	expect_drop(t, &p, EGRET_REASON_NO_ENTRY);
	assert_int_equal(t->events[0].port, 0);
}

static void ip6_tcp_udp(void **state)
{
	struct bpft *t = *state;
	const struct egret_event *e = &t->events[0];
	struct pkt p;
	__u32 dst[4];

	pkt_tcp6(&p, BPFT_HOST6, 40000, DST6, 443);
	expect_pass(t, &p);
	pkt_udp6(&p, BPFT_HOST6, 40000, DST6_ANY, 53000);
	expect_pass(t, &p);

	assert_int_equal(inet_pton(AF_INET6, OTHER6, dst), 1);
	pkt_udp6(&p, BPFT_HOST6, 40000, OTHER6, 443);
	expect_drop(t, &p, EGRET_REASON_NO_ENTRY);
	assert_int_equal(e->family, 6);
	assert_memory_equal(e->addr, dst, 16);
	assert_int_equal(e->port, 443);
	assert_int_equal(e->proto, PKT_UDP);
	pkt_tcp6(&p, BPFT_HOST6, 40000, DST6, 22);
	expect_drop(t, &p, EGRET_REASON_PORT);
	assert_int_equal(e->port, 22);
	assert_int_equal(e->proto, PKT_TCP);
}

/*
 * Hop-by-hop and destination options are stepped over and the ports read
 * after them: the same chain passes to 443 and is refused to 80, and the
 * event names 80 - not bytes of an option read as ports.
 */
static void ip6_ext_headers_stepped_over(void **state)
{
	struct bpft *t = *state;
	static const __u16 ports[] = { 443, 80 };
	struct pkt p;

	for (size_t i = 0; i < 2; i++) {
		pkt_init(&p, PKT_ETH_IP6);
		pkt_ip6(&p, BPFT_HOST6, DST6);
		pkt_ip6_ext(&p, PKT_HOP, 0, 0x01);
		pkt_ip6_ext(&p, PKT_DEST, 2, 0x01);	/* 24 bytes */
		pkt_tcp(&p, 40000, ports[i]);
		pkt_done(&p);
		if (ports[i] == 443) {
			expect_pass(t, &p);
			continue;
		}
		expect_drop(t, &p, EGRET_REASON_PORT);
		assert_int_equal(t->events[0].port, 80);
		assert_int_equal(t->events[0].proto, PKT_TCP);
	}
	/* A destination options header before UDP. */
	pkt_init(&p, PKT_ETH_IP6);
	pkt_ip6(&p, BPFT_HOST6, DST6);
	pkt_ip6_ext(&p, PKT_DEST, 0, 0x01);
	pkt_udp(&p, 40000, 8000);
	pkt_done(&p);
	expect_pass(t, &p);
}

static void ip6_fragments(void **state)
{
	struct bpft *t = *state;
	struct pkt p;

	/* First fragment: ports follow the fragment header. */
	pkt_init(&p, PKT_ETH_IP6);
	pkt_ip6(&p, BPFT_HOST6, DST6);
	pkt_ip6_frag(&p, 0, 1);
	pkt_udp(&p, 40000, 443);
	pkt_payload(&p, 64, 0);
	pkt_done(&p);
	expect_pass(t, &p);

	pkt_init(&p, PKT_ETH_IP6);
	pkt_ip6(&p, BPFT_HOST6, DST6);
	pkt_ip6_ext(&p, PKT_HOP, 0, 0x01);
	pkt_ip6_frag(&p, 0, 1);
	pkt_udp(&p, 40000, 80);
	pkt_payload(&p, 64, 0);
	pkt_done(&p);
	expect_drop(t, &p, EGRET_REASON_PORT);
	assert_int_equal(t->events[0].port, 80);

	/* A later fragment: judged by its address, any live rule. The
	 * bytes where a UDP header's port would be say 80 (refused above):
	 * read as ports, they would drop it. */
	pkt_init(&p, PKT_ETH_IP6);
	pkt_ip6(&p, BPFT_HOST6, DST6);
	pkt_ip6_frag(&p, 100, 0);
	pkt_proto(&p, PKT_UDP, 0);
	pkt_payload(&p, 16, 0);
	p.buf[p.len - 13] = 80;
	pkt_done(&p);
	expect_pass(t, &p);

	pkt_init(&p, PKT_ETH_IP6);
	pkt_ip6(&p, BPFT_HOST6, OTHER6);
	pkt_ip6_frag(&p, 100, 1);
	pkt_proto(&p, PKT_TCP, 0);
	pkt_payload(&p, 16, 0);
	pkt_done(&p);
	expect_drop(t, &p, EGRET_REASON_NO_ENTRY);
	assert_int_equal(t->events[0].port, 0);
}

/* A routing header sends the packet past the judged destination. */
static void ip6_routing_header_refused(void **state)
{
	struct bpft *t = *state;
	struct pkt p;

	pkt_init(&p, PKT_ETH_IP6);
	pkt_ip6(&p, BPFT_HOST6, DST6_ANY);
	pkt_ip6_ext(&p, PKT_ROUTING, 2, 0);
	pkt_tcp(&p, 40000, 443);
	pkt_done(&p);
	expect_drop(t, &p, EGRET_REASON_PACKET);
	assert_int_equal(t->events[0].proto, PKT_ROUTING);
	assert_int_equal(t->events[0].family, 6);

	/* Behind a hop-by-hop header too. */
	pkt_init(&p, PKT_ETH_IP6);
	pkt_ip6(&p, BPFT_HOST6, DST6_ANY);
	pkt_ip6_ext(&p, PKT_HOP, 0, 0x01);
	pkt_ip6_ext(&p, PKT_ROUTING, 2, 0);
	pkt_udp(&p, 40000, 443);
	pkt_done(&p);
	expect_drop(t, &p, EGRET_REASON_PACKET);
	assert_int_equal(t->events[0].proto, PKT_ROUTING);
}

/* At most six extension headers are walked (IPV6_EXT_MAX in
 * bpf/lib/egress.h): the sixth still reaches TCP, a seventh is refused. */
static void ip6_ext_header_limit(void **state)
{
	struct bpft *t = *state;
	struct pkt p;

	for (int n = 6; n <= 7; n++) {
		pkt_init(&p, PKT_ETH_IP6);
		pkt_ip6(&p, BPFT_HOST6, DST6_ANY);
		for (int i = 0; i < n; i++)
			pkt_ip6_ext(&p, PKT_DEST, 0, 0x01);
		pkt_tcp(&p, 40000, 443);
		pkt_done(&p);
		if (n == 6) {
			expect_pass(t, &p);
			continue;
		}
		expect_drop(t, &p, EGRET_REASON_PACKET);
		assert_int_equal(t->events[0].proto, PKT_DEST);
	}
}

/* As ip4_truncated: only what follows the fixed header can be cut. */
static void ip6_truncated(void **state)
{
	struct bpft *t = *state;
	struct pkt p;

	/* An extension header cut short. */
	pkt_init(&p, PKT_ETH_IP6);
	pkt_ip6(&p, BPFT_HOST6, DST6_ANY);
	pkt_ip6_ext(&p, PKT_HOP, 0, 0x01);
	pkt_tcp(&p, 40000, 443);
	pkt_done(&p);
	pkt_cut(&p, 40 + 7);
	expect_drop(t, &p, EGRET_REASON_PACKET);
	assert_int_equal(t->events[0].proto, PKT_HOP);

	/* A header length that runs past the end: ports out of reach. */
	pkt_init(&p, PKT_ETH_IP6);
	pkt_ip6(&p, BPFT_HOST6, DST6_ANY);
	pkt_ip6_ext(&p, PKT_DEST, 0, 0x01);
	pkt_tcp(&p, 40000, 443);
	pkt_done(&p);
	p.buf[p.l3 + 40 + 1] = 200;	/* 1608 bytes, of 28 there */
	expect_drop(t, &p, EGRET_REASON_PACKET);

	/* Three bytes of ports. */
	pkt_udp6(&p, BPFT_HOST6, 40000, DST6_ANY, 443);
	pkt_cut(&p, 40 + 3);
	expect_drop(t, &p, EGRET_REASON_PACKET);
	assert_int_equal(t->events[0].proto, PKT_UDP);
}

static void ip6_other_next_headers_refused(void **state)
{
	struct bpft *t = *state;
	static const uint8_t protos[] = { PKT_ICMP6, 132 /* SCTP */, 59 /* none */ };
	struct pkt p;

	for (size_t i = 0; i < sizeof(protos); i++) {
		pkt_init(&p, PKT_ETH_IP6);
		pkt_ip6(&p, BPFT_HOST6, DST6_ANY);
		pkt_proto(&p, protos[i], 8);
		pkt_done(&p);
		expect_drop(t, &p, EGRET_REASON_PACKET);
		assert_int_equal(t->events[0].proto, protos[i]);
	}
}

static void ip6_forged_source(void **state)
{
	struct bpft *t = *state;
	struct pkt p;

	pkt_tcp6(&p, "2001:db8:9::9", 40000, DST6_ANY, 443);
	expect_drop(t, &p, EGRET_REASON_SOURCE);
	pkt_udp6(&p, "::", 40000, DST6_ANY, 443);
	expect_drop(t, &p, EGRET_REASON_SOURCE);
	/* Neighbours of the host's address are not the host's. */
	pkt_tcp6(&p, "2001:db8:1::3", 40000, DST6_ANY, 443);
	expect_drop(t, &p, EGRET_REASON_SOURCE);
}

/* Neither IPv4 nor IPv6 (ARP, say): nothing the attempt should send. */
/*
 * SNI pinning's rule for UDP: a datagram to a pinned port of an address
 * every live rule for that port of which is pinned is QUIC egret cannot
 * read, refused; an address-only rule for the port, another port, or an
 * attempt that pins nothing lets it go. A pinned SYN from a socket
 * sock_ops gave no pin storage is refused. (The rest of the TCP side
 * needs real sockets: tests/redteam/pinning.sh.)
 */
static void pinned_quic_refused(void **state)
{
	struct bpft *t = *state;
	struct egret_allow a = {};
	struct pkt p;

	bpft_rule(&a, 443, 443, BPFT_LIVE);
	bpft_rule(&a, 8443, 8443, BPFT_LIVE);
	a.rules[0].flags = a.rules[1].flags = EGRET_RULE_PINNED;
	bpft_allow(t, "203.0.113.30", &a);
	bpft_allow(t, "2001:db8:2::30", &a);
	t->skel->bss->egret_test_attempt.pin_ports[0] = 443;

	pkt_udp4(&p, BPFT_HOST4, 40000, "203.0.113.30", 443);
	expect_drop(t, &p, EGRET_REASON_QUIC);
	pkt_udp6(&p, BPFT_HOST6, 40000, "2001:db8:2::30", 443);
	expect_drop(t, &p, EGRET_REASON_QUIC);
	pkt_udp4(&p, BPFT_HOST4, 40000, "203.0.113.30", 8443);	/* not a pinned port */
	expect_pass(t, &p);
	/* A pinned SYN of a socket without pin storage (the test run's
	 * socket: sock_ops never made it one, as when it could not) cannot
	 * have its data judged: refused. */
	pkt_tcp4(&p, BPFT_HOST4, 40000, "203.0.113.30", 443);
	expect_drop(t, &p, EGRET_REASON_NOT_TLS);

	/* The operator also opened 443 by address: not pinned any more. */
	bpft_rule(&a, 443, 443, EGRET_EXPIRES_NEVER);
	bpft_allow(t, "203.0.113.30", &a);
	pkt_udp4(&p, BPFT_HOST4, 40000, "203.0.113.30", 443);
	expect_pass(t, &p);
	pkt_tcp4(&p, BPFT_HOST4, 40000, "203.0.113.30", 443);
	expect_pass(t, &p);

	/* An attempt that pins nothing (--no-pinning). */
	t->skel->bss->egret_test_attempt.pin_ports[0] = 0;
	pkt_udp6(&p, BPFT_HOST6, 40000, "2001:db8:2::30", 443);
	expect_pass(t, &p);
}

/*
 * Host pinning's rule on the wire without a socket: a SYN to an
 * HTTP-pinned port of a pinned address, from a socket sock_ops gave no
 * HTTP storage (the test run's), cannot have its requests judged:
 * refused (not-http), IPv4 and IPv6. UDP to that port is not QUIC's
 * business; a port not pinned for HTTP lets the SYN go.
 */
static void pinned_http_unjudged(void **state)
{
	struct bpft *t = *state;
	struct egret_allow a = {};
	struct pkt p;

	bpft_rule(&a, 80, 80, BPFT_LIVE);
	a.rules[0].flags = EGRET_RULE_PINNED;
	bpft_allow(t, "203.0.113.31", &a);
	bpft_allow(t, "2001:db8:2::31", &a);
	t->skel->bss->egret_test_attempt.http_ports[0] = 80;

	pkt_tcp4(&p, BPFT_HOST4, 40000, "203.0.113.31", 80);
	expect_drop(t, &p, EGRET_REASON_NOT_HTTP);
	pkt_tcp6(&p, BPFT_HOST6, 40000, "2001:db8:2::31", 80);
	expect_drop(t, &p, EGRET_REASON_NOT_HTTP);
	pkt_udp4(&p, BPFT_HOST4, 40000, "203.0.113.31", 80);
	expect_pass(t, &p);

	/* An attempt that pins no plain HTTP (`http_ports: []`). */
	t->skel->bss->egret_test_attempt.http_ports[0] = 0;
	pkt_tcp4(&p, BPFT_HOST4, 40000, "203.0.113.31", 80);
	expect_pass(t, &p);
}

static void not_ip_refused(void **state)
{
	struct bpft *t = *state;
	struct pkt p;

	pkt_init(&p, PKT_ETH_ARP);
	pkt_payload(&p, 28, 0);
	expect_drop(t, &p, EGRET_REASON_PACKET);
	assert_int_equal(t->events[0].family, 0);
}

int bpft_packets_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(ip4_tcp_udp_allowed, packets_setup),
		cmocka_unit_test_setup(ip4_tcp_udp_denied, packets_setup),
		cmocka_unit_test_setup(repeats_counted_not_queued, packets_setup),
		cmocka_unit_test_setup(other_attempts_entries_unseen, packets_setup),
		cmocka_unit_test_setup(tcp_established_shortcut, packets_setup),
		cmocka_unit_test_setup(ip4_options_refused, packets_setup),
		cmocka_unit_test_setup(ip4_short_ihl_refused, packets_setup),
		cmocka_unit_test_setup(ip4_truncated, packets_setup),
		cmocka_unit_test_setup(ip4_other_protocols_refused, packets_setup),
		cmocka_unit_test_setup(ip4_forged_source, packets_setup),
		cmocka_unit_test_setup(ip4_fragments, packets_setup),
		cmocka_unit_test_setup(ip6_tcp_udp, packets_setup),
		cmocka_unit_test_setup(ip6_ext_headers_stepped_over, packets_setup),
		cmocka_unit_test_setup(ip6_fragments, packets_setup),
		cmocka_unit_test_setup(ip6_routing_header_refused, packets_setup),
		cmocka_unit_test_setup(ip6_ext_header_limit, packets_setup),
		cmocka_unit_test_setup(ip6_truncated, packets_setup),
		cmocka_unit_test_setup(ip6_other_next_headers_refused, packets_setup),
		cmocka_unit_test_setup(ip6_forged_source, packets_setup),
		cmocka_unit_test_setup(pinned_quic_refused, packets_setup),
		cmocka_unit_test_setup(pinned_http_unjudged, packets_setup),
		cmocka_unit_test_setup(not_ip_refused, packets_setup),
	};

	return cmocka_run_group_tests_name("egress packets", tests,
					   bpft_group_setup, bpft_group_teardown);
}
