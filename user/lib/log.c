// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"

static enum log_level max_level = LOG_WARN;
static const char *line_end = "\n";

void log_set_crlf(bool on)
{
	line_end = on ? "\r\n" : "\n";
}

void log_set_level(enum log_level level)
{
	max_level = level;
}

enum log_level log_get_level(void)
{
	return max_level;
}

static void log_va(enum log_level level, int err, const char *fmt, va_list ap)
{
	char line[1024];

	if (level > max_level)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	/* One write per line, so lines of concurrent attempts never interleave. */
	if (err)
		fprintf(stderr, "egret: %s: %s%s", line, strerror(abs(err)), line_end);
	else
		fprintf(stderr, "egret: %s%s", line, line_end);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_va(level, 0, fmt, ap);
	va_end(ap);
}

int log_errno(enum log_level level, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_va(level, err ? err : EIO, fmt, ap);
	va_end(ap);
	return -abs(err ? err : EIO);
}
