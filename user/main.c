// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* main.c - egret's subcommand table. */
#include <stdio.h>
#include <string.h>

#include "enforce/loader.h"
#include "cmd/check.h"
#include "cmd/daemon.h"
#include "cmd/gc.h"
#include "cmd/git.h"
#include "cmd/requests.h"
#include "cmd/run.h"
#include "cmd/status.h"
#include "cmd/suggest.h"
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

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "run", cmd_run, "run COMMAND with its network egress denied unless allowed" },
	{ "check", cmd_check, "validate a policy and print a repo's effective allowlist" },
	{ "status", cmd_status, "list live attempts, their counters and allow entries" },
	{ "requests", cmd_requests, "review what attempts were denied: list, approve, deny" },
	{ "suggest", cmd_suggest, "turn decision logs into a policy fragment" },
	{ "gc", cmd_gc, "clean up attempts whose egret is gone" },
	{ "git", cmd_git, "the caller's git over an attempt's worktree, nothing it planted run" },
	{ "version", cmd_version, "print the version" },
	{ "help", cmd_help, "this text" },
};

static int cmd_help(int argc, char **argv)
{
	size_t i;

	(void)argc;
	(void)argv;
	printf("Usage: egret COMMAND [OPTIONS]\n\n"
	       "Per-attempt, deny-by-default network egress enforced by cgroup BPF.\n\n");
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		printf("  %-8s %s\n", commands[i].name, commands[i].summary);
	printf("\n'egret COMMAND --help' for a command's options.\n");
	return 0;
}

int main(int argc, char **argv)
{
	size_t i;

	log_setup_libbpf();
	/* One binary: started as egretd, it is the daemon. */
	if (argc > 0 && !strcmp(strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0],
				"egretd"))
		return cmd_daemon(argc, argv);
	if (argc < 2) {
		cmd_help(0, NULL);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--version"))
		return cmd_version(argc - 1, argv + 1);
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	log_error("unknown command '%s' (see egret --help)", argv[1]);
	return 2;
}
