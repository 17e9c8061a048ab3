/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lib/strv.h - a NULL-terminated array of strings, each its own copy, with
 * a capacity fixed when it is made: every append is checked and says
 * -E2BIG when it is full, never writes past it (an argv one builds from
 * a request: daemon/run_argv.h).
 */
#ifndef EGRET_STRV_H
#define EGRET_STRV_H

#include <stddef.h>

struct strv {
	char **v;	/* n strings, then NULL: ready for execve() */
	size_t n;
	size_t cap;	/* at most this many strings */
	int error;	/* the first append that failed (-E2BIG, -ENOMEM), or 0 */
};

/* Room for @cap strings: 0, or -ENOMEM. */
int strv_init(struct strv *s, size_t cap);

/*
 * Append a copy of @word, or the string @fmt makes: 0, -E2BIG (full) or
 * -ENOMEM, and nothing appended. A failure sticks: every later append
 * fails with the first one's error, so a run of appends is checked once
 * at its end (s->error).
 */
int strv_add(struct strv *s, const char *word);
int strv_addf(struct strv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Fail @s with @error (a negative errno) unless it failed already: its
 * first error, which sticks as an append's would. */
int strv_fail(struct strv *s, int error);

/* The strings and the array; a zeroed or freed @s is fine. */
void strv_free(struct strv *s);

#endif
