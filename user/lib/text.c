// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/text.h"

void iso_utc(int64_t t, char *buf, size_t len)
{
	time_t secs = (time_t)t;
	struct tm tm;

	gmtime_r(&secs, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* comm comes from the sandbox: printable ASCII only on a terminal. */
void safe_text(const char *in, char *out, size_t len)
{
	size_t o = 0;

	for (; *in && o + 1 < len; in++)
		out[o++] = *in >= 0x20 && *in < 0x7f ? *in : '?';
	out[o] = '\0';
}

int csv_append(char *csv, size_t size, const char *item)
{
	size_t used = strnlen(csv, size), n = strlen(item);

	if (used + !!used + n + 1 > size)
		return -E2BIG;
	if (used)
		csv[used++] = ',';
	memcpy(csv + used, item, n + 1);
	return 0;
}

int errbuf_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int size_parse(const char *text, uint64_t *ret)
{
	static const char units[] = "KMGT";
	unsigned long long v;
	const char *u;
	char *end;
	int shift = 0;

	*ret = 0;
	if (!text || !isdigit((unsigned char)text[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || v == 0)
		return -EINVAL;
	if (*end) {
		u = strchr(units, toupper((unsigned char)*end));
		if (!u)
			return -EINVAL;
		shift = 10 * (int)(u - units + 1);
		end++;
		if (*end == 'i')
			end++;
		if (*end == 'B')
			end++;
		if (*end)
			return -EINVAL;
	} else if (end == text) {
		return -EINVAL;
	}
	if (v > (1ULL << 50) >> shift)
		return -EINVAL;
	*ret = (uint64_t)v << shift;
	return 0;
}
