// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* harness.c - load, reset and run egret's BPF object for the tests. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "egret.h"
#include "egret_match.h"
#include "egret.skel.h"
#include "harness.h"
#include "pkt.h"

/* libbpf's warnings (a verifier log above all) say why a load failed;
 * its debug chatter only with BPFT_VERBOSE set. */
static int bpft_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !getenv("BPFT_VERBOSE"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

int bpft_preflight(const char *suite, int *ret_exit)
{
	const char *problem = NULL;
	int fd;

	libbpf_set_print(bpft_print);
	if (geteuid() != 0) {
		problem = "not root";
	} else {
		fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "bpft_probe", 4, 4, 1, NULL);
		if (fd < 0)
			problem = "bpf() unusable (creating an array map failed)";
		else
			close(fd);
	}
	if (!problem)
		return 0;
	/* The rule of tests/integration/env.sh: CI must never skip. */
	if (getenv("CI") && strcmp(getenv("CI"), "true") == 0) {
		printf("FAIL  preflight: %s (CI=true: %s must run)\n", problem, suite);
		*ret_exit = 1;
	} else {
		printf("SKIP: %s need root and bpf(): %s\n", suite, problem);
		*ret_exit = 0;
	}
	return -EPERM;
}

static int bpft_on_event(void *ctx, void *data, size_t size)
{
	struct bpft *t = ctx;

	if (size != sizeof(struct egret_event) && size != sizeof(struct egret_tls_event))
		return -EPROTO;
	if (t->nevents < BPFT_EVENTS_MAX) {
		memcpy(&t->events[t->nevents], data, sizeof(struct egret_event));
		t->names[t->nevents][0] = '\0';
		if (size == sizeof(struct egret_tls_event))
			memcpy(t->names[t->nevents], ((struct egret_tls_event *)data)->sni,
			       sizeof(t->names[0]));
		t->names[t->nevents][sizeof(t->names[0]) - 1] = '\0';
	}
	t->nevents++;
	return 0;
}

int bpft_group_setup(void **state)
{
	struct bpft *t = calloc(1, sizeof(*t));
	LIBBPF_OPTS(bpf_map_create_opts, hash, .map_flags = BPF_F_NO_PREALLOC);
	__u32 slot = BPFT_SLOT;
	int r = -ENOMEM;

	if (!t)
		return r;
	t->ring_fd = t->repeats_fd = -1;
	t->skel = egret_bpf__open();
	if (!t->skel) {
		r = -errno;
		goto fail;
	}
	/* As loader_load_fresh(): every program loads, all 14 of them. */
	r = egret_bpf__load(t->skel);
	if (r < 0) {
		print_error("egret_bpf__load: %s\n", strerror(-r));
		goto fail;
	}
	/* The attempt's own ring and repeat counts, as slots.c makes them. */
	t->ring_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "egret_events", 0, 0,
				    EGRET_RING_BYTES, NULL);
	t->repeats_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "egret_repeats",
				       sizeof(struct egret_repeat_key), sizeof(__u64),
				       EGRET_REPEATS_MAX, &hash);
	if (t->ring_fd < 0 || t->repeats_fd < 0 ||
	    bpf_map_update_elem(bpf_map__fd(t->skel->maps.egret_rings), &slot,
				&t->ring_fd, BPF_ANY) < 0 ||
	    bpf_map_update_elem(bpf_map__fd(t->skel->maps.egret_repeat_of), &slot,
				&t->repeats_fd, BPF_ANY) < 0) {
		r = -errno;
		print_error("the attempt's ring and repeat counts: %s\n", strerror(-r));
		goto fail;
	}
	t->rb = ring_buffer__new(t->ring_fd, bpft_on_event, t, NULL);
	if (!t->rb) {
		r = -errno;
		goto fail;
	}
	*state = t;
	return 0;
fail:
	egret_bpf__destroy(t->skel);
	if (t->ring_fd >= 0)
		close(t->ring_fd);
	if (t->repeats_fd >= 0)
		close(t->repeats_fd);
	free(t);
	return r;
}

int bpft_group_teardown(void **state)
{
	struct bpft *t = *state;

	if (!t)
		return 0;
	ring_buffer__free(t->rb);
	egret_bpf__destroy(t->skel);
	close(t->ring_fd);
	close(t->repeats_fd);
	free(t);
	return 0;
}

/* Delete every key of map @fd (trie and hash alike: the first key, again). */
static int fd_empty(int fd)
{
	unsigned char key[64];

	while (bpf_map_get_next_key(fd, NULL, key) == 0)
		if (bpf_map_delete_elem(fd, key) < 0)
			return -errno;
	return 0;
}

static int map_empty(struct bpf_map *map)
{
	unsigned char key[64];
	int fd = bpf_map__fd(map);

	if (bpf_map__key_size(map) > sizeof(key))
		return -E2BIG;
	while (bpf_map_get_next_key(fd, NULL, key) == 0)
		if (bpf_map_delete_elem(fd, key) < 0)
			return -errno;
	return 0;
}

int bpft_test_setup(void **state)
{
	struct bpft *t = *state;
	struct bpf_map *maps[] = {
		t->skel->maps.egret_allow4, t->skel->maps.egret_allow6,
		t->skel->maps.egret_cidr4, t->skel->maps.egret_cidr6,
		t->skel->maps.egret_host4, t->skel->maps.egret_host6,
		t->skel->maps.egret_dest_counts, t->skel->maps.egret_dest_tally,
		t->skel->maps.egret_addr_dest,
	};
	int r;

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		r = map_empty(maps[i]);
		if (r < 0)
			return r;
	}
	r = fd_empty(t->repeats_fd);
	if (r < 0)
		return r;
	memset(t->skel->bss, 0, sizeof(*t->skel->bss));
	/* As loader_configure() writes an attempt's cgroup storage. */
	t->skel->bss->egret_test_attempt.key = BPFT_ATTEMPT;
	t->skel->bss->egret_test_attempt.slot = BPFT_SLOT;
	t->keep_repeats = false;
	/* Events a failed test left behind are not the next test's. */
	ring_buffer__consume(t->rb);
	t->nevents = 0;
	/* The local routing table of a namespace with one interface. */
	bpft_host(t, "127.0.0.0/8", EGRET_HOST_LOCAL);
	bpft_host(t, BPFT_HOST4 "/32", EGRET_HOST_LOCAL);
	bpft_host(t, BPFT_BCAST4 "/32", EGRET_HOST_BROADCAST);
	bpft_host(t, "::1/128", EGRET_HOST_LOCAL);
	bpft_host(t, BPFT_HOST6 "/128", EGRET_HOST_LOCAL);
	/* Every entry's destination (bpf/lib/account.h), as egret writes
	 * it before any entry names it. */
	bpft_dest(t, BPFT_DEST, "test", 0);
	return 0;
}

__u64 bpft_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

void bpft_rule(struct egret_allow *a, __u16 lo, __u16 hi, __u64 expires_ns)
{
	for (int i = 0; i < EGRET_PORT_SLOTS; i++) {
		struct egret_port_rule *rule = &a->rules[i];

		if (rule->expires_ns != EGRET_EXPIRES_UNUSED)
			continue;
		*rule = (struct egret_port_rule){
			.expires_ns = expires_ns, .port_lo = lo, .port_hi = hi,
		};
		return;
	}
	fail_msg("more than %d rules", EGRET_PORT_SLOTS);
}

/* "ADDR[/LEN]" -> family, address words, prefix length (-1 without). */
static int spec_parse(const char *spec, __u32 addr[4], int *ret_len)
{
	char text[64];
	char *slash;
	int family;

	snprintf(text, sizeof(text), "%s", spec);
	slash = strchr(text, '/');
	*ret_len = -1;
	if (slash) {
		*slash = '\0';
		*ret_len = atoi(slash + 1);
	}
	family = strchr(text, ':') ? AF_INET6 : AF_INET;
	memset(addr, 0, 16);
	assert_int_equal(inet_pton(family, text, addr), 1);
	return family;
}

static void map_put(struct bpf_map *map, const void *key, const void *val)
{
	if (bpf_map_update_elem(bpf_map__fd(map), key, val, BPF_ANY) < 0)
		fail_msg("update %s: %s", bpf_map__name(map), strerror(errno));
}

/* A per-CPU value: one egret_dest_tally per possible CPU. */
static struct egret_dest_tally *tally_buf(void)
{
	int ncpu = libbpf_num_possible_cpus();
	struct egret_dest_tally *v;

	if (ncpu <= 0)
		fail_msg("possible CPUs: %d", ncpu);
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		fail_msg("out of memory");
	return v;
}

void bpft_dest(struct bpft *t, __u32 dest, const char *name, __u64 budget)
{
	struct egret_dest_key key = { .attempt = BPFT_ATTEMPT, .dest = dest };
	struct egret_dest_count c = { .budget = budget };
	struct egret_dest_tally *zero = tally_buf();

	snprintf(c.name, sizeof(c.name), "%s", name);
	map_put(t->skel->maps.egret_dest_tally, &key, zero);
	map_put(t->skel->maps.egret_dest_counts, &key, &c);
	free(zero);
}

struct egret_dest_count bpft_dest_get(struct bpft *t, __u32 dest)
{
	struct egret_dest_key key = { .attempt = BPFT_ATTEMPT, .dest = dest };
	struct egret_dest_count c = {};
	struct egret_dest_tally *v = tally_buf();
	int ncpu = libbpf_num_possible_cpus();

	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.egret_dest_counts), &key, &c) < 0)
		fail_msg("no counts for destination %u: %s", dest, strerror(errno));
	/* As egret reads them (user/enforce/dests.c): the tally's CPUs added. */
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.egret_dest_tally), &key, v) < 0)
		fail_msg("no tally for destination %u: %s", dest, strerror(errno));
	for (int i = 0; i < ncpu; i++) {
		c.sent += v[i].sent;
		c.received += v[i].received;
		c.conns += v[i].conns;
	}
	free(v);
	return c;
}

void bpft_allow(struct bpft *t, const char *spec, const struct egret_allow *given)
{
	struct egret_allow copy = *given, *a = &copy;
	__u32 addr[4];
	int len, family = spec_parse(spec, addr, &len);

	if (!a->dest)
		a->dest = BPFT_DEST;

	if (family == AF_INET && len < 0) {
		struct egret_key4 key = { .attempt = BPFT_ATTEMPT, .addr = addr[0] };

		map_put(t->skel->maps.egret_allow4, &key, a);
	} else if (family == AF_INET) {
		struct egret_lpm_key4 key = {
			.prefixlen = EGRET_LPM_ATTEMPT_BITS + (__u32)len, .addr = addr[0],
		};

		egret_lpm_attempt(key.attempt, BPFT_ATTEMPT);
		map_put(t->skel->maps.egret_cidr4, &key, a);
	} else if (len < 0) {
		struct egret_key6 key = { .attempt = BPFT_ATTEMPT };

		memcpy(key.addr, addr, 16);
		map_put(t->skel->maps.egret_allow6, &key, a);
	} else {
		struct egret_lpm_key6 key = { .prefixlen = EGRET_LPM_ATTEMPT_BITS + (__u32)len };

		egret_lpm_attempt(key.attempt, BPFT_ATTEMPT);
		memcpy(key.addr, addr, 16);
		map_put(t->skel->maps.egret_cidr6, &key, a);
	}
}

void bpft_allow_rule(struct bpft *t, const char *spec, __u16 lo, __u16 hi,
		     __u64 expires_ns, __u32 flags)
{
	struct egret_allow a = { .flags = flags };

	bpft_rule(&a, lo, hi, expires_ns);
	bpft_allow(t, spec, &a);
}

void bpft_host(struct bpft *t, const char *prefix, __u32 flags)
{
	__u32 addr[4];
	int len, family = spec_parse(prefix, addr, &len);

	assert_true(len >= 0);
	if (family == AF_INET) {
		struct egret_lpm_key4 key = {
			.prefixlen = EGRET_LPM_ATTEMPT_BITS + (__u32)len, .addr = addr[0],
		};

		egret_lpm_attempt(key.attempt, BPFT_ATTEMPT);
		map_put(t->skel->maps.egret_host4, &key, &flags);
	} else {
		struct egret_lpm_key6 key = { .prefixlen = EGRET_LPM_ATTEMPT_BITS + (__u32)len };

		egret_lpm_attempt(key.attempt, BPFT_ATTEMPT);
		memcpy(key.addr, addr, 16);
		map_put(t->skel->maps.egret_host6, &key, &flags);
	}
}

__u32 bpft_egress(struct bpft *t, const struct pkt *p)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		    .data_in = p->buf, .data_size_in = (__u32)p->len,
		    .repeat = 1);
	int r;

	t->nevents = 0;
	if (!t->keep_repeats) {
		r = fd_empty(t->repeats_fd);
		if (r < 0)
			fail_msg("empty egret_repeats: %s", strerror(-r));
	}
	r = bpf_prog_test_run_opts(bpf_program__fd(t->skel->progs.egret_egress), &opts);
	if (r < 0)
		fail_msg("BPF_PROG_TEST_RUN egret_egress: %s", strerror(-r));
	r = ring_buffer__consume(t->rb);
	if (r < 0)
		fail_msg("ring_buffer__consume: %s", strerror(-r));
	return opts.retval;
}

void bpft_set_attempt(struct bpft *t, __u64 key)
{
	t->skel->bss->egret_test_attempt.key = key;
}

__u64 bpft_repeats(struct bpft *t, const struct egret_repeat_key *key)
{
	__u64 n = 0;

	bpf_map_lookup_elem(t->repeats_fd, key, &n);
	return n;
}

__u64 bpft_counter(struct bpft *t, __u32 index)
{
	/* The test build's counters: one per-CPU struct egret_counts. */
	size_t size = (sizeof(struct egret_counts) + 7) & ~(size_t)7;
	int ncpus = libbpf_num_possible_cpus();
	unsigned char *vals;
	__u32 zero = 0;
	__u64 sum = 0, n;

	assert_true(ncpus > 0 && index < EGRET_NCOUNTERS);
	vals = calloc((size_t)ncpus, size);
	assert_non_null(vals);
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.egret_counters), &zero,
				vals) < 0) {
		free(vals);
		fail_msg("counter %u: %s", index, strerror(errno));
	}
	for (int i = 0; i < ncpus; i++) {
		memcpy(&n, vals + (size_t)i * size + index * sizeof(n), sizeof(n));
		sum += n;
	}
	free(vals);
	return sum;
}
