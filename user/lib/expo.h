/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lib/expo.h - the Prometheus text exposition format (version 0.0.4, what
 * `Content-Type: text/plain; version=0.0.4` promises and `promtool check
 * metrics` reads): a family's HELP and TYPE lines, then its samples, each
 * `name{label="value",...} number`.
 *
 * Label values are data (a repository name is the caller's), so each is
 * escaped as the format asks: `\` as `\\`, `"` as `\"`, a newline as `\n`.
 * Any other control byte and any byte above 0x7e becomes `?`: the output
 * is printable ASCII, valid UTF-8 whatever it was given. The buffer grows
 * up to a bound; past it the text is cut at the last whole line and
 * expo.full says so.
 */
#ifndef EGRET_EXPO_H
#define EGRET_EXPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct expo {
	char *buf;
	size_t len, cap, max;
	bool full;		/* something did not fit in @max */
};

struct expo_label {
	const char *name;	/* [a-zA-Z_][a-zA-Z0-9_]*: the code's own */
	const char *value;	/* any text, escaped */
};

/* An empty text that may grow to @max bytes. */
void expo_init(struct expo *e, size_t max);
void expo_free(struct expo *e);

/* `# HELP NAME HELP` and `# TYPE NAME TYPE` (counter, gauge, histogram). */
void expo_family(struct expo *e, const char *name, const char *type, const char *help);

/* One sample, NAME{LABELS} VALUE. */
void expo_sample(struct expo *e, const char *name, const struct expo_label *labels,
		 size_t nlabels, uint64_t value);

/* A histogram's samples (its family already written): @bounds_ms[i] its
 * buckets' upper bounds in milliseconds, exposed in seconds; @counts[i]
 * the observations in bucket i alone (the last, nbounds, beyond every
 * bound); @sum_us their sum in microseconds. */
void expo_histogram(struct expo *e, const char *name, const unsigned int *bounds_ms,
		    size_t nbounds, const uint64_t *counts, uint64_t sum_us);

/* @in escaped as a label value into @out (NUL-terminated, cut short at
 * @len); the length it needs, as snprintf. */
size_t expo_escape(const char *in, char *out, size_t len);

#endif
