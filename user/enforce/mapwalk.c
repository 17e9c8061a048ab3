// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "enforce/mapwalk.h"

#ifndef ENOTSUPP
#define ENOTSUPP	524	/* the kernel's own "not supported" */
#endif
#define KEY_MAX	512	/* the largest key of the set (a pin pair's) fits */

/* Key by key: the next key is fetched before @fn may delete this one (a
 * hash map restarts from its first key after the current one vanished). */
static int walk_keys(int fd, size_t key_size, size_t value_size, mapwalk_fn fn,
		     void *ctx, void *value)
{
	unsigned char cur[KEY_MAX], next[KEY_MAX];
	int more, r;

	more = bpf_map_get_next_key(fd, NULL, cur) == 0;
	while (more) {
		more = bpf_map_get_next_key(fd, cur, next) == 0;
		if (!value_size || bpf_map_lookup_elem(fd, cur, value) == 0) {
			r = fn(cur, value_size ? value : NULL, ctx);
			if (r < 0)
				return r;
		}
		memcpy(cur, next, key_size);
	}
	return 0;
}

int mapwalk(int fd, size_t key_size, size_t value_size, mapwalk_fn fn, void *ctx)
{
	/* A hash map's batch position is a bucket number: any size holds it. */
	unsigned long long pos = 0;
	unsigned char *keys, *values;
	bool first = true, end = false;
	int r = 0;

	struct bpf_map_info info = {};
	__u32 info_len = sizeof(info);
	size_t vsz = value_size;

	if (key_size > KEY_MAX)
		return -EINVAL;
	/* Batch reads return values too: room for them, unread. */
	if (!vsz) {
		if (bpf_obj_get_info_by_fd(fd, &info, &info_len) < 0)
			return -errno;
		vsz = info.value_size;
	}
	keys = malloc(MAPWALK_CHUNK * key_size);
	values = malloc(MAPWALK_CHUNK * (vsz ? vsz : 1));
	if (!keys || !values) {
		r = -ENOMEM;
		goto out;
	}
	while (!end && r == 0) {
		__u32 count = MAPWALK_CHUNK;

		if (bpf_map_lookup_batch(fd, first ? NULL : &pos, &pos, keys, values,
					 &count, NULL) < 0) {
			end = errno == ENOENT;	/* the last chunk, maybe with entries */
			if (!end) {
				r = -errno;
				/* No batch reads for this map (-EINVAL from
				 * libbpf's probe, -ENOTSUPP from the kernel),
				 * or a bucket of more than a chunk (-ENOSPC):
				 * before any entry was seen, walk key by key. */
				if (first && (r == -EINVAL || r == -ENOTSUPP ||
					      r == -EOPNOTSUPP || r == -ENOSPC))
					r = walk_keys(fd, key_size, value_size, fn, ctx, values);
				break;
			}
		}
		first = false;
		for (__u32 i = 0; i < count && r == 0; i++)
			r = fn(keys + i * key_size, value_size ? values + i * value_size : NULL,
			       ctx);
	}
out:
	free(keys);
	free(values);
	return r;
}
