/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lib/diag.h - problems collected for the operator, one message each, so
 * that all of them are fixed at once: "FILE:LINE:COL: message" from the
 * parsers (policy/yaml_util.h adds the position of a YAML node), "FILE:
 * message" otherwise. Collecting never fails: past DIAG_MAX it counts.
 */
#ifndef EGRET_DIAG_H
#define EGRET_DIAG_H

#include <stdarg.h>
#include <stddef.h>

#define DIAG_MAX	32
#define DIAG_LEN	360

struct diag {
	const char *file;
	char msg[DIAG_MAX][DIAG_LEN];
	int n;
	int dropped;		/* problems beyond DIAG_MAX */
};

/* Record a problem of @d->file; @line 0: no position (@col then unused). */
void diag_vat(struct diag *d, size_t line, size_t col, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

/* Every problem recorded, one error line each. */
void diag_log(const struct diag *d);

/* Record a problem of the file as a whole. */
void diag_say(struct diag *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
