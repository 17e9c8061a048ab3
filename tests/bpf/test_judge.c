// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_judge.c - the allow lookup (bpf/lib/allow.h), run by the kernel.
 *
 * The kernel has no test run for cgroup sock_addr programs (6.18 answers
 * ENOTSUPP), so the judge is reached through egret_egress, which asks it
 * the same question for every packet: exact entries, prefixes (longest
 * match), port rules, deadlines, special addresses; then what the
 * backstop adds (the DNS proxy, loopback replies) and what a denial
 * leaves behind (events, counters, --audit).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "egret.h"
#include "egret_match.h"
#include "egret.skel.h"
#include "harness.h"
#include "pkt.h"

#define SRC4	BPFT_HOST4
#define SRC6	BPFT_HOST6

/* A TCP SYN from the host to @dst:@port: the judge's question in a packet. */
static __u32 tcp4_to(struct bpft *t, const char *dst, __u16 port)
{
	struct pkt p;

	pkt_tcp4(&p, SRC4, 40000, dst, port);
	return bpft_egress(t, &p);
}

static __u32 tcp6_to(struct bpft *t, const char *dst, __u16 port)
{
	struct pkt p;

	pkt_tcp6(&p, SRC6, 40000, dst, port);
	return bpft_egress(t, &p);
}

/* The verdict; a pass logs nothing, a drop one event with @why. */
#define pass4(t, dst, port)						\
	do {								\
		assert_int_equal(tcp4_to((t), (dst), (port)), BPFT_PASS); \
		assert_int_equal((t)->nevents, 0);			\
	} while (0)

#define drop4(t, dst, port, why)					\
	do {								\
		assert_int_equal(tcp4_to((t), (dst), (port)), BPFT_DROP); \
		assert_int_equal((t)->nevents, 1);			\
		assert_int_equal((t)->events[0].reason, (why));		\
	} while (0)

#define pass6(t, dst, port)						\
	do {								\
		assert_int_equal(tcp6_to((t), (dst), (port)), BPFT_PASS); \
		assert_int_equal((t)->nevents, 0);			\
	} while (0)

#define drop6(t, dst, port, why)					\
	do {								\
		assert_int_equal(tcp6_to((t), (dst), (port)), BPFT_DROP); \
		assert_int_equal((t)->nevents, 1);			\
		assert_int_equal((t)->events[0].reason, (why));		\
	} while (0)

static void exact_any_port(void **state)
{
	struct bpft *t = *state;

	bpft_allow_rule(t, "203.0.113.10", 0, 65535, EGRET_EXPIRES_NEVER, 0);
	pass4(t, "203.0.113.10", 1);
	pass4(t, "203.0.113.10", 443);
	pass4(t, "203.0.113.10", 65535);
	/* Exact means exact: the neighbours have no entry. */
	drop4(t, "203.0.113.11", 443, EGRET_REASON_NO_ENTRY);
	drop4(t, "203.0.113.9", 443, EGRET_REASON_NO_ENTRY);

	bpft_allow_rule(t, "2001:db8:2::10", 0, 65535, EGRET_EXPIRES_NEVER, 0);
	pass6(t, "2001:db8:2::10", 8080);
	drop6(t, "2001:db8:2::11", 8080, EGRET_REASON_NO_ENTRY);
}

/* An entry whose only rule is 443 passes 443 and nothing else. */
static void port_rule(void **state)
{
	struct bpft *t = *state;

	bpft_allow_rule(t, "203.0.113.10", 443, 443, EGRET_EXPIRES_NEVER, 0);
	pass4(t, "203.0.113.10", 443);
	drop4(t, "203.0.113.10", 80, EGRET_REASON_PORT);
	drop4(t, "203.0.113.10", 442, EGRET_REASON_PORT);
	drop4(t, "203.0.113.10", 444, EGRET_REASON_PORT);

	bpft_allow_rule(t, "2001:db8:2::10", 443, 443, EGRET_EXPIRES_NEVER, 0);
	pass6(t, "2001:db8:2::10", 443);
	drop6(t, "2001:db8:2::10", 80, EGRET_REASON_PORT);
}

/* Ranges are inclusive at both ends; several rules are each tried. */
static void port_ranges(void **state)
{
	struct bpft *t = *state;
	struct egret_allow a = {};

	bpft_rule(&a, 8000, 8100, EGRET_EXPIRES_NEVER);
	bpft_rule(&a, 22, 22, EGRET_EXPIRES_NEVER);
	bpft_allow(t, "203.0.113.10", &a);
	drop4(t, "203.0.113.10", 7999, EGRET_REASON_PORT);
	pass4(t, "203.0.113.10", 8000);
	pass4(t, "203.0.113.10", 8050);
	pass4(t, "203.0.113.10", 8100);
	drop4(t, "203.0.113.10", 8101, EGRET_REASON_PORT);
	pass4(t, "203.0.113.10", 22);
	drop4(t, "203.0.113.10", 23, EGRET_REASON_PORT);
}

/*
 * Deadlines are CLOCK_MONOTONIC (user/enforce/learn.c writes them, the
 * programs read bpf_ktime_get_coarse_ns()): a rule past its deadline
 * denies, and says so; one an hour away allows.
 */
static void expiry(void **state)
{
	struct bpft *t = *state;
	struct egret_allow a = {};

	bpft_allow_rule(t, "203.0.113.10", 443, 443, BPFT_EXPIRED, 0);
	drop4(t, "203.0.113.10", 443, EGRET_REASON_EXPIRED);
	/* Only rules covering the port expire for it. */
	drop4(t, "203.0.113.10", 80, EGRET_REASON_PORT);

	bpft_allow_rule(t, "203.0.113.11", 443, 443, BPFT_LIVE, 0);
	pass4(t, "203.0.113.11", 443);

	/* Each rule has its own lifetime: an expired 443 beside a live 80
	 * and a static 8080 on one address. */
	bpft_rule(&a, 443, 443, BPFT_EXPIRED);
	bpft_rule(&a, 80, 80, BPFT_LIVE);
	bpft_rule(&a, 8080, 8080, EGRET_EXPIRES_NEVER);
	bpft_allow(t, "203.0.113.12", &a);
	drop4(t, "203.0.113.12", 443, EGRET_REASON_EXPIRED);
	pass4(t, "203.0.113.12", 80);
	pass4(t, "203.0.113.12", 8080);

	/* An expired rule and a live one for the same port: the live wins. */
	memset(&a, 0, sizeof(a));
	bpft_rule(&a, 443, 443, BPFT_EXPIRED);
	bpft_rule(&a, 0, 65535, BPFT_LIVE);
	bpft_allow(t, "203.0.113.13", &a);
	pass4(t, "203.0.113.13", 443);

	bpft_allow_rule(t, "2001:db8:2::10", 0, 65535, BPFT_EXPIRED, 0);
	drop6(t, "2001:db8:2::10", 443, EGRET_REASON_EXPIRED);
}

/* A prefix covers the addresses inside it, and no other. */
static void prefixes(void **state)
{
	struct bpft *t = *state;

	bpft_allow_rule(t, "198.51.100.0/24", 0, 65535, EGRET_EXPIRES_NEVER, 0);
	pass4(t, "198.51.100.0", 443);
	pass4(t, "198.51.100.7", 443);
	pass4(t, "198.51.100.255", 443);
	drop4(t, "198.51.101.0", 443, EGRET_REASON_NO_ENTRY);
	drop4(t, "198.51.99.255", 443, EGRET_REASON_NO_ENTRY);

	bpft_allow_rule(t, "2001:db8:100::/48", 443, 443, EGRET_EXPIRES_NEVER, 0);
	pass6(t, "2001:db8:100::1", 443);
	pass6(t, "2001:db8:100:ffff:ffff:ffff:ffff:ffff", 443);
	drop6(t, "2001:db8:100::1", 80, EGRET_REASON_PORT);
	drop6(t, "2001:db8:101::1", 443, EGRET_REASON_NO_ENTRY);
}

/*
 * The trie answers with the longest matching prefix only - which is why
 * user space copies a wider prefix's rules into each narrower one. Here
 * nobody did: inside the /24 only its own rule counts.
 */
static void prefix_longest_match(void **state)
{
	struct bpft *t = *state;

	bpft_allow_rule(t, "198.51.0.0/16", 0, 65535, EGRET_EXPIRES_NEVER, 0);
	bpft_allow_rule(t, "198.51.100.0/24", 443, 443, EGRET_EXPIRES_NEVER, 0);
	pass4(t, "198.51.100.7", 443);
	drop4(t, "198.51.100.7", 80, EGRET_REASON_PORT);
	pass4(t, "198.51.101.7", 80);
}

/* The exact entry and the prefix are both asked: either may allow, and a
 * denial gives the reason that tells the most (expired over port). */
static void exact_and_prefix(void **state)
{
	struct bpft *t = *state;

	bpft_allow_rule(t, "203.0.113.10", 443, 443, BPFT_EXPIRED, 0);
	bpft_allow_rule(t, "203.0.113.0/24", 80, 80, EGRET_EXPIRES_NEVER, 0);
	pass4(t, "203.0.113.10", 80);
	drop4(t, "203.0.113.10", 443, EGRET_REASON_EXPIRED);
	drop4(t, "203.0.113.10", 22, EGRET_REASON_PORT);
	pass4(t, "203.0.113.11", 80);
	drop4(t, "203.0.113.11", 443, EGRET_REASON_PORT);
}

/*
 * Special addresses (loopback, link-local, the metadata service,
 * multicast, broadcast, the host's own) count only an entry flagged
 * EGRET_ALLOW_SPECIAL: 0.0.0.0/0 does not open them.
 */
static void special_addresses(void **state)
{
	struct bpft *t = *state;
	static const char *const special4[] = {
		"169.254.169.254", "169.254.1.1", "127.0.0.1", "239.1.2.3",
		"255.255.255.255", "0.1.2.3", BPFT_HOST4, BPFT_BCAST4,
	};

	/* Unlisted, they say so rather than "no entry". */
	for (size_t i = 0; i < sizeof(special4) / sizeof(special4[0]); i++)
		drop4(t, special4[i], 80, EGRET_REASON_SPECIAL);

	bpft_allow_rule(t, "0.0.0.0/0", 0, 65535, EGRET_EXPIRES_NEVER, 0);
	pass4(t, "203.0.113.10", 80);
	for (size_t i = 0; i < sizeof(special4) / sizeof(special4[0]); i++)
		drop4(t, special4[i], 80, EGRET_REASON_SPECIAL);

	/* Named, flagged: open, and only that one. */
	bpft_allow_rule(t, "169.254.169.254", 80, 80, EGRET_EXPIRES_NEVER,
			EGRET_ALLOW_SPECIAL);
	pass4(t, "169.254.169.254", 80);
	/* Its entry refuses 81 for the port, 0.0.0.0/0 for the class: the
	 * class is the reason that tells more (egret_reason_pick). */
	drop4(t, "169.254.169.254", 81, EGRET_REASON_SPECIAL);
	drop4(t, "169.254.169.253", 80, EGRET_REASON_SPECIAL);
	/* An entry for a special address without the flag opens nothing. */
	bpft_allow_rule(t, "239.1.2.3", 0, 65535, EGRET_EXPIRES_NEVER, 0);
	drop4(t, "239.1.2.3", 80, EGRET_REASON_SPECIAL);

	bpft_allow_rule(t, "::/0", 0, 65535, EGRET_EXPIRES_NEVER, 0);
	pass6(t, "2001:db8:5::5", 80);
	drop6(t, "fe80::1", 80, EGRET_REASON_SPECIAL);
	drop6(t, "ff02::1", 80, EGRET_REASON_SPECIAL);
	drop6(t, "fd00:ec2::254", 80, EGRET_REASON_SPECIAL);
	drop6(t, "::1", 80, EGRET_REASON_SPECIAL);
	drop6(t, BPFT_HOST6, 80, EGRET_REASON_SPECIAL);
}

/* ::ffff:a.b.c.d is IPv4 to the kernel, and so to the judge. */
static void v4mapped_judged_as_ipv4(void **state)
{
	struct bpft *t = *state;

	bpft_allow_rule(t, "203.0.113.10", 443, 443, EGRET_EXPIRES_NEVER, 0);
	pass6(t, "::ffff:203.0.113.10", 443);
	drop6(t, "::ffff:203.0.113.10", 80, EGRET_REASON_PORT);
	drop6(t, "::ffff:203.0.113.11", 443, EGRET_REASON_NO_ENTRY);
	/* An IPv6 entry for the mapped address is never consulted. */
	bpft_allow_rule(t, "::ffff:203.0.113.12", 0, 65535, EGRET_EXPIRES_NEVER, 0);
	drop6(t, "::ffff:203.0.113.12", 443, EGRET_REASON_NO_ENTRY);
}

/* The proxy's port on loopback passes once user space set it (never
 * while it is 0: then nothing is DNS). */
static void dns_proxy(void **state)
{
	struct bpft *t = *state;
	struct pkt p;

	pkt_udp4(&p, "127.0.0.1", 40000, "127.0.0.1", 5353);
	expect_drop(t, &p, EGRET_REASON_SPECIAL);

	t->skel->bss->egret_test_attempt.dns_proxy_port_be = htons(5353);
	t->skel->bss->egret_test_attempt.dns_proxy_ip6[3] = htonl(1);	/* ::1 */
	expect_pass(t, &p);
	pkt_tcp4(&p, "127.0.0.1", 40000, "127.0.0.1", 5353);
	expect_pass(t, &p);
	pkt_udp4(&p, "127.0.0.1", 40000, "127.0.0.1", 5354);
	expect_drop(t, &p, EGRET_REASON_SPECIAL);
	pkt_udp4(&p, "127.0.0.1", 40000, "127.0.0.2", 5353);
	expect_drop(t, &p, EGRET_REASON_SPECIAL);
	pkt_udp6(&p, "::1", 40000, "::1", 5353);
	expect_pass(t, &p);
	pkt_udp6(&p, "::1", 40000, "::1", 53);
	expect_drop(t, &p, EGRET_REASON_SPECIAL);
}

/* A server inside the attempt answers on loopback from the allowed
 * address and port it serves; from anywhere else it is judged as any
 * other packet. */
static void loopback_replies(void **state)
{
	struct bpft *t = *state;
	struct pkt p;

	bpft_allow_rule(t, "127.0.0.1", 8080, 8080, EGRET_EXPIRES_NEVER,
			EGRET_ALLOW_SPECIAL);
	pkt_tcp4(&p, "127.0.0.1", 8080, "127.0.0.1", 45000);
	expect_pass(t, &p);
	pkt_tcp4(&p, "127.0.0.1", 8081, "127.0.0.1", 45000);
	expect_drop(t, &p, EGRET_REASON_PORT);
	pkt_tcp4(&p, BPFT_HOST4, 8080, "127.0.0.1", 45000);
	expect_drop(t, &p, EGRET_REASON_PORT);
	/* UDP from the allowed port is no reply: any loopback port it
	 * reached would have been open (t_rt_loopback_reply_port). */
	pkt_udp4(&p, "127.0.0.1", 8080, "127.0.0.1", 45000);
	expect_drop(t, &p, EGRET_REASON_PORT);

	bpft_allow_rule(t, "::1", 8080, 8080, EGRET_EXPIRES_NEVER,
			EGRET_ALLOW_SPECIAL);
	pkt_tcp6(&p, "::1", 8080, "::1", 45000);
	expect_pass(t, &p);
	pkt_tcp6(&p, "::1", 8081, "::1", 45000);
	expect_drop(t, &p, EGRET_REASON_PORT);
	pkt_udp6(&p, "::1", 8080, "::1", 45000);
	expect_drop(t, &p, EGRET_REASON_PORT);
}

/* A denial is counted once per packet; a packet the backstop passes
 * is not counted at all (it never reaches event_decide()). */
static void counters(void **state)
{
	struct bpft *t = *state;
	__u32 deny = EGRET_COUNTER(EGRET_HOOK_EGRESS, EGRET_VERDICT_DENY);
	__u32 allow = EGRET_COUNTER(EGRET_HOOK_EGRESS, EGRET_VERDICT_ALLOW);
	__u64 denied = bpft_counter(t, deny), allowed = bpft_counter(t, allow);

	bpft_allow_rule(t, "203.0.113.10", 443, 443, EGRET_EXPIRES_NEVER, 0);
	drop4(t, "203.0.113.11", 443, EGRET_REASON_NO_ENTRY);
	drop4(t, "203.0.113.10", 80, EGRET_REASON_PORT);
	assert_int_equal(bpft_counter(t, deny), denied + 2);
	pass4(t, "203.0.113.10", 443);
	t->skel->bss->egret_test_attempt.log_allowed = 1;
	pass4(t, "203.0.113.10", 443);
	assert_int_equal(bpft_counter(t, allow), allowed);
	assert_int_equal(bpft_counter(t, deny), denied + 2);
}

/* --audit: the denial is logged as would-deny and the packet goes on. */
static void audit_lets_through(void **state)
{
	struct bpft *t = *state;
	__u32 would = EGRET_COUNTER(EGRET_HOOK_EGRESS, EGRET_VERDICT_WOULD_DENY);
	__u64 before = bpft_counter(t, would);
	struct pkt p;

	t->skel->bss->egret_test_attempt.audit = 1;
	pkt_tcp4(&p, SRC4, 40000, "203.0.113.11", 443);
	assert_int_equal(bpft_egress(t, &p), BPFT_PASS);
	assert_int_equal(t->nevents, 1);
	assert_int_equal(t->events[0].verdict, EGRET_VERDICT_WOULD_DENY);
	assert_int_equal(t->events[0].reason, EGRET_REASON_NO_ENTRY);
	/* A forged source alike: let through, said. */
	pkt_tcp4(&p, "198.51.100.99", 40000, "203.0.113.11", 443);
	assert_int_equal(bpft_egress(t, &p), BPFT_PASS);
	assert_int_equal(t->nevents, 1);
	assert_int_equal(t->events[0].verdict, EGRET_VERDICT_WOULD_DENY);
	assert_int_equal(t->events[0].reason, EGRET_REASON_SOURCE);
	assert_int_equal(bpft_counter(t, would), before + 2);
}

int bpft_judge_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(exact_any_port, bpft_test_setup),
		cmocka_unit_test_setup(port_rule, bpft_test_setup),
		cmocka_unit_test_setup(port_ranges, bpft_test_setup),
		cmocka_unit_test_setup(expiry, bpft_test_setup),
		cmocka_unit_test_setup(prefixes, bpft_test_setup),
		cmocka_unit_test_setup(prefix_longest_match, bpft_test_setup),
		cmocka_unit_test_setup(exact_and_prefix, bpft_test_setup),
		cmocka_unit_test_setup(special_addresses, bpft_test_setup),
		cmocka_unit_test_setup(v4mapped_judged_as_ipv4, bpft_test_setup),
		cmocka_unit_test_setup(dns_proxy, bpft_test_setup),
		cmocka_unit_test_setup(loopback_replies, bpft_test_setup),
		cmocka_unit_test_setup(counters, bpft_test_setup),
		cmocka_unit_test_setup(audit_lets_through, bpft_test_setup),
	};

	return cmocka_run_group_tests_name("egress judge", tests,
					   bpft_group_setup, bpft_group_teardown);
}
