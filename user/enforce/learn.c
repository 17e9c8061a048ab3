// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * enforce/learn.c - the addresses the DNS proxy learns, into the allow
 * maps (allow.h: allow_learn*), the table of the last writes that spares
 * a repeat answer its system calls, and the sweep that frees entries
 * whose every rule expired (allow_sweep).
 *
 * A learned rule lives until its deadline; BPF denies it after that on
 * its own, so the sweep only frees the space. Static rules never expire
 * and are never swept.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <bpf/bpf.h>

#include "enforce/allow_impl.h"
#include "enforce/dests.h"
#include "enforce/mapwalk.h"
#include "lib/pages.h"
#include "lib/util.h"

/* allow_learn()'s last writes, direct-mapped: a slot per hash, the newest
 * write wins it. A miss only costs the write. */
#define LEARNED_SLOTS	1024
#define LEARNED_SLACK_NS	1000000000ULL	/* a second */

struct learned_slot {
	__u64 expires_ns;		/* 0: empty */
	__u64 ports_hash;
	__u32 addr[4];
	__u8 family;
};

/* Entries and pairs apart: a run of new names on one address (its pairs)
 * would otherwise push the address's entry out, and rewrite it. */
struct allow_learned {
	struct learned_slot slots[LEARNED_SLOTS];
	struct learned_slot pairs[LEARNED_SLOTS];
};

/*
 * A mapping of its own, not calloc(): 80 KiB that most attempts write a
 * few slots of. An egretd handler's heap is its accept loop's, shared
 * after fork, and calloc() cleared (so copied) every page of it, ~20
 * page faults per attempt (issue 42); fresh pages are the zero page until
 * written, and a clear hands them back rather than writing them.
 */
struct allow_learned *allow_learned_new(void)
{
	return pages_zeroed(sizeof(struct allow_learned));
}

void allow_learned_free(struct allow_learned *l)
{
	pages_free(l, sizeof(*l));
}

/* A private anonymous mapping reads as zeros once its pages are
 * dropped. */
void allow_learned_clear(struct allow_learned *l)
{
	if (l && madvise(l, sizeof(*l), MADV_DONTNEED) < 0)
		memset(l, 0, sizeof(*l));
}

static __u64 ports_hash(const struct port_range *ports, unsigned int nports, bool any)
{
	__u64 h = any || nports == 0 ? 1 : 1469598103934665603ULL;

	for (unsigned int i = 0; !any && i < nports; i++) {
		h = (h ^ ports[i].lo) * 1099511628211ULL;
		h = (h ^ ports[i].hi) * 1099511628211ULL;
	}
	return h;
}

/* The slot that would hold (@family, @addr, @ph), an entry's or a pair's. */
static struct learned_slot *learned_slot(struct allow_learned *l, int family,
					 const __u32 addr[4], __u64 ph, bool pair)
{
	__u64 h = ph ^ (__u64)family;

	for (int i = 0; i < 4; i++)
		h = (h ^ addr[i]) * 1099511628211ULL;
	return &(pair ? l->pairs : l->slots)[(h >> 17) & (LEARNED_SLOTS - 1)];
}

/*
 * Is a write of (@addr, @ports) until @expires_ns one that is there
 * already, to within a second? The entry allow_learn() last wrote for
 * them is live until a later or nearly as late deadline, and the sweep
 * deletes only entries whose every rule expired: so it still holds that
 * rule. (An entry ending up to a second before the last answer's TTL is
 * the price; lifetimes are max(TTL, min_ttl), seconds at least.)
 */
static bool learned_already(struct allow_learned *l, int family, const __u32 addr[4],
			    __u64 ph, bool pair, __u64 expires_ns, __u64 now_ns)
{
	struct learned_slot *s;

	if (!l)
		return false;
	s = learned_slot(l, family, addr, ph, pair);
	return s->expires_ns > now_ns && s->family == family && s->ports_hash == ph &&
	       !memcmp(s->addr, addr, sizeof(s->addr)) &&
	       expires_ns <= s->expires_ns + LEARNED_SLACK_NS;
}

static void learned_note(struct allow_learned *l, int family, const __u32 addr[4],
			 __u64 ph, bool pair, __u64 expires_ns)
{
	struct learned_slot *s;

	if (!l)
		return;
	s = learned_slot(l, family, addr, ph, pair);
	*s = (struct learned_slot){ .expires_ns = expires_ns, .ports_hash = ph,
				    .family = (__u8)family };
	memcpy(s->addr, addr, sizeof(s->addr));
}

/* The learned rules of @ports until @expires_ns, into @add. */
static int learn_rules(struct egret_allow *add, bool pinned, const struct port_range *ports,
		       unsigned int nports, bool any, __u64 expires_ns, __u64 now_ns)
{
	__u32 flags = pinned ? EGRET_RULE_PINNED : 0;
	unsigned int i;
	int r = 0;

	if (any || nports == 0)
		return allow_add_rule_flags(add, 0, 65535, flags, expires_ns, now_ns);
	for (i = 0; i < nports && r == 0; i++)
		r = allow_add_rule_flags(add, ports[i].lo, ports[i].hi, flags, expires_ns,
					 now_ns);
	return r;
}

/* The (address, @name) pair of a pinned answer (bpf/lib/pin.h). Most
 * pairs are new, so creating is tried before reading. */
static int learn_pin(const struct allow_maps *maps, int family, const void *addr,
		     const char *name, const struct egret_allow *add, __u64 now_ns)
{
	struct egret_pin_key pk = { .attempt = maps->attempt,
				    .family = family == AF_INET ? 4 : 6 };
	size_t len = strlen(name);

	if (len == 0 || len > EGRET_SNI_MAX)
		return -EINVAL;
	memcpy(pk.addr, addr, family == AF_INET ? 4 : 16);
	memcpy(pk.name, name, len);
	pk.len = (__u32)len;
	return allow_map_merge(maps->pins, &pk, add, now_ns,
			       maps->quota ? &maps->quota->npins : NULL,
			       maps->quota ? EGRET_NAMES_PER_ENTRY * maps->quota->max_entries : 0,
			       true);
}

/* The learned rules merged into the address's own entry. */
static int learn_entry(const struct allow_maps *maps, int family, const void *addr,
		       const struct egret_allow *add, __u64 now_ns)
{
	if (family == AF_INET) {
		struct egret_key4 key = { .attempt = maps->attempt };

		memcpy(&key.addr, addr, sizeof(key.addr));
		return allow_map_merge(maps->allow4, &key, add, now_ns,
				       ALLOW_QUOTA(maps, n4, max_entries), false);
	}
	struct egret_key6 key = { .attempt = maps->attempt };

	memcpy(key.addr, addr, sizeof(key.addr));
	return allow_map_merge(maps->allow6, &key, add, now_ns,
			       ALLOW_QUOTA(maps, n6, max_entries), false);
}

int allow_learn(const struct allow_maps *maps, int family, const void *addr,
		const struct port_range *ports, unsigned int nports, bool any,
		__u64 expires_ns)
{
	return allow_learn_named(maps, family, addr, NULL, false, ports, nports,
				 any, expires_ns);
}

int allow_learn_named(const struct allow_maps *maps, int family, const void *addr,
		      const char *name, bool pinned,
		      const struct port_range *ports, unsigned int nports, bool any,
		      __u64 expires_ns)
{
	return allow_learn_for(maps, family, addr, name, 0, pinned, ports, nports, any,
			       expires_ns);
}

/*
 * The pair and the entry are written, and remembered as written, each on
 * its own: many names share an address (a CDN's), and once its entry
 * holds the rule, each new name's answer costs the pair only.
 */
int allow_learn_for(const struct allow_maps *maps, int family, const void *addr,
		    const char *name, __u32 dest, bool pinned,
		    const struct port_range *ports, unsigned int nports, bool any,
		    __u64 expires_ns)
{
	__u64 now_ns = allow_now_ns(), ph = ports_hash(ports, nports, any);
	__u64 name_hash = name ? fnv1a(FNV1A_INIT, name, strlen(name)) | 1 : 0;
	__u64 pin_ph, entry_ph;
	struct egret_allow add = {};
	bool pin_done, entry_done;
	__u32 words[4] = {};
	int r;

	if (pinned && !name)
		return -EINVAL;
	memcpy(words, addr, family == AF_INET ? 4 : 16);
	/* What an entry write carries besides the ports: the pinned flag
	 * and the destination (the name's own, when none is given). */
	pin_ph = (ph ^ name_hash) * 1099511628211ULL + 1;
	entry_ph = ph ^ ((__u64)dest << 33) ^ (pinned ? 2 : 4) ^ (dest ? 0 : name_hash);
	pin_done = !pinned || learned_already(maps->learned, family, words, pin_ph, true,
					      expires_ns, now_ns);
	entry_done = learned_already(maps->learned, family, words, entry_ph, false,
				     expires_ns, now_ns);
	if (pin_done && entry_done)
		return 0;
	r = learn_rules(&add, pinned, ports, nports, any, expires_ns, now_ns);
	if (r < 0)
		return r;
	add.dest = dest;
	if (!dest && maps->dests) {
		/* Made with its budget by the DNS proxy before (dns/proxy.c). */
		r = dests_id(maps->dests, name ? name : "(unnamed)", 0, &add.dest);
		if (r < 0)
			return r;
	}
	/* The pair first: an address is never pinned without its names. */
	if (!pin_done) {
		r = learn_pin(maps, family, addr, name, &add, now_ns);
		if (r < 0)
			return r;
		learned_note(maps->learned, family, words, pin_ph, true, expires_ns);
	}
	if (!entry_done) {
		r = learn_entry(maps, family, addr, &add, now_ns);
		if (r < 0)
			return r;
		learned_note(maps->learned, family, words, entry_ph, false, expires_ns);
	}
	return 0;
}

/* Clear the expired rules of one entry. Returns how many rules stay live;
 * *changed says whether @val was modified. */
static int sweep_entry(struct egret_allow *val, __u64 now_ns, bool *changed)
{
	int live = 0, i;

	*changed = false;
	for (i = 0; i < EGRET_PORT_SLOTS; i++) {
		struct egret_port_rule *rule = &val->rules[i];

		if (rule->expires_ns == EGRET_EXPIRES_UNUSED)
			continue;
		if (allow_rule_live(rule, now_ns)) {
			live++;
			continue;
		}
		rule->expires_ns = EGRET_EXPIRES_UNUSED;
		*changed = true;
	}
	return live;
}

struct sweep {
	int fd;
	__u64 attempt, now_ns;
	__u32 *n;
	int deleted;
};

static int sweep_one(const void *key, const void *value, void *ctx)
{
	struct sweep *sw = ctx;
	struct egret_allow val;
	bool changed;

	if (memcmp(key, &sw->attempt, sizeof(sw->attempt)))
		return 0;
	memcpy(&val, value, sizeof(val));
	if (sweep_entry(&val, sw->now_ns, &changed) == 0) {
		if (bpf_map_delete_elem(sw->fd, key) == 0) {
			sw->deleted++;
			allow_quota_give(sw->n);
		}
	} else if (changed) {
		bpf_map_update_elem(sw->fd, key, &val, BPF_EXIST);
	}
	return 0;
}

/* The attempt's entries of one exact map: expired rules cleared, entries
 * left with none deleted (their names stay, for attribution, within the
 * attempt's share). Other attempts' entries are theirs to sweep. */
static int sweep_map(const struct allow_maps *maps, int fd, int family,
		     __u64 now_ns, __u32 *n)
{
	size_t key_size = family == 4 ? sizeof(struct egret_key4) :
			  family == 6 ? sizeof(struct egret_key6) :
			  sizeof(struct egret_pin_key);	/* 0: the pairs */
	struct sweep sw = { .fd = fd, .attempt = maps->attempt, .now_ns = now_ns, .n = n };

	mapwalk(fd, key_size, sizeof(struct egret_allow), sweep_one, &sw);
	return sw.deleted;
}

int allow_sweep(const struct allow_maps *maps, __u64 now_ns)
{
	struct allow_quota *q = maps->quota;

	if (maps->pins >= 0)
		sweep_map(maps, maps->pins, 0, now_ns, q ? &q->npins : NULL);
	return sweep_map(maps, maps->allow4, 4, now_ns, q ? &q->n4 : NULL) +
	       sweep_map(maps, maps->allow6, 6, now_ns, q ? &q->n6 : NULL);
}
