// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "attempt/run_options.h"
#include "egret.h"
#include "launch/view_home.h"
#include "lib/util.h"
#include "policy/policy.h"
#include "requests/store.h"

/* A figure the help gives, spelled as its constant is. */
#define RUN_NUMBER_(x)	#x
#define RUN_NUMBER(x)	RUN_NUMBER_(x)

const struct run_option_row run_option_rows[] = {
#define RUN_OPTION(n, s, meta, v, parse, h) \
	{ .name = (n), .short_name = (s), .metavar = (meta), .via = (v), .help = (h) },
#include "attempt/run_options.def"
#undef RUN_OPTION
};

const size_t run_option_nrows = ARRAY_SIZE(run_option_rows);

const struct run_option_row *run_option_find(const char *name, size_t len)
{
	for (size_t i = 0; i < run_option_nrows; i++)
		if (strlen(run_option_rows[i].name) == len &&
		    !memcmp(run_option_rows[i].name, name, len))
			return &run_option_rows[i];
	return NULL;
}

size_t run_options_getopt(struct option *ret, char *shorts, unsigned int via)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; i < run_option_nrows; i++) {
		const struct run_option_row *row = &run_option_rows[i];

		if (!(row->via & via))
			continue;
		ret[n++] = (struct option){
			.name = row->name,
			.has_arg = row->metavar ? required_argument : no_argument,
			.val = row->short_name ? row->short_name : RUN_OPTION_VAL_BASE + (int)i,
		};
		if (shorts && row->short_name)
			shorts[k++] = row->short_name;
		if (shorts && row->short_name && row->metavar)
			shorts[k++] = ':';
	}
	ret[n] = (struct option){};
	if (shorts)
		shorts[k] = '\0';
	return n;
}

int run_option_index(int c)
{
	if (c >= RUN_OPTION_VAL_BASE && c < RUN_OPTION_VAL_BASE + (int)run_option_nrows)
		return c - RUN_OPTION_VAL_BASE;
	for (size_t i = 0; c && i < run_option_nrows; i++)
		if (run_option_rows[i].short_name == c)
			return (int)i;
	return -1;
}

size_t run_options_count(unsigned int via)
{
	size_t n = 0;

	for (size_t i = 0; i < run_option_nrows; i++)
		n += !!(run_option_rows[i].via & via);
	return n;
}

/* Where the help starts: past "  --view-owner UID:GID" and two spaces. */
#define RUN_HELP_COLUMN	24

static void usage_row(FILE *out, const struct run_option_row *row)
{
	const char *line = row->help, *end;
	int n;

	n = row->short_name ? fprintf(out, "  -%c, --%s", row->short_name, row->name) :
			      fprintf(out, "  --%s", row->name);
	if (row->metavar)
		n += fprintf(out, " %s", row->metavar);
	/* A name too long for the column keeps two spaces before its help. */
	fprintf(out, "%*s", n < RUN_HELP_COLUMN ? RUN_HELP_COLUMN - n : 2, "");
	for (;;) {
		end = strchrnul(line, '\n');
		fprintf(out, "%.*s\n", (int)(end - line), line);
		if (!*end)
			break;
		line = end + 1;
		fprintf(out, "%*s", RUN_HELP_COLUMN, "");
	}
}

void run_options_usage(FILE *out, unsigned int via)
{
	for (size_t i = 0; i < run_option_nrows; i++)
		if (run_option_rows[i].via & via)
			usage_row(out, &run_option_rows[i]);
}

/* Append to @buf's string of @*len bytes: -E2BIG, and nothing written
 * past @size, when it does not fit. */
static int append(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size - *len)
		return -E2BIG;
	*len += (size_t)n;
	return 0;
}

int run_options_join(char *buf, size_t size, unsigned int via, const char *prefix,
		     const char *valued)
{
	size_t len = 0;

	if (!size)
		return -E2BIG;
	buf[0] = '\0';
	for (size_t i = 0; i < run_option_nrows; i++) {
		const struct run_option_row *row = &run_option_rows[i];

		if (!(row->via & via))
			continue;
		if (append(buf, size, &len, "%s%s%s%s", len ? ", " : "", prefix, row->name,
			   row->metavar ? valued : "") < 0)
			return -E2BIG;
	}
	return (int)len;
}
