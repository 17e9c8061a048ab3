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
#include "lib/json.h"
#include "lib/log.h"

static void check_usage(FILE *out)
{
	fprintf(out,
		"Usage: egret check [--policy FILE] [--repo OWNER/NAME] [--git-remote URL] [--json]\n\n"
		"Validate the policy and print the effective allowlist for that repository:\n"
		"every host and prefix with its ports and the section it came from, and\n"
		"the agent profiles' quiet names (refused at once, never a request).\n"
		"Exit status: 0 valid, 2 refused (each problem on its own line).\n");
}

/* A quiet name another rule allows is not quiet (an allow wins). */
static bool quiet_in_force(const struct policy *p, const struct host_rule *h)
{
	return host_rules_quiet(p->hosts, p->nhosts, h->name) != NULL;
}

static void print_quiet_text(const struct policy *p)
{
	bool any = false;

	for (size_t i = 0; i < p->nhosts; i++) {
		const struct host_rule *h = &p->hosts[i];

		if (!h->quiet)
			continue;
		if (!any)
			printf("\n%-40s %-16s %s\n", "QUIET (NXDOMAIN, never a request)", "", "FROM");
		any = true;
		printf("%-40s %-16s %s%s\n", h->name, "-", h->origin,
		       quiet_in_force(p, h) ? "" : " (allowed by another entry: not quiet)");
	}
}

static void print_text(const struct policy *p, const char *source,
		       const char *repo, long max_entries, long max_cidrs,
		       long min_ttl)
{
	char ports[128], net[64];

	printf("policy: %s%s%s\n", source, repo ? ", repo " : "", repo ? repo : "");
	printf("\n%-40s %-16s %s\n", "HOST", "PORTS", "FROM");
	for (size_t i = 0; i < p->nhosts; i++) {
		const struct host_rule *h = &p->hosts[i];
		char name[DNS_NAME_MAX + 3];

		if (h->quiet)
			continue;
		snprintf(name, sizeof(name), "%s%s", h->wildcard ? "*." : "", h->name);
		ports_format(h->ports, h->nports, ports, sizeof(ports), false);
		printf("%-40s %-16s %s%s", name, ports, h->origin,
		       h->no_pin ? " (pin: false)" : "");
		if (h->upload_limit)
			printf(" (upload_limit %llu)", (unsigned long long)h->upload_limit);
		printf("\n");
	}
	print_quiet_text(p);
	printf("\n%-40s %-16s %s\n", "ADDRESS/PREFIX", "PORTS", "FROM");
	for (size_t i = 0; i < p->nspecs; i++) {
		struct allow_spec a = p->specs[i];

		a.nports = 0;
		spec_format(&a, net, sizeof(net));
		ports_format(p->specs[i].ports, p->specs[i].nports, ports,
			   sizeof(ports), false);
		printf("%-40s %-16s %s%s", net, ports, p->specs[i].origin,
		       p->specs[i].pin ? " (pin: true)" : "");
		if (p->specs[i].upload_limit)
			printf(" (upload_limit %llu)",
			       (unsigned long long)p->specs[i].upload_limit);
		printf("\n");
	}
	printf("\ndns: upstreams %s; min_ttl %ld s\nmaps: max_entries %ld, max_cidrs %ld\n",
	       p->upstreams_csv[0] ? p->upstreams_csv : "from /etc/resolv.conf",
	       min_ttl, max_entries, max_cidrs);
	printf("pinning: TLS ");
	for (unsigned int i = 0; i < p->npin_ports; i++)
		printf("%s%u", i ? ", " : "ports ", p->pin_ports[i]);
	printf("%s; HTTP ", p->npin_ports ? "" : "off");
	for (unsigned int i = 0; i < p->nhttp_ports; i++)
		printf("%s%u", i ? ", " : "ports ", p->http_ports[i]);
	printf("%s\n", p->nhttp_ports ? "" : "off");
	if (p->upload_limit)
		printf("upload_limit: %llu bytes per destination\n",
		       (unsigned long long)p->upload_limit);
	else
		printf("upload_limit: none\n");
	printf("nested_sandbox: %s\n", p->nested_sandbox ? "on (COMMAND may make user namespaces)" : "off");
}

/* "],\"quiet\":[...]": the agent profiles' noise, and whether it is quiet
 * in force (no other entry allows it). */
static void print_quiet_json(const struct policy *p)
{
	printf("],\"quiet\":[");
	for (size_t i = 0, n = 0; i < p->nhosts; i++) {
		const struct host_rule *h = &p->hosts[i];

		if (!h->quiet)
			continue;
		printf("%s{\"name\":", n++ ? "," : "");
		json_fputs(stdout, h->name);
		printf(",\"from\":");
		json_fputs(stdout, h->origin);
		printf(",\"in_force\":%s}", quiet_in_force(p, h) ? "true" : "false");
	}
	printf("]");
}

/* The schema is documented in docs/POLICY.md ("egret check --json"). */
static void print_json(const struct policy *p, const char *source, bool builtin,
		       const char *repo, long max_entries, long max_cidrs,
		       long min_ttl)
{
	char ports[128], net[64], *up, *save = NULL;
	char csv[sizeof(p->upstreams_csv)];

	printf("{\"version\":1,\"policy\":");
	json_fputs(stdout, source);
	printf(",\"builtin\":%s,\"repo\":", builtin ? "true" : "false");
	if (repo)
		json_fputs(stdout, repo);
	else
		printf("null");
	printf(",\"hosts\":[");
	for (size_t i = 0, n = 0; i < p->nhosts; i++) {
		const struct host_rule *h = &p->hosts[i];

		if (h->quiet)
			continue;
		ports_format(h->ports, h->nports, ports, sizeof(ports), true);
		printf("%s{\"name\":", n++ ? "," : "");
		json_fputs(stdout, h->name);
		printf(",\"wildcard\":%s,\"ports\":%s,\"from\":",
		       h->wildcard ? "true" : "false", ports);
		json_fputs(stdout, h->origin);
		printf(",\"pin\":%s,\"upload_limit\":", h->no_pin ? "false" : "true");
		printf(h->upload_limit ? "%llu}" : "null}", (unsigned long long)h->upload_limit);
	}
	print_quiet_json(p);
	printf(",\"cidrs\":[");
	for (size_t i = 0; i < p->nspecs; i++) {
		struct allow_spec a = p->specs[i];

		a.nports = 0;
		spec_format(&a, net, sizeof(net));
		ports_format(p->specs[i].ports, p->specs[i].nports, ports,
			   sizeof(ports), true);
		printf("%s{\"cidr\":", i ? "," : "");
		json_fputs(stdout, net);
		printf(",\"ports\":%s,\"from\":", ports);
		json_fputs(stdout, p->specs[i].origin);
		printf(",\"pin\":%s,\"upload_limit\":", p->specs[i].pin ? "true" : "false");
		printf(p->specs[i].upload_limit ? "%llu}" : "null}",
		       (unsigned long long)p->specs[i].upload_limit);
	}
	printf("],\"dns\":{\"upstreams\":[");
	snprintf(csv, sizeof(csv), "%s", p->upstreams_csv);
	for (up = strtok_r(csv, ",", &save); up; up = strtok_r(NULL, ",", &save)) {
		printf("%s", up == csv ? "" : ",");
		json_fputs(stdout, up);
	}
	printf("],\"min_ttl\":%ld},\"maps\":{\"max_entries\":%ld,\"max_cidrs\":%ld},",
	       min_ttl, max_entries, max_cidrs);
	printf("\"pinning\":{\"ports\":[");
	for (unsigned int i = 0; i < p->npin_ports; i++)
		printf("%s%u", i ? "," : "", p->pin_ports[i]);
	printf("],\"http_ports\":[");
	for (unsigned int i = 0; i < p->nhttp_ports; i++)
		printf("%s%u", i ? "," : "", p->http_ports[i]);
	printf("]},\"nested_sandbox\":%s,\"upload_limit\":", p->nested_sandbox ? "true" : "false");
	printf(p->upload_limit ? "%llu}\n" : "null}\n", (unsigned long long)p->upload_limit);
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
			print_json(&p, src, builtin, in.repo, me, mc, ttl);
		else
			print_text(&p, src, in.repo, me, mc, ttl);
	}
	policy_free(&p);
	return r < 0 ? EXIT_POLICY : 0;
}
