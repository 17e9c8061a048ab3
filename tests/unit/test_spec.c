// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_spec.c - allow specs: parsing, containment, specialness, formatting. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "policy/spec.h"

static struct allow_spec parse_ok(const char *text)
{
	struct allow_spec spec;
	char err[256] = "";

	if (allow_spec_parse(text, &spec, err, sizeof(err)) != 0)
		fail_msg("'%s' rejected: %s", text, err);
	return spec;
}

static void assert_rejected(const char *text)
{
	struct allow_spec spec;
	char err[256] = "";
	int r = allow_spec_parse(text, &spec, err, sizeof(err));

	if (r >= 0)
		fail_msg("'%s' accepted", text);
	assert_true(r == -EINVAL || r == -E2BIG);
	if (!err[0])
		fail_msg("'%s' rejected without a reason", text);
}

static void assert_addr4(const struct allow_spec *s, const char *addr,
			 unsigned int prefixlen)
{
	__u32 want;

	assert_int_equal(inet_pton(AF_INET, addr, &want), 1);
	assert_int_equal(s->family, AF_INET);
	assert_int_equal(s->addr[0], want);
	assert_int_equal(s->addr[1] | s->addr[2] | s->addr[3], 0);
	assert_int_equal(s->prefixlen, prefixlen);
}

static void assert_addr6(const struct allow_spec *s, const char *addr,
			 unsigned int prefixlen)
{
	__u32 want[4];

	assert_int_equal(inet_pton(AF_INET6, addr, want), 1);
	assert_int_equal(s->family, AF_INET6);
	assert_memory_equal(s->addr, want, sizeof(want));
	assert_int_equal(s->prefixlen, prefixlen);
}

static void assert_port(const struct allow_spec *s, unsigned int i,
			unsigned int lo, unsigned int hi)
{
	assert_true(i < s->nports);
	assert_int_equal(s->ports[i].lo, lo);
	assert_int_equal(s->ports[i].hi, hi);
}

static void parse_ipv4_forms(void **state)
{
	struct allow_spec s;

	s = parse_ok("203.0.113.7");
	assert_addr4(&s, "203.0.113.7", 32);
	assert_int_equal(s.nports, 0);

	s = parse_ok("10.0.0.0/8");
	assert_addr4(&s, "10.0.0.0", 8);
	assert_int_equal(s.nports, 0);

	s = parse_ok("0.0.0.0/0");
	assert_addr4(&s, "0.0.0.0", 0);

	s = parse_ok("203.0.113.7:443,80");
	assert_addr4(&s, "203.0.113.7", 32);
	assert_int_equal(s.nports, 2);
	assert_port(&s, 0, 443, 443);
	assert_port(&s, 1, 80, 80);

	s = parse_ok("10.0.0.0/8:8000-8100,22");
	assert_addr4(&s, "10.0.0.0", 8);
	assert_int_equal(s.nports, 2);
	assert_port(&s, 0, 8000, 8100);
	assert_port(&s, 1, 22, 22);

	s = parse_ok("1.2.3.4:1-65535");
	assert_port(&s, 0, 1, 65535);
	s = parse_ok("1.2.3.4:65535");
	assert_port(&s, 0, 65535, 65535);
	s = parse_ok("1.2.3.4:1,2,3,4,5,6,7,8");
	assert_int_equal(s.nports, 8);
	assert_port(&s, 7, 8, 8);
}

static void parse_ipv6_forms(void **state)
{
	struct allow_spec s;

	s = parse_ok("2001:db8::1");
	assert_addr6(&s, "2001:db8::1", 128);
	assert_int_equal(s.nports, 0);

	s = parse_ok("2001:db8::/32");
	assert_addr6(&s, "2001:db8::", 32);
	assert_int_equal(s.nports, 0);

	s = parse_ok("[2001:db8::1]:443");
	assert_addr6(&s, "2001:db8::1", 128);
	assert_int_equal(s.nports, 1);
	assert_port(&s, 0, 443, 443);

	s = parse_ok("[2001:db8::/32]:443,8000-8100");
	assert_addr6(&s, "2001:db8::", 32);
	assert_int_equal(s.nports, 2);
	assert_port(&s, 1, 8000, 8100);

	s = parse_ok("::/0");
	assert_addr6(&s, "::", 0);
}

static void parse_v4mapped(void **state)
{
	struct allow_spec s;

	s = parse_ok("::ffff:1.2.3.4");
	assert_addr4(&s, "1.2.3.4", 32);

	s = parse_ok("[::ffff:1.2.3.4]:443");
	assert_addr4(&s, "1.2.3.4", 32);
	assert_port(&s, 0, 443, 443);

	s = parse_ok("::ffff:0:0/96");
	assert_addr4(&s, "0.0.0.0", 0);

	s = parse_ok("::ffff:10.0.0.0/104");
	assert_addr4(&s, "10.0.0.0", 8);

	assert_rejected("::ffff:0:0/95");
	assert_rejected("::ffff:0:0/64");
	assert_rejected("::ffff:10.0.0.1/104");	/* host bits, IPv4 side */
}

static void parse_rejects_prefixes(void **state)
{
	assert_rejected("10.0.0.1/8");		/* host bits set */
	assert_rejected("11.0.0.0/7");
	assert_rejected("2001:db8::1/32");
	assert_rejected("10.0.0.0/33");
	assert_rejected("10.0.0.0/-1");
	assert_rejected("10.0.0.0/+8");
	assert_rejected("10.0.0.0/");
	assert_rejected("10.0.0.0/8x");
	assert_rejected("10.0.0.0/99999999999999999999");
	assert_rejected("2001:db8::/129");
	assert_rejected("[2001:db8::/129]:443");
}

static void parse_rejects_ports(void **state)
{
	assert_rejected("1.2.3.4:0");
	assert_rejected("1.2.3.4:65536");
	assert_rejected("1.2.3.4:100000");
	assert_rejected("1.2.3.4:443,");
	assert_rejected("1.2.3.4:,443");
	assert_rejected("1.2.3.4:80-70");
	assert_rejected("1.2.3.4:0-80");
	assert_rejected("1.2.3.4:80-");
	assert_rejected("1.2.3.4:-80");
	assert_rejected("1.2.3.4:1-2-3");
	assert_rejected("1.2.3.4:+443");
	assert_rejected("1.2.3.4:https");
	assert_rejected("1.2.3.4:");
	assert_rejected("1.2.3.4:1,2,3,4,5,6,7,8,9");
	assert_rejected("[2001:db8::1]:");
	assert_rejected("[2001:db8::1]:0");
}

static void parse_rejects_syntax(void **state)
{
	char longer[300];

	assert_rejected("");
	assert_rejected("[1.2.3.4]:443");	/* brackets around IPv4 */
	assert_rejected("[1.2.3.4]");
	assert_rejected("[2001:db8::1:443");	/* missing ']' */
	assert_rejected("[2001:db8::1]443");	/* garbage after ']' */
	assert_rejected("[2001:db8::1]x:443");
	assert_rejected("example.com");
	assert_rejected("example.com:443");
	assert_rejected("localhost");
	assert_rejected("1.2.3");
	assert_rejected("1.2.3.4.5");
	assert_rejected("256.1.1.1");
	assert_rejected("1.2.3.4:443:80");
	assert_rejected(" 1.2.3.4");
	assert_rejected("2001:db8::g");

	/* Overlong input is refused, not truncated into something valid. */
	memset(longer, '1', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	memcpy(longer, "1.2.3.4:", 8);
	assert_rejected(longer);
	{
		struct allow_spec s;
		char err[128] = "";

		assert_int_equal(allow_spec_parse(longer, &s, err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, "too long"));
	}
}

static void parse_error_leaves_ret(void **state)
{
	struct allow_spec s = { .family = 12345 };
	char err[64];

	assert_int_equal(allow_spec_parse("10.0.0.1/8", &s, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(s.family, 12345);
	/* A NULL error buffer is allowed. */
	assert_int_equal(allow_spec_parse("nope", &s, NULL, 0), -EINVAL);
}

static void ports_parse_lists(void **state)
{
	struct port_range r[EGRET_PORT_SLOTS];
	char err[128];

	assert_int_equal(ports_parse("443", r, 8, err, sizeof(err)), 1);
	assert_int_equal(r[0].lo, 443);
	assert_int_equal(r[0].hi, 443);

	assert_int_equal(ports_parse("443,80,8000-8100", r, 8, err, sizeof(err)), 3);
	assert_int_equal(r[1].lo, 80);
	assert_int_equal(r[2].lo, 8000);
	assert_int_equal(r[2].hi, 8100);

	assert_int_equal(ports_parse("5-5", r, 8, err, sizeof(err)), 1);
	assert_int_equal(r[0].lo, 5);
	assert_int_equal(r[0].hi, 5);

	/* max is the caller's room, exactly. */
	assert_int_equal(ports_parse("1,2", r, 2, err, sizeof(err)), 2);
	assert_int_equal(ports_parse("1,2,3", r, 2, err, sizeof(err)), -E2BIG);
	assert_int_equal(ports_parse("1", r, 0, err, sizeof(err)), -E2BIG);

	assert_int_equal(ports_parse("", r, 8, err, sizeof(err)), -EINVAL);
	assert_int_equal(ports_parse("0", r, 8, err, sizeof(err)), -EINVAL);
	assert_int_equal(ports_parse("65536", r, 8, err, sizeof(err)), -EINVAL);
	assert_int_equal(ports_parse("443,", r, 8, err, sizeof(err)), -EINVAL);
	assert_int_equal(ports_parse(",443", r, 8, err, sizeof(err)), -EINVAL);
	assert_int_equal(ports_parse("80-70", r, 8, err, sizeof(err)), -EINVAL);
	assert_int_equal(ports_parse("443 ", r, 8, err, sizeof(err)), -EINVAL);
}

static void contains(void **state)
{
	struct allow_spec any4 = parse_ok("0.0.0.0/0");
	struct allow_spec ten = parse_ok("10.0.0.0/8");
	struct allow_spec ten1 = parse_ok("10.1.0.0/16");
	struct allow_spec eleven = parse_ok("11.0.0.0/16");
	struct allow_spec host = parse_ok("10.1.2.3:443");
	struct allow_spec any6 = parse_ok("::/0");
	struct allow_spec db8 = parse_ok("2001:db8::/32");
	struct allow_spec db8host = parse_ok("2001:db8::1");

	assert_true(spec_contains(&ten, &ten1));
	assert_true(spec_contains(&ten, &host));
	assert_true(spec_contains(&ten1, &host));
	assert_true(spec_contains(&ten, &ten));
	assert_true(spec_contains(&any4, &ten));
	assert_true(spec_contains(&any4, &eleven));
	assert_false(spec_contains(&ten1, &ten));	/* narrower never contains */
	assert_false(spec_contains(&ten, &eleven));
	assert_false(spec_contains(&host, &ten1));

	assert_true(spec_contains(&db8, &db8host));
	assert_true(spec_contains(&any6, &db8));
	assert_false(spec_contains(&db8host, &db8));
	/* Families never mix, not even /0 over anything. */
	assert_false(spec_contains(&any6, &ten));
	assert_false(spec_contains(&any4, &db8host));
}

static void is_special(void **state)
{
	static const struct {
		const char *text;
		bool special;
	} cases[] = {
		{ "127.0.0.1", true },
		{ "127.0.0.0/8", true },
		{ "127.1.0.0/16:80", true },
		{ "0.0.0.0", true },
		{ "0.0.0.0/8", true },
		{ "0.0.0.0/0", false },
		{ "169.254.0.0/16", true },
		{ "169.254.169.254", true },
		{ "169.254.0.0/15", false },
		{ "169.0.0.0/8", false },
		{ "128.0.0.0/8", false },
		/* Exact: it may be one of the host's addresses. */
		{ "203.0.113.1", true },
		{ "203.0.113.0/24", false },
		{ "224.0.0.0/4", true },
		{ "239.1.2.3", true },
		{ "224.0.0.0/3", false },
		{ "255.255.255.255", true },
		{ "255.255.255.0/24", false },
		{ "::ffff:127.0.0.1", true },
		{ "::1", true },
		{ "::", true },
		{ "::/0", false },
		{ "fe80::/10", true },
		{ "fe80::1", true },
		{ "fe80::/9", false },
		{ "fec0::/10", false },
		{ "fd00:ec2::254", true },
		{ "fd00::/8", false },
		{ "2001:db8::1", true },
		{ "2001:db8::/64", false },
		{ "ff00::/8", true },
		{ "ff02::1:0/112", true },
		{ "fe00::/7", false },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct allow_spec s = parse_ok(cases[i].text);

		if (spec_is_special(&s) != cases[i].special)
			fail_msg("spec_is_special(%s) != %d", cases[i].text,
				 cases[i].special);
	}
}

static void format_round_trip(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "203.0.113.7", "203.0.113.7" },
		{ "203.0.113.7:443", "203.0.113.7:443" },
		{ "10.0.0.0/8", "10.0.0.0/8" },
		{ "10.0.0.0/8:443,80,8000-8100", "10.0.0.0/8:443,80,8000-8100" },
		{ "0.0.0.0/0", "0.0.0.0/0" },
		{ "2001:db8::1", "2001:db8::1" },
		{ "2001:0db8:0::1", "2001:db8::1" },
		{ "2001:db8::/32", "2001:db8::/32" },
		{ "[2001:db8::1]:443", "[2001:db8::1]:443" },
		{ "[2001:db8::/32]:1-65535", "[2001:db8::/32]:1-65535" },
		{ "::ffff:1.2.3.4", "1.2.3.4" },
		{ "[::ffff:1.2.3.4]:80", "1.2.3.4:80" },
		{ "::ffff:0:0/96", "0.0.0.0/0" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct allow_spec s = parse_ok(cases[i].in), again;
		char buf[128];

		assert_int_equal(spec_format(&s, buf, sizeof(buf)), 0);
		assert_string_equal(buf, cases[i].out);
		again = parse_ok(buf);
		assert_memory_equal(&again, &s, sizeof(s));
	}
}

static void format_too_small(void **state)
{
	struct allow_spec s = parse_ok("10.0.0.0/8:443,80");
	char buf[64];

	/* "10.0.0.0/8:443,80" is 17 characters: 18 bytes fit, 17 do not. */
	assert_int_equal(spec_format(&s, buf, 18), 0);
	assert_string_equal(buf, "10.0.0.0/8:443,80");
	assert_int_equal(spec_format(&s, buf, 17), -ENOSPC);
	assert_int_equal(spec_format(&s, buf, 8), -ENOSPC);
}

/* --dns-upstream: canonical "ADDR:PORT" / "[V6]:PORT" for c-ares. */
static void endpoints(void **state)
{
	char out[64], err[128];

	assert_int_equal(endpoint_parse("198.51.100.53", 53, out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, "198.51.100.53:53");
	assert_int_equal(endpoint_parse("198.51.100.53:5353", 53, out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, "198.51.100.53:5353");
	assert_int_equal(endpoint_parse("2001:db8::53", 53, out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, "[2001:db8::53]:53");
	assert_int_equal(endpoint_parse("[2001:DB8::53]:5353", 53, out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, "[2001:db8::53]:5353");
	assert_int_equal(endpoint_parse("[2001:db8::53]", 53, out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, "[2001:db8::53]:53");

	assert_int_equal(endpoint_parse("dns.example", 53, out, sizeof(out), err, sizeof(err)), -EINVAL);
	assert_int_equal(endpoint_parse("198.51.100.53:0", 53, out, sizeof(out), err, sizeof(err)), -EINVAL);
	assert_int_equal(endpoint_parse("198.51.100.53:x", 53, out, sizeof(out), err, sizeof(err)), -EINVAL);
	assert_int_equal(endpoint_parse("[2001:db8::53", 53, out, sizeof(out), err, sizeof(err)), -EINVAL);
	assert_int_equal(endpoint_parse("[2001:db8::53]x", 53, out, sizeof(out), err, sizeof(err)), -EINVAL);
	assert_int_equal(endpoint_parse("198.51.100.53", 53, out, 8, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_ipv4_forms),
		cmocka_unit_test(parse_ipv6_forms),
		cmocka_unit_test(parse_v4mapped),
		cmocka_unit_test(parse_rejects_prefixes),
		cmocka_unit_test(parse_rejects_ports),
		cmocka_unit_test(parse_rejects_syntax),
		cmocka_unit_test(parse_error_leaves_ret),
		cmocka_unit_test(ports_parse_lists),
		cmocka_unit_test(contains),
		cmocka_unit_test(is_special),
		cmocka_unit_test(format_round_trip),
		cmocka_unit_test(format_too_small),
		cmocka_unit_test(endpoints),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
