// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_account.c - bytes per destination and upload budgets
 * (bpf/lib/account.h), run by the kernel through egret_egress: what is
 * counted against which destination, a budget's exact edge, and the
 * fail-closed cases (no counts entry, a destination already over).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "egret.h"
#include "egret.skel.h"
#include "harness.h"
#include "pkt.h"

#define SRC4	BPFT_HOST4

/* A UDP datagram of @n payload bytes to @dst:@port. */
static __u32 udp_send(struct bpft *t, const char *dst, __u16 port, size_t n)
{
	struct pkt p;

	pkt_init(&p, PKT_ETH_IP);
	pkt_ip4(&p, SRC4, dst);
	pkt_udp(&p, 40000, port);
	pkt_payload(&p, n, 0x5a);
	pkt_done(&p);
	return bpft_egress(t, &p);
}

/* Allow @spec on every port, its bytes counted against @dest. */
static void allow_dest(struct bpft *t, const char *spec, __u32 dest)
{
	struct egret_allow a = { .dest = dest };

	bpft_rule(&a, 0, 65535, EGRET_EXPIRES_NEVER);
	bpft_allow(t, spec, &a);
}

/* Each datagram's payload, against the destination of the entry that
 * allowed it; another entry's destination keeps its own count. */
static void datagrams_counted(void **state)
{
	struct bpft *t = *state;

	bpft_dest(t, 2, "other", 0);
	allow_dest(t, "203.0.113.10", BPFT_DEST);
	allow_dest(t, "203.0.113.11", 2);
	assert_int_equal(udp_send(t, "203.0.113.10", 9999, 100), BPFT_PASS);
	assert_int_equal(udp_send(t, "203.0.113.10", 9999, 50), BPFT_PASS);
	assert_int_equal(udp_send(t, "203.0.113.11", 9999, 7), BPFT_PASS);
	assert_int_equal(bpft_dest_get(t, BPFT_DEST).sent, 150);
	assert_int_equal(bpft_dest_get(t, 2).sent, 7);
	assert_int_equal(t->nevents, 0);
}

/* A budget of 120 bytes: 100 pass, the next 50 would cross it - dropped
 * whole, nothing of them counted, the event names the destination - and
 * from then on even a datagram that would fit is refused. */
static void budget_edge(void **state)
{
	struct bpft *t = *state;
	struct egret_dest_count c;

	bpft_dest(t, 2, "budgeted.test", 120);
	allow_dest(t, "203.0.113.10", 2);
	assert_int_equal(udp_send(t, "203.0.113.10", 9999, 100), BPFT_PASS);
	assert_int_equal(udp_send(t, "203.0.113.10", 9999, 50), BPFT_DROP);
	assert_int_equal(t->nevents, 1);
	assert_int_equal(t->events[0].reason, EGRET_REASON_BUDGET);
	assert_int_equal(t->events[0].hook, EGRET_HOOK_EGRESS);
	assert_string_equal(t->names[0], "budgeted.test");
	c = bpft_dest_get(t, 2);
	assert_int_equal(c.sent, 100);
	assert_int_equal(c.over, 1);
	assert_int_equal(udp_send(t, "203.0.113.10", 9999, 10), BPFT_DROP);
	assert_int_equal(bpft_dest_get(t, 2).sent, 100);
	/* Exactly the budget is allowed: a fresh destination of 120 takes
	 * 120 in one datagram. */
	bpft_dest(t, 3, "exact.test", 120);
	allow_dest(t, "203.0.113.11", 3);
	assert_int_equal(udp_send(t, "203.0.113.11", 9999, 120), BPFT_PASS);
	assert_int_equal(bpft_dest_get(t, 3).sent, 120);
	assert_int_equal(bpft_dest_get(t, 3).over, 0);
}

/* Fail closed: an entry whose destination has no counts entry passes
 * nothing (a SYN, a datagram); an entry of no destination neither. */
static void uncounted_refused(void **state)
{
	struct bpft *t = *state;
	struct egret_allow none = {};
	struct pkt p;

	allow_dest(t, "203.0.113.10", 9);	/* no counts entry for 9 */
	assert_int_equal(udp_send(t, "203.0.113.10", 9999, 10), BPFT_DROP);
	assert_int_equal(t->events[0].reason, EGRET_REASON_UNCOUNTED);
	pkt_tcp4(&p, SRC4, 40000, "203.0.113.10", 443);
	assert_int_equal(bpft_egress(t, &p), BPFT_DROP);
	assert_int_equal(t->events[0].reason, EGRET_REASON_UNCOUNTED);
	/* bpft_allow() gives an entry without one the default: write the
	 * map by hand. */
	bpft_rule(&none, 0, 65535, EGRET_EXPIRES_NEVER);
	{
		struct egret_key4 key = { .attempt = BPFT_ATTEMPT };

		inet_pton(AF_INET, "203.0.113.11", &key.addr);
		assert_int_equal(bpf_map_update_elem(bpf_map__fd(t->skel->maps.egret_allow4),
						     &key, &none, BPF_ANY), 0);
	}
	assert_int_equal(udp_send(t, "203.0.113.11", 9999, 10), BPFT_DROP);
	assert_int_equal(t->events[0].reason, EGRET_REASON_UNCOUNTED);
}

/* A TCP SYN to a destination over its budget is refused (its event says
 * budget); one under it opens a connection, counted once. */
static void syn_over_budget(void **state)
{
	struct bpft *t = *state;
	struct egret_dest_key key = { .attempt = BPFT_ATTEMPT, .dest = 2 };
	struct egret_dest_count c;
	struct pkt p;

	bpft_dest(t, 2, "over.test", 10);
	c = bpft_dest_get(t, 2);
	c.over = 1;
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(t->skel->maps.egret_dest_counts),
					     &key, &c, BPF_ANY), 0);
	allow_dest(t, "203.0.113.10", 2);
	pkt_tcp4(&p, SRC4, 40000, "203.0.113.10", 443);
	assert_int_equal(bpft_egress(t, &p), BPFT_DROP);
	assert_int_equal(t->nevents, 1);
	assert_int_equal(t->events[0].reason, EGRET_REASON_BUDGET);

	allow_dest(t, "203.0.113.11", BPFT_DEST);
	pkt_tcp4(&p, SRC4, 40001, "203.0.113.11", 443);
	assert_int_equal(bpft_egress(t, &p), BPFT_PASS);
	assert_int_equal(bpft_dest_get(t, BPFT_DEST).conns, 1);
}

/* --audit: a send past the budget is let through, counted, and said as
 * would-deny; the destination is not closed. */
static void audit_counts_past(void **state)
{
	struct bpft *t = *state;

	t->skel->bss->egret_test_attempt.audit = 1;
	bpft_dest(t, 2, "audited.test", 100);
	allow_dest(t, "203.0.113.10", 2);
	assert_int_equal(udp_send(t, "203.0.113.10", 9999, 80), BPFT_PASS);
	assert_int_equal(udp_send(t, "203.0.113.10", 9999, 80), BPFT_PASS);
	assert_int_equal(t->nevents, 1);
	assert_int_equal(t->events[0].verdict, EGRET_VERDICT_WOULD_DENY);
	assert_int_equal(t->events[0].reason, EGRET_REASON_BUDGET);
	assert_int_equal(bpft_dest_get(t, 2).sent, 160);
}

int bpft_account_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(datagrams_counted, bpft_test_setup),
		cmocka_unit_test_setup(budget_edge, bpft_test_setup),
		cmocka_unit_test_setup(uncounted_refused, bpft_test_setup),
		cmocka_unit_test_setup(syn_over_budget, bpft_test_setup),
		cmocka_unit_test_setup(audit_counts_past, bpft_test_setup),
	};

	return cmocka_run_group_tests_name("bytes per destination", tests,
					   bpft_group_setup, bpft_group_teardown);
}
