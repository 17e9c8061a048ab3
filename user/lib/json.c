// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>

#include "lib/json.h"

/* @c as it stands inside a JSON string, into @out; its length (1 to 6). */
static size_t json_char(unsigned char c, char out[static 7])
{
	if (c == '"' || c == '\\') {
		out[0] = '\\';
		out[1] = (char)c;
		return 2;
	}
	if (c < 0x20 || c >= 0x7f)
		return (size_t)snprintf(out, 7, "\\u%04x", c);
	out[0] = (char)c;
	return 1;
}

void json_fputs(FILE *out, const char *s)
{
	char e[7];

	fputc('"', out);
	for (; *s; s++)
		fwrite(e, 1, json_char((unsigned char)*s, e), out);
	fputc('"', out);
}

size_t json_append(char *buf, size_t off, size_t len, const char *s)
{
	char e[7];

	if (off < len)
		buf[off++] = '"';
	for (; *s; s++) {
		size_t n = json_char((unsigned char)*s, e);

		/* Room for this byte's escape and the closing quote, or stop:
		 * a string cut between escapes is still valid JSON. */
		if (off + n + 1 >= len)
			break;
		for (size_t i = 0; i < n; i++)
			buf[off++] = e[i];
	}
	if (off < len)
		buf[off++] = '"';
	return off;
}
