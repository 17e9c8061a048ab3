// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_allow.c - port rules in an allow entry, and static writes to maps. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "egret_match.h"
#include "enforce/allow.h"
#include "enforce/dests.h"
#include "enforce/mapwalk.h"

#define NOW 1000000000ULL

/* How many used slots hold [lo, hi], and the deadline of the last one. */
static int count_rule(const struct egret_allow *a, __u16 lo, __u16 hi,
		      __u64 *ret_expires)
{
	int i, n = 0;

	for (i = 0; i < EGRET_PORT_SLOTS; i++) {
		const struct egret_port_rule *r = &a->rules[i];

		if (r->expires_ns == EGRET_EXPIRES_UNUSED ||
		    r->port_lo != lo || r->port_hi != hi)
			continue;
		n++;
		if (ret_expires)
			*ret_expires = r->expires_ns;
	}
	return n;
}

static int used_slots(const struct egret_allow *a)
{
	int i, n = 0;

	for (i = 0; i < EGRET_PORT_SLOTS; i++)
		n += a->rules[i].expires_ns != EGRET_EXPIRES_UNUSED;
	return n;
}

static struct allow_spec spec(const char *text)
{
	struct allow_spec s;
	char err[128];

	if (allow_spec_parse(text, &s, err, sizeof(err)) < 0)
		fail_msg("'%s': %s", text, err);
	return s;
}

static void add_rule_new_slots(void **state)
{
	struct egret_allow a = {};
	__u64 exp = 0;

	assert_int_equal(allow_add_rule(&a, 443, 443, EGRET_EXPIRES_NEVER, NOW), 0);
	assert_int_equal(allow_add_rule(&a, 8000, 8100, NOW + 5, NOW), 0);
	assert_int_equal(used_slots(&a), 2);
	assert_int_equal(count_rule(&a, 443, 443, &exp), 1);
	assert_true(exp == EGRET_EXPIRES_NEVER);
	assert_int_equal(count_rule(&a, 8000, 8100, &exp), 1);
	assert_true(exp == NOW + 5);
	assert_int_equal(a.flags, 0);
}

static void add_rule_same_range_keeps_later(void **state)
{
	struct egret_allow a = {};
	__u64 exp = 0;

	assert_int_equal(allow_add_rule(&a, 443, 443, NOW + 100, NOW), 0);
	assert_int_equal(allow_add_rule(&a, 443, 443, NOW + 50, NOW), 0);
	assert_int_equal(count_rule(&a, 443, 443, &exp), 1);
	assert_true(exp == NOW + 100);

	assert_int_equal(allow_add_rule(&a, 443, 443, NOW + 200, NOW), 0);
	assert_int_equal(count_rule(&a, 443, 443, &exp), 1);
	assert_true(exp == NOW + 200);

	/* A different range overlapping this one is a different rule. */
	assert_int_equal(allow_add_rule(&a, 443, 444, NOW + 1, NOW), 0);
	assert_int_equal(used_slots(&a), 2);
}

static void add_rule_never_wins(void **state)
{
	struct egret_allow a = {};
	__u64 exp = 0;

	assert_int_equal(allow_add_rule(&a, 53, 53, EGRET_EXPIRES_NEVER, NOW), 0);
	assert_int_equal(allow_add_rule(&a, 53, 53, NOW + 300, NOW), 0);
	assert_int_equal(count_rule(&a, 53, 53, &exp), 1);
	assert_true(exp == EGRET_EXPIRES_NEVER);

	/* ...and a DNS rule is promoted by a later static one. */
	assert_int_equal(allow_add_rule(&a, 80, 80, NOW + 300, NOW), 0);
	assert_int_equal(allow_add_rule(&a, 80, 80, EGRET_EXPIRES_NEVER, NOW), 0);
	assert_int_equal(count_rule(&a, 80, 80, &exp), 1);
	assert_true(exp == EGRET_EXPIRES_NEVER);
}

static void add_rule_refreshes_expired(void **state)
{
	struct egret_allow a = {};
	__u64 exp = 0;

	assert_int_equal(allow_add_rule(&a, 443, 443, NOW - 10, NOW - 100), 0);
	assert_int_equal(allow_add_rule(&a, 443, 443, NOW + 60, NOW), 0);
	assert_int_equal(count_rule(&a, 443, 443, &exp), 1);
	assert_true(exp == NOW + 60);
	assert_int_equal(used_slots(&a), 1);
}

static void add_rule_reuses_expired_slot_and_fills_up(void **state)
{
	struct egret_allow a = {}, before;
	int i;

	for (i = 0; i < EGRET_PORT_SLOTS; i++)
		assert_int_equal(allow_add_rule(&a, (__u16)(1000 + i),
						(__u16)(1000 + i),
						i == 3 ? NOW : NOW + 1, NOW - 1), 0);
	assert_int_equal(used_slots(&a), EGRET_PORT_SLOTS);

	/* At NOW, slot 3 (deadline NOW) has expired: a new range takes it. */
	assert_int_equal(allow_add_rule(&a, 2000, 2000, NOW + 9, NOW), 0);
	assert_int_equal(a.rules[3].port_lo, 2000);
	assert_int_equal(a.rules[3].port_hi, 2000);
	assert_true(a.rules[3].expires_ns == NOW + 9);
	assert_int_equal(count_rule(&a, 1003, 1003, NULL), 0);

	/* Nine live ranges do not fit; the entry is left untouched. */
	before = a;
	assert_int_equal(allow_add_rule(&a, 3000, 3000, EGRET_EXPIRES_NEVER, NOW),
			 -ENOSPC);
	assert_memory_equal(&a, &before, sizeof(a));

	/* Refreshing a range already there still works when full. */
	assert_int_equal(allow_add_rule(&a, 1000, 1000, NOW + 50, NOW), 0);
	assert_int_equal(used_slots(&a), EGRET_PORT_SLOTS);
}

static void add_spec_rules(void **state)
{
	struct allow_spec any = spec("203.0.113.1");
	struct allow_spec some = spec("203.0.113.1:443,8000-8100");
	struct egret_allow a = {};
	__u64 exp = 0;

	assert_int_equal(allow_add_spec_rules(&a, &any, NOW + 7, NOW), 0);
	assert_int_equal(used_slots(&a), 1);
	assert_int_equal(count_rule(&a, 0, 65535, &exp), 1);
	assert_true(exp == NOW + 7);

	memset(&a, 0, sizeof(a));
	assert_int_equal(allow_add_spec_rules(&a, &some, EGRET_EXPIRES_NEVER, NOW), 0);
	assert_int_equal(used_slots(&a), 2);
	assert_int_equal(count_rule(&a, 443, 443, NULL), 1);
	assert_int_equal(count_rule(&a, 8000, 8100, NULL), 1);
	assert_int_equal(count_rule(&a, 0, 65535, NULL), 0);
}

/* --- allow_write_static against real BPF maps (root only) --- */

/* The attempt whose entries the tests write (any cgroup id would do). */
#define T_ATTEMPT	0x0000123400005678ULL
#define T_OTHER		0x0000123400009abcULL

static int maps_setup(void **state)
{
	LIBBPF_OPTS(bpf_map_create_opts, lpm, .map_flags = BPF_F_NO_PREALLOC);
	static struct allow_maps maps;
	const __u32 vsz = sizeof(struct egret_allow);

	maps = (struct allow_maps){ .attempt = T_ATTEMPT, .allow4 = -1,
				    .allow6 = -1, .cidr4 = -1, .cidr6 = -1,
				    .names = -1, .pins = -1, .host4 = -1, .host6 = -1,
				    .dest_counts = -1, .dest_tally = -1, .addr_dest = -1 };
	*state = &maps;
	if (geteuid() != 0)
		return 0;
	maps.allow4 = bpf_map_create(BPF_MAP_TYPE_HASH, "t_allow4",
				     sizeof(struct egret_key4), vsz, 64, NULL);
	maps.allow6 = bpf_map_create(BPF_MAP_TYPE_HASH, "t_allow6",
				     sizeof(struct egret_key6), vsz, 64, NULL);
	maps.cidr4 = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "t_cidr4",
				    sizeof(struct egret_lpm_key4), vsz, 64, &lpm);
	maps.cidr6 = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "t_cidr6",
				    sizeof(struct egret_lpm_key6), vsz, 64, &lpm);
	maps.pins = bpf_map_create(BPF_MAP_TYPE_HASH, "t_pins",
				   sizeof(struct egret_pin_key), vsz, 64, NULL);
	if (maps.allow4 < 0 || maps.allow6 < 0 || maps.cidr4 < 0 ||
	    maps.cidr6 < 0 || maps.pins < 0) {
		print_error("bpf_map_create: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int maps_teardown(void **state)
{
	struct allow_maps *m = *state;

	/* Unset fds are -1; close(-1) is a harmless EBADF. */
	close(m->allow4);
	close(m->allow6);
	close(m->cidr4);
	close(m->cidr6);
	close(m->pins);
	return 0;
}

static const struct allow_maps *need_maps(void **state)
{
	if (geteuid() != 0) {
		print_message("skipped: BPF maps need root\n");
		skip();
	}
	return *state;
}

static void write_ok(const struct allow_maps *m, const char *const *texts,
		     size_t n)
{
	struct allow_spec specs[8];
	const struct allow_spec *bad = NULL;
	size_t i;

	assert_true(n <= 8);
	for (i = 0; i < n; i++)
		specs[i] = spec(texts[i]);
	assert_int_equal(allow_write_static(m, specs, n, &bad), 0);
	assert_null(bad);
}

static struct egret_key4 key4(const char *addr)
{
	struct egret_key4 key = { .attempt = T_ATTEMPT };

	assert_int_equal(inet_pton(AF_INET, addr, &key.addr), 1);
	return key;
}

static struct egret_allow get4(int fd, const char *addr, __u32 prefixlen)
{
	struct egret_lpm_key4 lpm = { .prefixlen = EGRET_LPM_ATTEMPT_BITS + prefixlen };
	struct egret_key4 key = key4(addr);
	struct egret_allow v;

	egret_lpm_attempt(lpm.attempt, T_ATTEMPT);
	lpm.addr = key.addr;
	if (prefixlen == 32)
		assert_int_equal(bpf_map_lookup_elem(fd, &key, &v), 0);
	else
		assert_int_equal(bpf_map_lookup_elem(fd, &lpm, &v), 0);
	return v;
}

static void static_cidr_inherits_wider(void **state)
{
	const struct allow_maps *m = need_maps(state);
	const char *const texts[] = { "10.0.0.0/8:443", "10.1.0.0/16:80" };
	struct egret_allow v;

	write_ok(m, texts, 2);

	v = get4(m->cidr4, "10.1.0.0", 16);
	assert_int_equal(used_slots(&v), 2);
	assert_int_equal(count_rule(&v, 443, 443, NULL), 1);
	assert_int_equal(count_rule(&v, 80, 80, NULL), 1);
	assert_int_equal(v.flags, 0);

	v = get4(m->cidr4, "10.0.0.0", 8);
	assert_int_equal(used_slots(&v), 1);
	assert_int_equal(count_rule(&v, 443, 443, NULL), 1);
}

static void static_cidr_inherits_wider_listed_later(void **state)
{
	const struct allow_maps *m = need_maps(state);
	const char *const texts[] = { "10.1.0.0/16:80", "10.0.0.0/8:443" };
	struct egret_allow v;

	write_ok(m, texts, 2);
	v = get4(m->cidr4, "10.1.0.0", 16);
	assert_int_equal(used_slots(&v), 2);
	assert_int_equal(count_rule(&v, 443, 443, NULL), 1);
	assert_int_equal(count_rule(&v, 80, 80, NULL), 1);
}

/* 0.0.0.0/0 must not open loopback's other ports, whatever the order. */
static void check_special_not_inherited(void **state, const char *const *texts)
{
	const struct allow_maps *m = need_maps(state);
	struct egret_allow v;

	write_ok(m, texts, 2);

	v = get4(m->cidr4, "127.0.0.0", 8);
	assert_int_equal(used_slots(&v), 1);
	assert_int_equal(count_rule(&v, 8080, 8080, NULL), 1);
	assert_int_equal(v.flags, EGRET_ALLOW_SPECIAL);

	v = get4(m->cidr4, "0.0.0.0", 0);
	assert_int_equal(used_slots(&v), 1);
	assert_int_equal(count_rule(&v, 0, 65535, NULL), 1);
	assert_int_equal(v.flags, 0);
}

static void static_special_not_inherited_narrow_first(void **state)
{
	const char *const texts[] = { "127.0.0.0/8:8080", "0.0.0.0/0" };

	check_special_not_inherited(state, texts);
}

static void static_special_not_inherited_wide_first(void **state)
{
	const char *const texts[] = { "0.0.0.0/0", "127.0.0.0/8:8080" };

	check_special_not_inherited(state, texts);
}

static void static_special_not_inherited_v6(void **state)
{
	const struct allow_maps *m = need_maps(state);
	const char *const texts[] = { "::/0", "[fe80::/10]:53" };
	struct egret_lpm_key6 lpm = { .prefixlen = EGRET_LPM_ATTEMPT_BITS + 10 };
	struct egret_allow v;

	write_ok(m, texts, 2);
	egret_lpm_attempt(lpm.attempt, T_ATTEMPT);
	assert_int_equal(inet_pton(AF_INET6, "fe80::", lpm.addr), 1);
	assert_int_equal(bpf_map_lookup_elem(m->cidr6, &lpm, &v), 0);
	assert_int_equal(v.flags, EGRET_ALLOW_SPECIAL);
	assert_int_equal(used_slots(&v), 1);
	assert_int_equal(count_rule(&v, 53, 53, NULL), 1);
}

static void static_exact_entries(void **state)
{
	const struct allow_maps *m = need_maps(state);
	const char *const texts[] = {
		"127.0.0.1", "203.0.113.1:443", "203.0.113.1:80",
		"10.0.0.0/8:22",
	};
	struct egret_allow v;
	__u64 exp = 0;

	write_ok(m, texts, 4);

	v = get4(m->allow4, "127.0.0.1", 32);
	assert_int_equal(v.flags, EGRET_ALLOW_SPECIAL);
	assert_int_equal(count_rule(&v, 0, 65535, &exp), 1);
	assert_true(exp == EGRET_EXPIRES_NEVER);

	/* Two specs for one address merge. An address named exactly is
	 * flagged too: it may be one of the host's own, which only the
	 * programs know (egret_host4). */
	v = get4(m->allow4, "203.0.113.1", 32);
	assert_int_equal(v.flags, EGRET_ALLOW_SPECIAL);
	assert_int_equal(used_slots(&v), 2);
	assert_int_equal(count_rule(&v, 443, 443, NULL), 1);
	assert_int_equal(count_rule(&v, 80, 80, NULL), 1);
}

static void static_ipv6(void **state)
{
	const struct allow_maps *m = need_maps(state);
	const char *const texts[] = {
		"[2001:db8::1]:443", "2001:db8::/32", "[2001:db8:1::/48]:80",
		"::1", "[fe80::/10]:53",
	};
	struct egret_key6 key = { .attempt = T_ATTEMPT };
	struct egret_lpm_key6 lpm = { .prefixlen = EGRET_LPM_ATTEMPT_BITS + 48 };
	struct egret_allow v;

	write_ok(m, texts, 5);
	egret_lpm_attempt(lpm.attempt, T_ATTEMPT);

	assert_int_equal(inet_pton(AF_INET6, "2001:db8::1", key.addr), 1);
	assert_int_equal(bpf_map_lookup_elem(m->allow6, &key, &v), 0);
	assert_int_equal(count_rule(&v, 443, 443, NULL), 1);
	assert_int_equal(used_slots(&v), 1);
	assert_int_equal(v.flags, EGRET_ALLOW_SPECIAL);	/* named exactly */

	assert_int_equal(inet_pton(AF_INET6, "::1", key.addr), 1);
	assert_int_equal(bpf_map_lookup_elem(m->allow6, &key, &v), 0);
	assert_int_equal(v.flags, EGRET_ALLOW_SPECIAL);

	assert_int_equal(inet_pton(AF_INET6, "2001:db8:1::", lpm.addr), 1);
	assert_int_equal(bpf_map_lookup_elem(m->cidr6, &lpm, &v), 0);
	assert_int_equal(count_rule(&v, 80, 80, NULL), 1);
	assert_int_equal(count_rule(&v, 0, 65535, NULL), 1);
	assert_int_equal(v.flags, 0);

	lpm.prefixlen = EGRET_LPM_ATTEMPT_BITS + 10;
	assert_int_equal(inet_pton(AF_INET6, "fe80::", lpm.addr), 1);
	assert_int_equal(bpf_map_lookup_elem(m->cidr6, &lpm, &v), 0);
	assert_int_equal(v.flags, EGRET_ALLOW_SPECIAL);
	assert_int_equal(used_slots(&v), 1);
	assert_int_equal(count_rule(&v, 53, 53, NULL), 1);

	/* Nothing IPv6 leaked into the IPv4 maps. */
	assert_int_equal(bpf_map_get_next_key(m->allow4, NULL, &key), -ENOENT);
	assert_int_equal(bpf_map_get_next_key(m->cidr4, NULL, &lpm), -ENOENT);
}

static void static_merges_with_map(void **state)
{
	const struct allow_maps *m = need_maps(state);
	const char *const texts[] = { "203.0.113.9:80" };
	struct egret_key4 key = key4("203.0.113.9");
	struct egret_allow v = {};
	__u64 far = allow_now_ns() + 3600ULL * 1000000000ULL, exp = 0;

	/* A DNS-learned rule already in the map survives a static write. */
	v.rules[0] = (struct egret_port_rule){ .expires_ns = far,
					       .port_lo = 443, .port_hi = 443 };
	assert_int_equal(bpf_map_update_elem(m->allow4, &key, &v, BPF_ANY), 0);

	write_ok(m, texts, 1);
	v = get4(m->allow4, "203.0.113.9", 32);
	assert_int_equal(used_slots(&v), 2);
	assert_int_equal(count_rule(&v, 443, 443, &exp), 1);
	assert_true(exp == far);
	assert_int_equal(count_rule(&v, 80, 80, &exp), 1);
	assert_true(exp == EGRET_EXPIRES_NEVER);
}

static void static_reports_bad_spec(void **state)
{
	const struct allow_maps *m = need_maps(state);
	struct allow_spec specs[3];
	const struct allow_spec *bad = NULL;

	specs[0] = spec("198.51.100.1:1,2,3,4,5,6,7,8");
	specs[1] = spec("198.51.100.2");
	specs[2] = spec("198.51.100.1:9");	/* a ninth live range */
	assert_int_equal(allow_write_static(m, specs, 3, &bad), -ENOSPC);
	assert_ptr_equal(bad, &specs[2]);
}

static void learn_and_refresh(void **state)
{
	const struct allow_maps *m = need_maps(state);
	const struct port_range https = { 443, 443 };
	__u64 now = allow_now_ns(), exp = 0;
	struct egret_key6 key6 = { .attempt = T_ATTEMPT };
	struct egret_allow v;
	__u32 addr;

	assert_int_equal(inet_pton(AF_INET, "198.51.100.7", &addr), 1);
	assert_int_equal(allow_learn(m, AF_INET, &addr, &https, 1, false,
				     now + 60000000000ULL), 0);
	assert_int_equal(allow_learn(m, AF_INET, &addr, &https, 1, false,
				     now + 90000000000ULL), 0);
	assert_int_equal(allow_learn(m, AF_INET, &addr, &https, 1, false,
				     now + 30000000000ULL), 0);
	v = get4(m->allow4, "198.51.100.7", 32);
	assert_int_equal(used_slots(&v), 1);
	assert_int_equal(count_rule(&v, 443, 443, &exp), 1);
	assert_true(exp == now + 90000000000ULL);
	assert_int_equal(v.flags, 0);

	/* A DNS answer never opens a special address. */
	assert_int_equal(inet_pton(AF_INET, "127.0.0.1", &addr), 1);
	assert_int_equal(allow_learn(m, AF_INET, &addr, NULL, 0, true,
				     now + 60000000000ULL), 0);
	v = get4(m->allow4, "127.0.0.1", 32);
	assert_int_equal(v.flags, 0);
	assert_int_equal(count_rule(&v, 0, 65535, NULL), 1);

	assert_int_equal(inet_pton(AF_INET6, "2001:db8::7", key6.addr), 1);
	assert_int_equal(allow_learn(m, AF_INET6, key6.addr, &https, 1, false,
				     now + 60000000000ULL), 0);
	assert_int_equal(bpf_map_lookup_elem(m->allow6, &key6, &v), 0);
	assert_int_equal(count_rule(&v, 443, 443, NULL), 1);
}

/* SNI pinning's writes: the address's rules flagged, a pair per name
 * with the same rules; an address-only rule for the same port kept apart
 * (and unpinning it); pairs swept and purged with the attempt. */
static void learn_pinned_pairs(void **state)
{
	const struct allow_maps *m = need_maps(state);
	const struct port_range https = { 443, 443 };
	__u64 now = allow_now_ns(), s = 1000000000ULL, exp = 0;
	struct egret_pin_key pk = { .attempt = T_ATTEMPT, .family = 4 };
	struct egret_allow v;
	__u32 addr;

	assert_int_equal(inet_pton(AF_INET, "203.0.113.11", &addr), 1);
	assert_int_equal(allow_learn_named(m, AF_INET, &addr, "registry.npmjs.org", true,
					   &https, 1, false, now + 60 * s), 0);
	assert_int_equal(allow_learn_named(m, AF_INET, &addr, "example.net", true,
					   &https, 1, false, now + 2 * s), 0);
	v = get4(m->allow4, "203.0.113.11", 32);
	assert_int_equal(count_rule(&v, 443, 443, &exp), 1);
	assert_int_equal(v.rules[0].flags, EGRET_RULE_PINNED);
	assert_int_equal(egret_allow_pin_mask(&v, 443, now), EGRET_PIN_MASK_PINNED);
	assert_int_equal(egret_allow_pin_mask(&v, 80, now), 0);

	pk.addr[0] = addr;
	strcpy(pk.name, "registry.npmjs.org");
	pk.len = (__u32)strlen(pk.name);
	assert_int_equal(bpf_map_lookup_elem(m->pins, &pk, &v), 0);
	assert_int_equal(count_rule(&v, 443, 443, &exp), 1);
	assert_true(exp == now + 60 * s);
	memset(pk.name, 0, sizeof(pk.name));
	strcpy(pk.name, "example.net");
	pk.len = (__u32)strlen(pk.name);
	assert_int_equal(bpf_map_lookup_elem(m->pins, &pk, &v), 0);
	/* Never a pair for a name no pinned answer gave. */
	memset(pk.name, 0, sizeof(pk.name));
	strcpy(pk.name, "evil.test");
	pk.len = (__u32)strlen(pk.name);
	assert_int_equal(allow_learn_named(m, AF_INET, &addr, "evil.test", false,
					   &https, 1, false, now + 60 * s), 0);
	assert_true(bpf_map_lookup_elem(m->pins, &pk, &v) < 0);
	/* That unpinned answer's rule unpins the address for 443. */
	v = get4(m->allow4, "203.0.113.11", 32);
	assert_int_equal(used_slots(&v), 2);
	assert_int_equal(egret_allow_pin_mask(&v, 443, now),
			 EGRET_PIN_MASK_PINNED | EGRET_PIN_MASK_OPEN);

	/* The sweep drops the expired pair, the purge the rest. */
	assert_true(allow_sweep(m, now + 3 * s) >= 0);
	memset(pk.name, 0, sizeof(pk.name));
	strcpy(pk.name, "example.net");
	pk.len = (__u32)strlen(pk.name);
	assert_true(bpf_map_lookup_elem(m->pins, &pk, &v) < 0);
	assert_int_equal(allow_keyed_walk(m->pins, sizeof(pk), 0, T_ATTEMPT, true), 1);
	assert_int_equal(allow_purge(m), 0);
	assert_int_equal(allow_keyed_walk(m->pins, sizeof(pk), 0, T_ATTEMPT, true), 0);
	/* A pinned write needs a name. */
	assert_int_equal(allow_learn_named(m, AF_INET, &addr, NULL, true, &https, 1,
					   false, now + s), -EINVAL);
}

static void learn_entry_full(void **state)
{
	const struct allow_maps *m = need_maps(state);
	__u64 exp = allow_now_ns() + 60000000000ULL;
	struct port_range ports[EGRET_PORT_SLOTS + 1];
	__u32 addr;
	int i;

	for (i = 0; i <= EGRET_PORT_SLOTS; i++)
		ports[i] = (struct port_range){ (__u16)(100 + i), (__u16)(100 + i) };
	assert_int_equal(inet_pton(AF_INET, "198.51.100.8", &addr), 1);
	assert_int_equal(allow_learn(m, AF_INET, &addr, ports, EGRET_PORT_SLOTS,
				     false, exp), 0);
	assert_true(allow_learn(m, AF_INET, &addr, ports + EGRET_PORT_SLOTS, 1,
				false, exp) < 0);
}

static void sweep_drops_expired(void **state)
{
	const struct allow_maps *m = need_maps(state);
	const struct port_range p80 = { 80, 80 }, p443 = { 443, 443 };
	const char *const texts[] = { "10.0.0.0/8:22" };
	const __u64 s = 1000000000ULL;
	__u64 now = allow_now_ns();
	struct egret_key4 key = { .attempt = T_ATTEMPT };
	struct egret_allow v;
	__u32 gone, mixed;

	assert_int_equal(inet_pton(AF_INET, "198.51.100.1", &gone), 1);
	assert_int_equal(inet_pton(AF_INET, "198.51.100.2", &mixed), 1);
	assert_int_equal(allow_learn(m, AF_INET, &gone, &p80, 1, false, now + 100 * s), 0);
	assert_int_equal(allow_learn(m, AF_INET, &mixed, &p80, 1, false, now + 100 * s), 0);
	assert_int_equal(allow_learn(m, AF_INET, &mixed, &p443, 1, false,
				     now + 1000 * s), 0);
	write_ok(m, texts, 1);
	v = get4(m->allow4, "198.51.100.2", 32);
	assert_int_equal(used_slots(&v), 2);

	/* As if 200 s had passed. */
	assert_int_equal(allow_sweep(m, now + 200 * s), 1);
	key.addr = gone;
	assert_int_equal(bpf_map_lookup_elem(m->allow4, &key, &v), -ENOENT);
	v = get4(m->allow4, "198.51.100.2", 32);
	assert_int_equal(used_slots(&v), 1);
	assert_int_equal(count_rule(&v, 443, 443, NULL), 1);
	/* Static prefixes never expire and are not swept. */
	v = get4(m->cidr4, "10.0.0.0", 8);
	assert_int_equal(count_rule(&v, 22, 22, NULL), 1);

	assert_int_equal(allow_sweep(m, now + 200 * s), 0);
}

/* One attempt's entries are invisible under another's key, and purging
 * one attempt leaves the other's whole. */
static void attempts_kept_apart(void **state)
{
	const struct allow_maps *m = need_maps(state);
	struct allow_maps other = *m;
	const char *const mine[] = { "203.0.113.1:443", "10.0.0.0/8:22" };
	const char *const theirs[] = { "203.0.113.2:80" };
	struct egret_key4 key = key4("203.0.113.1");
	struct egret_allow v;

	other.attempt = T_OTHER;
	write_ok(m, mine, 2);
	write_ok(&other, theirs, 1);
	key.attempt = T_OTHER;
	assert_int_equal(bpf_map_lookup_elem(m->allow4, &key, &v), -ENOENT);
	assert_int_equal(allow_keyed_walk(m->allow4, sizeof(key), 0, T_ATTEMPT, true), 1);
	assert_int_equal(allow_keyed_walk(m->cidr4, sizeof(struct egret_lpm_key4),
					  sizeof(__u32), T_ATTEMPT, true), 1);
	assert_int_equal(allow_keyed_walk(m->allow4, sizeof(key), 0, T_OTHER, true), 1);

	assert_int_equal(allow_purge(m), 0);
	assert_int_equal(allow_keyed_walk(m->allow4, sizeof(key), 0, T_ATTEMPT, true), 0);
	assert_int_equal(allow_keyed_walk(m->cidr4, sizeof(struct egret_lpm_key4),
					  sizeof(__u32), T_ATTEMPT, true), 0);
	key = key4("203.0.113.2");
	key.attempt = T_OTHER;
	assert_int_equal(bpf_map_lookup_elem(m->allow4, &key, &v), 0);
	assert_int_equal(count_rule(&v, 80, 80, NULL), 1);
}

/* An attempt's share of the maps: --max-entries new addresses, then
 * -E2BIG (a refresh of one it has is no new entry); the sweep gives back
 * what it deletes. */
static void quota_counts_the_attempts_share(void **state)
{
	struct allow_maps q = *need_maps(state);
	struct allow_quota quota = { .max_entries = 2, .max_cidrs = 1 };
	const struct port_range p80 = { 80, 80 };
	const __u64 s = 1000000000ULL;
	__u64 now = allow_now_ns();
	__u32 a[3];

	q.quota = &quota;
	for (int i = 0; i < 3; i++)
		a[i] = htonl(0xcb007101 + (__u32)i);	/* 203.0.113.1-3 */
	assert_int_equal(allow_learn(&q, AF_INET, &a[0], &p80, 1, false, now + 10 * s), 0);
	assert_int_equal(allow_learn(&q, AF_INET, &a[1], &p80, 1, false, now + 100 * s), 0);
	assert_int_equal(allow_learn(&q, AF_INET, &a[0], &p80, 1, false, now + 20 * s), 0);
	assert_int_equal(quota.n4, 2);
	assert_int_equal(allow_learn(&q, AF_INET, &a[2], &p80, 1, false, now + 10 * s), -E2BIG);
	assert_int_equal(allow_sweep(&q, now + 50 * s), 1);
	assert_int_equal(quota.n4, 1);
	assert_int_equal(allow_learn(&q, AF_INET, &a[2], &p80, 1, false, now + 100 * s), 0);
	assert_int_equal(allow_recount(&q), 0);
	assert_int_equal(quota.n4, 2);
}

/* A purge from exact counts (the attempt's own egret, its counts kept
 * from its first entry) walks no map whose count is 0, and still leaves
 * nothing of the attempt behind; the destinations' table deletes its ids
 * by key, and the other attempt keeps all of its own. */
static void purge_from_counts(void **state)
{
	struct allow_maps q = *need_maps(state);
	struct allow_quota quota = { .max_entries = 8, .max_cidrs = 8, .counted = true };
	const char *const mine[] = { "203.0.113.1:443", "10.0.0.0/8:22", "[2001:db8::1]:80" };
	const char *const theirs[] = { "203.0.113.2:80" };
	struct egret_dest_key dk = { .attempt = T_OTHER, .dest = 1 };
	struct egret_dest_count c = {};
	struct allow_maps other;
	struct dests d;
	__u32 id;

	q.quota = &quota;
	q.dest_counts = bpf_map_create(BPF_MAP_TYPE_HASH, "t_dcounts", sizeof(dk),
				       sizeof(c), 64, NULL);
	assert_true(q.dest_counts >= 0);
	dests_init(&d, q.dest_counts, -1, T_ATTEMPT, 16, 0);
	q.dests = &d;
	other = q;
	other.attempt = T_OTHER;
	other.quota = NULL;
	other.dests = NULL;
	write_ok(&q, mine, 3);
	write_ok(&other, theirs, 1);
	assert_int_equal(bpf_map_update_elem(q.dest_counts, &dk, &c, BPF_NOEXIST), 0);
	assert_int_equal(dests_id(&d, "example.net", 0, &id), 0);
	assert_int_equal(quota.n4, 1);
	assert_int_equal(quota.n6, 1);
	assert_int_equal(quota.ncidr4, 1);
	assert_int_equal(quota.npins, 0);

	assert_int_equal(allow_purge(&q), 0);
	assert_true(quota.counted);
	assert_int_equal(quota.n4 + quota.n6 + quota.ncidr4, 0);
	quota.counted = false;	/* now every map is walked: none of ours left */
	assert_int_equal(allow_recount(&q), 0);
	assert_int_equal(quota.n4 + quota.n6 + quota.ncidr4 + quota.ncidr6, 0);
	assert_int_equal(allow_keyed_walk(q.dest_counts, sizeof(dk), 0, T_ATTEMPT, true), 0);
	assert_int_equal(allow_keyed_walk(q.allow4, sizeof(struct egret_key4), 0, T_OTHER,
					  true), 1);
	assert_int_equal(allow_keyed_walk(q.dest_counts, sizeof(dk), 0, T_OTHER, true), 1);
	/* Ids the table did not make itself (a re-adopter's): walked. */
	dests_init(&d, q.dest_counts, -1, T_OTHER, 16, 0);
	assert_int_equal(dests_recover(&d), 0);
	assert_int_equal(dests_forget(&d), -ENODATA);
	dests_free(&d);
	close(q.dest_counts);
}

/* A repeat of what allow_learn() just wrote is not written again unless it
 * moves the deadline by a second or more, or asks other ports. */
static void learn_repeats_skipped(void **state)
{
	struct allow_maps q = *need_maps(state);
	const struct port_range p443 = { 443, 443 }, p80 = { 80, 80 };
	const __u64 s = 1000000000ULL;
	__u64 now = allow_now_ns(), exp = 0;
	struct egret_allow v;
	__u32 a = htonl(0xcb007105);	/* 203.0.113.5 */

	q.learned = allow_learned_new();
	assert_non_null(q.learned);
	assert_int_equal(allow_learn(&q, AF_INET, &a, &p443, 1, false, now + 10 * s), 0);
	assert_int_equal(allow_learn(&q, AF_INET, &a, &p443, 1, false, now + 10 * s + s / 2), 0);
	v = get4(q.allow4, "203.0.113.5", 32);
	assert_int_equal(count_rule(&v, 443, 443, &exp), 1);
	assert_true(exp == now + 10 * s);		/* not rewritten */
	assert_int_equal(allow_learn(&q, AF_INET, &a, &p443, 1, false, now + 12 * s), 0);
	v = get4(q.allow4, "203.0.113.5", 32);
	assert_int_equal(count_rule(&v, 443, 443, &exp), 1);
	assert_true(exp == now + 12 * s);		/* a second or more: written */
	assert_int_equal(allow_learn(&q, AF_INET, &a, &p80, 1, false, now + 12 * s), 0);
	v = get4(q.allow4, "203.0.113.5", 32);
	assert_int_equal(count_rule(&v, 80, 80, NULL), 1);	/* other ports: written */
	allow_learned_free(q.learned);
}

/* Names sharing an address (a CDN's): each new name's answer writes its
 * pair; the address's entry, holding the rule already, is not rewritten -
 * unless the destination it carries changes. */
static void learn_shared_address(void **state)
{
	struct allow_maps q = *need_maps(state);
	const struct port_range https = { 443, 443 };
	const __u64 s = 1000000000ULL;
	__u64 now = allow_now_ns(), exp = 0;
	struct egret_pin_key pk = { .attempt = T_ATTEMPT, .family = 4 };
	struct egret_allow v;
	__u32 addr = htonl(0xcb007107);	/* 203.0.113.7 */
	char name[32];

	q.learned = allow_learned_new();
	assert_non_null(q.learned);
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "n%d.cdn.test", i);
		assert_int_equal(allow_learn_for(&q, AF_INET, &addr, name, 5, true, &https, 1,
						 false, now + (10 + i) * s / 1000 + 10 * s), 0);
	}
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "n%d.cdn.test", i);
		memset(pk.name, 0, sizeof(pk.name));
		pk.addr[0] = addr;
		strcpy(pk.name, name);
		pk.len = (__u32)strlen(name);
		assert_int_equal(bpf_map_lookup_elem(q.pins, &pk, &v), 0);
	}
	v = get4(q.allow4, "203.0.113.7", 32);
	assert_int_equal(count_rule(&v, 443, 443, &exp), 1);
	assert_true(exp == now + 10 * s / 1000 + 10 * s);	/* the first name's write */
	assert_int_equal(v.dest, 5);
	/* Another destination for the same rule: written. */
	assert_int_equal(allow_learn_for(&q, AF_INET, &addr, "n0.cdn.test", 6, true, &https, 1,
					 false, now + 10 * s), 0);
	v = get4(q.allow4, "203.0.113.7", 32);
	assert_int_equal(v.dest, 6);
	allow_learned_free(q.learned);
}

/* The sweep and the purge read the shared maps a chunk at a time: past
 * the first chunk, and leaving another attempt's entries alone. */
static void sweep_and_purge_past_a_chunk(void **state)
{
	struct allow_maps q = *need_maps(state);
	const struct port_range p80 = { 80, 80 };
	const __u64 s = 1000000000ULL;
	__u64 now = allow_now_ns();
	struct egret_key4 key = { .attempt = T_OTHER };
	struct egret_allow v = {};
	const int n = 3 * MAPWALK_CHUNK / 2;
	int big = bpf_map_create(BPF_MAP_TYPE_HASH, "t_big4", sizeof(struct egret_key4),
				 sizeof(struct egret_allow), 4 * n, NULL);

	assert_true(big >= 0);
	q.allow4 = big;
	q.allow6 = q.pins = -1;
	assert_int_equal(allow_add_rule_flags(&v, 80, 80, 0, now + s, now), 0);
	for (int i = 0; i < n; i++) {
		__u32 a = htonl(0x0a000000 + (__u32)i);	/* 10.0.x.y */

		/* Half of ours live for a minute, half expire in 1 s;
		 * the other attempt's all expire in 1 s. */
		assert_int_equal(allow_learn(&q, AF_INET, &a, &p80, 1, false,
					     now + (i % 2 ? 60 : 1) * s), 0);
		key.addr = a;
		assert_int_equal(bpf_map_update_elem(big, &key, &v, BPF_NOEXIST), 0);
	}
	assert_int_equal(allow_sweep(&q, now + 2 * s), n / 2);
	assert_int_equal(allow_keyed_walk(big, sizeof(key), 0, T_ATTEMPT, true), n - n / 2);
	assert_int_equal(allow_keyed_walk(big, sizeof(key), 0, T_OTHER, true), n);
	q.cidr4 = q.cidr6 = q.names = q.host4 = q.host6 = q.dest_counts = -1;
	q.dest_tally = q.addr_dest = -1;
	assert_int_equal(allow_purge(&q), 0);
	assert_int_equal(allow_keyed_walk(big, sizeof(key), 0, T_ATTEMPT, true), 0);
	assert_int_equal(allow_keyed_walk(big, sizeof(key), 0, T_OTHER, true), n);
	close(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(add_rule_new_slots),
		cmocka_unit_test(add_rule_same_range_keeps_later),
		cmocka_unit_test(add_rule_never_wins),
		cmocka_unit_test(add_rule_refreshes_expired),
		cmocka_unit_test(add_rule_reuses_expired_slot_and_fills_up),
		cmocka_unit_test(add_spec_rules),
		cmocka_unit_test_setup_teardown(static_cidr_inherits_wider,
						maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(attempts_kept_apart,
						maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(quota_counts_the_attempts_share,
						maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(purge_from_counts,
						maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(learn_repeats_skipped,
						maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(learn_shared_address,
						maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(sweep_and_purge_past_a_chunk,
						maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(static_cidr_inherits_wider_listed_later,
						maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(static_special_not_inherited_narrow_first,
						maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(static_special_not_inherited_wide_first,
						maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(static_special_not_inherited_v6,
						maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(static_exact_entries,
						maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(static_ipv6,
						maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(static_merges_with_map,
						maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(static_reports_bad_spec,
						maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(learn_and_refresh,
						maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(learn_pinned_pairs,
						maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(learn_entry_full,
						maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(sweep_drops_expired,
						maps_setup, maps_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
