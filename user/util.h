/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* util.h - cleanup attributes in the systemd manner; destructors accept NULL. */
#ifndef EGRET_UTIL_H
#define EGRET_UTIL_H

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

#define _cleanup_(f)		__attribute__((cleanup(f)))
#define _cleanup_free_		_cleanup_(freep)
#define _cleanup_close_		_cleanup_(closep)
#define _cleanup_fclose_	_cleanup_(fclosep)

/* Hand ownership out of a cleanup-managed variable. */
#define TAKE_PTR(p)  ({ __typeof__(p) _p = (p); (p) = NULL; _p; })
#define TAKE_FD(fd)  ({ int _fd = (fd); (fd) = -1; _fd; })

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
