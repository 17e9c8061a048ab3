/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * observe/repeats.h - the denials BPF only counted (egret_repeats): what
 * grew since egret last looked.
 *
 * BPF sends the first denial of a kind through the ring buffer and counts
 * the rest in egret_repeats, never resetting a count (a reset would race
 * with the programs' increments and lose some). So egret remembers how
 * much of each count it has reported, and reports the difference.
 */
#ifndef EGRET_REPEATS_H
#define EGRET_REPEATS_H

#include <stddef.h>
#include <stdint.h>


struct egret_repeat_key;
struct repeat_seen;

struct repeats {
	int fd;				/* egret_repeats, not owned */
	struct repeat_seen *slots;	/* open addressing, cap a power of 2 */
	size_t cap, n;
};

typedef void (*repeats_fn)(void *ctx, const struct egret_repeat_key *key,
			   uint64_t more);

void repeats_init(struct repeats *r, int fd);

/* @fn once per key whose count grew, with by how much. Returns the number
 * of keys reported, or -errno (the map could not be read; what was read
 * is reported). */
int repeats_poll(struct repeats *r, repeats_fn fn, void *ctx);

void repeats_free(struct repeats *r);

#endif
