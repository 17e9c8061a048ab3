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

#include "lib/util.h"
#include "policy/yaml.h"

static const char *const section_keys[] = {
	"ports", "os_registries", "git_remote", "ecosystems", "hosts", "cidrs",
	"dns", "maps", "loopback",
};
static const char *const top_only_keys[] = { "version", "repos" };

struct parser {
	yaml_document_t *doc;
	const struct catalog *cat;
	struct diag *d;
	struct policy_doc *out;
};

static yaml_node_t *node_at(struct parser *ps, int index)
{
	return yaml_node(ps->doc, index);
}

static void unknown_key(struct parser *ps, yaml_node_t *k, const char *key,
			const char *const *known, size_t n, const char *where)
{
	diag_unknown_key(ps->d, k, key, known, n, where);
}

/* `ports: [443, "8000-8100"]`, `ports: 443` or `ports: any`. */
int policy_yaml_ports(yaml_document_t *doc, yaml_node_t *node, struct diag *d,
		      struct port_range *ret, unsigned int *ret_n, bool *ret_any)
{
	const char *text = yaml_scalar(node);
	yaml_node_item_t *it;
	unsigned int n = 0;
	char msg[160];
	int r;

	*ret_any = false;
	if (text && !strcmp(text, "any")) {
		*ret_any = true;
		*ret_n = 0;
		return 0;
	}
	if (text) {
		r = ports_parse(text, ret, EGRET_PORT_SLOTS, msg, sizeof(msg));
		if (r < 0) {
			diag_add(d, node, "%s", msg);
			return -EINVAL;
		}
		*ret_n = (unsigned int)r;
		return 0;
	}
	if (node->type != YAML_SEQUENCE_NODE) {
		diag_add(d, node, "ports: want a list, a number or 'any'");
		return -EINVAL;
	}
	for (it = node->data.sequence.items.start;
	     it < node->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_node(doc, *it);

		if (!yaml_scalar(item)) {
			diag_add(d, item, "ports: items are numbers or LO-HI");
			return -EINVAL;
		}
		if (n == EGRET_PORT_SLOTS) {
			diag_add(d, item, "ports: more than %d items", EGRET_PORT_SLOTS);
			return -EINVAL;
		}
		r = ports_parse(yaml_scalar(item), ret + n, EGRET_PORT_SLOTS - n,
				msg, sizeof(msg));
		if (r < 0) {
			diag_add(d, item, "%s", msg);
			return -EINVAL;
		}
		n += (unsigned int)r;
	}
	if (n == 0) {
		diag_add(d, node, "ports: empty list (use 'any' or omit)");
		return -EINVAL;
	}
	*ret_n = n;
	return 0;
}

static int parse_ports(struct parser *ps, yaml_node_t *node,
		       struct port_range *ret, unsigned int *ret_n, bool *ret_any)
{
	return policy_yaml_ports(ps->doc, node, ps->d, ret, ret_n, ret_any);
}

static int parse_bool(struct parser *ps, yaml_node_t *node, int *ret)
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

static int parse_number(struct parser *ps, yaml_node_t *node, long min,
			long max, long *ret)
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
		yaml_node_t *item = node_at(ps, *it);
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

/* `hosts:` and `cidrs:` items: "TEXT" or {host|cidr: TEXT, ports: ...}. */
static int parse_entries(struct parser *ps, yaml_node_t *node, bool hosts,
			 struct policy *lists, const char *origin)
{
	const char *what = hosts ? "host" : "cidr";
	yaml_node_item_t *it;
	int r = 0;

	if (node->type != YAML_SEQUENCE_NODE) {
		diag_add(ps->d, node, "%ss: want a list", what);
		return -EINVAL;
	}
	for (it = node->data.sequence.items.start;
	     it < node->data.sequence.items.top; it++) {
		yaml_node_t *item = node_at(ps, *it), *ports = NULL;
		const char *text = yaml_scalar(item);
		struct allow_spec spec;
		struct host_rule rule;
		unsigned int *nports;
		struct port_range *pr;
		char msg[192];
		bool any;

		if (item->type == YAML_MAPPING_NODE) {
			yaml_node_pair_t *p;
			static const char *const keys[2][2] = {
				{ "cidr", "ports" }, { "host", "ports" },
			};

			for (p = item->data.mapping.pairs.start;
			     p < item->data.mapping.pairs.top; p++) {
				yaml_node_t *k = node_at(ps, p->key);
				const char *key = yaml_scalar(k);

				if (key && !strcmp(key, what))
					text = yaml_scalar(node_at(ps, p->value));
				else if (key && !strcmp(key, "ports"))
					ports = node_at(ps, p->value);
				else
					unknown_key(ps, k, key ? key : "?", keys[hosts], 2,
						    hosts ? "a hosts item" : "a cidrs item");
			}
			if (!text) {
				diag_add(ps->d, item, "%ss item lacks '%s:'", what, what);
				r = -EINVAL;
				continue;
			}
		} else if (!text) {
			diag_add(ps->d, item, "%ss: items are strings or mappings", what);
			r = -EINVAL;
			continue;
		}

		if (hosts ? host_rule_parse(text, &rule, msg, sizeof(msg)) :
			    allow_spec_parse(text, &spec, msg, sizeof(msg))) {
			diag_add(ps->d, item, "%s", msg);
			r = -EINVAL;
			continue;
		}
		nports = hosts ? &rule.nports : &spec.nports;
		pr = hosts ? rule.ports : spec.ports;
		if (ports && *nports) {
			diag_add(ps->d, item, "'%s' names ports twice", text);
			r = -EINVAL;
			continue;
		}
		if (ports && parse_ports(ps, ports, pr, nports, &any) < 0) {
			r = -EINVAL;
			continue;
		}
		if (!ports && !*nports)
			*nports = PORTS_FROM_POLICY;
		snprintf(hosts ? rule.origin : spec.origin, sizeof(rule.origin),
			 "%s", origin);
		if ((hosts ? policy_add_host(lists, &rule) :
			     policy_add_spec(lists, &spec)) < 0) {
			diag_add(ps->d, item, "more than %d %s entries",
				 POLICY_MAX_SPECS, what);
			return -E2BIG;
		}
	}
	return r;
}

/* `dns: {upstreams: [...], min_ttl: N}` */
static int parse_dns(struct parser *ps, yaml_node_t *node, struct policy *lists)
{
	static const char *const keys[] = { "upstreams", "min_ttl" };
	yaml_node_pair_t *p;
	int r = 0;

	if (node->type != YAML_MAPPING_NODE) {
		diag_add(ps->d, node, "dns: want a mapping (upstreams, min_ttl)");
		return -EINVAL;
	}
	for (p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(ps, p->key), *v = node_at(ps, p->value);
		const char *key = yaml_scalar(k) ? yaml_scalar(k) : "?";

		if (!strcmp(key, "min_ttl")) {
			r |= parse_number(ps, v, 0, 86400, &lists->min_ttl);
		} else if (!strcmp(key, "upstreams") && v->type == YAML_SEQUENCE_NODE) {
			yaml_node_item_t *it;

			for (it = v->data.sequence.items.start;
			     it < v->data.sequence.items.top; it++) {
				yaml_node_t *item = node_at(ps, *it);
				char canon[64], msg[160];
				size_t used = strlen(lists->upstreams_csv);

				if (!yaml_scalar(item) ||
				    endpoint_parse(yaml_scalar(item), 53, canon, sizeof(canon),
						   msg, sizeof(msg)) < 0) {
					diag_add(ps->d, item, "dns.upstreams: want ADDR[:PORT] or [V6]:PORT");
					r = -EINVAL;
					continue;
				}
				if (used + strlen(canon) + 2 > sizeof(lists->upstreams_csv)) {
					diag_add(ps->d, item, "dns.upstreams: too many");
					return -EINVAL;
				}
				snprintf(lists->upstreams_csv + used,
					 sizeof(lists->upstreams_csv) - used, "%s%s",
					 used ? "," : "", canon);
			}
		} else if (!strcmp(key, "upstreams")) {
			diag_add(ps->d, v, "dns.upstreams: want a list");
			r = -EINVAL;
		} else {
			unknown_key(ps, k, key, keys, 2, "dns");
			r = -EINVAL;
		}
	}
	return r ? -EINVAL : 0;
}

/* `maps: {max_entries: N, max_cidrs: N}` */
static int parse_maps(struct parser *ps, yaml_node_t *node, struct policy *lists)
{
	static const char *const keys[] = { "max_entries", "max_cidrs" };
	yaml_node_pair_t *p;
	int r = 0;

	if (node->type != YAML_MAPPING_NODE) {
		diag_add(ps->d, node, "maps: want a mapping (max_entries, max_cidrs)");
		return -EINVAL;
	}
	for (p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(ps, p->key), *v = node_at(ps, p->value);
		const char *key = yaml_scalar(k) ? yaml_scalar(k) : "?";

		if (!strcmp(key, "max_entries"))
			r |= parse_number(ps, v, 1, 1L << 24, &lists->max_entries);
		else if (!strcmp(key, "max_cidrs"))
			r |= parse_number(ps, v, 1, 1L << 24, &lists->max_cidrs);
		else {
			unknown_key(ps, k, key, keys, 2, "maps");
			r = -EINVAL;
		}
	}
	return r ? -EINVAL : 0;
}

/* `loopback: false`, `loopback: true` (any port), `loopback: {ports: [...]}` */
static int parse_loopback(struct parser *ps, yaml_node_t *node,
			  struct policy_section *sec)
{
	yaml_node_pair_t *p;
	int on, r = 0;

	sec->loopback_set = true;
	if (yaml_scalar(node)) {
		if (parse_bool(ps, node, &on) < 0)
			return -EINVAL;
		sec->loopback_any = on;
		sec->nloopback = 0;
		return 0;
	}
	if (node->type != YAML_MAPPING_NODE) {
		diag_add(ps->d, node, "loopback: want false, true or {ports: [...]}");
		return -EINVAL;
	}
	for (p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(ps, p->key);
		const char *key = yaml_scalar(k) ? yaml_scalar(k) : "?";
		static const char *const keys[] = { "ports" };

		if (!strcmp(key, "ports"))
			r |= parse_ports(ps, node_at(ps, p->value), sec->loopback,
					 &sec->nloopback, &sec->loopback_any);
		else {
			unknown_key(ps, k, key, keys, 1, "loopback");
			r = -EINVAL;
		}
	}
	return r ? -EINVAL : 0;
}

/* The keys a section may hold; @repo is NULL for the top level. */
static int parse_section(struct parser *ps, yaml_node_t *map,
			 struct policy_section *sec, const char *repo)
{
	char origin[64];
	yaml_node_pair_t *p;
	int r = 0;

	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(ps, p->key), *v = node_at(ps, p->value);
		const char *key = yaml_scalar(k);
		int rr = 0;

		if (!key) {
			diag_add(ps->d, k, "keys must be plain names");
			r = -EINVAL;
			continue;
		}
		if (repo && (!strcmp(key, "repos") || !strcmp(key, "version"))) {
			diag_add(ps->d, k, "'%s' belongs at the top level, not in repos.%s",
				 key, repo);
			rr = -EINVAL;
		} else if (!repo && !strcmp(key, "version")) {
			if (!yaml_scalar(v) || strcmp(yaml_scalar(v), "1")) {
				diag_add(ps->d, v, "unsupported version (want 1)");
				rr = -EINVAL;
			}
		} else if (!repo && !strcmp(key, "repos")) {
			continue;	/* parse_doc handles it */
		} else if (!strcmp(key, "ports")) {
			bool any;

			rr = parse_ports(ps, v, sec->ports, &sec->nports, &any);
			sec->ports_set = rr == 0;
		} else if (!strcmp(key, "os_registries")) {
			rr = parse_names(ps, v, CATALOG_OS, sec->os, &sec->nos);
		} else if (!strcmp(key, "ecosystems")) {
			rr = parse_names(ps, v, CATALOG_ECOSYSTEM, sec->eco, &sec->neco);
		} else if (!strcmp(key, "git_remote")) {
			rr = parse_bool(ps, v, &sec->git_remote);
		} else if (!strcmp(key, "hosts") || !strcmp(key, "cidrs")) {
			snprintf(origin, sizeof(origin), "%s%.*s%s%s", repo ? "repos." : "",
				 repo ? 30 : 0, repo ? repo : "", repo ? "." : "", key);
			rr = parse_entries(ps, v, key[0] == 'h', &sec->lists, origin);
		} else if (!strcmp(key, "dns")) {
			rr = parse_dns(ps, v, &sec->lists);
		} else if (!strcmp(key, "maps")) {
			rr = parse_maps(ps, v, &sec->lists);
		} else if (!strcmp(key, "loopback")) {
			rr = parse_loopback(ps, v, sec);
		} else {
			const char *all[sizeof(section_keys) / sizeof(section_keys[0]) + 2];
			size_t n = 0, i;

			for (i = 0; i < sizeof(section_keys) / sizeof(section_keys[0]); i++)
				all[n++] = section_keys[i];
			for (i = 0; !repo && i < 2; i++)
				all[n++] = top_only_keys[i];
			/* Fail closed on typos: an ignored key is a rule the
			 * operator believes in and egret does not enforce. */
			unknown_key(ps, k, key, all, n, repo ? "a repos section" : "the policy");
			rr = -EINVAL;
		}
		if (rr < 0)
			r = -EINVAL;
	}
	return r;
}

static void section_init(struct policy_section *sec)
{
	memset(sec, 0, sizeof(*sec));
	policy_init(&sec->lists);
	sec->git_remote = -1;
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
		yaml_node_t *k = node_at(ps, p->key), *v = node_at(ps, p->value);
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
	yaml_node_pair_t *p;
	int r;

	memset(doc, 0, sizeof(*doc));
	snprintf(doc->file, sizeof(doc->file), "%s", name);
	section_init(&doc->base);
	d->file = doc->file;
	if (yaml_load_text(&ydoc, text, len, d) < 0)
		return -EINVAL;
	ps.doc = &ydoc;
	root = yaml_document_get_root_node(&ydoc);
	r = 0;
	if (root && root->type != YAML_MAPPING_NODE) {
		diag_add(d, root, "the policy must be a mapping of keys");
		r = -EINVAL;
	} else if (root) {
		r = parse_section(&ps, root, &doc->base, NULL);
		for (p = root->data.mapping.pairs.start;
		     p < root->data.mapping.pairs.top; p++) {
			const char *key = yaml_scalar(node_at(&ps, p->key));

			if (key && !strcmp(key, "repos") &&
			    parse_repos(&ps, node_at(&ps, p->value)) < 0)
				r = -EINVAL;
		}
	}
	yaml_document_delete(&ydoc);
	return r < 0 || d->n ? -EINVAL : 0;
}
