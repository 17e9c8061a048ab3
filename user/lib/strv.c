// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strv.h"

int strv_init(struct strv *s, size_t cap)
{
	*s = (struct strv){ .v = calloc(cap + 1, sizeof(char *)), .cap = cap };
	return s->v ? 0 : -ENOMEM;
}

int strv_fail(struct strv *s, int error)
{
	if (!s->error)
		s->error = error;
	return s->error;
}

/* @word (allocated, or NULL: out of memory) appended and owned by @s,
 * or freed. */
static int strv_take(struct strv *s, char *word)
{
	if (!word)
		return strv_fail(s, -ENOMEM);
	if (s->n == s->cap)
		strv_fail(s, -E2BIG);
	if (s->error) {
		free(word);
		return s->error;
	}
	s->v[s->n++] = word;
	s->v[s->n] = NULL;
	return 0;
}

int strv_add(struct strv *s, const char *word)
{
	return strv_take(s, s->error ? NULL : strdup(word));
}

int strv_addf(struct strv *s, const char *fmt, ...)
{
	char *word = NULL;
	va_list ap;

	if (!s->error) {
		va_start(ap, fmt);
		if (vasprintf(&word, fmt, ap) < 0)
			word = NULL;
		va_end(ap);
	}
	return strv_take(s, word);
}

void strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	*s = (struct strv){};
}
