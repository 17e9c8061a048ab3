/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lib/pages.h - zeroed memory of its own, for large tables a process
 * fills a little of.
 *
 * calloc() of a struct of tens of KiB clears every page of it, a page
 * fault each (~26 us on a PVM guest), and in an egretd handler copies
 * pages of the heap it shares with its accept loop. Fresh anonymous pages
 * are the zero page until written: only what is filled is faulted in
 * (issue 42).
 */
#ifndef EGRET_LIB_PAGES_H
#define EGRET_LIB_PAGES_H

#include <stddef.h>

/* @size bytes of zeros in a private anonymous mapping; NULL without
 * memory. */
void *pages_zeroed(size_t size);

/* Unmap what pages_zeroed(@size) gave (NULL: nothing). */
void pages_free(void *p, size_t size);

#endif /* EGRET_LIB_PAGES_H */
