// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "enforce/dests.h"
#include "lib/util.h"

struct dest_slot {
	__u32 id;		/* 0: empty */
	char name[EGRET_DEST_NAME_MAX + 1];
};

void dests_init(struct dests *d, int fd, int tally_fd, __u64 attempt, __u32 max,
		__u64 budget)
{
	*d = (struct dests){ .fd = fd, .tally_fd = tally_fd, .attempt = attempt, .max = max,
			     .budget = budget, .complete = fd >= 0 };
}

/* Each CPU's copy of a per-CPU value: the kernel hands them 8-byte aligned. */
#define TALLY_SIZE	((sizeof(struct egret_dest_tally) + 7) & ~(size_t)7)

/* @key's tally, zero on every CPU, beside its counts entry: 0 or -errno. */
static int tally_make(const struct dests *d, const struct egret_dest_key *key)
{
	int ncpu = libbpf_num_possible_cpus();
	_cleanup_free_ void *zero = NULL;

	if (d->tally_fd < 0)
		return 0;
	if (ncpu <= 0)
		return ncpu < 0 ? ncpu : -EINVAL;
	zero = calloc((size_t)ncpu, TALLY_SIZE);
	if (!zero)
		return -ENOMEM;
	if (bpf_map_update_elem(d->tally_fd, key, zero, BPF_ANY) < 0)
		return errno == E2BIG || errno == ENOMEM ? -E2BIG : -errno;
	return 0;
}

/* @key's tally summed over CPUs, added to @c (none: nothing added). */
static void tally_add(int fd, const struct egret_dest_key *key, struct egret_dest_count *c)
{
	int ncpu = libbpf_num_possible_cpus();
	_cleanup_free_ unsigned char *vals = NULL;
	struct egret_dest_tally t;

	if (fd < 0 || ncpu <= 0)
		return;
	vals = calloc((size_t)ncpu, TALLY_SIZE);
	if (!vals || bpf_map_lookup_elem(fd, key, vals) < 0)
		return;
	for (int i = 0; i < ncpu; i++) {
		memcpy(&t, vals + (size_t)i * TALLY_SIZE, sizeof(t));
		c->sent += t.sent;
		c->received += t.received;
		c->conns += t.conns;
	}
}

void dests_free(struct dests *d)
{
	free(d->slots);
	d->slots = NULL;
	d->cap = d->n = d->top = 0;
}

/* @key's entry out of @fd: 0 if it is gone, or -errno. */
static int forget_one(int fd, const struct egret_dest_key *key)
{
	if (fd < 0 || bpf_map_delete_elem(fd, key) == 0 || errno == ENOENT)
		return 0;
	return -errno;
}

int dests_forget(struct dests *d)
{
	struct egret_dest_key key = { .attempt = d->attempt };
	int first = 0;

	if (!d->complete || d->top > DESTS_FORGET_MAX)
		return -ENODATA;
	for (key.dest = 1; key.dest <= d->top; key.dest++) {
		int r = forget_one(d->fd, &key), t = forget_one(d->tally_fd, &key);

		if (!first)
			first = r < 0 ? r : t;
	}
	if (!first)
		d->top = 0;
	return first;
}

/* The slot holding @name, or the empty one where it would go. */
static struct dest_slot *slot_of(const struct dests *d, const char *name)
{
	size_t i = fnv1a(FNV1A_INIT, name, strlen(name)) & (d->cap - 1);

	while (d->slots[i].id && strcmp(d->slots[i].name, name))
		i = (i + 1) & (d->cap - 1);
	return &d->slots[i];
}

/* Room for one more name: the table at most half full. */
static int grow(struct dests *d)
{
	struct dest_slot *old = d->slots;
	size_t old_cap = d->cap, cap = d->cap ? d->cap * 2 : 64;

	if ((d->n + 1) * 2 <= d->cap)
		return 0;
	d->slots = calloc(cap, sizeof(*d->slots));
	if (!d->slots) {
		d->slots = old;
		return -ENOMEM;
	}
	d->cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].id)
			*slot_of(d, old[i].name) = old[i];
	free(old);
	return 0;
}

int dests_id(struct dests *d, const char *name, __u64 budget, __u32 *ret_id)
{
	struct egret_dest_count c = {
		.budget = budget && (!d->budget || budget < d->budget) ? budget : d->budget,
	};
	struct egret_dest_key key = { .attempt = d->attempt };
	struct egret_dest_count old;
	struct dest_slot *s;
	int r;

	*ret_id = 0;
	if (d->fd < 0)
		return 0;
	if (d->cap) {
		s = slot_of(d, name);
		if (s->id) {
			*ret_id = s->id;
			return 0;
		}
	}
	if (d->n >= d->max)
		return -E2BIG;
	r = grow(d);
	if (r < 0)
		return r;
	key.dest = d->n + 1;
	snprintf(c.name, sizeof(c.name), "%s", name);
	/* BPF_NOEXIST: an id is never handed out twice, even if the table
	 * and the map disagree (then the next id is tried). The tally
	 * first: a counts entry is never without one. */
	for (;; key.dest++) {
		if (key.dest > d->max)
			return -E2BIG;
		if (bpf_map_lookup_elem(d->fd, &key, &old) == 0)
			continue;
		if (errno != ENOENT)
			return -errno;
		if (key.dest > d->top)
			d->top = key.dest;
		r = tally_make(d, &key);
		if (r < 0)
			return r;
		if (bpf_map_update_elem(d->fd, &key, &c, BPF_NOEXIST) == 0)
			break;
		if (errno != EEXIST)
			return errno == E2BIG || errno == ENOMEM ? -E2BIG : -errno;
	}
	s = slot_of(d, c.name);
	s->id = key.dest;
	memcpy(s->name, c.name, sizeof(s->name));
	d->n = key.dest;
	*ret_id = key.dest;
	return 0;
}

int dests_recover(struct dests *d)
{
	struct dest_figures *all = NULL;
	size_t n = 0;
	int r = dests_read(d->fd, -1, d->attempt, &all, &n);

	/* Ids made by a dead egret: the purge walks the maps for them. */
	d->complete = false;

	for (size_t i = 0; r == 0 && i < n; i++) {
		struct dest_slot *s;

		r = grow(d);
		if (r < 0)
			break;
		s = slot_of(d, all[i].c.name);
		s->id = all[i].id;
		memcpy(s->name, all[i].c.name, sizeof(s->name));
		if (all[i].id > d->n)
			d->n = all[i].id;
	}
	free(all);
	return r;
}

static int by_bytes(const void *a, const void *b)
{
	const struct dest_figures *x = a, *y = b;

	if (x->c.sent != y->c.sent)
		return x->c.sent < y->c.sent ? 1 : -1;
	if (x->c.received != y->c.received)
		return x->c.received < y->c.received ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

int dests_read(int fd, int tally_fd, __u64 attempt, struct dest_figures **ret, size_t *n)
{
	struct egret_dest_key cur, next;
	struct dest_figures *all = NULL;
	size_t cap = 0, k = 0;
	bool more;

	*ret = NULL;
	*n = 0;
	if (fd < 0)
		return 0;
	more = bpf_map_get_next_key(fd, NULL, &cur) == 0;
	while (more) {
		more = bpf_map_get_next_key(fd, &cur, &next) == 0;
		if (cur.attempt == attempt) {
			if (array_grow((void **)&all, &cap, k, sizeof(*all), SIZE_MAX) < 0) {
				free(all);
				return -ENOMEM;
			}
			all[k].id = cur.dest;
			if (bpf_map_lookup_elem(fd, &cur, &all[k].c) == 0) {
				all[k].c.name[EGRET_DEST_NAME_MAX] = '\0';
				tally_add(tally_fd, &cur, &all[k].c);
				k++;
			}
		}
		cur = next;
	}
	if (k)
		qsort(all, k, sizeof(*all), by_bytes);
	*ret = all;
	*n = k;
	return 0;
}

void dests_size_text(__u64 bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, len, v < 10 ? "%.1f %s" : "%.0f %s", v, unit[u]);
}
