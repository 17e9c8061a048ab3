/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* run_opts.h - `egret run` command line, parsed and checked. */
#ifndef EGRET_RUN_OPTS_H
#define EGRET_RUN_OPTS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "policy.h"

/* Exit status when egret itself fails before COMMAND runs (as env(1)). */
#define EXIT_SETUP	125

struct run_opts {
	struct policy policy;
	const char *policy_file;
	const char *user;
	const char *id;
	const char *cgroup_parent;
	bool allow_root;
	__u32 max_entries;
	__u32 max_cidrs;
	__u32 dns_min_ttl;
	char upstreams_csv[1024];	/* c-ares form; "" = resolv.conf */
	char **argv;
};

/*
 * Parse `run`'s arguments (argv[0] is "run") into @o, loading --policy.
 * Returns 0, 1 when --help was printed, or -EINVAL after logging one line.
 */
int run_opts_parse(int argc, char **argv, struct run_opts *o);

void run_opts_free(struct run_opts *o);

void run_usage(FILE *out);

#endif
