// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* lib/cmd.c - one dispatcher for every table of commands (lib/cmd.h). */
#include <string.h>

#include "lib/cmd.h"

int cmd_select(const struct cmd *cmds, size_t n, int argc, char **argv,
	       int (*unknown)(int argc, char **argv))
{
	for (size_t i = 0; argc > 0 && i < n; i++)
		if (!strcmp(argv[0], cmds[i].name))
			return cmds[i].func(argc, argv);
	return unknown(argc, argv);
}

void cmd_list(FILE *to, const struct cmd *cmds, size_t n, int width)
{
	for (size_t i = 0; i < n; i++) {
		const char *s = cmds[i].summary;

		if (!s)
			continue;
		fprintf(to, "  %-*s ", width, cmds[i].name);
		/* A summary's own lines start under its first. */
		for (; *s; s++)
			if (*s == '\n')
				fprintf(to, "\n  %*s ", width, "");
			else
				fputc(*s, to);
		fputc('\n', to);
	}
}
