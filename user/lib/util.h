/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* lib/util.h - cleanup attributes in the systemd manner; destructors accept NULL. */
#ifndef EGRET_UTIL_H
#define EGRET_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

static inline void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

#define _cleanup_(f)		__attribute__((cleanup(f)))
#define _cleanup_free_		_cleanup_(freep)
#define _cleanup_close_		_cleanup_(closep)
#define _cleanup_fclose_	_cleanup_(fclosep)

/* Hand ownership out of a cleanup-managed variable. */
#define TAKE_PTR(p)  ({ __typeof__(p) _p = (p); (p) = NULL; _p; })
#define TAKE_FD(fd)  ({ int _fd = (fd); (fd) = -1; _fd; })

/*
 * Make room for item @n of the array *@items (capacity *@cap, items of
 * @size bytes): doubles from 16, never beyond @max items (-E2BIG).
 */
static inline int array_grow(void **items, size_t *cap, size_t n, size_t size,
			     size_t max)
{
	size_t newcap = *cap ? 2 * *cap : 16;
	void *mem;

	if (n < *cap)
		return 0;
	if (n >= max)
		return -E2BIG;
	mem = reallocarray(*items, newcap, size);
	if (!mem)
		return -ENOMEM;
	*items = mem;
	*cap = newcap;
	return 0;
}

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* FNV-1a, 64 bits: @n bytes of @data into @h (start from FNV1A_INIT).
 * For tags and caches, never for anything an attacker must not collide. */
#define FNV1A_INIT	1469598103934665603ULL

static inline uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

#endif
