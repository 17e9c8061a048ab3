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
#include "cmd/request.h"
#include "lib/cmd.h"
#include "lib/exit.h"
#include "lib/log.h"
#include "lib/util.h"

#ifndef EGRET_VERSION
#define EGRET_VERSION "0.1.0"
#endif

static int usage(FILE *to)
{
	fprintf(to, "Usage: egret run [--via SOCKET] [OPTIONS] -- COMMAND [ARGS...]\n"
		"       egret status [--via SOCKET] [--json] [ID]\n"
		"       egret git [-C DIR] GIT-COMMAND [ARGS...]\n"
		"       egret request NAME[:PORTS] --why TEXT\n\n"
		"egretd's client: runs COMMAND as an attempt of egretd, which decides\n"
		"the policy (docs/EGRETD.md). The socket: --via, else $EGRET_SOCKET,\n"
		"else /run/egretd/egret.sock.\n"
		"egret status: your own live attempts, as egretd shows them.\n"
		"It always asks egretd, as root too (the full egret enforces by itself).\n"
		"egret git: your own git over an attempt's worktree, with nothing the\n"
		"worktree planted run (egret git --help).\n"
		"egret request: inside an attempt, ask for a host (egret request --help).\n\n"
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

static int client_help(int argc, char **argv)
{
	return usage(stdout);
}

static int client_version(int argc, char **argv)
{
	printf("egret %s (egretd's client)\n", EGRET_VERSION);
	return 0;
}

/* No command (the usage, on stderr), or one of the full egret's. */
static int client_unknown(int argc, char **argv)
{
	if (argc < 1)
		return usage(stderr);
	log_error("%s: this egret is egretd's client, which runs attempts and shows them (egret run, egret status), harvests their worktrees (egret git) and asks for hosts from inside one (egret request); the other commands need the full egret",
		  argv[0]);
	return EXIT_USAGE;
}

/* The usage above is written out whole (each command's synopsis), so no
 * row carries a summary. */
static const struct cmd commands[] = {
	{ "run", client_run_cmd, NULL },
	{ "status", client_status_cmd, NULL },
	{ "git", cmd_git, NULL },
	{ "request", cmd_request, NULL },
	{ "help", client_help, NULL },
	{ "--help", client_help, NULL },
	{ "-h", client_help, NULL },
	{ "version", client_version, NULL },
	{ "--version", client_version, NULL },
};

int main(int argc, char **argv)
{
	return cmd_select(commands, ARRAY_SIZE(commands), argc - 1, argv + 1, client_unknown);
}
