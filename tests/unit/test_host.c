// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_host.c - hostname allow rules: parsing and matching. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "policy/host.h"
#include "policy/spec.h"

static struct host_rule rule_ok(const char *text)
{
	struct host_rule rule;
	char err[256] = "";

	if (host_rule_parse(text, &rule, err, sizeof(err)) != 0)
		fail_msg("'%s' rejected: %s", text, err);
	return rule;
}

static void assert_rule_rejected(const char *text)
{
	struct host_rule rule;
	char err[256] = "";

	if (host_rule_parse(text, &rule, err, sizeof(err)) == 0)
		fail_msg("'%s' accepted", text);
	if (!err[0])
		fail_msg("'%s' rejected without a reason", text);
}

static void text_is_name(void **state)
{
	assert_true(host_text_is_name("github.com"));
	assert_true(host_text_is_name("GitHub.com.:443"));
	assert_true(host_text_is_name("*.example.com"));
	assert_true(host_text_is_name("localhost"));
	assert_true(host_text_is_name("1.2.3.example"));
	assert_false(host_text_is_name("203.0.113.7"));
	assert_false(host_text_is_name("203.0.113.7:443"));
	assert_false(host_text_is_name("203.0.113.0/24"));
	assert_false(host_text_is_name("2001:db8::1"));
	assert_false(host_text_is_name("[2001:db8::1]:443"));
	assert_false(host_text_is_name("::ffff:1.2.3.4"));
}

static void parse_rules(void **state)
{
	struct host_rule r;

	r = rule_ok("GitHub.COM.");
	assert_string_equal(r.name, "github.com");
	assert_false(r.wildcard);
	assert_int_equal(r.nports, 0);

	r = rule_ok("*.githubusercontent.com:443,80");
	assert_string_equal(r.name, "githubusercontent.com");
	assert_true(r.wildcard);
	assert_int_equal(r.nports, 2);
	assert_int_equal(r.ports[0].lo, 443);
	assert_int_equal(r.ports[1].lo, 80);

	r = rule_ok("_srv-x.example.org:8000-8100");
	assert_int_equal(r.ports[0].lo, 8000);
	assert_int_equal(r.ports[0].hi, 8100);

	assert_rule_rejected("");
	assert_rule_rejected(".");
	assert_rule_rejected("a..b");
	assert_rule_rejected(".github.com");
	assert_rule_rejected("git hub.com");
	assert_rule_rejected("github.com:0");
	assert_rule_rejected("github.com:");
	assert_rule_rejected("*.com");		/* a whole TLD */
	assert_rule_rejected("*");
	assert_rule_rejected("a.*.com");
	assert_rule_rejected("**.example.com");
	/* A 64-character label. */
	assert_rule_rejected("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.com");
}

static void matching(void **state)
{
	struct host_rule exact = rule_ok("github.com");
	struct host_rule wild = rule_ok("*.example.com");

	assert_true(host_rule_matches(&exact, "github.com"));
	assert_false(host_rule_matches(&exact, "www.github.com"));
	assert_false(host_rule_matches(&exact, "github.com.evil.test"));
	assert_false(host_rule_matches(&exact, "evilgithub.com"));

	assert_true(host_rule_matches(&wild, "a.example.com"));
	assert_true(host_rule_matches(&wild, "a.b.c.example.com"));
	assert_false(host_rule_matches(&wild, "example.com"));
	assert_false(host_rule_matches(&wild, "badexample.com"));
	assert_false(host_rule_matches(&wild, "example.com.evil.test"));
	assert_false(host_rule_matches(&wild, ".example.com"));
}

static void union_of_ports(void **state)
{
	struct host_rule rules[3] = {
		rule_ok("github.com:443"),
		rule_ok("*.github.com:80,443"),
		rule_ok("api.github.com:8443"),
	};
	struct port_range ports[EGRET_PORT_SLOTS];
	unsigned int n;
	bool any;

	assert_int_equal(host_rules_match(rules, 3, "api.github.com", ports, &n, &any), 2);
	assert_false(any);
	assert_int_equal(n, 3);		/* 80, 443, 8443 with 443 once */
	assert_int_equal(ports[0].lo, 80);
	assert_int_equal(ports[1].lo, 443);
	assert_int_equal(ports[2].lo, 8443);

	assert_int_equal(host_rules_match(rules, 3, "github.com", ports, &n, &any), 1);
	assert_int_equal(n, 1);
	assert_int_equal(host_rules_match(rules, 3, "gitlab.com", ports, &n, &any), 0);

	/* A rule without ports means any port. */
	rules[2] = rule_ok("github.com");
	assert_int_equal(host_rules_match(rules, 3, "github.com", ports, &n, &any), 2);
	assert_true(any);
}

/* Which destination a name's bytes count against: its own when an exact
 * rule allows it, else the narrowest wildcard's, which every name below
 * it shares; and the smallest budget of the rules that match. */
static void destinations_and_budgets(void **state)
{
	struct host_rule rules[4] = {
		rule_ok("*.example.com"), rule_ok("*.cdn.example.com"),
		rule_ok("api.example.com"), rule_ok("other.test"),
	};
	char d[300];

	(void)state;
	rules[0].upload_limit = 4096;
	rules[2].upload_limit = 1024;
	host_rules_dest_name(rules, 4, "api.example.com", d, sizeof(d));
	assert_string_equal(d, "api.example.com");
	host_rules_dest_name(rules, 4, "made-up-1.example.com", d, sizeof(d));
	assert_string_equal(d, "*.example.com");
	host_rules_dest_name(rules, 4, "x.cdn.example.com", d, sizeof(d));
	assert_string_equal(d, "*.cdn.example.com");
	host_rules_dest_name(rules, 4, "other.test", d, sizeof(d));
	assert_string_equal(d, "other.test");
	assert_int_equal(host_rules_upload_limit(rules, 4, "api.example.com"), 1024);
	assert_int_equal(host_rules_upload_limit(rules, 4, "x.example.com"), 4096);
	assert_int_equal(host_rules_upload_limit(rules, 4, "x.cdn.example.com"), 4096);
	assert_int_equal(host_rules_upload_limit(rules, 4, "other.test"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(destinations_and_budgets),
		cmocka_unit_test(text_is_name),
		cmocka_unit_test(parse_rules),
		cmocka_unit_test(matching),
		cmocka_unit_test(union_of_ports),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
