// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * policy/yaml.c - the policy file's YAML into a struct policy_doc.
 *
 * Strict: unknown keys, wrong types, bad names, prefixes, ports and
 * catalog names are each reported (file:line:column, with a "did you mean"
 * where one is close) and the document is refused as a whole: never a
 * partially applied policy.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/text.h"
#include "lib/util.h"
#include "policy/yaml.h"
#include "policy/yaml_impl.h"
#include "policy/yaml_util.h"

/* The keys of a section, a repository's or the top level's; the top
 * level's own two last (a repository's section has the others). */
enum section_key {
	SEC_PORTS, SEC_OS, SEC_GIT_REMOTE, SEC_ECOSYSTEMS, SEC_AGENTS, SEC_HOSTS, SEC_CIDRS,
	SEC_PINNING, SEC_DNS, SEC_MAPS, SEC_LOOPBACK, SEC_UPLOAD_LIMIT, SEC_UPLOAD_LIMITS,
	SEC_NESTED_SANDBOX,
	SEC_VERSION, SEC_REPOS,
};

static const char *const section_names[] = {
	[SEC_PORTS] = "ports", [SEC_OS] = "os_registries", [SEC_GIT_REMOTE] = "git_remote",
	[SEC_ECOSYSTEMS] = "ecosystems", [SEC_AGENTS] = "agents", [SEC_HOSTS] = "hosts",
	[SEC_CIDRS] = "cidrs", [SEC_PINNING] = "pinning", [SEC_DNS] = "dns", [SEC_MAPS] = "maps",
	[SEC_LOOPBACK] = "loopback", [SEC_UPLOAD_LIMIT] = "upload_limit",
	[SEC_UPLOAD_LIMITS] = "upload_limits", [SEC_NESTED_SANDBOX] = "nested_sandbox",
	[SEC_VERSION] = "version", [SEC_REPOS] = "repos",
};


yaml_node_t *yp_node_at(struct parser *ps, int index)
{
	return yaml_node(ps->doc, index);
}

/* `ports: [443, "8000-8100"]`, `ports: 443` or `ports: any`. */
int yp_ports(struct parser *ps, yaml_node_t *node, struct port_range *ret, unsigned int *ret_n,
	     bool *ret_any)
{
	return policy_yaml_ports(ps->doc, node, ps->d, ret, ret_n, ret_any);
}

int yp_bool(struct parser *ps, yaml_node_t *node, int *ret)
{
	const char *t = yaml_scalar(node);

	if (t && (!strcmp(t, "true") || !strcmp(t, "yes")))
		*ret = 1;
	else if (t && (!strcmp(t, "false") || !strcmp(t, "no")))
		*ret = 0;
	else {
		diag_add(ps->d, node, "want true or false");
		return -EINVAL;
	}
	return 0;
}

int yp_number(struct parser *ps, yaml_node_t *node, long min, long max, long *ret)
{
	const char *t = yaml_scalar(node);
	char *end;
	long v;

	if (!t || !*t || *t == '-' || *t == '+') {
		diag_add(ps->d, node, "want a number from %ld to %ld", min, max);
		return -EINVAL;
	}
	errno = 0;
	v = strtol(t, &end, 10);
	if (errno || *end || v < min || v > max) {
		diag_add(ps->d, node, "want a number from %ld to %ld", min, max);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

/* A size (`1M`, `512K`, plain bytes: lib/text.h). */
int yp_size(struct parser *ps, yaml_node_t *node, __u64 *ret)
{
	uint64_t v;

	if (size_parse(yaml_scalar(node), &v) < 0) {
		diag_add(ps->d, node, SIZE_WANT);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

/* A list of catalog names of section @s into @out. */
static int parse_names(struct parser *ps, yaml_node_t *node,
		       enum catalog_section s, char (*out)[CATALOG_NAME_MAX],
		       size_t *n)
{
	const char *key = catalog_section_key(s);
	yaml_node_item_t *it;
	int r = 0;

	if (node->type != YAML_SEQUENCE_NODE) {
		diag_add(ps->d, node, "%s: want a list of names", key);
		return -EINVAL;
	}
	for (it = node->data.sequence.items.start;
	     it < node->data.sequence.items.top; it++) {
		yaml_node_t *item = yp_node_at(ps, *it);
		const char *name = yaml_scalar(item);

		if (!name || !catalog_find(ps->cat, s, name)) {
			const char *hint = name ? closest_word(name, ps->cat->names[s],
							       ps->cat->n[s]) : NULL;

			if (hint)
				diag_add(ps->d, item, "%s: unknown name '%s' (did you mean '%s'?)",
					 key, name, hint);
			else
				diag_add(ps->d, item, "%s: unknown name '%s' (see docs/POLICY.md for the catalog)",
					 key, name ? name : "?");
			r = -EINVAL;
			continue;
		}
		if (*n == POLICY_MAX_NAMES) {
			diag_add(ps->d, item, "%s: more than %d names", key, POLICY_MAX_NAMES);
			return -EINVAL;
		}
		strcpy(out[(*n)++], name);
	}
	return r;
}

enum item_key { ITEM_TEXT, ITEM_PORTS, ITEM_PIN, ITEM_LIMIT, ITEM_KEYS };

static const char *const cidr_item_names[ITEM_KEYS] = { "cidr", "ports", "pin", "upload_limit" };
static const char *const host_item_names[ITEM_KEYS] = { "host", "ports", "pin", "upload_limit" };

/* [hosts]: a `cidrs:` item's keys, a `hosts:` item's. */
static const struct yaml_keys item_keys[2] = {
	YAML_KEYS("a cidrs item", cidr_item_names, .refuse = yaml_refuse_unknown),
	YAML_KEYS("a hosts item", host_item_names, .refuse = yaml_refuse_unknown),
};

/*
 * A `hosts:` or `cidrs:` item's text and its `ports:` node (NULL: none):
 * "TEXT" or {host|cidr: TEXT, ports: ...}. An unknown key is reported
 * and the item still read, so one typo shows every other mistake too.
 */
static int item_nodes(struct parser *ps, yaml_node_t *item, bool hosts,
		      const char **ret_text, yaml_node_t **ret_ports,
		      yaml_node_t **ret_pin, yaml_node_t **ret_limit)
{
	const char *what = hosts ? "host" : "cidr";
	const char *text = yaml_scalar(item);
	yaml_node_t *nodes[ITEM_KEYS] = {};

	if (item->type == YAML_MAPPING_NODE) {
		struct yaml_walk w = PARSER_WALK(ps, &item_keys[hosts]);
		int i;

		yaml_walk_start(&w, item);
		while ((i = yaml_walk_next(&w)) >= 0)
			nodes[i] = w.value;
		text = yaml_scalar(nodes[ITEM_TEXT]);
		if (!text) {
			diag_add(ps->d, item, "%ss item lacks '%s:'", what, what);
			return -EINVAL;
		}
	} else if (!text) {
		diag_add(ps->d, item, "%ss: items are strings or mappings", what);
		return -EINVAL;
	}
	*ret_text = text;
	*ret_ports = nodes[ITEM_PORTS];
	*ret_pin = nodes[ITEM_PIN];
	*ret_limit = nodes[ITEM_LIMIT];
	return 0;
}

/*
 * @text as a host rule or an allow spec into @lists, its ports its own
 * ("x:443") or @ports, never both; neither: the section's (filled in
 * when the policy is assembled). -E2BIG when @lists is full.
 */
static int item_add(struct parser *ps, yaml_node_t *item, bool hosts,
		    const char *text, yaml_node_t *ports, yaml_node_t *pin,
		    yaml_node_t *limit, struct policy *lists, const char *origin)
{
	__u64 upload_limit = 0;
	int pinned = -1;
	struct allow_spec spec;
	struct host_rule rule;
	unsigned int *nports = hosts ? &rule.nports : &spec.nports;
	struct port_range *pr = hosts ? rule.ports : spec.ports;
	char msg[192];
	bool any;

	if (hosts ? host_rule_parse(text, &rule, msg, sizeof(msg)) :
		    allow_spec_parse(text, &spec, msg, sizeof(msg))) {
		diag_add(ps->d, item, "%s", msg);
		return -EINVAL;
	}
	if (ports && *nports) {
		diag_add(ps->d, item, "'%s' names ports twice", text);
		return -EINVAL;
	}
	if (ports && yp_ports(ps, ports, pr, nports, &any) < 0)
		return -EINVAL;
	if (pin && yp_bool(ps, pin, &pinned) < 0)
		return -EINVAL;
	if (limit && yp_size(ps, limit, &upload_limit) < 0)
		return -EINVAL;
	if (hosts) {
		rule.no_pin = pinned == 0;
		rule.upload_limit = upload_limit;
	} else {
		spec.pin = pinned == 1;
		spec.upload_limit = upload_limit;
	}
	if (!ports && !*nports)
		*nports = PORTS_FROM_POLICY;
	snprintf(hosts ? rule.origin : spec.origin, sizeof(rule.origin), "%s", origin);
	if ((hosts ? policy_add_host(lists, &rule) : policy_add_spec(lists, &spec)) < 0) {
		diag_add(ps->d, item, "more than %d %s entries", POLICY_MAX_SPECS,
			 hosts ? "host" : "cidr");
		return -E2BIG;
	}
	return 0;
}

/* `hosts:` and `cidrs:`: every bad item is reported; a full list stops. */
static int parse_entries(struct parser *ps, yaml_node_t *node, bool hosts,
			 struct policy *lists, const char *origin)
{
	yaml_node_item_t *it;
	int r = 0;

	if (node->type != YAML_SEQUENCE_NODE) {
		diag_add(ps->d, node, "%ss: want a list", hosts ? "host" : "cidr");
		return -EINVAL;
	}
	for (it = node->data.sequence.items.start;
	     it < node->data.sequence.items.top; it++) {
		yaml_node_t *item = yp_node_at(ps, *it), *ports, *pin = NULL, *limit = NULL;
		const char *text;
		int rr = item_nodes(ps, item, hosts, &text, &ports, &pin, &limit);

		if (rr == 0)
			rr = item_add(ps, item, hosts, text, ports, pin, limit, lists, origin);
		if (rr == -E2BIG)
			return rr;
		if (rr < 0)
			r = -EINVAL;
	}
	return r;
}

/*
 * Fail closed on typos: an ignored key is a rule the operator believes in
 * and egret does not enforce. The hint is drawn from the keys the section
 * may hold; a repository's (w->ctx, NULL at the top level) is told the
 * top level's own keys belong there.
 */
static void section_refuse(const struct yaml_walk *w, const char *key)
{
	const char *repo = w->ctx;

	if (!key)
		diag_add(w->d, w->key, "keys must be plain names");
	else if (repo && (!strcmp(key, section_names[SEC_REPOS]) ||
			  !strcmp(key, section_names[SEC_VERSION])))
		diag_add(w->d, w->key, "'%s' belongs at the top level, not in repos.%s",
			 key, repo);
	else
		diag_unknown_key(w->d, w->key, key, w->keys->names, w->keys->n,
				 w->keys->where);
}

static const struct yaml_keys top_keys =
	YAML_KEYS("the policy", section_names, .refuse = section_refuse);
static const struct yaml_keys repo_keys = {
	.where = "a repos section", .names = section_names, .n = SEC_VERSION,
	.refuse = section_refuse,
};

/* `hosts:` or `cidrs:` (@key) of @repo's section, each entry saying where
 * it came from ("repos.acme/web.hosts") for egret check. */
static int section_entries(struct parser *ps, yaml_node_t *v, const char *key,
			   struct policy_section *sec, const char *repo)
{
	char origin[64];

	snprintf(origin, sizeof(origin), "%s%.*s%s%s", repo ? "repos." : "",
		 repo ? 30 : 0, repo ? repo : "", repo ? "." : "", key);
	return parse_entries(ps, v, key[0] == 'h', &sec->lists, origin);
}

/* `upload_limit: SIZE` or `none`. */
static int section_upload_limit(struct parser *ps, yaml_node_t *v, struct policy *lists)
{
	if (yaml_scalar(v) && !strcmp(yaml_scalar(v), "none")) {
		lists->upload_limit = UPLOAD_LIMIT_NONE;
		return 0;
	}
	return yp_size(ps, v, &lists->upload_limit);
}

/* `version: 1`, the top level's. */
static int parse_version(struct parser *ps, yaml_node_t *v)
{
	if (!yaml_scalar(v) || strcmp(yaml_scalar(v), "1")) {
		diag_add(ps->d, v, "unsupported version (want 1)");
		return -EINVAL;
	}
	return 0;
}

/* The value @v of key @k of @repo's section (NULL: the top level's). */
static int section_key(struct parser *ps, enum section_key k, yaml_node_t *v,
		       struct policy_section *sec, const char *repo)
{
	bool any;
	int r;

	switch (k) {
	case SEC_PORTS:
		r = yp_ports(ps, v, sec->ports, &sec->nports, &any);
		sec->ports_set = r == 0;
		return r;
	case SEC_OS:
		return parse_names(ps, v, CATALOG_OS, sec->os, &sec->nos);
	case SEC_ECOSYSTEMS:
		return parse_names(ps, v, CATALOG_ECOSYSTEM, sec->eco, &sec->neco);
	case SEC_AGENTS:
		return parse_names(ps, v, CATALOG_AGENT, sec->agents, &sec->nagents);
	case SEC_GIT_REMOTE:
		return yp_bool(ps, v, &sec->git_remote);
	case SEC_NESTED_SANDBOX:
		return yp_bool(ps, v, &sec->nested_sandbox);
	case SEC_HOSTS:
	case SEC_CIDRS:
		return section_entries(ps, v, section_names[k], sec, repo);
	case SEC_DNS:
		return yp_dns(ps, v, &sec->lists);
	case SEC_MAPS:
		return yp_maps(ps, v, &sec->lists);
	case SEC_LOOPBACK:
		return yp_loopback(ps, v, sec);
	case SEC_PINNING:
		return yp_pinning(ps, v, sec);
	case SEC_UPLOAD_LIMIT:
		return section_upload_limit(ps, v, &sec->lists);
	case SEC_UPLOAD_LIMITS:
		return yp_category_limits(ps, v, sec);
	case SEC_VERSION:
		return parse_version(ps, v);
	case SEC_REPOS:
		ps->repos = v;	/* read once the top level is: parse_repos() */
		return 0;
	}
	return -EINVAL;
}

/* The keys a section may hold; @repo is NULL for the top level. */
static int parse_section(struct parser *ps, yaml_node_t *map,
			 struct policy_section *sec, const char *repo)
{
	struct yaml_walk w = PARSER_WALK(ps, repo ? &repo_keys : &top_keys);
	int k, r = 0;

	w.ctx = repo;
	yaml_walk_start(&w, map);
	while ((k = yaml_walk_next(&w)) >= 0)
		if (section_key(ps, (enum section_key)k, w.value, sec, repo) < 0)
			r = -EINVAL;
	return r < 0 ? r : w.r;
}

static void section_init(struct policy_section *sec)
{
	memset(sec, 0, sizeof(*sec));
	policy_init(&sec->lists);
	sec->git_remote = -1;
	sec->nested_sandbox = -1;
}

static int parse_repos(struct parser *ps, yaml_node_t *node)
{
	yaml_node_pair_t *p;
	int r = 0;

	if (node->type != YAML_MAPPING_NODE) {
		diag_add(ps->d, node, "repos: want a mapping of owner/name to sections");
		return -EINVAL;
	}
	for (p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yp_node_at(ps, p->key), *v = yp_node_at(ps, p->value);
		const char *name = yaml_scalar(k);
		struct policy_repo *repo;
		size_t i;

		if (!name || !policy_repo_name_valid(name)) {
			diag_add(ps->d, k, "repos: '%s' is not owner/name", name ? name : "?");
			r = -EINVAL;
			continue;
		}
		for (i = 0; i < ps->out->nrepos; i++)
			if (!strcasecmp(ps->out->repos[i].name, name))
				break;
		if (i < ps->out->nrepos) {
			diag_add(ps->d, k, "repos: '%s' appears twice", name);
			r = -EINVAL;
			continue;
		}
		if (v->type != YAML_MAPPING_NODE) {
			diag_add(ps->d, v, "repos.%s: want a mapping", name);
			r = -EINVAL;
			continue;
		}
		if (ps->out->nrepos == POLICY_MAX_REPOS) {
			diag_add(ps->d, k, "repos: more than %d", POLICY_MAX_REPOS);
			return -E2BIG;
		}
		if (array_grow((void **)&ps->out->repos, &ps->out->repos_cap,
			       ps->out->nrepos, sizeof(*ps->out->repos),
			       POLICY_MAX_REPOS) < 0) {
			diag_add(ps->d, k, "repos: out of memory");
			return -ENOMEM;
		}
		repo = &ps->out->repos[ps->out->nrepos++];
		memset(repo, 0, sizeof(*repo));
		snprintf(repo->name, sizeof(repo->name), "%s", name);
		section_init(&repo->sec);
		if (parse_section(ps, v, &repo->sec, repo->name) < 0)
			r = -EINVAL;
	}
	return r;
}

int policy_doc_parse(struct policy_doc *doc, const char *text, size_t len,
		     const char *name, const struct catalog *cat,
		     struct diag *d)
{
	struct parser ps = { .cat = cat, .d = d, .out = doc };
	yaml_document_t ydoc;
	yaml_node_t *root;
	int r;

	memset(doc, 0, sizeof(*doc));
	snprintf(doc->file, sizeof(doc->file), "%s", name);
	section_init(&doc->base);
	d->file = doc->file;
	if (yaml_load_text(&ydoc, text, len, d) < 0)
		return -EINVAL;
	if (yaml_refuse_duplicate_keys(&ydoc, d) < 0) {
		yaml_document_delete(&ydoc);
		return -EINVAL;
	}
	ps.doc = &ydoc;
	root = yaml_document_get_root_node(&ydoc);
	r = 0;
	if (root && root->type != YAML_MAPPING_NODE) {
		diag_add(d, root, "the policy must be a mapping of keys");
		r = -EINVAL;
	} else if (root) {
		r = parse_section(&ps, root, &doc->base, NULL);
		if (ps.repos && parse_repos(&ps, ps.repos) < 0)
			r = -EINVAL;
	}
	yaml_document_delete(&ydoc);
	return r < 0 || d->n ? -EINVAL : 0;
}
