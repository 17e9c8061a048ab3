// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "egret.h"
#include "observe/repeats.h"

/* What of one key's count egret has reported. */
struct repeat_seen {
	struct egret_repeat_key key;
	uint64_t reported;
	bool used;
};

#define REPEATS_CHUNK	256	/* keys per batch read */

void repeats_init(struct repeats *r, int fd)
{
	*r = (struct repeats){ .fd = fd };
}

static size_t hash_key(const struct egret_repeat_key *k)
{
	const unsigned char *p = (const unsigned char *)k;
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < sizeof(*k); i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return (size_t)h;
}

static struct repeat_seen *slot_of(struct repeat_seen *slots, size_t cap,
				   const struct egret_repeat_key *k)
{
	size_t i = hash_key(k) & (cap - 1);

	while (slots[i].used && memcmp(&slots[i].key, k, sizeof(*k)))
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

/* Room for one more key: kept at most half full. */
static int reserve(struct repeats *r)
{
	struct repeat_seen *bigger;
	size_t cap;

	if (r->slots && (r->n + 1) * 2 <= r->cap)
		return 0;
	cap = r->cap ? r->cap * 2 : 64;
	bigger = calloc(cap, sizeof(*bigger));
	if (!bigger)
		return -ENOMEM;
	for (size_t i = 0; i < r->cap; i++)
		if (r->slots[i].used)
			*slot_of(bigger, cap, &r->slots[i].key) = r->slots[i];
	free(r->slots);
	r->slots = bigger;
	r->cap = cap;
	return 0;
}

static int note(struct repeats *r, const struct egret_repeat_key *k,
		uint64_t count, repeats_fn fn, void *ctx)
{
	struct repeat_seen *s;
	int err = reserve(r);

	if (err < 0)
		return err;
	s = slot_of(r->slots, r->cap, k);
	if (!s->used) {
		*s = (struct repeat_seen){ .key = *k, .used = true };
		r->n++;
	}
	if (count <= s->reported)
		return 0;
	fn(ctx, k, count - s->reported);
	s->reported = count;
	return 1;
}

int repeats_poll(struct repeats *r, repeats_fn fn, void *ctx)
{
	struct egret_repeat_key keys[REPEATS_CHUNK];
	uint64_t values[REPEATS_CHUNK];
	__u64 batch = 0;
	bool first = true;
	int reported = 0, err = 0;

	if (r->fd < 0)
		return 0;
	for (;;) {
		__u32 count = REPEATS_CHUNK;
		int res = bpf_map_lookup_batch(r->fd, first ? NULL : &batch, &batch,
					       keys, values, &count, NULL);
		int end = res < 0 && errno == ENOENT;

		if (res < 0 && !end) {
			err = -errno;
			break;
		}
		first = false;
		for (__u32 i = 0; i < count; i++) {
			int n = note(r, &keys[i], values[i], fn, ctx);

			if (n < 0)
				return n;
			reported += n;
		}
		if (end)
			break;
	}
	return err < 0 ? err : reported;
}

void repeats_free(struct repeats *r)
{
	free(r->slots);
	*r = (struct repeats){ .fd = -1 };
}
