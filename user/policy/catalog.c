// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/text.h"
#include "policy/catalog.h"
#include "policy/host.h"
#include "policy/yaml_util.h"

/* The top level's keys: its version, the categories' budgets, then one
 * section per enum catalog_section. */
enum { ROOT_VERSION, ROOT_UPLOAD_LIMITS, ROOT_SECTIONS };

static const char *const root_names[ROOT_SECTIONS + CATALOG_NSECTIONS] = {
	[ROOT_VERSION] = "version",
	[ROOT_UPLOAD_LIMITS] = "upload_limits",
	[ROOT_SECTIONS + CATALOG_OS] = "os_registries",
	[ROOT_SECTIONS + CATALOG_FORGE] = "forges",
	[ROOT_SECTIONS + CATALOG_ECOSYSTEM] = "ecosystems",
	[ROOT_SECTIONS + CATALOG_AGENT] = "agents",
};

const char *catalog_section_key(enum catalog_section s)
{
	return root_names[ROOT_SECTIONS + s];
}

const char *const upload_category_keys[UPLOAD_CATEGORIES] = {
	[UPLOAD_OS] = "os_registries", [UPLOAD_ECOSYSTEMS] = "ecosystems",
	[UPLOAD_GIT_REMOTE] = "git_remote", [UPLOAD_AGENTS] = "agents",
};

/* The catalog is egret's own, parsed at every start: its first problem
 * stops the parse, and catalog_parse() tells only that one. */

static void upload_limits_refuse(const struct yaml_walk *w, const char *key)
{
	diag_add(w->d, w->value,
		 "upload_limits: want os_registries, ecosystems, git_remote or agents: SIZE");
}

/* `upload_limits: {CATEGORY: SIZE, ...}`: the categories' default budgets. */
static int parse_upload_limits(yaml_document_t *doc, yaml_node_t *map,
			       struct catalog *c, struct diag *d)
{
	static const struct yaml_keys keys = YAML_KEYS("upload_limits", upload_category_keys,
						       .refuse = upload_limits_refuse);
	struct yaml_walk w = { .doc = doc, .d = d, .keys = &keys };
	uint64_t n;
	int k;

	if (map->type != YAML_MAPPING_NODE) {
		diag_add(d, map, "upload_limits: want a mapping");
		return -EINVAL;
	}
	yaml_walk_start(&w, map);
	while ((k = yaml_walk_next(&w)) >= 0 && !w.r) {
		if (size_parse(yaml_scalar(w.value), &n) < 0) {
			upload_limits_refuse(&w, upload_category_keys[k]);
			return -EINVAL;
		}
		c->upload_limits[k] = n;
	}
	return w.r;
}

/* A list of exact hostnames into @out (at most @max). */
static int parse_hosts(yaml_document_t *doc, yaml_node_t *list,
		       char (*out)[DNS_NAME_MAX + 1], size_t max, size_t *ret_n,
		       struct diag *d)
{
	yaml_node_item_t *it;
	size_t n = 0;

	if (list->type != YAML_SEQUENCE_NODE) {
		diag_add(d, list, "want a list of hosts");
		return -EINVAL;
	}
	for (it = list->data.sequence.items.start;
	     it < list->data.sequence.items.top; it++) {
		yaml_node_t *h = yaml_node(doc, *it);
		struct host_rule rule;
		char msg[160];

		if (!yaml_scalar(h) || n == max ||
		    host_name_parse(yaml_scalar(h), &rule, msg, sizeof(msg)) < 0 ||
		    rule.wildcard) {
			diag_add(d, h, "catalog hosts are exact names (at most %zu)", max);
			return -EINVAL;
		}
		strcpy(out[n++], rule.name);
	}
	*ret_n = n;
	return 0;
}

/* `ports: [443, 80]`: single ports, or ranges, into @e. */
static int parse_entry_ports(yaml_document_t *doc, yaml_node_t *v, struct catalog_entry *e)
{
	yaml_node_item_t *it;
	char msg[128];

	if (v->type != YAML_SEQUENCE_NODE)
		return -EINVAL;
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		const char *t = yaml_scalar(yaml_node(doc, *it));

		if (!t || e->nports == EGRET_PORT_SLOTS ||
		    ports_parse(t, &e->ports[e->nports], 1, msg, sizeof(msg)) != 1)
			return -EINVAL;
		e->nports++;
	}
	return 0;
}

/* An entry's keys; the last three an agent profile's own. */
enum entry_key {
	ENTRY_SOURCE, ENTRY_HOSTS, ENTRY_REMOTE_HOSTS, ENTRY_NOT_TLS, ENTRY_PORTS,
	ENTRY_QUIET, ENTRY_UPLOAD_LIMIT, ENTRY_MEASURED,
};

static const char *const entry_names[] = {
	[ENTRY_SOURCE] = "source", [ENTRY_HOSTS] = "hosts",
	[ENTRY_REMOTE_HOSTS] = "remote_hosts", [ENTRY_NOT_TLS] = "not_tls",
	[ENTRY_PORTS] = "ports", [ENTRY_QUIET] = "quiet",
	[ENTRY_UPLOAD_LIMIT] = "upload_limit", [ENTRY_MEASURED] = "measured",
};

/* A key @w's entry (named w->ctx) may not hold, or whose value is bad. */
static void entry_refuse(const struct yaml_walk *w, const char *key)
{
	diag_add(w->d, w->key, "bad key '%s' in catalog entry '%s'", key ? key : "?",
		 (const char *)w->ctx);
}

static const struct yaml_keys entry_keys =
	YAML_KEYS("a catalog entry", entry_names, .refuse = entry_refuse);

/* The value @v of key @k of entry @e of section @s. */
static int entry_key(yaml_document_t *doc, enum catalog_section s, enum entry_key k,
		     yaml_node_t *v, struct catalog_entry *e, struct diag *d)
{
	uint64_t n;

	if (k >= ENTRY_QUIET && s != CATALOG_AGENT)
		return -EINVAL;
	switch (k) {
	case ENTRY_SOURCE:
		if (!yaml_scalar(v))
			return -EINVAL;
		snprintf(e->source, sizeof(e->source), "%s", yaml_scalar(v));
		return 0;
	case ENTRY_HOSTS:
		return parse_hosts(doc, v, e->hosts, CATALOG_MAX_HOSTS, &e->nhosts, d);
	case ENTRY_REMOTE_HOSTS:
		if (s != CATALOG_FORGE)
			return -EINVAL;
		return parse_hosts(doc, v, e->remote_hosts, 4, &e->nremote_hosts, d);
	case ENTRY_NOT_TLS:
		return parse_hosts(doc, v, e->not_tls, 4, &e->nnot_tls, d);
	case ENTRY_PORTS:
		return parse_entry_ports(doc, v, e);
	case ENTRY_QUIET:
		return parse_hosts(doc, v, e->quiet, CATALOG_MAX_QUIET, &e->nquiet, d);
	case ENTRY_UPLOAD_LIMIT:
		if (size_parse(yaml_scalar(v), &n) < 0)
			return -EINVAL;
		e->upload_limit = n;
		return 0;
	case ENTRY_MEASURED:
		if (!yaml_scalar(v))
			return -EINVAL;
		snprintf(e->measured, sizeof(e->measured), "%s", yaml_scalar(v));
		return 0;
	}
	return -EINVAL;
}

/* A name a profile needs for its work is never its noise too. */
static int agent_check(const struct catalog_entry *e, yaml_node_t *map, struct diag *d)
{
	for (size_t i = 0; i < e->nquiet; i++)
		for (size_t j = 0; j < e->nhosts; j++)
			if (!strcmp(e->quiet[i], e->hosts[j])) {
				diag_add(d, map, "agent '%s': %s is in hosts and quiet",
					 e->name, e->hosts[j]);
				return -EINVAL;
			}
	return 0;
}

static int parse_entry(yaml_document_t *doc, enum catalog_section s,
		       const char *name, yaml_node_t *map,
		       struct catalog_entry *e, struct diag *d)
{
	struct yaml_walk w = { .doc = doc, .d = d, .keys = &entry_keys, .ctx = name };
	int k;

	if (map->type != YAML_MAPPING_NODE || strlen(name) >= sizeof(e->name)) {
		diag_add(d, map, "entry '%s' must be a mapping", name);
		return -EINVAL;
	}
	strcpy(e->name, name);
	yaml_walk_start(&w, map);
	while ((k = yaml_walk_next(&w)) >= 0 && !w.r) {
		if (entry_key(doc, s, (enum entry_key)k, w.value, e, d) < 0) {
			entry_refuse(&w, entry_names[k]);
			return -EINVAL;
		}
	}
	if (w.r)
		return w.r;
	if (!(w.seen & 1u << ENTRY_HOSTS) || !(w.seen & 1u << ENTRY_SOURCE) || !e->nports ||
	    (s == CATALOG_FORGE && e->nremote_hosts == 0) ||
	    (s == CATALOG_AGENT && (!e->measured[0] || !e->upload_limit))) {
		diag_add(d, map, "entry '%s' lacks source, ports, hosts%s", name,
			 s == CATALOG_FORGE ? " or remote_hosts" :
			 s == CATALOG_AGENT ? ", measured or upload_limit" : "");
		return -EINVAL;
	}
	return s == CATALOG_AGENT ? agent_check(e, map, d) : 0;
}

/* Section @s (its key @k, its value @map): its entries into @c. */
static int parse_section(yaml_document_t *doc, enum catalog_section s, yaml_node_t *k,
			 yaml_node_t *map, struct catalog *c, struct diag *d)
{
	yaml_node_pair_t *q;
	int r = 0;

	if (map->type != YAML_MAPPING_NODE) {
		diag_add(d, k, "unknown catalog section '%s'", yaml_scalar(k));
		return -EINVAL;
	}
	for (q = map->data.mapping.pairs.start; q < map->data.mapping.pairs.top && r == 0; q++) {
		const char *ename = yaml_scalar(yaml_node(doc, q->key));
		struct catalog_entry *e = &c->entries[s][c->n[s]];

		if (!ename || c->n[s] == CATALOG_MAX_ENTRIES) {
			diag_add(d, map, "too many catalog entries");
			return -EINVAL;
		}
		memset(e, 0, sizeof(*e));
		r = parse_entry(doc, s, ename, yaml_node(doc, q->value), e, d);
		if (r == 0) {
			c->names[s][c->n[s]] = e->name;
			c->n[s]++;
		}
	}
	return r;
}

static void root_refuse(const struct yaml_walk *w, const char *key)
{
	diag_add(w->d, w->key, "unknown catalog section '%s'", key ? key : "?");
}

static const struct yaml_keys root_keys =
	YAML_KEYS("the catalog", root_names, .refuse = root_refuse);

static int parse_root(yaml_document_t *doc, yaml_node_t *root, struct catalog *c,
		      struct diag *d)
{
	struct yaml_walk w = { .doc = doc, .d = d, .keys = &root_keys };
	int k, r = 0;

	yaml_walk_start(&w, root);
	while (r == 0 && (k = yaml_walk_next(&w)) >= 0 && !w.r) {
		if (k == ROOT_UPLOAD_LIMITS)
			r = parse_upload_limits(doc, w.value, c, d);
		else if (k >= ROOT_SECTIONS)
			r = parse_section(doc, (enum catalog_section)(k - ROOT_SECTIONS), w.key,
					  w.value, c, d);
	}
	return r ? r : w.r;
}

int catalog_parse(struct catalog *c, const char *text, size_t len,
		  const char *name, char *err, size_t errlen)
{
	struct diag d = { .file = name };
	yaml_document_t doc;
	yaml_node_t *root;
	int r;

	/* Not the whole struct: its entries are 2.1 MiB (1.2 before the
	 * agent profiles); zeroing them was the largest part of an attempt's
	 * set-up. Each entry is zeroed as it is filled, and nothing reads
	 * past n[]. */
	memset(c->upload_limits, 0, sizeof(c->upload_limits));
	memset(c->n, 0, sizeof(c->n));
	if (yaml_load_text(&doc, text, len, &d) < 0) {
		snprintf(err, errlen, "%s", d.msg[0]);
		return -EINVAL;
	}
	root = yaml_document_get_root_node(&doc);
	r = root && root->type == YAML_MAPPING_NODE ? parse_root(&doc, root, c, &d) : -EINVAL;
	yaml_document_delete(&doc);
	if (r < 0)
		snprintf(err, errlen, "%s", d.n ? d.msg[0] : "catalog: not a mapping");
	return r;
}

int catalog_load(struct catalog *c, char *err, size_t errlen)
{
	return catalog_parse(c, egret_catalog_yaml, strlen(egret_catalog_yaml),
			     "<built-in catalog>", err, errlen);
}

const struct catalog_entry *catalog_find(const struct catalog *c,
					 enum catalog_section s,
					 const char *name)
{
	for (size_t i = 0; i < c->n[s]; i++)
		if (!strcmp(c->entries[s][i].name, name))
			return &c->entries[s][i];
	return NULL;
}

int catalog_section_of(const struct catalog *c, const char *host)
{
	for (int s = 0; s < CATALOG_NSECTIONS; s++)
		for (size_t i = 0; i < c->n[s]; i++) {
			const struct catalog_entry *e = &c->entries[s][i];

			for (size_t j = 0; j < e->nhosts; j++)
				if (!strcmp(e->hosts[j], host))
					return s;
			for (size_t j = 0; j < e->nremote_hosts; j++)
				if (!strcmp(e->remote_hosts[j], host))
					return s;
		}
	return -ENOENT;
}

const struct catalog_entry *catalog_forge_for(const struct catalog *c,
					      const char *host)
{
	for (size_t i = 0; i < c->n[CATALOG_FORGE]; i++) {
		const struct catalog_entry *e = &c->entries[CATALOG_FORGE][i];

		for (size_t j = 0; j < e->nremote_hosts; j++)
			if (!strcmp(e->remote_hosts[j], host))
				return e;
	}
	return NULL;
}

bool catalog_not_tls(const struct catalog_entry *e, const char *host)
{
	for (size_t i = 0; e && i < e->nnot_tls; i++)
		if (!strcmp(e->not_tls[i], host))
			return true;
	return false;
}
