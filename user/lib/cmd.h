/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lib/cmd.h - commands dispatched from a table, as bpftool does at every
 * level: `egret COMMAND`, `egret requests SUBCOMMAND`, egret-client. A new
 * command is a row; the help lists the rows. libc only: egret-client
 * links it.
 */
#ifndef EGRET_CMD_H
#define EGRET_CMD_H

#include <stddef.h>
#include <stdio.h>

struct cmd {
	const char *name;
	/* @argv[0] is the command's own name, as getopt wants it. */
	int (*func)(int argc, char **argv);
	/* Its line in the help (a newline continues it under itself);
	 * NULL: an alias ("--help"), not listed. */
	const char *summary;
};

/*
 * Run the row of @cmds (@n rows) named exactly @argv[0] (no abbreviations,
 * unlike bpftool) with @argc, @argv, and return what it returns; with no
 * such row (or no @argv[0]), @unknown's answer.
 */
int cmd_select(const struct cmd *cmds, size_t n, int argc, char **argv,
	       int (*unknown)(int argc, char **argv));

/* Each listed row of @cmds as "  NAME SUMMARY", NAME padded to @width. */
void cmd_list(FILE *to, const struct cmd *cmds, size_t n, int width);

#endif
