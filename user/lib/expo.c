// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lib/expo.c - the Prometheus text exposition format (lib/expo.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/expo.h"

void expo_init(struct expo *e, size_t max)
{
	*e = (struct expo){ .max = max };
}

void expo_free(struct expo *e)
{
	free(e->buf);
	*e = (struct expo){};
}

/* Room for @need more bytes (and a NUL): false when @max forbids it. */
static bool reserve(struct expo *e, size_t need)
{
	size_t cap = e->cap ? e->cap : 4096;
	char *p;

	if (e->full || e->len + need + 1 > e->max) {
		e->full = true;
		return false;
	}
	while (cap < e->len + need + 1)
		cap *= 2;
	if (cap > e->max)
		cap = e->max;
	if (cap == e->cap)
		return true;
	p = realloc(e->buf, cap);
	if (!p) {
		e->full = true;
		return false;
	}
	e->buf = p;
	e->cap = cap;
	return true;
}

/* A whole line, or nothing of it. */
static void line(struct expo *e, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !reserve(e, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(e->buf + e->len, e->cap - e->len, fmt, ap);
	va_end(ap);
	e->len += (size_t)n;
}

/* The escape of one byte of a label value (@help: of a HELP text, where
 * `"` stays as it is), or NULL: the byte as it is. */
static const char *escape_of(unsigned char c, bool help)
{
	if (c == '\\')
		return "\\\\";
	if (c == '\n')
		return "\\n";
	if (c == '"' && !help)
		return "\\\"";
	if (c < 0x20 || c > 0x7e)
		return "?";
	return NULL;
}

static size_t escape(const char *in, char *out, size_t len, bool help)
{
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
		const char *x = escape_of(*p, help);
		char one[2] = { (char)*p, '\0' };

		for (const char *c = x ? x : one; *c; c++, n++)
			if (n + 1 < len)
				out[n] = *c;
	}
	if (len)
		out[n < len ? n : len - 1] = '\0';
	return n;
}

size_t expo_escape(const char *in, char *out, size_t len)
{
	return escape(in, out, len, false);
}

void expo_family(struct expo *e, const char *name, const char *type, const char *help)
{
	char text[512];

	escape(help, text, sizeof(text), true);
	line(e, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

/* NAME{LABELS} into @out: "" when it does not fit. */
static void series(char *out, size_t len, const char *name, const struct expo_label *labels,
		   size_t nlabels)
{
	size_t n = (size_t)snprintf(out, len, "%s", name);

	for (size_t i = 0; i < nlabels && n < len; i++) {
		n += (size_t)snprintf(out + n, len - n, "%c%s=\"", i ? ',' : '{', labels[i].name);
		if (n < len)
			n += escape(labels[i].value, out + n, len - n, false);
		if (n < len)
			n += (size_t)snprintf(out + n, len - n, "\"%s", i + 1 == nlabels ? "}" : "");
	}
	if (n >= len)
		out[0] = '\0';
}

void expo_sample(struct expo *e, const char *name, const struct expo_label *labels,
		 size_t nlabels, uint64_t value)
{
	char s[1024];

	series(s, sizeof(s), name, labels, nlabels);
	if (!s[0]) {
		e->full = true;
		return;
	}
	line(e, "%s %llu\n", s, (unsigned long long)value);
}

void expo_histogram(struct expo *e, const char *name, const unsigned int *bounds_ms,
		    size_t nbounds, const uint64_t *counts, uint64_t sum_us)
{
	uint64_t cum = 0;

	for (size_t i = 0; i < nbounds; i++) {
		cum += counts[i];
		line(e, "%s_bucket{le=\"%u.%03u\"} %llu\n", name, bounds_ms[i] / 1000,
		     bounds_ms[i] % 1000, (unsigned long long)cum);
	}
	cum += counts[nbounds];
	line(e, "%s_bucket{le=\"+Inf\"} %llu\n", name, (unsigned long long)cum);
	line(e, "%s_sum %llu.%06llu\n", name, (unsigned long long)(sum_us / 1000000),
	     (unsigned long long)(sum_us % 1000000));
	line(e, "%s_count %llu\n", name, (unsigned long long)cum);
}
