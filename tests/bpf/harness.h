/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * harness.h - egret's BPF object, loaded as egret loads it, and run by the
 * kernel over hand-built input (BPF_PROG_TEST_RUN).
 *
 * The object is build/bpftests/egret.bpf.o, compiled from bpf/ the way the
 * Makefile compiles egret's own, through its skeleton. Nothing is
 * attached: a test run sends nothing anywhere. The maps start empty for
 * every test, with the host's addresses of a small made-up namespace
 * (BPFT_HOST4/6 and loopback) and the settings zero but for the
 * attempt's key (BPFT_ATTEMPT), as loader_configure() in
 * user/enforce/loader.c leaves a new attempt's. A test writes
 * what it needs the way user/enforce/ would, runs a program and checks
 * its return value and the events it queued.
 */
#ifndef EGRET_TEST_HARNESS_H
#define EGRET_TEST_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

#include "egret.h"

struct pkt;

/* The host's own addresses in every test (egret_host4/6, EGRET_HOST_LOCAL),
 * besides 127.0.0.0/8 and ::1; BPFT_BCAST4 is its subnet broadcast. */
#define BPFT_HOST4	"192.0.2.2"
#define BPFT_BCAST4	"192.0.2.255"
#define BPFT_HOST6	"2001:db8:1::2"

/* cgroup_skb verdicts, as bpf/lib/verdict.h names them. */
#define BPFT_DROP	0
#define BPFT_PASS	1

#define BPFT_EVENTS_MAX	16

/* The attempt every test's entries belong to (a cgroup id, as any). */
#define BPFT_ATTEMPT	0x00000abc00000123ULL
#define BPFT_SLOT	1	/* its ring buffer and repeat counts */
#define BPFT_DEST	1	/* the destination of entries that name none */

struct bpft {
	struct egret_bpf *skel;
	struct ring_buffer *rb;
	int ring_fd, repeats_fd;	/* the attempt's own (attempt.h) */
	struct egret_event events[BPFT_EVENTS_MAX];
	/* The name a record carried after its event (TLS, HTTP, upload
	 * budget: struct egret_tls_event), else "". */
	char names[BPFT_EVENTS_MAX][EGRET_SNI_MAX + 3];
	int nevents;		/* queued by the last run (more: counted) */
	/* Runs are judged as if each were the attempt's first: its repeat
	 * counts are emptied before each, unless a test sets this. */
	bool keep_repeats;
};

/*
 * Can this machine run the suite (root, bpf())? 0 if so. Otherwise prints
 * one line, returns -EPERM and sets *@ret_exit to what main() exits with:
 * with CI=true 1, a failure (the suite must run there), else 0, every
 * test skipped.
 */
int bpft_preflight(const char *suite, int *ret_exit);

/* cmocka group setup/teardown: load the object once per group. */
int bpft_group_setup(void **state);
int bpft_group_teardown(void **state);
/* cmocka per-test setup: empty maps, host addresses, zero settings. */
int bpft_test_setup(void **state);

/* CLOCK_MONOTONIC now, the clock the programs' deadlines are on. */
__u64 bpft_now_ns(void);

/* Add a rule for ports @lo..@hi, live until @expires_ns, to @a. */
void bpft_rule(struct egret_allow *a, __u16 lo, __u16 hi, __u64 expires_ns);

/* Write @a for "ADDR" (exact map) or "ADDR/LEN" (trie), IPv4 or IPv6. */
void bpft_allow(struct bpft *t, const char *spec, const struct egret_allow *a);

/* Destination @dest's counts entry and tally, @budget bytes (0: none),
 * and its counts as the programs left them (the tally's CPUs added). */
void bpft_dest(struct bpft *t, __u32 dest, const char *name, __u64 budget);
struct egret_dest_count bpft_dest_get(struct bpft *t, __u32 dest);

/* Write an egret_host4/6 entry: "ADDR/LEN" -> EGRET_HOST_* @flags. */
void bpft_host(struct bpft *t, const char *prefix, __u32 flags);

/* Run egret_egress over @p; returns its verdict (fails the test if the
 * kernel refuses the run), the events it queued in t->events. */
__u32 bpft_egress(struct bpft *t, const struct pkt *p);

/* Run the programs as attempt @key would (its cgroup storage's key). */
void bpft_set_attempt(struct bpft *t, __u64 key);

/* The repeat count of the denial @key describes (0: none). */
__u64 bpft_repeats(struct bpft *t, const struct egret_repeat_key *key);

/* The per-CPU counter @index (EGRET_COUNTER()), summed over CPUs. */
__u64 bpft_counter(struct bpft *t, __u32 index);

/* One entry holding one rule: ports @lo..@hi until @expires_ns. */
void bpft_allow_rule(struct bpft *t, const char *spec, __u16 lo, __u16 hi,
		     __u64 expires_ns, __u32 flags);

/* Deadlines: long past, an hour from now. */
#define BPFT_EXPIRED	(bpft_now_ns() - 1000000000ULL)
#define BPFT_LIVE	(bpft_now_ns() + 3600 * 1000000000ULL)

/* The verdict of egret_egress over @p, and what it logged: a pass queues
 * nothing; a drop queues one event, from the egress hook, with @why. */
#define expect_pass(t, p)						\
	do {								\
		assert_int_equal(bpft_egress((t), (p)), BPFT_PASS);	\
		assert_int_equal((t)->nevents, 0);			\
	} while (0)

#define expect_drop(t, p, why)						\
	do {								\
		assert_int_equal(bpft_egress((t), (p)), BPFT_DROP);	\
		assert_int_equal((t)->nevents, 1);			\
		assert_int_equal((t)->events[0].hook, EGRET_HOOK_EGRESS); \
		assert_int_equal((t)->events[0].verdict, EGRET_VERDICT_DENY); \
		assert_int_equal((t)->events[0].reason, (why));		\
	} while (0)

/* The groups, one per file; each returns its number of failed tests. */
int bpft_objects_tests(void);
int bpft_packets_tests(void);
int bpft_judge_tests(void);
int bpft_account_tests(void);

#endif /* EGRET_TEST_HARNESS_H */
