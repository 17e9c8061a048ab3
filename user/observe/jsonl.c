// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "lib/json.h"
#include "observe/jsonl.h"

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

uint64_t jsonl_boot_ns(void)
{
	return (uint64_t)clock_ns(CLOCK_BOOTTIME);
}

int64_t jsonl_boot_to_real_ns(void)
{
	return clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_BOOTTIME);
}

/* "2026-11-30T06:55:01.123Z" for a CLOCK_BOOTTIME instant. */
static void iso_time(const struct jsonl_log *log, uint64_t boot_ns, char *buf,
		     size_t len)
{
	int64_t real = (int64_t)boot_ns + log->boot_to_real_ns;
	time_t secs = (time_t)(real / 1000000000LL);
	struct tm tm;

	gmtime_r(&secs, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ",
		 (tm.tm_year + 1900) % 10000, (tm.tm_mon + 1) % 100,
		 tm.tm_mday % 100, tm.tm_hour % 100, tm.tm_min % 100,
		 tm.tm_sec % 100,
		 (unsigned int)((uint64_t)real % 1000000000ULL / 1000000));
}

void jsonl_start(struct jsonl *l, const struct jsonl_log *log, uint64_t boot_ns)
{
	char when[64];

	iso_time(log, boot_ns, when, sizeof(when));
	l->off = 0;
	jsonl_put(l, "{\"v\":%d,\"time\":\"%s\",\"attempt\":", EVENTS_SCHEMA, when);
	jsonl_str(l, log->attempt);
}

void jsonl_put(struct jsonl *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	/* Past the end already: the line is cut there (jsonl_end). */
	if (l->off >= l->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->off, l->len - l->off, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->off += (size_t)n;
}

void jsonl_str(struct jsonl *l, const char *s)
{
	l->off = json_append(l->buf, l->off, l->len - 1, s);
}

void jsonl_str_or_null(struct jsonl *l, const char *s)
{
	if (s && s[0])
		jsonl_str(l, s);
	else
		jsonl_put(l, "null");
}

void jsonl_end(struct jsonl_log *log, struct jsonl *l)
{
	size_t n;

	jsonl_put(l, "}");
	n = l->off >= l->len - 1 ? l->len - 2 : l->off;
	if (log->fd < 0)
		return;
	l->buf[n++] = '\n';
	if (write(log->fd, l->buf, n) != (ssize_t)n)
		log->write_errors++;
}
