// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * enforce/slots.c - an attempt's slot: the ring buffer and repeat counts
 * it logs through while it holds the slot (bpf/lib/attempt.h), claimed
 * with an insert into egret_slots, emptied of its last holder's records,
 * given back at its end; and slots made ahead (egretd), since making one
 * waits for an RCU grace period.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "enforce/loader_impl.h"
#include "lib/util.h"

/* A slot's ring buffer and repeat counts, made as the set's templates
 * (bpf/lib/attempt.h) require: same type, sizes and flags. */
static int new_slot_maps(int *ret_ring, int *ret_repeats)
{
	LIBBPF_OPTS(bpf_map_create_opts, hash, .map_flags = BPF_F_NO_PREALLOC);
	_cleanup_close_ int ring = -1, repeats = -1;

	ring = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "egret_events", 0, 0,
			      EGRET_RING_BYTES, NULL);
	repeats = bpf_map_create(BPF_MAP_TYPE_HASH, "egret_repeats",
				 sizeof(struct egret_repeat_key), sizeof(__u64),
				 EGRET_REPEATS_MAX, &hash);
	if (ring < 0 || repeats < 0)
		return -errno;
	*ret_ring = TAKE_FD(ring);
	*ret_repeats = TAKE_FD(repeats);
	return 0;
}

/* Register @n slots' maps at once: a batch waits for one RCU grace
 * period, not one per slot. Where the kernel has no batch for
 * map-in-maps, one by one. */
static int register_slots(int outer, __u32 *slots, int *fds, __u32 n)
{
	__u32 count = n;

	if (n == 0)
		return 0;
	if (bpf_map_update_batch(outer, slots, fds, &count, NULL) == 0 && count == n)
		return 0;
	for (__u32 i = 0; i < n; i++)
		if (bpf_map_update_elem(outer, &slots[i], &fds[i], BPF_ANY) < 0)
			return -errno;
	return 0;
}

/* The inner map at @slot of map-in-map @outer, or -ENOENT. */
static int slot_map(int outer, __u32 slot)
{
	__u32 id;
	int fd;

	if (bpf_map_lookup_elem(outer, &slot, &id) < 0)
		return -errno;
	fd = bpf_map_get_fd_by_id(id);
	return fd < 0 ? -errno : fd;
}

static int discard(void *ctx, void *data, size_t size)
{
	(void)ctx, (void)data, (void)size;
	return 0;
}

/* What the slot's last holder left: records it never read, counts. */
static int empty_slot(int ring, int repeats)
{
	struct ring_buffer *rb = ring_buffer__new(ring, discard, NULL, NULL);
	unsigned char key[sizeof(struct egret_repeat_key)];
	int r;

	if (!rb)
		return -errno;
	r = ring_buffer__consume(rb);
	ring_buffer__free(rb);
	if (r < 0)
		return r;
	while (bpf_map_get_next_key(repeats, NULL, key) == 0)
		if (bpf_map_delete_elem(repeats, key) < 0)
			return -errno;
	return 0;
}

/*
 * An insert into egret_slots fails for a slot another attempt holds, so
 * two egrets never share one. The slot's maps are its last holder's,
 * emptied, or made now.
 */
int loader_slot_claim(struct loader *ld)
{
	int r;

	for (__u32 slot = 1; slot < EGRET_SLOTS_MAX; slot++) {
		if (bpf_map_update_elem(ld->maps[LOADER_SLOTS], &slot, &ld->key,
					BPF_NOEXIST) < 0) {
			if (errno == EEXIST)
				continue;
			return -errno;
		}
		ld->slot = slot;
		/* Its TLS counts start at zero, whoever held it before. */
		if (ld->maps[LOADER_TLS_COUNTS] >= 0 &&
		    bpf_map_update_elem(ld->maps[LOADER_TLS_COUNTS], &slot,
					&(struct egret_tls_count){ 0 }, BPF_ANY) < 0)
			return -errno;
		ld->maps[LOADER_EVENTS] = slot_map(ld->maps[LOADER_RINGS], slot);
		ld->maps[LOADER_REPEATS] = slot_map(ld->maps[LOADER_REPEAT_OF], slot);
		if (ld->maps[LOADER_EVENTS] >= 0 && ld->maps[LOADER_REPEATS] >= 0)
			return empty_slot(ld->maps[LOADER_EVENTS], ld->maps[LOADER_REPEATS]);
		for (int i = LOADER_EVENTS; i <= LOADER_REPEATS; i++) {
			if (ld->maps[i] >= 0)
				close(ld->maps[i]);
			ld->maps[i] = -1;
		}
		r = new_slot_maps(&ld->maps[LOADER_EVENTS], &ld->maps[LOADER_REPEATS]);
		if (r == 0)
			r = register_slots(ld->maps[LOADER_RINGS], &slot,
					   &ld->maps[LOADER_EVENTS], 1);
		if (r == 0)
			r = register_slots(ld->maps[LOADER_REPEAT_OF], &slot,
					   &ld->maps[LOADER_REPEATS], 1);
		return r;
	}
	return -EBUSY;
}

int loader_make_slots(struct loader *ld, __u32 n)
{
	_cleanup_free_ __u32 *slots = NULL;
	_cleanup_free_ int *rings = NULL, *repeats = NULL;
	__u32 k = 0;
	int r = 0;

	if (n >= EGRET_SLOTS_MAX)
		n = EGRET_SLOTS_MAX - 1;
	slots = calloc(n + 1, sizeof(*slots));
	rings = calloc(n + 1, sizeof(*rings));
	repeats = calloc(n + 1, sizeof(*repeats));
	if (!slots || !rings || !repeats)
		return -ENOMEM;
	for (__u32 slot = 1; slot <= n && r == 0; slot++) {
		int fd = slot_map(ld->maps[LOADER_RINGS], slot);

		if (fd >= 0) {
			close(fd);
			continue;
		}
		r = new_slot_maps(&rings[k], &repeats[k]);
		if (r == 0)
			slots[k++] = slot;
	}
	if (r == 0)
		r = register_slots(ld->maps[LOADER_RINGS], slots, rings, k);
	if (r == 0)
		r = register_slots(ld->maps[LOADER_REPEAT_OF], slots, repeats, k);
	for (__u32 i = 0; i < k; i++) {
		close(rings[i]);
		close(repeats[i]);
	}
	return r;
}

int loader_slots_release(int slots, __u64 key)
{
	__u32 cur, next;
	__u64 holder;
	int more, r = 0;

	if (slots < 0)
		return 0;
	more = bpf_map_get_next_key(slots, NULL, &cur) == 0;
	while (more) {
		more = bpf_map_get_next_key(slots, &cur, &next) == 0;
		if (bpf_map_lookup_elem(slots, &cur, &holder) == 0 && holder == key &&
		    bpf_map_delete_elem(slots, &cur) < 0 && errno != ENOENT && !r)
			r = -errno;
		cur = next;
	}
	return r;
}

