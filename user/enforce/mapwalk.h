/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * enforce/mapwalk.h - every entry of a shared map, read in batches.
 *
 * The set's maps hold every attempt's entries on the host; an attempt's
 * sweep and teardown look at all of them to find its own. Key by key that
 * is two system calls an entry (the next key, the value), for each
 * attempt, every sweep: a host with many attempts paid for the product of
 * the two. BPF_MAP_LOOKUP_BATCH reads MAPWALK_CHUNK entries per call.
 * Maps that have no batch reads (the LPM tries) are walked key by key.
 */
#ifndef EGRET_MAPWALK_H
#define EGRET_MAPWALK_H

#include <stddef.h>

#define MAPWALK_CHUNK	256

/* One entry; @value is NULL when the walk reads keys only. It may delete
 * @key. A negative return ends the walk with it. */
typedef int (*mapwalk_fn)(const void *key, const void *value, void *ctx);

/*
 * @fn for each entry of map @fd (keys of @key_size; values of @value_size
 * read along, or none when 0). An entry added or deleted meanwhile may be
 * seen or not, as with any walk of a live map. Returns 0, the first
 * negative return of @fn, or -errno.
 */
int mapwalk(int fd, size_t key_size, size_t value_size, mapwalk_fn fn, void *ctx);

#endif
