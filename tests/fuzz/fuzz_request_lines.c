// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_request_lines.c - libFuzzer target for the request lines `egret
 * requests import` reads from a fleet's collected logs (requests/export.c).
 * Those logs are any bytes the pipeline gathered: the parser must hold for
 * all of them, say why it refuses, and whatever it takes must be what
 * egretd could have written: formatted again and parsed again, the same.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "requests/export.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), err[256] = "", line[REQUEST_LINE_MAX];
	struct request_line l, again;
	int r;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	r = request_export_parse(text, &l, err, sizeof(err));
	if (r == -EBADMSG && !err[0])
		__builtin_trap();	/* refused without saying why */
	if (r == 1) {
		if (request_export_format(l.repo, l.attempt, &l.r, l.new_attempt, line,
					  sizeof(line)) < 0 ||
		    request_export_parse(line, &again, err, sizeof(err)) != 1 ||
		    strcmp(again.r.target, l.r.target) || again.r.port != l.r.port ||
		    again.r.count != l.r.count || strcmp(again.repo, l.repo))
			__builtin_trap();	/* taken, yet not what egretd writes */
	}
	free(text);
	return 0;
}
