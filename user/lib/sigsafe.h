/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lib/sigsafe.h - what a child between clone and exec may use where others
 * use opendir() and printf(): no allocation, async-signal-safe.
 */
#ifndef EGRET_SIGSAFE_H
#define EGRET_SIGSAFE_H

/*
 * @fn for each entry of the directory @fd (read with getdents64; "." and
 * ".." left out), with @ctx, until it returns non-zero: that, or 0 at the
 * end, or -errno.
 */
int dirents_each(int fd, int (*fn)(int fd, const char *name, void *ctx), void *ctx);

/* "%u" of @v at @p, NUL-terminated: the end. */
char *put_uint(char *p, unsigned int v);

#endif
