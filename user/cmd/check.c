// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd/check.c - `egret check`: validate a policy and print the effective
 * allowlist of a repository, each entry with where it came from.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "attempt/effective.h"
#include "cmd/check.h"
#include "lib/exit.h"
#include "lib/log.h"
#include "policy/show.h"

static void check_usage(FILE *out)
{
	fprintf(out,
		"Usage: egret check [--policy FILE] [--repo OWNER/NAME] [--git-remote URL] [--json]\n\n"
		"Validate the policy and print the effective allowlist for that repository:\n"
		"every host and prefix with its ports and the section it came from, and\n"
		"the agent profiles' quiet names (refused at once, never a request).\n"
		"Exit status: 0 valid, 2 refused (each problem on its own line).\n");
}

int cmd_check(int argc, char **argv)
{
	enum { OPT_POLICY = 256, OPT_REPO, OPT_GIT_REMOTE, OPT_JSON };
	static const struct option options[] = {
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "repo", required_argument, NULL, OPT_REPO },
		{ "git-remote", required_argument, NULL, OPT_GIT_REMOTE },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct effective_in in = {};
	struct git_remote remote;
	struct policy p;
	bool json = false, builtin;
	char err[256];
	int c, r;

	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, argv, "+:h", options, NULL)) != -1) {
		switch (c) {
		case OPT_POLICY:
			in.policy_file = optarg;
			break;
		case OPT_REPO:
			if (!policy_repo_name_valid(optarg)) {
				log_error("--repo '%s': want owner/name", optarg);
				return EXIT_POLICY;
			}
			in.repo = optarg;
			break;
		case OPT_GIT_REMOTE:
			if (git_remote_parse(optarg, &remote, err, sizeof(err)) < 0) {
				log_error("--git-remote %s: %s", optarg, err);
				return EXIT_POLICY;
			}
			in.remote = &remote;
			break;
		case OPT_JSON:
			json = true;
			break;
		case 'h':
			check_usage(stdout);
			return 0;
		default:
			log_error("check: bad option '%s' (see egret check --help)",
				  argv[optind - 1]);
			return EXIT_POLICY;
		}
	}
	if (optind < argc) {
		log_error("check: unexpected argument '%s'", argv[optind]);
		return EXIT_POLICY;
	}
	policy_init(&p);
	r = effective_policy(&in, &p, &builtin);
	if (r == 0) {
		const char *src = builtin ? "<built-in default policy>" :
			in.policy_file ? in.policy_file : POLICY_DEFAULT_PATH;
		long me = -1, mc = -1, ttl = -1;
		char csv[sizeof(p.upstreams_csv)] = "";

		effective_settings(&p, &me, &mc, &ttl, csv, sizeof(csv));

		if (json)
			policy_show_json(stdout, &p, src, builtin, in.repo, me, mc, ttl);
		else
			policy_show_text(stdout, &p, src, in.repo, me, mc, ttl);
	}
	policy_free(&p);
	return r < 0 ? EXIT_POLICY : 0;
}
