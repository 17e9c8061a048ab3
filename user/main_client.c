// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * main_client.c - egret-client: `egret run` and `egret status` through
 * egretd, and `egret git` (the harvest of an attempt's worktree), nothing
 * else, linked against libc alone, for callers' images (a miner's container
 * needs this one file: docs/DEPLOYMENT.md). Installed or copied as `egret`,
 * it takes the same command line as egret's client side.
 */
#include <stdio.h>
#include <string.h>

#include "attempt/run_options.h"
#include "cmd/client.h"
#include "cmd/git.h"
#include "lib/log.h"
#include "lib/util.h"

#ifndef EGRET_VERSION
#define EGRET_VERSION "0.1.0"
#endif

static int usage(FILE *to)
{
	fprintf(to, "Usage: egret run [--via SOCKET] [OPTIONS] -- COMMAND [ARGS...]\n"
		"       egret status [--via SOCKET] [--json] [ID]\n"
		"       egret git [-C DIR] GIT-COMMAND [ARGS...]\n\n"
		"egretd's client: runs COMMAND as an attempt of egretd, which decides\n"
		"the policy (docs/EGRETD.md). The socket: --via, else $EGRET_SOCKET,\n"
		"else /run/egretd/egret.sock.\n"
		"egret status: your own live attempts, as egretd shows them.\n"
		"It always asks egretd, as root too (the full egret enforces by itself).\n"
		"egret git: your own git over an attempt's worktree, with nothing the\n"
		"worktree planted run (egret git --help).\n\n"
		"The OPTIONS of egret run it passes on (egretd decides the rest):\n");
	run_options_usage(to, RUN_VIA_CALLER);
	return to == stdout ? 0 : 2;
}

/* Root too asks egretd: this egret cannot enforce by itself. */
static int client_run_cmd(int argc, char **argv)
{
	return client_run(client_daemon_socket(argc, argv), argc, argv);
}

static int client_status_cmd(int argc, char **argv)
{
	return client_status(client_daemon_socket(argc, argv), argc, argv);
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "run", client_run_cmd },
	{ "status", client_status_cmd },
	{ "git", cmd_git },
};

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
		return usage(stdout);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("egret %s (egretd's client)\n", EGRET_VERSION);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	log_error("%s: this egret is egretd's client, which runs attempts and shows them (egret run, egret status) and harvests their worktrees (egret git); the other commands need the full egret",
		  argv[1]);
	return 2;
}
