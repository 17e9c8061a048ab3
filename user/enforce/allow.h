/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * enforce/allow.h - turning allow specs into allow-map entries, and writing them
 * (allow.c); the entries DNS answers teach, and their sweep (learn.c).
 *
 * Writers merge into what the map holds (read-modify-write), so a static
 * rule and a DNS-learned rule for one address coexist; user space is the
 * maps' only writer and does so from one thread.
 */
#ifndef EGRET_ALLOW_H
#define EGRET_ALLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "egret.h"
#include "policy/spec.h"

/* How many entries an attempt holds in the set's maps, and may hold
 * (--max-entries, --max-cidrs): the maps are every attempt's, so each
 * attempt's share is counted here, by its only writer. */
struct allow_quota {
	__u32 max_entries;	/* exact entries per family */
	__u32 max_cidrs;	/* prefixes per family */
	__u32 n4, n6, ncidr4, ncidr6, nnames, npins;
	/* The counts are every entry the attempt holds in those maps: kept
	 * by its writer since before its first entry (loader_attempt_begin)
	 * or counted again (allow_recount). The purge then walks no map
	 * whose count is 0. */
	bool counted;
};

/* The four allow maps, by fd, and those the decisions read besides (the
 * names map, the host's addresses); @attempt is the key of the attempt
 * whose entries these calls read and write. */
struct hostaddr;
struct allow_learned;
struct dests;

struct allow_maps {
	__u64 attempt;
	struct allow_quota *quota;	/* NULL: only the maps' sizes limit */
	/* The host's addresses as egret_host4/6 hold them, kept in memory
	 * (hostaddr.h): allow_special_addr() asks it, not the kernel. NULL:
	 * the maps are asked. */
	const struct hostaddr *host;
	/* What allow_learn() wrote last, per address and ports (NULL: none
	 * kept): a repeat that would move a deadline by under a second is
	 * not written again. */
	struct allow_learned *learned;
	/* The attempt's destinations (dests.h): every entry written carries
	 * the id of the name or static rule it is for. NULL: entries get
	 * none (tests of the maps alone). */
	struct dests *dests;
	int allow4;
	int allow6;
	int cidr4;
	int cidr6;
	int names;		/* egret_names: learned address -> name */
	int pins;		/* egret_pins: (address, name) pairs; -1: none */
	int dest_counts;	/* egret_dest_counts, purged with the rest; -1: none */
	int dest_tally;		/* egret_dest_tally, the same; -1: none */
	int addr_dest;		/* egret_addr_dest, the same; -1: none */
	int host4;		/* egret_host4/6 (hostaddr.h), read only here */
	int host6;
};

/*
 * Add the rule [lo, hi] living until @expires_ns to @allow. A rule for the
 * same range keeps the later deadline (so refreshing is idempotent); a new
 * range takes an unused or expired slot. -ENOSPC when all slots are live.
 */
int allow_add_rule(struct egret_allow *allow, __u16 lo, __u16 hi,
		   __u64 expires_ns, __u64 now_ns);

/* The same with EGRET_RULE_* @flags: rules of one range but other flags
 * are kept apart. */
int allow_add_rule_flags(struct egret_allow *allow, __u16 lo, __u16 hi,
			 __u32 flags, __u64 expires_ns, __u64 now_ns);

/* Add every port rule of @spec (or "any port") to @allow. */
int allow_add_spec_rules(struct egret_allow *allow,
			 const struct allow_spec *spec, __u64 expires_ns,
			 __u64 now_ns);

/*
 * Write static specs into the maps. Exact addresses go to the hash maps,
 * prefixes to the tries; a prefix also receives the rules of every wider
 * prefix that covers it (of the same specialness), because a trie lookup
 * returns the longest match only. Returns 0 or a negative errno; on error
 * @bad_spec points at the spec that could not be written.
 */
int allow_write_static(const struct allow_maps *maps,
		       const struct allow_spec *specs, size_t n,
		       const struct allow_spec **bad_spec);

/*
 * Is @addr (network order) one the programs treat as special: a class of
 * its own (loopback, multicast, ...) or one of the host's addresses? Such
 * an address is never learned from a DNS answer.
 */
bool allow_special_addr(const struct allow_maps *maps, int family, const void *addr);

/* Record in the names map that @addr came from @name's answer.
 * @likely_there: the map holds a name for @addr already, as far as the
 * caller knows (either way is right; the guess saves a system call). */
int allow_name(const struct allow_maps *maps, int family, const void *addr,
	       const char *name, bool likely_there);

/* Count the attempt's entries into maps->quota (an egretd re-adopting an
 * attempt finds them in the maps). 0 or -errno. */
int allow_recount(const struct allow_maps *maps);

/* Delete every entry of the attempt from the allow, names and host maps.
 * 0 or the first -errno (the others are still tried). */
int allow_purge(const struct allow_maps *maps);

/* Delete every key of @fd (keys of @key_size bytes) whose 8 bytes at @off
 * hold @attempt; with @count, only count them. Returns how many, or
 * -errno. */
int allow_keyed_walk(int fd, size_t key_size, size_t off, __u64 attempt,
		     bool count);

/* CLOCK_MONOTONIC in ns: the clock bpf_ktime_get_coarse_ns() reads (a tick
 * behind at most); allow deadlines are on it. */
__u64 allow_now_ns(void);

/* ---- learn.c: what DNS answers teach, and the sweep -------------- */

/*
 * Allow one address learned from a DNS answer (@family AF_INET/AF_INET6,
 * @addr network order) on @ports (@any: every port) until @expires_ns.
 * Idempotent; a repeat refreshes the deadline. -ENOSPC/-E2BIG when the map
 * or the entry is full: the caller must not release the answer.
 */
int allow_learn(const struct allow_maps *maps, int family, const void *addr,
		const struct port_range *ports, unsigned int nports, bool any,
		__u64 expires_ns);

/*
 * The same for an address of @name's answer. @pinned: SNI pinning holds
 * for it - its rules are flagged EGRET_RULE_PINNED, and the (address,
 * @name) pair gets the same rules in egret_pins, so TLS to the address
 * may name @name (bpf/lib/pin.h). @name: lower case, no trailing dot.
 */
int allow_learn_named(const struct allow_maps *maps, int family, const void *addr,
		      const char *name, bool pinned,
		      const struct port_range *ports, unsigned int nports, bool any,
		      __u64 expires_ns);

/* The same, its bytes counted against destination @dest (dests.h: a
 * wildcard's, which its names share); 0: @name's own. */
int allow_learn_for(const struct allow_maps *maps, int family, const void *addr,
		    const char *name, __u32 dest, bool pinned,
		    const struct port_range *ports, unsigned int nports, bool any,
		    __u64 expires_ns);

/*
 * Drop expired rules from the exact-address maps, deleting entries left
 * with none. BPF already denies expired rules; this only frees the space.
 * Returns the number of entries deleted.
 */
int allow_sweep(const struct allow_maps *maps, __u64 now_ns);

/* A table for maps->learned; NULL if out of memory (then none is kept). */
struct allow_learned *allow_learned_new(void);
void allow_learned_free(struct allow_learned *l);

#endif
