/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * host.h - the host's own addresses, as the attempt's network namespace
 * has them.
 *
 * User space (user/enforce/hostaddr.c) copies the namespace's local routing
 * table here before any program is attached and keeps it current from
 * rtnetlink: the addresses of every interface (type local, which also
 * holds 127.0.0.0/8 and any AnyIP prefix), subnet broadcasts, IPv6
 * anycast. They are what a packet of the attempt may carry as its source,
 * and they are special destinations: a service of the host listening on
 * 0.0.0.0 is reached through any of them, as through 127.0.0.1.
 */
#ifndef EGRET_BPF_HOST_H
#define EGRET_BPF_HOST_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "egret.h"
#include "egret_match.h"
#include "lib/attempt.h"

/* (Attempt, IPv4 prefix of the local table) -> EGRET_HOST_* flags; written by egret. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, EGRET_SHARED_HOSTS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct egret_lpm_key4);
	__type(value, __u32);
} egret_host4 SEC(".maps");

/* (Attempt, IPv6 prefix) -> EGRET_HOST_* flags; written by egret (user/enforce/hostaddr.c).
 * Never v4-mapped: those are IPv4 on the wire. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, EGRET_SHARED_HOSTS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct egret_lpm_key6);
	__type(value, __u32);
} egret_host6 SEC(".maps");

#define EGRET_HOST_SPECIAL \
	(EGRET_HOST_LOCAL | EGRET_HOST_BROADCAST | EGRET_HOST_ANYCAST)

static __always_inline __u32 host4_flags(__u32 addr)
{
	struct egret_lpm_key4 key = {
		.prefixlen = EGRET_LPM_ATTEMPT_BITS + 32, .addr = addr,
	};
	__u32 *flags;

	egret_lpm_attempt(key.attempt, attempt_key());
	flags = bpf_map_lookup_elem(&egret_host4, &key);
	return flags ? *flags : 0;
}

static __always_inline __u32 host6_flags(const __u32 addr[4])
{
	struct egret_lpm_key6 key = { .prefixlen = EGRET_LPM_ATTEMPT_BITS + 128 };
	__u32 *flags;

	egret_lpm_attempt(key.attempt, attempt_key());
	__builtin_memcpy(key.addr, addr, sizeof(key.addr));
	flags = bpf_map_lookup_elem(&egret_host6, &key);
	return flags ? *flags : 0;
}

/* Special as a destination: a class of its own, or one of the host's. */
static __always_inline int host4_special(__u32 addr)
{
	return egret_classify4(addr) != EGRET_ADDR_NORMAL ||
	       (host4_flags(addr) & EGRET_HOST_SPECIAL);
}

static __always_inline int host6_special(const __u32 addr[4])
{
	return egret_classify6(addr) != EGRET_ADDR_NORMAL ||
	       (host6_flags(addr) & EGRET_HOST_SPECIAL);
}

#endif /* EGRET_BPF_HOST_H */
