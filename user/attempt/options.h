/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* attempt/options.h - `egret run` command line, parsed and checked. */
#ifndef EGRET_RUN_OPTS_H
#define EGRET_RUN_OPTS_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <linux/types.h>

#include "launch/environ.h"
#include "launch/launch.h"
#include "launch/view.h"
#include "egret.h"
#include "policy/gitremote.h"
#include "policy/policy.h"

/* What a refused connect() fails with unless --deny-errno says (docs/CLIENTS.md). */
#define RUN_DEFAULT_DENY_ERRNO	ECONNREFUSED

struct attempt_world;

struct run_opts {
	struct policy cli;		/* --allow entries */
	struct policy policy;		/* effective: policy file + cli (run.c) */
	const char *policy_file;	/* NULL: POLICY_DEFAULT_PATH or built-in */
	const char *repo;		/* owner/name, selects a repos: section */
	struct git_remote remote;
	bool has_remote;
	const char *user;
	const char *id;
	const char *cgroup_parent;
	bool allow_root;
	bool quiet;
	const char *state_dir;		/* requests; NULL: REQUESTS_DEFAULT_DIR */
	char approvals_path[4096];	/* "" = no approvals (no --repo, or none) */
	struct stat approvals_stamp;	/* the file as effective_policy() read it */
	const char *log_file;		/* --log: JSON lines (docs/EVENTS.md) */
	const char *receipt_path;	/* --receipt FILE, or NULL */
	const char *receipt_key;	/* --receipt-key, or NULL: the state dir's */
	bool log_allowed;
	bool audit;
	bool no_shared;			/* --no-shared: load now, not the pinned set */
	bool no_pinning;		/* --no-pinning: no SNI pinning */
	int deny_errno;			/* --deny-errno; 0 until set (run.c picks the default) */
	bool pty;			/* --pty: a pty even without a terminal */
	unsigned short pty_cols, pty_rows;	/* --pty-size; 0: egret's terminal's */
	struct environ_opts env;	/* --home, --clean-env, --pass-env, --setenv */
	const char *chdir;		/* --chdir DIR */
	int umask;			/* --umask; -1: egret's own */
	bool view;			/* --view: its own mounts (launch/view.h) */
	const char *view_owner;		/* --view-owner UID:GID (egretd: the caller) */
	const char *view_cache;		/* --view-cache DIR: HOME/.cache, kept */
	const char *view_home_from;	/* --home-from DIR: copied into HOME */
	bool nested_sandbox;		/* --nested-sandbox: user namespaces */
	uint64_t timeout_ms;		/* --timeout; 0: none */
	bool allow_shared_uid;		/* warn, not refuse, when COMMAND's uid runs elsewhere */
	bool allow_unconfined_unix;	/* run where abstract sockets cannot be confined */
	/* --allow-unix @NAME: abstract sockets outside the attempt it may reach */
	struct egret_unix_key unix_names[EGRET_UNIX_ALLOW_MAX];
	size_t nunix_names;
	bool unix_filter;		/* attach bpf/unix.bpf.c (run.c decides) */
	bool builtin_policy;		/* no policy file: the built-in default */
	/* -1 until set on the command line; then the policy, then defaults */
	long max_entries;
	long max_cidrs;
	long dns_min_ttl;
	__u64 upload_limit;		/* --upload-limit; 0: none given */
	char upstreams_csv[1024];	/* "" = the policy's, else resolv.conf */
	int keep_fds[LAUNCH_MAX_KEEP_FDS];	/* --keep-fd, as given */
	int nkeep_fds;
	char **argv;
	/* Not options: egretd sets them for a caller in namespaces of its
	 * own (world.h). */
	const struct attempt_world *world;	/* NULL: egret's own */
	const char *resolv_conf;		/* NULL: /etc/resolv.conf */
	/* With --view: the start directory and its mapping, checked before
	 * anything is made (command.c), used at launch (run.c). */
	struct launch_view view_plan;
	char view_dir[4096];
	int requests_json_fd;			/* requests as JSON lines; -1: none */
	int receipt_fd;				/* egretd's caller's receipt file; -1: none */
};

/*
 * Parse `run`'s arguments (argv[0] is "run") into @o. The policy file is
 * read later (effective.h). Returns 0, 1 when --help was printed, or
 * -EINVAL after logging one line.
 */
int run_opts_parse(int argc, char **argv, struct run_opts *o);

void run_opts_free(struct run_opts *o);

void run_usage(FILE *out);

/* "ECONNREFUSED" for ECONNREFUSED, of the errnos --deny-errno takes. */
const char *run_deny_errno_name(int e);

#endif
