// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_ask.c - libFuzzer target for the message an agent sends on its
 * attempt's request socket (requests/ask.c): any bytes. The reader must
 * hold for all of them, say why it refuses, and what it takes must be a
 * request the store can hold: a target with no byte outside the
 * policy's, a reason of printable ASCII only, within its bounds, and a
 * record that reads back the same.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "requests/ask.h"

static void check_text(const char *s, size_t max)
{
	if (strlen(s) > max)
		__builtin_trap();
	for (; *s; s++)
		if (*s < 0x20 || *s >= 0x7f)
			__builtin_trap();	/* a control or high byte kept */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct request r = { .id = 1 }, back;
	char err[200] = "", line[4096];
	struct ask a;
	int ret = ask_parse(data, size, &a, err, sizeof(err));

	if (ret < 0 && !err[0])
		__builtin_trap();	/* refused without saying why */
	if (ret < 0)
		return 0;
	check_text(a.target, DNS_NAME_MAX);
	check_text(a.why, ASK_WHY_MAX);
	if (!a.why[0] || a.nports > ASK_PORTS_MAX)
		__builtin_trap();
	for (unsigned int i = 0; i < a.nports; i++)
		if (!a.ports[i])
			__builtin_trap();
	r.kind = a.kind;
	r.port = a.nports ? a.ports[0] : 0;
	memcpy(r.target, a.target, sizeof(r.target));
	memcpy(r.why, a.why, sizeof(r.why));
	strcpy(r.proto, "tcp");
	if (request_format(&r, line, sizeof(line)) < 0 || strchr(line, '\n') ||
	    request_parse(line, &back) < 0 || strcmp(back.why, r.why) ||
	    strcmp(back.target, r.target))
		__builtin_trap();	/* taken, yet the store cannot hold it */
	return 0;
}
