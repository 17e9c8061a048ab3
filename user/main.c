// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* main.c - egret's subcommand table. */
#include <stdio.h>
#include <string.h>

#include "enforce/loader.h"
#include "cmd/check.h"
#include "cmd/daemon.h"
#include "cmd/gc.h"
#include "cmd/git.h"
#include "cmd/receipt.h"
#include "cmd/request.h"
#include "cmd/requests.h"
#include "cmd/run.h"
#include "cmd/status.h"
#include "cmd/suggest.h"
#include "lib/cmd.h"
#include "lib/exit.h"
#include "lib/log.h"
#include "lib/util.h"

#ifndef EGRET_VERSION
#define EGRET_VERSION "0.1.0"
#endif

static int cmd_help(int argc, char **argv);

static int cmd_version(int argc, char **argv)
{
	char tag[32];

	(void)argc;
	(void)argv;
	/* The tag names the pinned set this build uses (enforce/shared.h):
	 * two builds of one commit print the same. */
	loader_object_tag(tag, sizeof(tag));
	printf("egret %s (programs %s)\n", EGRET_VERSION, tag);
	return 0;
}

/* `egret COMMAND`: a new command is a row here, and --help lists it. */
static const struct cmd commands[] = {
	{ "run", cmd_run, "run COMMAND with its network egress denied unless allowed" },
	{ "check", cmd_check, "validate a policy and print a repo's effective allowlist" },
	{ "status", cmd_status, "list live attempts, their counters and allow entries" },
	{ "requests", cmd_requests, "review what attempts were denied: list, approve, deny" },
	{ "suggest", cmd_suggest, "turn decision logs into a policy fragment" },
	{ "gc", cmd_gc, "clean up attempts whose egret is gone" },
	{ "git", cmd_git, "the caller's git over an attempt's worktree, nothing it planted run" },
	{ "receipt", cmd_receipt, "check an attempt's signed egress receipt; print the host key" },
	{ "request", cmd_request, "inside an attempt: ask the operator for a host, saying why" },
	{ "version", cmd_version, "print the version" },
	{ "help", cmd_help, "this text" },
	{ "--version", cmd_version, NULL },
	{ "--help", cmd_help, NULL },
	{ "-h", cmd_help, NULL },
};

static int cmd_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("Usage: egret COMMAND [OPTIONS]\n\n"
	       "Per-attempt, deny-by-default network egress enforced by cgroup BPF.\n\n");
	cmd_list(stdout, commands, ARRAY_SIZE(commands), 8);
	printf("\n'egret COMMAND --help' for a command's options.\n");
	return 0;
}

/* No command, or one egret does not have. */
static int cmd_unknown(int argc, char **argv)
{
	if (argc < 1)
		cmd_help(0, NULL);
	else
		log_error("unknown command '%s' (see egret --help)", argv[0]);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	log_setup_libbpf();
	/* One binary: started as egretd, it is the daemon. */
	if (argc > 0 && !strcmp(strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0],
				"egretd"))
		return cmd_daemon(argc, argv);
	return cmd_select(commands, ARRAY_SIZE(commands), argc - 1, argv + 1, cmd_unknown);
}
