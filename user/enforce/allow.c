// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * enforce/allow.c - the attempt's entries in the allow maps: port rules
 * merged into an entry, the static rules written, the names map, the
 * special addresses, and the recount and purge of all the attempt holds.
 * What DNS answers teach, and the sweep of what expired, is learn.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <bpf/bpf.h>

#include "egret_match.h"
#include "enforce/allow_impl.h"
#include "enforce/dests.h"
#include "enforce/hostaddr.h"
#include "enforce/mapwalk.h"

__u64 allow_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

bool allow_rule_live(const struct egret_port_rule *rule, __u64 now_ns)
{
	return rule->expires_ns == EGRET_EXPIRES_NEVER ||
	       rule->expires_ns > now_ns;
}

int allow_add_rule(struct egret_allow *allow, __u16 lo, __u16 hi,
		   __u64 expires_ns, __u64 now_ns)
{
	return allow_add_rule_flags(allow, lo, hi, 0, expires_ns, now_ns);
}

int allow_add_rule_flags(struct egret_allow *allow, __u16 lo, __u16 hi,
			 __u32 flags, __u64 expires_ns, __u64 now_ns)
{
	struct egret_port_rule *free_slot = NULL;
	int i;

	for (i = 0; i < EGRET_PORT_SLOTS; i++) {
		struct egret_port_rule *rule = &allow->rules[i];

		/* A pinned and an address-only rule for one range are two:
		 * the address-only one unpins the address (egret_match.h). */
		if (rule->expires_ns != EGRET_EXPIRES_UNUSED &&
		    rule->port_lo == lo && rule->port_hi == hi && rule->flags == flags) {
			if (expires_ns > rule->expires_ns ||
			    !allow_rule_live(rule, now_ns))
				rule->expires_ns = expires_ns;
			return 0;
		}
		if (!free_slot && (rule->expires_ns == EGRET_EXPIRES_UNUSED ||
				   !allow_rule_live(rule, now_ns)))
			free_slot = rule;
	}
	if (!free_slot)
		return -ENOSPC;
	*free_slot = (struct egret_port_rule){
		.expires_ns = expires_ns,
		.port_lo = lo,
		.port_hi = hi,
		.flags = flags,
	};
	return 0;
}

int allow_add_spec_rules(struct egret_allow *allow,
			 const struct allow_spec *spec, __u64 expires_ns,
			 __u64 now_ns)
{
	__u32 flags = spec->pin ? EGRET_RULE_PINNED : 0;
	unsigned int i;
	int r;

	if (spec->nports == 0)
		return allow_add_rule_flags(allow, 0, 65535, flags, expires_ns, now_ns);
	for (i = 0; i < spec->nports; i++) {
		r = allow_add_rule_flags(allow, spec->ports[i].lo, spec->ports[i].hi,
					 flags, expires_ns, now_ns);
		if (r < 0)
			return r;
	}
	return 0;
}

int allow_quota_take(__u32 *n, __u32 max)
{
	if (!n)
		return 0;
	if (*n >= max)
		return -E2BIG;
	(*n)++;
	return 0;
}

void allow_quota_give(__u32 *n)
{
	if (n && *n)
		(*n)--;
}

/* @add's flags, destination and rules into @cur. */
static int merge_into(struct egret_allow *cur, const struct egret_allow *add, __u64 now_ns)
{
	int i, r;

	cur->flags |= add->flags;
	if (add->dest)
		cur->dest = add->dest;	/* the last writer's: docs/BUDGETS.md */
	for (i = 0; i < EGRET_PORT_SLOTS; i++) {
		const struct egret_port_rule *rule = &add->rules[i];

		if (rule->expires_ns == EGRET_EXPIRES_UNUSED)
			continue;
		r = allow_add_rule_flags(cur, rule->port_lo, rule->port_hi,
					 rule->flags, rule->expires_ns, now_ns);
		if (r < 0)
			return r;
	}
	return 0;
}

/* @add as a new entry at @key, counted in @n: -EEXIST if there is one. */
static int map_create(int fd, const void *key, const struct egret_allow *add,
		      __u64 now_ns, __u32 *n, __u32 max)
{
	struct egret_allow cur = {};
	int r = merge_into(&cur, add, now_ns);

	if (r < 0 || (r = allow_quota_take(n, max)) < 0)
		return r;
	if (bpf_map_update_elem(fd, key, &cur, BPF_NOEXIST) < 0) {
		r = -errno;
		allow_quota_give(n);
		return r;
	}
	return 0;
}

int allow_map_merge(int fd, const void *key, const struct egret_allow *add,
		    __u64 now_ns, __u32 *n, __u32 max, bool likely_new)
{
	struct egret_allow cur = {};
	bool created = false;
	int r;

	if (likely_new && (r = map_create(fd, key, add, now_ns, n, max)) != -EEXIST)
		return r;
	if (bpf_map_lookup_elem(fd, key, &cur) < 0) {
		if (errno != ENOENT)
			return -errno;
		created = true;
	}
	r = merge_into(&cur, add, now_ns);
	if (r < 0)
		return r;
	if (created && (r = allow_quota_take(n, max)) < 0)
		return r;
	if (bpf_map_update_elem(fd, key, &cur, BPF_ANY) < 0) {
		r = -errno;
		if (created)
			allow_quota_give(n);
		return r;
	}
	return 0;
}

/* Write @val at @key whole (a trie entry), a new key counted in @n. */
static int map_put(int fd, const void *key, const struct egret_allow *val,
		   __u32 *n, __u32 max)
{
	struct egret_allow old;
	bool created = bpf_map_lookup_elem(fd, key, &old) < 0;
	int r;

	if (created && (r = allow_quota_take(n, max)) < 0)
		return r;
	if (bpf_map_update_elem(fd, key, val, BPF_ANY) < 0) {
		r = -errno;
		if (created)
			allow_quota_give(n);
		return r;
	}
	return 0;
}

/* A static rule's destination: its spec text names it. */
static int spec_dest(const struct allow_maps *maps, const struct allow_spec *spec,
		     __u32 *ret)
{
	char text[EGRET_DEST_NAME_MAX + 1] = "?";

	*ret = 0;
	if (!maps->dests)
		return 0;
	spec_format(spec, text, sizeof(text));
	return dests_id(maps->dests, text, spec->upload_limit, ret);
}

static int write_one(const struct allow_maps *maps,
		     const struct allow_spec *spec,
		     const struct allow_spec *all, size_t n, __u64 now_ns)
{
	bool special = spec_is_special(spec);
	struct egret_allow add = { .flags = special ? EGRET_ALLOW_SPECIAL : 0 };
	bool exact = spec->prefixlen == spec_addr_bits(spec);
	size_t i;
	int r;

	r = allow_add_spec_rules(&add, spec, EGRET_EXPIRES_NEVER, now_ns);
	if (r < 0)
		return r;
	r = spec_dest(maps, spec, &add.dest);
	if (r < 0)
		return r;
	/* Longest-prefix match sees only this entry: give it the rules of
	 * the wider prefixes that cover it, but never let a non-special
	 * range (0.0.0.0/0) leak rules into a special one (127.0.0.0/8). */
	for (i = 0; !exact && i < n; i++) {
		const struct allow_spec *outer = &all[i];

		if (outer == spec || outer->prefixlen == spec_addr_bits(outer) ||
		    !spec_contains(outer, spec) ||
		    spec_is_special(outer) != special)
			continue;
		r = allow_add_spec_rules(&add, outer, EGRET_EXPIRES_NEVER,
					 now_ns);
		if (r < 0)
			return r;
	}

	if (spec->family == AF_INET && exact) {
		struct egret_key4 key = { .attempt = maps->attempt, .addr = spec->addr[0] };

		return allow_map_merge(maps->allow4, &key, &add, now_ns,
				       ALLOW_QUOTA(maps, n4, max_entries), false);
	}
	/* A trie lookup returns the longest match, not this prefix's own
	 * entry: never read back. @add is already complete (its own rules,
	 * duplicates' and covering prefixes'), so write it whole. */
	if (spec->family == AF_INET) {
		struct egret_lpm_key4 key = {
			.prefixlen = EGRET_LPM_ATTEMPT_BITS + spec->prefixlen,
			.addr = spec->addr[0],
		};

		egret_lpm_attempt(key.attempt, maps->attempt);
		return map_put(maps->cidr4, &key, &add, ALLOW_QUOTA(maps, ncidr4, max_cidrs));
	}
	if (exact) {
		struct egret_key6 key = { .attempt = maps->attempt };

		memcpy(key.addr, spec->addr, sizeof(key.addr));
		return allow_map_merge(maps->allow6, &key, &add, now_ns,
				       ALLOW_QUOTA(maps, n6, max_entries), false);
	}
	struct egret_lpm_key6 key = {
		.prefixlen = EGRET_LPM_ATTEMPT_BITS + spec->prefixlen,
	};

	egret_lpm_attempt(key.attempt, maps->attempt);
	memcpy(key.addr, spec->addr, sizeof(key.addr));
	return map_put(maps->cidr6, &key, &add, ALLOW_QUOTA(maps, ncidr6, max_cidrs));
}

int allow_write_static(const struct allow_maps *maps,
		       const struct allow_spec *specs, size_t n,
		       const struct allow_spec **bad_spec)
{
	__u64 now_ns = allow_now_ns();
	size_t i;
	int r;

	for (i = 0; i < n; i++) {
		r = write_one(maps, &specs[i], specs, n, now_ns);
		if (r < 0) {
			*bad_spec = &specs[i];
			return r;
		}
	}
	return 0;
}

int allow_name(const struct allow_maps *maps, int family, const void *addr,
	       const char *name, bool likely_there)
{
	struct egret_name_key key = { .attempt = maps->attempt,
				      .family = family == AF_INET ? 4 : 6 };
	struct allow_quota *q = maps->quota;
	struct egret_name val = {};
	int r;

	memcpy(key.addr, addr, family == AF_INET ? 4 : 16);
	strncpy(val.name, name, sizeof(val.name) - 1);
	/* A replaced name is one write, a new one (counted) another: the
	 * caller's guess of which it is goes first. */
	if (likely_there && bpf_map_update_elem(maps->names, &key, &val, BPF_EXIST) == 0)
		return 0;
	if (likely_there && errno != ENOENT)
		return -errno;
	r = q ? allow_quota_take(&q->nnames, EGRET_NAMES_PER_ENTRY * q->max_entries) : 0;
	if (r < 0)
		return r;
	if (bpf_map_update_elem(maps->names, &key, &val, BPF_NOEXIST) == 0)
		return 0;
	r = -errno;
	if (q)
		allow_quota_give(&q->nnames);
	if (r == -EEXIST && !likely_there)
		return bpf_map_update_elem(maps->names, &key, &val, BPF_EXIST) < 0 ? -errno : 0;
	return r;
}

struct keyed {
	int fd;
	size_t off;
	__u64 attempt;
	bool count;
	int n;
};

static int keyed_one(const void *key, const void *value, void *ctx)
{
	struct keyed *kw = ctx;

	(void)value;
	if (memcmp((const unsigned char *)key + kw->off, &kw->attempt, sizeof(kw->attempt)))
		return 0;
	if (kw->count || bpf_map_delete_elem(kw->fd, key) == 0)
		kw->n++;
	else if (errno != ENOENT)
		return -errno;
	return 0;
}

int allow_keyed_walk(int fd, size_t key_size, size_t off, __u64 attempt,
		     bool count)
{
	struct keyed kw = { .fd = fd, .off = off, .attempt = attempt, .count = count };
	int r;

	if (fd < 0)
		return 0;
	if (off + sizeof(attempt) > key_size)
		return -EINVAL;
	r = mapwalk(fd, key_size, 0, keyed_one, &kw);
	return r < 0 ? r : kw.n;
}

/* The key layouts of egret.h: where each map's keys hold the attempt. */
#define LPM_ATTEMPT_OFF	sizeof(__u32)	/* after prefixlen */

int allow_recount(const struct allow_maps *maps)
{
	struct allow_quota *q = maps->quota;
	int n[6];

	if (!q)
		return 0;
	n[0] = allow_keyed_walk(maps->allow4, sizeof(struct egret_key4), 0, maps->attempt, true);
	n[1] = allow_keyed_walk(maps->allow6, sizeof(struct egret_key6), 0, maps->attempt, true);
	n[2] = allow_keyed_walk(maps->cidr4, sizeof(struct egret_lpm_key4), LPM_ATTEMPT_OFF,
				maps->attempt, true);
	n[3] = allow_keyed_walk(maps->cidr6, sizeof(struct egret_lpm_key6), LPM_ATTEMPT_OFF,
				maps->attempt, true);
	n[4] = allow_keyed_walk(maps->names, sizeof(struct egret_name_key), 0, maps->attempt, true);
	n[5] = allow_keyed_walk(maps->pins, sizeof(struct egret_pin_key), 0, maps->attempt, true);
	for (int i = 0; i < 6; i++)
		if (n[i] < 0)
			return n[i];
	q->n4 = (__u32)n[0];
	q->n6 = (__u32)n[1];
	q->ncidr4 = (__u32)n[2];
	q->ncidr6 = (__u32)n[3];
	q->nnames = (__u32)n[4];
	q->npins = (__u32)n[5];
	q->counted = true;
	return 0;
}

/*
 * A walk reads every bucket of a map sized for the whole host (a batch
 * read of an empty 262 144-entry hash costs 0.2-0.4 ms here), whatever
 * the attempt holds: a count of 0 that is exact spares it, as the
 * destinations' own table spares the walk of theirs (dests_forget).
 */
int allow_purge(const struct allow_maps *maps)
{
	const struct allow_quota *q = maps->quota && maps->quota->counted ? maps->quota : NULL;
	bool dests_known = maps->dests && dests_forget(maps->dests) == 0;
	const struct { int fd; size_t size, off; const __u32 *n; } all[] = {
		{ maps->allow4, sizeof(struct egret_key4), 0, q ? &q->n4 : NULL },
		{ maps->allow6, sizeof(struct egret_key6), 0, q ? &q->n6 : NULL },
		{ maps->cidr4, sizeof(struct egret_lpm_key4), LPM_ATTEMPT_OFF,
		  q ? &q->ncidr4 : NULL },
		{ maps->cidr6, sizeof(struct egret_lpm_key6), LPM_ATTEMPT_OFF,
		  q ? &q->ncidr6 : NULL },
		{ maps->names, sizeof(struct egret_name_key), 0, q ? &q->nnames : NULL },
		{ maps->pins, sizeof(struct egret_pin_key), 0, q ? &q->npins : NULL },
		{ maps->host4, sizeof(struct egret_lpm_key4), LPM_ATTEMPT_OFF, NULL },
		{ maps->host6, sizeof(struct egret_lpm_key6), LPM_ATTEMPT_OFF, NULL },
		{ dests_known ? -1 : maps->dest_counts, sizeof(struct egret_dest_key), 0, NULL },
		{ dests_known ? -1 : maps->dest_tally, sizeof(struct egret_dest_key), 0, NULL },
		{ maps->addr_dest, sizeof(struct egret_name_key), 0, NULL },
	};
	int first = 0;

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		int r = all[i].n && *all[i].n == 0 ? 0 :
			allow_keyed_walk(all[i].fd, all[i].size, all[i].off,
					 maps->attempt, false);

		if (r < 0 && !first)
			first = r;
	}
	if (maps->quota)
		*maps->quota = (struct allow_quota){
			.max_entries = maps->quota->max_entries,
			.max_cidrs = maps->quota->max_cidrs,
			.counted = maps->quota->counted && !first,
		};
	allow_learned_clear(maps->learned);
	if (maps->dests)
		dests_free(maps->dests);
	return first;
}

bool allow_special_addr(const struct allow_maps *maps, int family, const void *addr)
{
	__u32 words[4] = {}, flags = 0;

	memcpy(words, addr, family == AF_INET ? 4 : 16);
	if (family == AF_INET) {
		struct egret_lpm_key4 key = {
			.prefixlen = EGRET_LPM_ATTEMPT_BITS + 32, .addr = words[0],
		};

		egret_lpm_attempt(key.attempt, maps->attempt);
		if (egret_classify4(words[0]) != EGRET_ADDR_NORMAL)
			return true;
		if (maps->host)
			return hostaddr_has(maps->host, AF_INET, words);
		if (maps->host4 >= 0 && bpf_map_lookup_elem(maps->host4, &key, &flags) == 0)
			return flags != 0;
		return false;
	}
	if (egret_is_v4mapped(words) || egret_classify6(words) != EGRET_ADDR_NORMAL)
		return true;
	if (maps->host)
		return hostaddr_has(maps->host, AF_INET6, words);
	{
		struct egret_lpm_key6 key = { .prefixlen = EGRET_LPM_ATTEMPT_BITS + 128 };

		egret_lpm_attempt(key.attempt, maps->attempt);
		memcpy(key.addr, words, sizeof(key.addr));
		if (maps->host6 >= 0 && bpf_map_lookup_elem(maps->host6, &key, &flags) == 0)
			return flags != 0;
	}
	return false;
}
