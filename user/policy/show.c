// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * policy/show.c - the effective policy, each entry with where it came
 * from, as `egret check` prints it and as the limits manifest inside an
 * attempt carries it (attempt/limits.h): text for people, JSON for tools.
 */
#include <stdio.h>
#include <string.h>

#include "lib/json.h"
#include "policy/show.h"

/* A quiet name another rule allows is not quiet (an allow wins). */
static bool quiet_in_force(const struct policy *p, const struct host_rule *h)
{
	return host_rules_quiet(p->hosts, p->nhosts, h->name) != NULL;
}

static void show_quiet_text(FILE *f, const struct policy *p)
{
	bool any = false;

	for (size_t i = 0; i < p->nhosts; i++) {
		const struct host_rule *h = &p->hosts[i];

		if (!h->quiet)
			continue;
		if (!any)
			fprintf(f, "\n%-40s %-16s %s\n", "QUIET (NXDOMAIN, never a request)", "", "FROM");
		any = true;
		fprintf(f, "%-40s %-16s %s%s\n", h->name, "-", h->origin,
		       quiet_in_force(p, h) ? "" : " (allowed by another entry: not quiet)");
	}
}

void policy_show_text(FILE *f, const struct policy *p, const char *source,
		      const char *repo, long max_entries, long max_cidrs, long min_ttl)
{
	char ports[128], net[64];

	fprintf(f, "policy: %s%s%s\n", source, repo ? ", repo " : "", repo ? repo : "");
	fprintf(f, "\n%-40s %-16s %s\n", "HOST", "PORTS", "FROM");
	for (size_t i = 0; i < p->nhosts; i++) {
		const struct host_rule *h = &p->hosts[i];
		char name[DNS_NAME_MAX + 3];

		if (h->quiet)
			continue;
		snprintf(name, sizeof(name), "%s%s", h->wildcard ? "*." : "", h->name);
		ports_format(h->ports, h->nports, ports, sizeof(ports), false);
		fprintf(f, "%-40s %-16s %s%s", name, ports, h->origin,
		       h->no_pin ? " (pin: false)" : "");
		if (h->upload_limit)
			fprintf(f, " (upload_limit %llu)", (unsigned long long)h->upload_limit);
		fprintf(f, "\n");
	}
	show_quiet_text(f, p);
	fprintf(f, "\n%-40s %-16s %s\n", "ADDRESS/PREFIX", "PORTS", "FROM");
	for (size_t i = 0; i < p->nspecs; i++) {
		struct allow_spec a = p->specs[i];

		a.nports = 0;
		spec_format(&a, net, sizeof(net));
		ports_format(p->specs[i].ports, p->specs[i].nports, ports,
			   sizeof(ports), false);
		fprintf(f, "%-40s %-16s %s%s", net, ports, p->specs[i].origin,
		       p->specs[i].pin ? " (pin: true)" : "");
		if (p->specs[i].upload_limit)
			fprintf(f, " (upload_limit %llu)",
			       (unsigned long long)p->specs[i].upload_limit);
		fprintf(f, "\n");
	}
	fprintf(f, "\ndns: upstreams %s; min_ttl %ld s\nmaps: max_entries %ld, max_cidrs %ld\n",
	       p->upstreams_csv[0] ? p->upstreams_csv : "from /etc/resolv.conf",
	       min_ttl, max_entries, max_cidrs);
	fprintf(f, "pinning: TLS ");
	for (unsigned int i = 0; i < p->npin_ports; i++)
		fprintf(f, "%s%u", i ? ", " : "ports ", p->pin_ports[i]);
	fprintf(f, "%s; HTTP ", p->npin_ports ? "" : "off");
	for (unsigned int i = 0; i < p->nhttp_ports; i++)
		fprintf(f, "%s%u", i ? ", " : "ports ", p->http_ports[i]);
	fprintf(f, "%s\n", p->nhttp_ports ? "" : "off");
	if (p->upload_limit)
		fprintf(f, "upload_limit: %llu bytes per destination\n",
		       (unsigned long long)p->upload_limit);
	else
		fprintf(f, "upload_limit: none\n");
	fprintf(f, "nested_sandbox: %s\n", p->nested_sandbox ? "on (COMMAND may make user namespaces)" : "off");
}

/* "],\"quiet\":[...]": the agent profiles' noise, and whether it is quiet
 * in force (no other entry allows it). */
static void show_quiet_json(FILE *f, const struct policy *p)
{
	fprintf(f, "],\"quiet\":[");
	for (size_t i = 0, n = 0; i < p->nhosts; i++) {
		const struct host_rule *h = &p->hosts[i];

		if (!h->quiet)
			continue;
		fprintf(f, "%s{\"name\":", n++ ? "," : "");
		json_fputs(f, h->name);
		fprintf(f, ",\"from\":");
		json_fputs(f, h->origin);
		fprintf(f, ",\"in_force\":%s}", quiet_in_force(p, h) ? "true" : "false");
	}
	fprintf(f, "]");
}

void policy_show_json(FILE *f, const struct policy *p, const char *source, bool builtin,
		      const char *repo, long max_entries, long max_cidrs, long min_ttl)
{
	char ports[128], net[64], *up, *save = NULL;
	char csv[sizeof(p->upstreams_csv)];

	fprintf(f, "{\"version\":1,\"policy\":");
	json_fputs(f, source);
	fprintf(f, ",\"builtin\":%s,\"repo\":", builtin ? "true" : "false");
	if (repo)
		json_fputs(f, repo);
	else
		fprintf(f, "null");
	fprintf(f, ",\"hosts\":[");
	for (size_t i = 0, n = 0; i < p->nhosts; i++) {
		const struct host_rule *h = &p->hosts[i];

		if (h->quiet)
			continue;
		ports_format(h->ports, h->nports, ports, sizeof(ports), true);
		fprintf(f, "%s{\"name\":", n++ ? "," : "");
		json_fputs(f, h->name);
		fprintf(f, ",\"wildcard\":%s,\"ports\":%s,\"from\":",
		       h->wildcard ? "true" : "false", ports);
		json_fputs(f, h->origin);
		fprintf(f, ",\"pin\":%s,\"upload_limit\":", h->no_pin ? "false" : "true");
		fprintf(f, h->upload_limit ? "%llu}" : "null}", (unsigned long long)h->upload_limit);
	}
	show_quiet_json(f, p);
	fprintf(f, ",\"cidrs\":[");
	for (size_t i = 0; i < p->nspecs; i++) {
		struct allow_spec a = p->specs[i];

		a.nports = 0;
		spec_format(&a, net, sizeof(net));
		ports_format(p->specs[i].ports, p->specs[i].nports, ports,
			   sizeof(ports), true);
		fprintf(f, "%s{\"cidr\":", i ? "," : "");
		json_fputs(f, net);
		fprintf(f, ",\"ports\":%s,\"from\":", ports);
		json_fputs(f, p->specs[i].origin);
		fprintf(f, ",\"pin\":%s,\"upload_limit\":", p->specs[i].pin ? "true" : "false");
		fprintf(f, p->specs[i].upload_limit ? "%llu}" : "null}",
		       (unsigned long long)p->specs[i].upload_limit);
	}
	fprintf(f, "],\"dns\":{\"upstreams\":[");
	snprintf(csv, sizeof(csv), "%s", p->upstreams_csv);
	for (up = strtok_r(csv, ",", &save); up; up = strtok_r(NULL, ",", &save)) {
		fprintf(f, "%s", up == csv ? "" : ",");
		json_fputs(f, up);
	}
	fprintf(f, "],\"min_ttl\":%ld},\"maps\":{\"max_entries\":%ld,\"max_cidrs\":%ld},",
	       min_ttl, max_entries, max_cidrs);
	fprintf(f, "\"pinning\":{\"ports\":[");
	for (unsigned int i = 0; i < p->npin_ports; i++)
		fprintf(f, "%s%u", i ? "," : "", p->pin_ports[i]);
	fprintf(f, "],\"http_ports\":[");
	for (unsigned int i = 0; i < p->nhttp_ports; i++)
		fprintf(f, "%s%u", i ? "," : "", p->http_ports[i]);
	fprintf(f, "]},\"nested_sandbox\":%s,\"upload_limit\":", p->nested_sandbox ? "true" : "false");
	fprintf(f, p->upload_limit ? "%llu}\n" : "null}\n", (unsigned long long)p->upload_limit);
}
