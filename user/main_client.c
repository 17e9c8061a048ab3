// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * main_client.c - egret-client: `egret run` through egretd and nothing
 * else, linked against libc alone, for callers' images (a miner's
 * container needs this one file: docs/DEPLOYMENT.md). Installed or copied
 * as `egret`, it takes the same command line as egret's client side.
 */
#include <stdio.h>
#include <string.h>

#include "cmd/client.h"
#include "lib/exit.h"
#include "lib/log.h"

#ifndef EGRET_VERSION
#define EGRET_VERSION "0.1.0"
#endif

static int usage(FILE *to)
{
	fprintf(to, "Usage: egret run [--via SOCKET] [options] -- COMMAND [ARGS...]\n\n"
		"egretd's client: runs COMMAND as an attempt of egretd, which decides\n"
		"the policy (docs/EGRETD.md). The options it passes on: --repo,\n"
		"--allow, --audit, --pty, --pty-size, --chdir, --home, --setenv,\n"
		"--pass-env, --clean-env, --umask, --upload-limit. The socket:\n"
		"--via, else $EGRET_SOCKET, else /run/egretd/egret.sock.\n"
		"As root, without --via, egret run needs the full egret.\n");
	return to == stdout ? 0 : 2;
}

int main(int argc, char **argv)
{
	const char *socket;

	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
		return usage(stdout);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("egret %s (egretd's client)\n", EGRET_VERSION);
		return 0;
	}
	if (strcmp(argv[1], "run")) {
		log_error("%s: this egret is egretd's client, which only runs attempts (egret run); the other commands need the full egret",
			  argv[1]);
		return 2;
	}
	socket = client_socket(argc - 1, argv + 1);
	if (!socket) {
		log_error("as root without --via, egret run enforces by itself: that needs the full egret, not egretd's client");
		return EXIT_SETUP;
	}
	return client_run(socket, argc - 1, argv + 1);
}
