/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attempt.h - which attempt a program runs for, and that attempt's
 * settings, counters, ring buffer and repeat counts.
 *
 * egret loads these programs once and attaches the same programs to every
 * attempt's cgroup (user/enforce/shared.c). For each run the kernel hands
 * the program the cgroup storage of the attachment it runs for: that of
 * the cgroup the program was attached to, whichever descendant the socket
 * or task is in, and nothing the attempt does can change which. egret
 * writes into it the attempt's key (its cgroup's id), and every map the
 * programs read is keyed by it, so one attempt's programs never see
 * another's entries (docs/ARCHITECTURE.md, "One set of programs for every
 * attempt"). A storage egret has not written is zero: key 0 matches no
 * entry, no proxy takes DNS, everything is refused.
 *
 * The BPF tests run programs with BPF_PROG_TEST_RUN, which gives each run
 * a fresh zeroed storage no test can fill. Built with EGRET_BPF_TEST, the
 * settings come from a global and the counters from an array instead:
 * the only difference between the programs tested and those egret runs.
 */
#ifndef EGRET_BPF_ATTEMPT_H
#define EGRET_BPF_ATTEMPT_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "egret.h"

#ifdef EGRET_BPF_TEST
struct egret_attempt egret_test_attempt;

/* The tests' one set of counters (a test run has no cgroup storage); written by BPF. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct egret_counts);
} egret_counters SEC(".maps");

static __always_inline struct egret_attempt *attempt_cfg(void)
{
	return &egret_test_attempt;
}

static __always_inline struct egret_counts *attempt_counts(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&egret_counters, &zero);
}
#else
/* Attempt cgroup -> its settings; written by egret after the attach, before COMMAND starts.
 * One per attempt cgroup, shared by its programs (a __u64 key: one
 * storage per cgroup, whatever the attach type). */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_STORAGE);
	__type(key, __u64);
	__type(value, struct egret_attempt);
} egret_attempt SEC(".maps");

/* Attempt cgroup -> allowed/denied/would-deny per hook, lost events; written by BPF. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE);
	__type(key, __u64);
	__type(value, struct egret_counts);
} egret_counters SEC(".maps");

static __always_inline struct egret_attempt *attempt_cfg(void)
{
	return bpf_get_local_storage(&egret_attempt, 0);
}

static __always_inline struct egret_counts *attempt_counts(void)
{
	return bpf_get_local_storage(&egret_counters, 0);
}
#endif

static __always_inline __u64 attempt_key(void)
{
	return attempt_cfg()->key;
}

/* Each attempt's ring buffer and repeat counts, by the slot egret gave
 * it (egret.h): made by egret, reused from attempt to attempt. Only
 * decisions that are logged look them up. */
struct egret_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, EGRET_RING_BYTES);
};

/* Sizes, not types: clang emits only a forward declaration of a struct
 * that nothing but this template names, and libbpf cannot size that. */
struct egret_repeat_counts {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EGRET_REPEATS_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(key_size, sizeof(struct egret_repeat_key));
	__uint(value_size, sizeof(__u64));
};

/* Slot -> its ring buffer of decisions; egret makes each, BPF writes the events. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, EGRET_SLOTS_MAX);
	__type(key, __u32);
	__array(values, struct egret_ring);
} egret_rings SEC(".maps");

/* Slot -> its repeat counts of denials; egret makes each, BPF counts, egret reads. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, EGRET_SLOTS_MAX);
	__type(key, __u32);
	__array(values, struct egret_repeat_counts);
} egret_repeat_of SEC(".maps");

/* Slot -> the key of the attempt holding it; written by egret only.
 * A claim is an insert that fails if the slot is taken. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EGRET_SLOTS_MAX);
	__type(key, __u32);
	__type(value, __u64);
} egret_slots SEC(".maps");

#endif /* EGRET_BPF_ATTEMPT_H */
