/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * allow.h - the allow maps and the lookup that judges one destination.
 *
 * User space (user/enforce/allow.c) is the only writer: static entries
 * before COMMAND starts, DNS-learned entries and approvals later, and a
 * sweep that deletes expired ones. BPF only reads.
 */
#ifndef EGRET_BPF_ALLOW_H
#define EGRET_BPF_ALLOW_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "egret.h"
#include "egret_match.h"
#include "lib/attempt.h"
#include "lib/host.h"
#include "lib/net.h"

/* (Attempt, IPv4 address) -> port rules; written by egret (static rules, DNS answers).
 * Each rule has its lifetime; every attempt's entries (lib/attempt.h).
 * Not preallocated: the size is a limit, not memory pinned up front. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EGRET_SHARED_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct egret_key4);
	__type(value, struct egret_allow);
} egret_allow4 SEC(".maps");

/* (Attempt, IPv6 address) -> port rules; written by egret (static rules, DNS answers).
 * Never v4-mapped: those live in egret_allow4. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EGRET_SHARED_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct egret_key6);
	__type(value, struct egret_allow);
} egret_allow6 SEC(".maps");

/* (Attempt, IPv4 prefix) -> port rules; written by egret (static rules).
 * A longest-prefix match returns one entry only, so user space copies
 * the rules of every covering prefix into the narrower ones. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, EGRET_SHARED_CIDRS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct egret_lpm_key4);
	__type(value, struct egret_allow);
} egret_cidr4 SEC(".maps");

/* (Attempt, IPv6 prefix) -> port rules; written by egret, as egret_cidr4. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, EGRET_SHARED_CIDRS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct egret_lpm_key6);
	__type(value, struct egret_allow);
} egret_cidr6 SEC(".maps");

/* What allowed a destination: whether by a rule that never expires, and
 * the entry's destination (its bytes' account, lib/account.h). */
struct allow_hit {
	int lasting;
	__u32 dest;
};

/*
 * The address being judged, and whether it is special (lib/host.h) -
 * found out only when an entry's answer depends on it. The host table is
 * a longest-prefix trie shared by every attempt of the set, and its
 * lookup grows with it: in a program run once per connection, about 70
 * ns with one attempt's entries, 300 with sixteen attempts' (a hash
 * lookup: 150; BENCHMARKS.md, "Round 5"). An entry flagged
 * EGRET_ALLOW_SPECIAL (a static rule naming the address itself) matches
 * whatever the address is.
 */
struct allow_addr {
	int family;			/* 4 or 6 */
	__u32 addr4;			/* IPv4, network order */
	const __u32 *addr6;		/* IPv6, network order */
	int special;			/* -1: not looked up yet */
};

static __always_inline int allow_addr_special(struct allow_addr *d)
{
	if (d->special < 0)
		d->special = d->family == 6 ? host6_special(d->addr6) : host4_special(d->addr4);
	return d->special;
}

/* egret_allow_match(), with the address's specialness only where the
 * entry does not settle it. */
static __always_inline enum egret_reason
allow_entry_match(const struct egret_allow *allow, __u32 port, __u64 now,
		  struct allow_addr *d)
{
	int special = allow->flags & EGRET_ALLOW_SPECIAL ? 0 : allow_addr_special(d);

	return egret_allow_match(allow, port, now, special);
}

/*
 * Judge against one family's exact map and trie: allowed if either entry
 * has a live rule for @port; otherwise the reason that tells the most.
 * @hit: what allowed it. The coarse clock (one
 * tick of staleness) is a fraction of the fine one's cost here, and
 * lifetimes are seconds; user space writes deadlines on CLOCK_MONOTONIC.
 */
static __always_inline enum egret_reason
allow_judge(void *exact_map, const void *key, void *trie, const void *lpm_key,
	    __u32 port, struct allow_addr *d, __u64 now, struct allow_hit *hit)
{
	enum egret_reason exact = EGRET_REASON_NO_ENTRY;
	enum egret_reason cidr = EGRET_REASON_NO_ENTRY;
	struct egret_allow *allow;

	allow = bpf_map_lookup_elem(exact_map, key);
	if (allow) {
		exact = allow_entry_match(allow, port, now, d);
		if (exact == EGRET_REASON_ALLOWED) {
			hit->lasting = egret_allow_lasting(allow, port);
			hit->dest = allow->dest;
			return exact;
		}
	}
	allow = bpf_map_lookup_elem(trie, lpm_key);
	if (allow) {
		cidr = allow_entry_match(allow, port, now, d);
		if (cidr == EGRET_REASON_ALLOWED) {
			hit->lasting = egret_allow_lasting(allow, port);
			hit->dest = allow->dest;
			return cidr;
		}
	}
	/* Unlisted special addresses say so rather than "no entry". */
	if (exact == EGRET_REASON_NO_ENTRY && cidr == EGRET_REASON_NO_ENTRY &&
	    allow_addr_special(d))
		return EGRET_REASON_SPECIAL;
	return egret_reason_pick(exact, cidr);
}

/*
 * One family's lookups and match, as global functions: verified once per
 * program, not once per path that reaches a judgement (the port slots'
 * match, twice, and the special ranges multiplied the callers' states).
 * At @now (CLOCK_MONOTONIC).
 */
__noinline int allow4_lookup(__u32 addr, __u32 port, __u64 now, struct allow_hit *hit)
{
	__u64 attempt = attempt_key();
	struct egret_lpm_key4 lpm_key = {
		.prefixlen = EGRET_LPM_ATTEMPT_BITS + 32, .addr = addr,
	};
	struct egret_key4 key = { .attempt = attempt, .addr = addr };
	struct allow_addr d = { .family = 4, .addr4 = addr, .special = -1 };

	if (!hit)
		return EGRET_REASON_NO_ENTRY;
	egret_lpm_attempt(lpm_key.attempt, attempt);
	return allow_judge(&egret_allow4, &key, &egret_cidr4, &lpm_key, port, &d, now, hit);
}

__noinline int allow6_lookup(const struct addr_words *addr, __u32 port, __u64 now,
			     struct allow_hit *hit)
{
	struct egret_lpm_key6 lpm_key = { .prefixlen = EGRET_LPM_ATTEMPT_BITS + 128 };
	struct egret_key6 key = {};
	struct allow_addr d = { .family = 6, .special = -1 };

	if (!addr || !hit)
		return EGRET_REASON_NO_ENTRY;
	d.addr6 = addr->a;
	key.attempt = attempt_key();
	egret_lpm_attempt(lpm_key.attempt, key.attempt);
	__builtin_memcpy(key.addr, addr->a, sizeof(key.addr));
	__builtin_memcpy(lpm_key.addr, addr->a, sizeof(lpm_key.addr));
	return allow_judge(&egret_allow6, &key, &egret_cidr6, &lpm_key, port, &d, now, hit);
}

/* The global's result is any scalar to the verifier: a reason. */
static __always_inline enum egret_reason allow_reason(int r)
{
	return r >= 0 && r < EGRET_REASON_MAX ? (enum egret_reason)r : EGRET_REASON_NO_ENTRY;
}

/* At @now (CLOCK_MONOTONIC): for programs that may not read the coarse
 * clock (cgroup/setsockopt). */
static __always_inline enum egret_reason
allow4_judge_at(__u32 addr, __u32 port, __u64 now, struct allow_hit *hit)
{
	return allow_reason(allow4_lookup(addr, port, now, hit));
}

static __always_inline enum egret_reason
allow6_judge_at(const __u32 addr[4], __u32 port, __u64 now, struct allow_hit *hit)
{
	if (egret_is_v4mapped(addr))
		return allow4_judge_at(addr[3], port, now, hit);
	return allow_reason(allow6_lookup((const struct addr_words *)addr, port, now, hit));
}

static __always_inline enum egret_reason
allow4_judge(__u32 addr, __u32 port, struct allow_hit *hit)
{
	return allow4_judge_at(addr, port, bpf_ktime_get_coarse_ns(), hit);
}

static __always_inline enum egret_reason
allow6_judge(const __u32 addr[4], __u32 port, struct allow_hit *hit)
{
	return allow6_judge_at(addr, port, bpf_ktime_get_coarse_ns(), hit);
}

static __always_inline int allow4_port(__u32 addr, __u32 port)
{
	struct allow_hit hit = {};

	return allow4_judge(addr, port, &hit) == EGRET_REASON_ALLOWED;
}

static __always_inline int allow6_port(const __u32 addr[4], __u32 port)
{
	struct allow_hit hit = {};

	return allow6_judge(addr, port, &hit) == EGRET_REASON_ALLOWED;
}

#endif /* EGRET_BPF_ALLOW_H */
