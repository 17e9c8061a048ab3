/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * enforce/spare.h - program sets loaded and verified in advance.
 *
 * Loading egret's object costs ~100-130 ms, nearly all of it the kernel
 * verifying the programs: most of an attempt's start. So once an attempt's
 * command runs, egret leaves a spare for the next one: a process of its
 * own (outside the attempt) loads a fresh, never-attached copy and pins its
 * programs and maps under SPARE_ROOT/spare_<build>_<sizes>_<pid>/. The next
 * egret takes it by renaming the directory (atomic: one taker), checks it
 * (every program and map present and of the right kind, allow maps empty),
 * removes the pins and holds the fds. An attempt still gets programs and
 * maps nobody else has: only *when* they were loaded changes. Anything
 * wrong with a spare means loading now, never failing.
 */
#ifndef EGRET_SPARE_H
#define EGRET_SPARE_H

#include <stdbool.h>
#include <linux/types.h>

#include "lib/paths.h"

#define SPARE_ROOT	EGRET_BPFFS "/egret-spares"
#define SPARE_MAX	2	/* ready or being made, per build and sizes */

struct loader;

/* Take a ready spare of this build sized @max_entries/@max_cidrs into
 * @ld. -ENOENT when there is none; any other error: it was unusable. */
int spare_take(struct loader *ld, __u32 max_entries, __u32 max_cidrs);

/* Make one in a process of its own (it outlives us) unless SPARE_MAX are
 * there already. Never fails the caller. */
void spare_make_async(__u32 max_entries, __u32 max_cidrs);

/* Make one now (the body of spare_make_async). */
int spare_make(__u32 max_entries, __u32 max_cidrs);

/* Remove spares of other builds and half-made or half-taken ones whose
 * process is gone; @all: every spare. Returns how many were removed. */
int spare_gc(bool all);

#endif
