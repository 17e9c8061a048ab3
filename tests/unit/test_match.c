// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_match.c - the decision logic the BPF programs compile (egret_match.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <linux/types.h>

#include "egret.h"
#include "egret_match.h"

#define NOW 1000000ULL

static enum egret_addr_class class4(const char *text)
{
	__u32 addr;

	assert_int_equal(inet_pton(AF_INET, text, &addr), 1);
	return egret_classify4(addr);
}

static enum egret_addr_class class6(const char *text)
{
	__u32 addr[4];

	assert_int_equal(inet_pton(AF_INET6, text, addr), 1);
	return egret_classify6(addr);
}

static int mapped(const char *text)
{
	__u32 addr[4];

	assert_int_equal(inet_pton(AF_INET6, text, addr), 1);
	return egret_is_v4mapped(addr);
}

static void classify4(void **state)
{
	assert_int_equal(class4("0.0.0.0"), EGRET_ADDR_UNSPECIFIED);
	assert_int_equal(class4("0.255.255.255"), EGRET_ADDR_UNSPECIFIED);
	assert_int_equal(class4("127.0.0.1"), EGRET_ADDR_LOOPBACK);
	assert_int_equal(class4("127.255.255.254"), EGRET_ADDR_LOOPBACK);
	assert_int_equal(class4("169.254.0.1"), EGRET_ADDR_LINK_LOCAL);
	assert_int_equal(class4("169.254.255.255"), EGRET_ADDR_LINK_LOCAL);
	assert_int_equal(class4("169.254.169.253"), EGRET_ADDR_LINK_LOCAL);
	assert_int_equal(class4("169.254.169.254"), EGRET_ADDR_METADATA);

	assert_int_equal(class4("1.0.0.0"), EGRET_ADDR_NORMAL);
	assert_int_equal(class4("126.255.255.255"), EGRET_ADDR_NORMAL);
	assert_int_equal(class4("128.0.0.1"), EGRET_ADDR_NORMAL);
	assert_int_equal(class4("169.255.0.1"), EGRET_ADDR_NORMAL);
	assert_int_equal(class4("169.253.169.254"), EGRET_ADDR_NORMAL);
	assert_int_equal(class4("254.169.254.169"), EGRET_ADDR_NORMAL);
	assert_int_equal(class4("203.0.113.7"), EGRET_ADDR_NORMAL);
	assert_int_equal(class4("223.255.255.255"), EGRET_ADDR_NORMAL);
	assert_int_equal(class4("240.0.0.1"), EGRET_ADDR_NORMAL);
	assert_int_equal(class4("255.255.255.254"), EGRET_ADDR_NORMAL);

	/* A shared medium is no destination: multicast, limited broadcast. */
	assert_int_equal(class4("224.0.0.1"), EGRET_ADDR_MULTICAST);
	assert_int_equal(class4("224.0.0.22"), EGRET_ADDR_MULTICAST);
	assert_int_equal(class4("239.255.255.255"), EGRET_ADDR_MULTICAST);
	assert_int_equal(class4("255.255.255.255"), EGRET_ADDR_BROADCAST);
}

static void classify6(void **state)
{
	assert_int_equal(class6("::"), EGRET_ADDR_UNSPECIFIED);
	assert_int_equal(class6("::1"), EGRET_ADDR_LOOPBACK);
	assert_int_equal(class6("fe80::1"), EGRET_ADDR_LINK_LOCAL);
	assert_int_equal(class6("febf:ffff::1"), EGRET_ADDR_LINK_LOCAL);
	assert_int_equal(class6("fd00:ec2::254"), EGRET_ADDR_METADATA);

	assert_int_equal(class6("::2"), EGRET_ADDR_NORMAL);
	assert_int_equal(class6("::1:0"), EGRET_ADDR_NORMAL);
	assert_int_equal(class6("1::1"), EGRET_ADDR_NORMAL);
	assert_int_equal(class6("fe00::1"), EGRET_ADDR_NORMAL);
	assert_int_equal(class6("fec0::1"), EGRET_ADDR_NORMAL);
	assert_int_equal(class6("fd00:ec2::253"), EGRET_ADDR_NORMAL);
	assert_int_equal(class6("fd00:ec2:0:1::254"), EGRET_ADDR_NORMAL);
	assert_int_equal(class6("fd00:ec3::254"), EGRET_ADDR_NORMAL);
	assert_int_equal(class6("2001:db8::1"), EGRET_ADDR_NORMAL);
	assert_int_equal(class6("fe7f:ffff::1"), EGRET_ADDR_NORMAL);
	assert_int_equal(class6("ff02::1"), EGRET_ADDR_MULTICAST);
	assert_int_equal(class6("ff0e::1"), EGRET_ADDR_MULTICAST);
	assert_int_equal(class6("ff02::16"), EGRET_ADDR_MULTICAST);
	/* Mapped addresses are judged as IPv4 by the caller, not here. */
	assert_int_equal(class6("::ffff:127.0.0.1"), EGRET_ADDR_NORMAL);
}

static void v4mapped(void **state)
{
	assert_true(mapped("::ffff:1.2.3.4"));
	assert_true(mapped("::ffff:0.0.0.0"));
	assert_true(mapped("::ffff:127.0.0.1"));

	assert_false(mapped("::1.2.3.4"));	/* v4-compatible, deprecated */
	assert_false(mapped("::fffe:1.2.3.4"));
	assert_false(mapped("::1:ffff:1.2.3.4"));
	assert_false(mapped("64:ff9b::1.2.3.4"));
	assert_false(mapped("::"));
	assert_false(mapped("::1"));
}

static void set_rule(struct egret_allow *a, int slot, __u16 lo, __u16 hi,
		     __u64 expires)
{
	a->rules[slot] = (struct egret_port_rule){
		.expires_ns = expires, .port_lo = lo, .port_hi = hi,
	};
}

static void match_ports(void **state)
{
	struct egret_allow a = {};

	set_rule(&a, 0, 443, 443, EGRET_EXPIRES_NEVER);
	set_rule(&a, 1, 8000, 8100, EGRET_EXPIRES_NEVER);

	assert_int_equal(egret_allow_match(&a, 443, NOW, 0), EGRET_REASON_ALLOWED);
	assert_int_equal(egret_allow_match(&a, 442, NOW, 0), EGRET_REASON_PORT);
	assert_int_equal(egret_allow_match(&a, 444, NOW, 0), EGRET_REASON_PORT);
	assert_int_equal(egret_allow_match(&a, 7999, NOW, 0), EGRET_REASON_PORT);
	assert_int_equal(egret_allow_match(&a, 8000, NOW, 0), EGRET_REASON_ALLOWED);
	assert_int_equal(egret_allow_match(&a, 8050, NOW, 0), EGRET_REASON_ALLOWED);
	assert_int_equal(egret_allow_match(&a, 8100, NOW, 0), EGRET_REASON_ALLOWED);
	assert_int_equal(egret_allow_match(&a, 8101, NOW, 0), EGRET_REASON_PORT);
	assert_int_equal(egret_allow_match(&a, 0, NOW, 0), EGRET_REASON_PORT);
}

static void match_any_port(void **state)
{
	struct egret_allow a = {};

	set_rule(&a, 5, 0, 65535, EGRET_EXPIRES_NEVER);
	assert_int_equal(egret_allow_match(&a, 0, NOW, 0), EGRET_REASON_ALLOWED);
	assert_int_equal(egret_allow_match(&a, 1, NOW, 0), EGRET_REASON_ALLOWED);
	assert_int_equal(egret_allow_match(&a, 65535, NOW, 0), EGRET_REASON_ALLOWED);
}

static void match_unused_slots(void **state)
{
	struct egret_allow a = {};

	/* An all-zero entry: every slot unused, even though 0-0 "covers" 0. */
	assert_int_equal(egret_allow_match(&a, 0, NOW, 0), EGRET_REASON_PORT);
	assert_int_equal(egret_allow_match(&a, 443, NOW, 0), EGRET_REASON_PORT);

	/* An unused slot keeps its port range but does not allow. */
	set_rule(&a, 0, 443, 443, EGRET_EXPIRES_UNUSED);
	assert_int_equal(egret_allow_match(&a, 443, NOW, 0), EGRET_REASON_PORT);

	/* The last slot is consulted too. */
	set_rule(&a, EGRET_PORT_SLOTS - 1, 443, 443, EGRET_EXPIRES_NEVER);
	assert_int_equal(egret_allow_match(&a, 443, NOW, 0), EGRET_REASON_ALLOWED);
}

static void match_expiry(void **state)
{
	struct egret_allow a = {};

	set_rule(&a, 0, 443, 443, NOW + 1);
	assert_int_equal(egret_allow_match(&a, 443, NOW, 0), EGRET_REASON_ALLOWED);

	set_rule(&a, 0, 443, 443, NOW);	/* the deadline itself is expired */
	assert_int_equal(egret_allow_match(&a, 443, NOW, 0), EGRET_REASON_EXPIRED);

	set_rule(&a, 0, 443, 443, NOW - 1);
	assert_int_equal(egret_allow_match(&a, 443, NOW, 0), EGRET_REASON_EXPIRED);
	/* An expired rule for another port says nothing about this one. */
	assert_int_equal(egret_allow_match(&a, 80, NOW, 0), EGRET_REASON_PORT);

	/* A later live rule for the same port wins over an expired one. */
	set_rule(&a, 3, 400, 500, EGRET_EXPIRES_NEVER);
	assert_int_equal(egret_allow_match(&a, 443, NOW, 0), EGRET_REASON_ALLOWED);
	/* ...and so does NEVER at any clock value. */
	assert_int_equal(egret_allow_match(&a, 443, ~0ULL - 1, 0),
			 EGRET_REASON_ALLOWED);
}

static void match_special(void **state)
{
	struct egret_allow a = {};

	set_rule(&a, 0, 0, 65535, EGRET_EXPIRES_NEVER);
	assert_int_equal(egret_allow_match(&a, 80, NOW, 1), EGRET_REASON_SPECIAL);
	assert_int_equal(egret_allow_match(&a, 80, NOW, 0), EGRET_REASON_ALLOWED);

	a.flags = EGRET_ALLOW_SPECIAL;
	assert_int_equal(egret_allow_match(&a, 80, NOW, 1), EGRET_REASON_ALLOWED);
	assert_int_equal(egret_allow_match(&a, 80, NOW, 0), EGRET_REASON_ALLOWED);

	/* The flag opens the address, not every port on it. */
	set_rule(&a, 0, 8080, 8080, EGRET_EXPIRES_NEVER);
	assert_int_equal(egret_allow_match(&a, 80, NOW, 1), EGRET_REASON_PORT);

	/* Specialness is judged before expiry. */
	a.flags = 0;
	set_rule(&a, 0, 80, 80, NOW - 1);
	assert_int_equal(egret_allow_match(&a, 80, NOW, 1), EGRET_REASON_SPECIAL);
}

/* Only a rule that never expires makes a flow not worth remembering. */
static void allow_lasting(void **state)
{
	struct egret_allow a = {};

	set_rule(&a, 0, 443, 443, NOW + 1000);
	assert_false(egret_allow_lasting(&a, 443));
	set_rule(&a, 1, 8000, 8100, EGRET_EXPIRES_NEVER);
	assert_false(egret_allow_lasting(&a, 443));
	assert_true(egret_allow_lasting(&a, 8000));
	assert_true(egret_allow_lasting(&a, 8100));
	assert_false(egret_allow_lasting(&a, 8101));
	/* Unused slots (deadline 0) never count. */
	set_rule(&a, 2, 0, 65535, EGRET_EXPIRES_UNUSED);
	assert_false(egret_allow_lasting(&a, 80));
	set_rule(&a, 2, 0, 65535, EGRET_EXPIRES_NEVER);
	assert_true(egret_allow_lasting(&a, 80));
}

static void reason_pick(void **state)
{
	/* More informative reasons win, in either order. */
	assert_int_equal(egret_reason_pick(EGRET_REASON_NO_ENTRY, EGRET_REASON_PORT),
			 EGRET_REASON_PORT);
	assert_int_equal(egret_reason_pick(EGRET_REASON_PORT, EGRET_REASON_NO_ENTRY),
			 EGRET_REASON_PORT);
	assert_int_equal(egret_reason_pick(EGRET_REASON_PORT, EGRET_REASON_EXPIRED),
			 EGRET_REASON_EXPIRED);
	assert_int_equal(egret_reason_pick(EGRET_REASON_SPECIAL, EGRET_REASON_EXPIRED),
			 EGRET_REASON_SPECIAL);
	assert_int_equal(egret_reason_pick(EGRET_REASON_NO_ENTRY, EGRET_REASON_NO_ENTRY),
			 EGRET_REASON_NO_ENTRY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(classify4),
		cmocka_unit_test(classify6),
		cmocka_unit_test(v4mapped),
		cmocka_unit_test(match_ports),
		cmocka_unit_test(match_any_port),
		cmocka_unit_test(match_unused_slots),
		cmocka_unit_test(match_expiry),
		cmocka_unit_test(match_special),
		cmocka_unit_test(allow_lasting),
		cmocka_unit_test(reason_pick),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
