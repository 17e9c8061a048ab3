/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attempt/effective.h - the policy one attempt runs under: the operator's file (or
 * the built-in default when there is none) resolved for the repository and
 * git remote, plus the command line's --allow entries.
 *
 * Trust boundary: only the file the operator names (or the default path)
 * is read - never anything in COMMAND's working directory, the target
 * repository, or the environment.
 */
#ifndef EGRET_EFFECTIVE_H
#define EGRET_EFFECTIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"

struct effective_in {
	const char *policy_file;	/* NULL: POLICY_DEFAULT_PATH, else built-in;
					 * "none": the command line alone */
	const char *repo;		/* NULL: defaults only */
	const struct git_remote *remote;	/* NULL: none */
	const struct policy *cli;	/* --allow entries, or NULL */
};

/*
 * Build the effective policy into @out (initialised by the caller). Logs
 * each problem of a refused policy on its own line and returns -EINVAL
 * (exit EXIT_POLICY); *@ret_builtin tells whether the built-in default was
 * used because no policy file exists.
 */
int effective_policy(const struct effective_in *in, struct policy *out,
		     bool *ret_builtin);

/* The built-in catalog, parsed at build time (egret_catalog_built). */
const struct catalog *effective_catalog(void);

/*
 * The settings an attempt runs with - one home for `egret run` and `egret
 * check`: each one not given on the command line (-1, "") is the policy's,
 * else egret's default (the upstreams then: /etc/resolv.conf, "").
 */
void effective_settings(const struct policy *p, long *max_entries, long *max_cidrs,
			long *min_ttl, char *upstreams_csv, size_t csv_len);

/* The upload budget of each destination: the smallest of --upload-limit
 * (@cli) and the policy's, 0 for none (docs/BUDGETS.md). */
__u64 effective_upload_limit(__u64 cli, const struct policy *p);

/* Where @o's policy came from, as `egret check` names it. */
struct run_opts;
const char *effective_source(const struct run_opts *o);

#endif
