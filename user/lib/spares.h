/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lib/spares.h - freed objects of one size kept for the next allocation.
 *
 * A hot path that allocates one object per event (the DNS proxy: per
 * forwarded query) takes them back from here: once as many have been in
 * use at once as now, it allocates nothing. At most SPARES_MAX are kept;
 * a spare's first bytes hold the link, so objects need no field for it.
 */
#ifndef EGRET_SPARES_H
#define EGRET_SPARES_H

#include <stddef.h>

#define SPARES_MAX	64

struct spares {
	void *head;
	unsigned int n;
};

/* An object of @size (the same for every call on @s): a spare, or new.
 * Its contents are undefined; NULL: no memory. */
void *spares_get(struct spares *s, size_t size);

/* @obj (from spares_get) kept for the next, or freed. */
void spares_put(struct spares *s, void *obj);

/* Free every spare. */
void spares_free(struct spares *s);

#endif
