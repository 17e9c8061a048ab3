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
#include "policy/yaml_util.h"

static const char *const section_keys[] = {
	"ports", "os_registries", "git_remote", "ecosystems", "agents", "hosts", "cidrs", "pinning",
	"dns", "maps", "loopback", "upload_limit", "upload_limits", "nested_sandbox",
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

/* A size (`1M`, `512K`, plain bytes: lib/text.h). */
static int parse_size(struct parser *ps, yaml_node_t *node, __u64 *ret)
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

/*
 * A `hosts:` or `cidrs:` item's text and its `ports:` node (NULL: none):
 * "TEXT" or {host|cidr: TEXT, ports: ...}. An unknown key is reported
 * and the item still read, so one typo shows every other mistake too.
 */
static int item_nodes(struct parser *ps, yaml_node_t *item, bool hosts,
		      const char **ret_text, yaml_node_t **ret_ports,
		      yaml_node_t **ret_pin, yaml_node_t **ret_limit)
{
	static const char *const keys[2][4] = {
		{ "cidr", "ports", "pin", "upload_limit" },
		{ "host", "ports", "pin", "upload_limit" },
	};
	const char *what = hosts ? "host" : "cidr";
	const char *text = yaml_scalar(item);
	yaml_node_t *ports = NULL;
	yaml_node_pair_t *p;

	if (item->type == YAML_MAPPING_NODE) {
		for (p = item->data.mapping.pairs.start;
		     p < item->data.mapping.pairs.top; p++) {
			yaml_node_t *k = node_at(ps, p->key);
			const char *key = yaml_scalar(k);

			if (key && !strcmp(key, what))
				text = yaml_scalar(node_at(ps, p->value));
			else if (key && !strcmp(key, "ports"))
				ports = node_at(ps, p->value);
			else if (key && !strcmp(key, "pin"))
				*ret_pin = node_at(ps, p->value);
			else if (key && !strcmp(key, "upload_limit"))
				*ret_limit = node_at(ps, p->value);
			else
				unknown_key(ps, k, key ? key : "?", keys[hosts], 4,
					    hosts ? "a hosts item" : "a cidrs item");
		}
		if (!text) {
			diag_add(ps->d, item, "%ss item lacks '%s:'", what, what);
			return -EINVAL;
		}
	} else if (!text) {
		diag_add(ps->d, item, "%ss: items are strings or mappings", what);
		return -EINVAL;
	}
	*ret_text = text;
	*ret_ports = ports;
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
	if (ports && parse_ports(ps, ports, pr, nports, &any) < 0)
		return -EINVAL;
	if (pin && parse_bool(ps, pin, &pinned) < 0)
		return -EINVAL;
	if (limit && parse_size(ps, limit, &upload_limit) < 0)
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
		yaml_node_t *item = node_at(ps, *it), *ports, *pin = NULL, *limit = NULL;
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
				char msg[160];
				int q = yaml_scalar(item) ?
					upstream_list_add(lists->upstreams_csv,
							  sizeof(lists->upstreams_csv),
							  yaml_scalar(item), msg, sizeof(msg)) :
					-EINVAL;

				if (q == -E2BIG) {
					diag_add(ps->d, item, "dns.upstreams: too many");
					return -EINVAL;
				}
				if (q < 0) {
					diag_add(ps->d, item, "dns.upstreams: want ADDR[:PORT] or [V6]:PORT");
					r = -EINVAL;
				}
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

/* One list of pinned ports (`pinning.KEY`): single ports, at most
 * EGRET_PIN_PORTS, into @ports. */
static int parse_pin_ports(struct parser *ps, yaml_node_t *v, const char *key,
			   __u16 ports[EGRET_PIN_PORTS], unsigned int *nports)
{
	struct port_range pr[EGRET_PORT_SLOTS];
	unsigned int n = 0;
	bool any = false;

	memset(ports, 0, EGRET_PIN_PORTS * sizeof(*ports));
	*nports = 0;
	/* `[]`: this kind of pinning off. */
	if (v->type == YAML_SEQUENCE_NODE && v->data.sequence.items.start ==
					     v->data.sequence.items.top)
		return 0;
	if (parse_ports(ps, v, pr, &n, &any) < 0)
		return -EINVAL;
	if (any || n > EGRET_PIN_PORTS) {
		diag_add(ps->d, v, "pinning.%s: at most %d single ports", key,
			 EGRET_PIN_PORTS);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < n; i++) {
		if (pr[i].lo != pr[i].hi || !pr[i].lo) {
			diag_add(ps->d, v, "pinning.%s: single ports, not ranges", key);
			return -EINVAL;
		}
		ports[(*nports)++] = pr[i].lo;
	}
	return 0;
}

/*
 * `pinning: false`, `pinning: true` (TLS on 443, HTTP on 80), or
 * `pinning: {ports: [443, 8443], http_ports: [80]}`: a key left out keeps
 * its default, `[]` turns that kind off. A port is TLS's or HTTP's, not
 * both.
 */
static int parse_pinning(struct parser *ps, yaml_node_t *node,
			 struct policy_section *sec)
{
	static const char *const keys[] = { "ports", "http_ports" };
	yaml_node_pair_t *p;
	int on, r = 0;

	sec->pinning_set = true;
	memset(sec->pin_ports, 0, sizeof(sec->pin_ports));
	memset(sec->http_ports, 0, sizeof(sec->http_ports));
	sec->npin_ports = sec->nhttp_ports = 0;
	if (yaml_scalar(node)) {
		if (parse_bool(ps, node, &on) < 0)
			return -EINVAL;
		if (on) {
			sec->pin_ports[sec->npin_ports++] = POLICY_DEFAULT_PIN_PORT;
			sec->http_ports[sec->nhttp_ports++] = POLICY_DEFAULT_HTTP_PIN_PORT;
		}
		return 0;
	}
	if (node->type != YAML_MAPPING_NODE) {
		diag_add(ps->d, node, "pinning: want false, true or {ports: [...], http_ports: [...]}");
		return -EINVAL;
	}
	sec->pin_ports[sec->npin_ports++] = POLICY_DEFAULT_PIN_PORT;
	sec->http_ports[sec->nhttp_ports++] = POLICY_DEFAULT_HTTP_PIN_PORT;
	for (p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(ps, p->key), *v = node_at(ps, p->value);
		const char *key = yaml_scalar(k) ? yaml_scalar(k) : "?";

		if (!strcmp(key, "ports")) {
			if (parse_pin_ports(ps, v, key, sec->pin_ports, &sec->npin_ports) < 0)
				r = -EINVAL;
		} else if (!strcmp(key, "http_ports")) {
			if (parse_pin_ports(ps, v, key, sec->http_ports, &sec->nhttp_ports) < 0)
				r = -EINVAL;
		} else {
			unknown_key(ps, k, key, keys, 2, "pinning");
			r = -EINVAL;
		}
	}
	for (unsigned int i = 0; !r && i < sec->npin_ports; i++)
		for (unsigned int j = 0; j < sec->nhttp_ports; j++)
			if (sec->pin_ports[i] == sec->http_ports[j]) {
				diag_add(ps->d, node, "pinning: port %u is in both ports (TLS) and http_ports",
					 sec->pin_ports[i]);
				r = -EINVAL;
			}
	return r ? -EINVAL : 0;
}

/* `upload_limits: {os_registries: SIZE|none, ecosystems: ..., git_remote: ...}` */
static int parse_category_limits(struct parser *ps, yaml_node_t *node,
				 struct policy_section *sec)
{
	const char *const *keys = upload_category_keys;
	yaml_node_pair_t *p;
	int r = 0, c;

	if (node->type != YAML_MAPPING_NODE) {
		diag_add(ps->d, node, "upload_limits: want a mapping (os_registries, ecosystems, git_remote, agents)");
		return -EINVAL;
	}
	for (p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node_at(ps, p->key);
		const char *key = yaml_scalar(k) ? yaml_scalar(k) : "?";

		for (c = 0; c < UPLOAD_CATEGORIES && strcmp(key, keys[c]); c++)
			;
		if (c == UPLOAD_CATEGORIES) {
			unknown_key(ps, k, key, keys, UPLOAD_CATEGORIES, "upload_limits");
			r = -EINVAL;
			continue;
		}
		/* `none`: no budget for the category, not even the catalog's. */
		if (yaml_scalar(node_at(ps, p->value)) &&
		    !strcmp(yaml_scalar(node_at(ps, p->value)), "none"))
			sec->category_limits[c] = UPLOAD_LIMIT_NONE;
		else
			r |= parse_size(ps, node_at(ps, p->value), &sec->category_limits[c]);
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

/*
 * Fail closed on typos: an ignored key is a rule the operator believes in
 * and egret does not enforce. The hint is drawn from the keys @repo's
 * section may hold (the top level's when NULL).
 */
static int section_unknown_key(struct parser *ps, yaml_node_t *k, const char *key,
			       const char *repo)
{
	const char *all[ARRAY_SIZE(section_keys) + ARRAY_SIZE(top_only_keys)];
	size_t n = 0, i;

	for (i = 0; i < ARRAY_SIZE(section_keys); i++)
		all[n++] = section_keys[i];
	for (i = 0; !repo && i < ARRAY_SIZE(top_only_keys); i++)
		all[n++] = top_only_keys[i];
	unknown_key(ps, k, key, all, n, repo ? "a repos section" : "the policy");
	return -EINVAL;
}

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

/* The keys a section may hold; @repo is NULL for the top level. */
static int parse_section(struct parser *ps, yaml_node_t *map,
			 struct policy_section *sec, const char *repo)
{
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
		} else if (!strcmp(key, "agents")) {
			rr = parse_names(ps, v, CATALOG_AGENT, sec->agents, &sec->nagents);
		} else if (!strcmp(key, "git_remote")) {
			rr = parse_bool(ps, v, &sec->git_remote);
		} else if (!strcmp(key, "nested_sandbox")) {
			rr = parse_bool(ps, v, &sec->nested_sandbox);
		} else if (!strcmp(key, "hosts") || !strcmp(key, "cidrs")) {
			rr = section_entries(ps, v, key, sec, repo);
		} else if (!strcmp(key, "dns")) {
			rr = parse_dns(ps, v, &sec->lists);
		} else if (!strcmp(key, "maps")) {
			rr = parse_maps(ps, v, &sec->lists);
		} else if (!strcmp(key, "loopback")) {
			rr = parse_loopback(ps, v, sec);
		} else if (!strcmp(key, "pinning")) {
			rr = parse_pinning(ps, v, sec);
		} else if (!strcmp(key, "upload_limit")) {
			if (yaml_scalar(v) && !strcmp(yaml_scalar(v), "none"))
				sec->lists.upload_limit = UPLOAD_LIMIT_NONE;
			else
				rr = parse_size(ps, v, &sec->lists.upload_limit);
		} else if (!strcmp(key, "upload_limits")) {
			rr = parse_category_limits(ps, v, sec);
		} else {
			rr = section_unknown_key(ps, k, key, repo);
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
