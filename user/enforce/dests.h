/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * enforce/dests.h - the attempt's destinations: a learned name or a static
 * rule, each with an id, its upload budget and the bytes reserved against
 * it in egret_dest_counts, the rest of its counts per CPU in
 * egret_dest_tally (bpf/lib/account.h, docs/BUDGETS.md).
 *
 * An id is given when a destination first needs one, and both its entries
 * are written before any allow entry carries the id, so the programs
 * always find them. Ids are at most @max per attempt (--max-destinations): one more
 * is -E2BIG, and the caller refuses what needed it (a name: SERVFAIL
 * map-full), never lets it pass uncounted.
 */
#ifndef EGRET_DESTS_H
#define EGRET_DESTS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "egret.h"

struct dest_slot;

struct dests {
	int fd;			/* egret_dest_counts; -1: none (ids not kept) */
	int tally_fd;		/* egret_dest_tally; -1: none (tests of the maps) */
	__u64 attempt;
	__u32 max;		/* ids per attempt */
	__u32 n;		/* ids given */
	__u32 top;		/* the highest id a tally or counts entry was made for */
	bool complete;		/* every id of the attempt was made by this table */
	__u64 budget;		/* every destination's budget; 0: none */
	struct dest_slot *slots;	/* open addressing, by name */
	size_t cap;
};

/* An empty table writing to @fd and @tally_fd for @attempt; @budget
 * applies to every destination made from now on. */
void dests_init(struct dests *d, int fd, int tally_fd, __u64 attempt, __u32 max,
		__u64 budget);

/* The id of @name, made (with its counts entry) if it has none: its
 * budget then the smaller of @budget (its entry's own; 0: none) and the
 * attempt's. -E2BIG: the attempt has @max already; -ENOMEM; or the map's
 * -errno. */
int dests_id(struct dests *d, const char *name, __u64 budget, __u32 *ret_id);

/* The ids the map holds for the attempt, back in the table (an egretd
 * re-adopting it). 0 or -errno. */
int dests_recover(struct dests *d);

void dests_free(struct dests *d);

/* One destination's figures, read from the maps: its counts entry with
 * its tally's CPUs added. */
struct dest_figures {
	__u32 id;
	struct egret_dest_count c;
};

/* Every destination of @attempt in @fd, each with its tally in
 * @tally_fd (-1: none) added, into *@ret (malloc'd, *@n of them), sorted
 * by bytes sent, then received. 0 or -errno. */
int dests_read(int fd, int tally_fd, __u64 attempt, struct dest_figures **ret, size_t *n);

/* (The attempt's entries go with its allow entries: allow_purge().)
 * Where the table made every id of the attempt, delete their entries by
 * key, sparing allow_purge() the walk of two maps sized for the host:
 * 0, -ENODATA when the table cannot tell (ids recovered from the maps,
 * or more than DESTS_FORGET_MAX of them: walk), or the first -errno. */
#define DESTS_FORGET_MAX	256
int dests_forget(struct dests *d);

/* "84 KiB", "31.2 MiB", "512 B" into @buf. */
void dests_size_text(__u64 bytes, char *buf, size_t len);

#endif
