/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * enforce/allow_impl.h - what the two halves of the allow maps' writer
 * share: allow.c (rules, static entries, names, the purge) and learn.c
 * (entries learned from DNS answers, and their sweep). One entry is
 * merged into a map the same way by both, and counted against the same
 * share.
 */
#ifndef EGRET_ALLOW_IMPL_H
#define EGRET_ALLOW_IMPL_H

#include "enforce/allow.h"

/* Does @rule still allow at @now_ns (static, or its deadline ahead)? */
bool allow_rule_live(const struct egret_port_rule *rule, __u64 now_ns);

/* One more entry in a share counted by @n (NULL: uncounted), at most @max:
 * -E2BIG when the attempt's share is full, as the kernel says for a full
 * map. */
int allow_quota_take(__u32 *n, __u32 max);

/* One entry fewer in the share @n (NULL: uncounted). */
void allow_quota_give(__u32 *n);

/* The share and limit of @maps' quota that a map's entries count in, as
 * the two arguments (@n, @max) of allow_map_merge(): none without one. */
#define ALLOW_QUOTA(maps, field, limit) \
	((maps)->quota ? &(maps)->quota->field : NULL), \
	((maps)->quota ? (maps)->quota->limit : 0)

/* Merge @add into the map's entry at @key, creating it if needed (a new
 * one counted in @n, at most @max). @likely_new: try creating it first,
 * one system call where a lookup and an update are two. */
int allow_map_merge(int fd, const void *key, const struct egret_allow *add,
		    __u64 now_ns, __u32 *n, __u32 max, bool likely_new);

/* Forget every write the table remembers (the purge: the entries are
 * gone). NULL: none kept. */
void allow_learned_clear(struct allow_learned *l);

#endif
