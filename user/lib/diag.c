// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>

#include "lib/diag.h"
#include "lib/log.h"

void diag_vat(struct diag *d, size_t line, size_t col, const char *fmt, va_list ap)
{
	char msg[200];

	if (d->n == DIAG_MAX) {
		d->dropped++;
		return;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* Bounded pieces: a long path or message is cut, never overflows. */
	if (line)
		snprintf(d->msg[d->n++], DIAG_LEN, "%.100s:%zu:%zu: %s",
			 d->file, line, col, msg);
	else
		snprintf(d->msg[d->n++], DIAG_LEN, "%.100s: %s", d->file, msg);
}

void diag_say(struct diag *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_vat(d, 0, 0, fmt, ap);
	va_end(ap);
}

void diag_log(const struct diag *d)
{
	for (int i = 0; i < d->n; i++)
		log_error("%s", d->msg[i]);
	if (d->dropped)
		log_error("%s: %d more problems not shown", d->file, d->dropped);
}
