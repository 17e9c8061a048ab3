// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/text.h"
#include "lib/util.h"
#include "policy/policy.h"

/* Ports of policy entries that name none, unless `ports:` says otherwise. */
static const struct port_range default_ports[] = { { 443, 443 }, { 80, 80 } };

void policy_init(struct policy *p)
{
	memset(p, 0, sizeof(*p));
	p->min_ttl = p->max_entries = p->max_cidrs = -1;
	memcpy(p->entry_ports, default_ports, sizeof(default_ports));
	p->nentry_ports = ARRAY_SIZE(default_ports);
	p->pin_ports[0] = POLICY_DEFAULT_PIN_PORT;
	p->npin_ports = 1;
	p->http_ports[0] = POLICY_DEFAULT_HTTP_PIN_PORT;
	p->nhttp_ports = 1;
}

void policy_fill_ports(const struct policy *p, struct port_range *ports,
		       unsigned int *nports)
{
	if (*nports != PORTS_FROM_POLICY)
		return;
	*nports = p->nentry_ports;
	memcpy(ports, p->entry_ports, p->nentry_ports * sizeof(*ports));
}

int policy_add_spec(struct policy *p, const struct allow_spec *spec)
{
	int r = array_grow((void **)&p->specs, &p->cap, p->nspecs, sizeof(*spec),
			   POLICY_MAX_SPECS);

	if (r == 0)
		p->specs[p->nspecs++] = *spec;
	return r;
}

int policy_add_host(struct policy *p, const struct host_rule *host)
{
	int r = array_grow((void **)&p->hosts, &p->hosts_cap, p->nhosts,
			   sizeof(*host), POLICY_MAX_SPECS);

	if (r == 0)
		p->hosts[p->nhosts++] = *host;
	return r;
}

int policy_add_allow_text(struct policy *p, const char *text, char *err,
			  size_t errlen)
{
	struct allow_spec spec;
	struct host_rule host;
	int r;

	if (host_text_is_name(text)) {
		r = host_rule_parse(text, &host, err, errlen);
		if (r < 0)
			return r;
		strcpy(host.origin, "--allow");
		r = policy_add_host(p, &host);
	} else {
		r = allow_spec_parse(text, &spec, err, errlen);
		if (r < 0)
			return r;
		strcpy(spec.origin, "--allow");
		r = policy_add_spec(p, &spec);
	}
	if (r < 0)
		snprintf(err, errlen, "more than %d entries", POLICY_MAX_SPECS);
	return r;
}

bool policy_has_host(const struct policy *p, const struct host_rule *h)
{
	for (size_t i = 0; i < p->nhosts; i++) {
		if (host_rule_equal(&p->hosts[i], h))
			return true;
	}
	return false;
}

bool policy_has_spec(const struct policy *p, const struct allow_spec *s)
{
	for (size_t i = 0; i < p->nspecs; i++) {
		if (allow_spec_equal(&p->specs[i], s))
			return true;
	}
	return false;
}

void policy_free(struct policy *p)
{
	free(p->specs);
	free(p->hosts);
	policy_init(p);
}

int policy_repo_file_name(const char *repo, char *buf, size_t len)
{
	size_t o = 0;

	for (; *repo && o + 3 < len; repo++) {
		if (*repo == '/') {
			buf[o++] = '_';
			buf[o++] = '_';
		} else {
			buf[o++] = (char)tolower((unsigned char)*repo);
		}
	}
	if (*repo || !len)
		return -ENAMETOOLONG;
	buf[o] = '\0';
	return 0;
}

void policy_doc_free(struct policy_doc *doc)
{
	size_t i;

	policy_free(&doc->base.lists);
	for (i = 0; i < doc->nrepos; i++)
		policy_free(&doc->repos[i].sec.lists);
	free(doc->repos);
	doc->repos = NULL;
	doc->nrepos = doc->repos_cap = 0;
}

/* ---- resolving ---------------------------------------------------- */

struct effective {
	const struct policy_section *base, *repo;
	/* Each category's upload budget: the smallest its sections give. */
	__u64 category_limits[UPLOAD_CATEGORIES];
	const struct port_range *ports;		/* the effective `ports:` */
	unsigned int nports;
	bool ports_any;
};

static int add_host(struct policy *out, const char *name,
		    const struct port_range *ports, unsigned int nports,
		    const char *origin, bool no_pin, __u64 upload_limit)
{
	struct host_rule rule = { .no_pin = no_pin, .upload_limit = upload_limit };

	snprintf(rule.name, sizeof(rule.name), "%s", name);
	memcpy(rule.ports, ports, nports * sizeof(*ports));
	rule.nports = nports;
	snprintf(rule.origin, sizeof(rule.origin), "%s", origin);
	return policy_add_host(out, &rule);
}

static int add_catalog(struct policy *out, const struct catalog *cat,
		       enum catalog_section s, const char *name, __u64 upload_limit)
{
	const struct catalog_entry *e = catalog_find(cat, s, name);
	char origin[64];
	int r = 0;

	snprintf(origin, sizeof(origin), "%s: %s", catalog_section_key(s), name);
	for (size_t i = 0; e && i < e->nhosts && r == 0; i++)
		r = add_host(out, e->hosts[i], e->ports, e->nports, origin,
			     catalog_not_tls(e, e->hosts[i]), upload_limit);
	return r;
}

/*
 * An agent profile: its hosts, with the profile's upload budget unless the
 * policy gave the category one (@upload_limit, UPLOAD_LIMIT_NONE: none),
 * and its quiet names, which allow nothing (host_rules_quiet).
 */
static int add_agent(struct policy *out, const struct catalog *cat, const char *name,
		     __u64 upload_limit)
{
	const struct catalog_entry *e = catalog_find(cat, CATALOG_AGENT, name);
	__u64 limit;
	char origin[64];
	int r = 0;

	if (!e)
		return 0;
	limit = !upload_limit ? e->upload_limit :
		upload_limit == UPLOAD_LIMIT_NONE ? 0 : upload_limit;
	snprintf(origin, sizeof(origin), "%s: %s", catalog_section_key(CATALOG_AGENT), name);
	for (size_t i = 0; i < e->nhosts && r == 0; i++)
		r = add_host(out, e->hosts[i], e->ports, e->nports, origin, false, limit);
	for (size_t i = 0; i < e->nquiet && r == 0; i++) {
		struct host_rule quiet = { .quiet = true };

		snprintf(quiet.name, sizeof(quiet.name), "%s", e->quiet[i]);
		snprintf(quiet.origin, sizeof(quiet.origin), "%s", origin);
		r = policy_add_host(out, &quiet);
	}
	return r;
}

/* Entries as written, with the effective ports where they named none. */
static int add_lists(struct policy *out, const struct policy *lists,
		     const struct effective *eff)
{
	int r = 0;

	for (size_t i = 0; i < lists->nspecs && r == 0; i++) {
		struct allow_spec spec = lists->specs[i];

		if (spec.nports == PORTS_FROM_POLICY) {
			spec.nports = eff->ports_any ? 0 : eff->nports;
			memcpy(spec.ports, eff->ports, spec.nports * sizeof(*spec.ports));
		}
		r = policy_add_spec(out, &spec);
	}
	for (size_t i = 0; i < lists->nhosts && r == 0; i++) {
		struct host_rule rule = lists->hosts[i];

		if (rule.nports == PORTS_FROM_POLICY) {
			rule.nports = eff->ports_any ? 0 : eff->nports;
			memcpy(rule.ports, eff->ports, rule.nports * sizeof(*rule.ports));
		}
		r = policy_add_host(out, &rule);
	}
	return r;
}

/* The remote's host on its scheme's port, and the forge's companions. */
static int add_git_remote(struct policy *out, const struct catalog *cat,
			  const struct git_remote *remote, __u64 upload_limit)
{
	struct port_range port = { remote->port, remote->port };
	const struct catalog_entry *forge;
	char origin[64];
	int r;

	if (remote->is_ip) {
		struct allow_spec spec;
		char text[80], err[128];

		snprintf(text, sizeof(text), strchr(remote->host, ':') ?
			 "[%s]:%u" : "%s:%u", remote->host, remote->port);
		if (allow_spec_parse(text, &spec, err, sizeof(err)) < 0)
			return -EINVAL;
		strcpy(spec.origin, "git_remote");
		spec.upload_limit = upload_limit;
		return policy_add_spec(out, &spec);
	}
	/* A remote over SSH or git:// speaks no TLS, whatever its port. */
	r = add_host(out, remote->host, &port, 1, "git_remote",
		     !remote->scheme || strcmp(remote->scheme, "https") != 0, upload_limit);
	forge = catalog_forge_for(cat, remote->host);
	if (r < 0 || !forge)
		return r;
	snprintf(origin, sizeof(origin), "git_remote: %s", forge->name);
	for (size_t i = 0; i < forge->nhosts && r == 0; i++)
		r = add_host(out, forge->hosts[i], forge->ports, forge->nports, origin,
			     catalog_not_tls(forge, forge->hosts[i]), upload_limit);
	return r;
}

static const struct policy_section *find_repo(const struct policy_doc *doc,
					      const char *repo)
{
	for (size_t i = 0; repo && i < doc->nrepos; i++)
		if (!strcasecmp(doc->repos[i].name, repo))
			return &doc->repos[i].sec;
	return NULL;
}

static void resolve_loopback(const struct effective *eff, struct policy *out,
			     int *r)
{
	const struct policy_section *s = eff->repo && eff->repo->loopback_set ?
					 eff->repo : eff->base;
	const char *const addrs[] = { "127.0.0.1", "::1" };

	if (!s->loopback_set || (!s->loopback_any && !s->nloopback))
		return;
	for (size_t i = 0; i < 2 && *r == 0; i++) {
		struct allow_spec spec;
		char err[64];

		allow_spec_parse(addrs[i], &spec, err, sizeof(err));
		spec.nports = s->loopback_any ? 0 : s->nloopback;
		memcpy(spec.ports, s->loopback, spec.nports * sizeof(*spec.ports));
		strcpy(spec.origin, "loopback");
		*r = policy_add_spec(out, &spec);
	}
}

/* The effective `ports:` (the repository's, else the defaults', else 443
 * and 80), for entries that name none: @out's entry ports too. */
static void resolve_ports(struct effective *eff, struct policy *out)
{
	const struct policy_section *from = eff->repo && eff->repo->ports_set ?
					    eff->repo : eff->base;

	if (from->ports_set) {
		eff->ports = from->ports;
		eff->nports = from->nports;
		eff->ports_any = from->nports == 0;
	} else {
		eff->ports = default_ports;
		eff->nports = ARRAY_SIZE(default_ports);
	}
	out->nentry_ports = eff->ports_any ? 0 : eff->nports;
	memcpy(out->entry_ports, eff->ports, out->nentry_ports * sizeof(*eff->ports));
}

/* Scalars: the repository's value wins over the defaults'. */
static void resolve_scalars(const struct effective *eff, struct policy *out)
{
	const struct policy_section *secs[2] = { eff->base, eff->repo };

	for (int i = 0; i < 2; i++) {
		if (secs[i] && secs[i]->pinning_set) {
			out->npin_ports = secs[i]->npin_ports;
			memcpy(out->pin_ports, secs[i]->pin_ports, sizeof(out->pin_ports));
			out->nhttp_ports = secs[i]->nhttp_ports;
			memcpy(out->http_ports, secs[i]->http_ports, sizeof(out->http_ports));
		}
	}
	/* A scalar: the repository's word, else the defaults', else off. */
	out->nested_sandbox = eff->repo && eff->repo->nested_sandbox >= 0 ?
			      eff->repo->nested_sandbox == 1 : eff->base->nested_sandbox == 1;
	for (int i = 0; i < 2; i++) {
		const struct policy *l = secs[i] ? &secs[i]->lists : NULL;

		if (!l)
			continue;
		if (l->min_ttl >= 0)
			out->min_ttl = l->min_ttl;
		if (l->max_entries >= 0)
			out->max_entries = l->max_entries;
		if (l->max_cidrs >= 0)
			out->max_cidrs = l->max_cidrs;
		/* The repository's section overrides (the operator may give
		 * one repository a larger budget, or a smaller). */
		if (l->upload_limit)
			out->upload_limit = l->upload_limit == UPLOAD_LIMIT_NONE ? 0 :
					    l->upload_limit;
	}
}

/*
 * Each catalog category's upload budget: the sections' (the repository's
 * over the defaults'), else the catalog's; `none`, none. Returns the
 * agents' budget: the policy's replaces every profile's own (add_agent),
 * `none` (kept as such) removes them.
 */
static __u64 resolve_limits(struct effective *eff, const struct catalog *cat)
{
	const struct policy_section *secs[2] = { eff->base, eff->repo };
	__u64 agents_limit;

	for (int i = 0; i < 2; i++)
		for (int c = 0; secs[i] && c < UPLOAD_CATEGORIES; c++)
			if (secs[i]->category_limits[c])
				eff->category_limits[c] = secs[i]->category_limits[c];
	agents_limit = eff->category_limits[UPLOAD_AGENTS] ?
		       eff->category_limits[UPLOAD_AGENTS] : cat->upload_limits[UPLOAD_AGENTS];
	for (int c = 0; c < UPLOAD_CATEGORIES; c++) {
		if (!eff->category_limits[c])
			eff->category_limits[c] = cat->upload_limits[c];
		if (eff->category_limits[c] == UPLOAD_LIMIT_NONE)
			eff->category_limits[c] = 0;
	}
	return agents_limit;
}

/* Lists: the defaults', then the repository's additions. */
static int resolve_lists(const struct effective *eff, const struct catalog *cat,
			 __u64 agents_limit, struct policy *out)
{
	const struct policy_section *secs[2] = { eff->base, eff->repo };
	int r = 0;

	for (int i = 0; i < 2 && r == 0; i++) {
		const struct policy_section *s = secs[i];

		if (!s)
			continue;
		for (size_t j = 0; j < s->nos && r == 0; j++)
			r = add_catalog(out, cat, CATALOG_OS, s->os[j],
					eff->category_limits[UPLOAD_OS]);
		for (size_t j = 0; j < s->neco && r == 0; j++)
			r = add_catalog(out, cat, CATALOG_ECOSYSTEM, s->eco[j],
					eff->category_limits[UPLOAD_ECOSYSTEMS]);
		for (size_t j = 0; j < s->nagents && r == 0; j++)
			r = add_agent(out, cat, s->agents[j], agents_limit);
		if (r == 0)
			r = add_lists(out, &s->lists, eff);
		if (r == 0 && s->lists.upstreams_csv[0])
			r = csv_append(out->upstreams_csv, sizeof(out->upstreams_csv),
				       s->lists.upstreams_csv);
	}
	return r;
}

int policy_resolve(const struct policy_doc *doc, const struct catalog *cat,
		   const char *repo, const struct git_remote *remote,
		   struct policy *out, struct diag *d)
{
	struct effective eff = { .base = &doc->base, .repo = find_repo(doc, repo) };
	int git_remote = eff.repo && eff.repo->git_remote >= 0 ? eff.repo->git_remote :
			 eff.base->git_remote;
	__u64 agents_limit;
	int r;

	resolve_ports(&eff, out);
	resolve_scalars(&eff, out);
	agents_limit = resolve_limits(&eff, cat);
	r = resolve_lists(&eff, cat, agents_limit, out);
	/* Unset means yes: the remote is one of the ratified categories. */
	if (r == 0 && git_remote != 0 && remote)
		r = add_git_remote(out, cat, remote, eff.category_limits[UPLOAD_GIT_REMOTE]);
	if (r == 0)
		resolve_loopback(&eff, out, &r);
	if (r < 0)
		diag_say(d, "the effective policy is too large (more than %d entries)",
			 POLICY_MAX_SPECS);
	return r;
}
