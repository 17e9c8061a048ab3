// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/text.h"
#include "policy/catalog.h"
#include "policy/host.h"
#include "policy/yaml_util.h"

static const char *const section_keys[CATALOG_NSECTIONS] = {
	[CATALOG_OS] = "os_registries",
	[CATALOG_FORGE] = "forges",
	[CATALOG_ECOSYSTEM] = "ecosystems",
	[CATALOG_AGENT] = "agents",
};

const char *catalog_section_key(enum catalog_section s)
{
	return section_keys[s];
}

const char *const upload_category_keys[UPLOAD_CATEGORIES] = {
	[UPLOAD_OS] = "os_registries", [UPLOAD_ECOSYSTEMS] = "ecosystems",
	[UPLOAD_GIT_REMOTE] = "git_remote", [UPLOAD_AGENTS] = "agents",
};

/* `upload_limits: {CATEGORY: SIZE, ...}`: the categories' default budgets. */
static int parse_upload_limits(yaml_document_t *doc, yaml_node_t *map,
			       struct catalog *c, struct diag *d)
{
	yaml_node_pair_t *p;

	if (map->type != YAML_MAPPING_NODE) {
		diag_add(d, map, "upload_limits: want a mapping");
		return -EINVAL;
	}
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *key = yaml_scalar(yaml_node(doc, p->key));
		yaml_node_t *v = yaml_node(doc, p->value);
		uint64_t n;
		int k;

		for (k = 0; k < UPLOAD_CATEGORIES && key && strcmp(key, upload_category_keys[k]); k++)
			;
		if (!key || k == UPLOAD_CATEGORIES || size_parse(yaml_scalar(v), &n) < 0) {
			diag_add(d, v, "upload_limits: want os_registries, ecosystems, git_remote or agents: SIZE");
			return -EINVAL;
		}
		c->upload_limits[k] = n;
	}
	return 0;
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

/* An agent profile's own keys: `quiet:`, `upload_limit:`, `measured:`. */
static int parse_agent_key(yaml_document_t *doc, const char *key, yaml_node_t *v,
			   struct catalog_entry *e, struct diag *d)
{
	uint64_t n;

	if (!strcmp(key, "quiet"))
		return parse_hosts(doc, v, e->quiet, CATALOG_MAX_QUIET, &e->nquiet, d);
	if (!strcmp(key, "upload_limit") && size_parse(yaml_scalar(v), &n) == 0) {
		e->upload_limit = n;
		return 0;
	}
	if (!strcmp(key, "measured") && yaml_scalar(v)) {
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
	yaml_node_pair_t *p;
	bool have_hosts = false, have_source = false, have_ports = false;

	if (map->type != YAML_MAPPING_NODE || strlen(name) >= sizeof(e->name)) {
		diag_add(d, map, "entry '%s' must be a mapping", name);
		return -EINVAL;
	}
	strcpy(e->name, name);
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_node(doc, p->key), *v = yaml_node(doc, p->value);
		const char *key = yaml_scalar(k);
		int r = 0;

		if (!key) {
			r = -EINVAL;
		} else if (!strcmp(key, "source") && yaml_scalar(v)) {
			snprintf(e->source, sizeof(e->source), "%s", yaml_scalar(v));
			have_source = true;
		} else if (!strcmp(key, "hosts")) {
			r = parse_hosts(doc, v, e->hosts, CATALOG_MAX_HOSTS,
					&e->nhosts, d);
			have_hosts = true;
		} else if (!strcmp(key, "remote_hosts") && s == CATALOG_FORGE) {
			r = parse_hosts(doc, v, e->remote_hosts, 4,
					&e->nremote_hosts, d);
		} else if (!strcmp(key, "not_tls")) {
			r = parse_hosts(doc, v, e->not_tls, 4, &e->nnot_tls, d);
		} else if (!strcmp(key, "ports") && v->type == YAML_SEQUENCE_NODE) {
			yaml_node_item_t *it;
			char msg[128];

			for (it = v->data.sequence.items.start;
			     it < v->data.sequence.items.top && r == 0; it++) {
				const char *t = yaml_scalar(yaml_node(doc, *it));

				if (!t || e->nports == EGRET_PORT_SLOTS ||
				    ports_parse(t, &e->ports[e->nports], 1, msg,
						sizeof(msg)) != 1)
					r = -EINVAL;
				else
					e->nports++;
			}
			have_ports = r == 0 && e->nports > 0;
		} else if (s == CATALOG_AGENT) {
			r = parse_agent_key(doc, key, v, e, d);
		} else {
			r = -EINVAL;
		}
		if (r < 0) {
			diag_add(d, k, "bad key '%s' in catalog entry '%s'",
				 key ? key : "?", name);
			return r;
		}
	}
	if (!have_hosts || !have_source || !have_ports ||
	    (s == CATALOG_FORGE && e->nremote_hosts == 0) ||
	    (s == CATALOG_AGENT && (!e->measured[0] || !e->upload_limit))) {
		diag_add(d, map, "entry '%s' lacks source, ports, hosts%s", name,
			 s == CATALOG_FORGE ? " or remote_hosts" :
			 s == CATALOG_AGENT ? ", measured or upload_limit" : "");
		return -EINVAL;
	}
	return s == CATALOG_AGENT ? agent_check(e, map, d) : 0;
}

int catalog_parse(struct catalog *c, const char *text, size_t len,
		  const char *name, char *err, size_t errlen)
{
	struct diag d = { .file = name };
	yaml_document_t doc;
	yaml_node_t *root;
	yaml_node_pair_t *p;
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
	r = root && root->type == YAML_MAPPING_NODE ? 0 : -EINVAL;
	for (p = r ? NULL : root->data.mapping.pairs.start;
	     p && p < root->data.mapping.pairs.top && r == 0; p++) {
		yaml_node_t *k = yaml_node(&doc, p->key), *v = yaml_node(&doc, p->value);
		const char *key = yaml_scalar(k);
		yaml_node_pair_t *q;
		int s;

		if (key && !strcmp(key, "version"))
			continue;
		if (key && !strcmp(key, "upload_limits")) {
			r = parse_upload_limits(&doc, v, c, &d);
			continue;
		}
		for (s = 0; s < CATALOG_NSECTIONS; s++)
			if (key && !strcmp(key, section_keys[s]))
				break;
		if (s == CATALOG_NSECTIONS || v->type != YAML_MAPPING_NODE) {
			diag_add(&d, k, "unknown catalog section '%s'", key ? key : "?");
			r = -EINVAL;
			break;
		}
		for (q = v->data.mapping.pairs.start;
		     q < v->data.mapping.pairs.top && r == 0; q++) {
			const char *ename = yaml_scalar(yaml_node(&doc, q->key));
			struct catalog_entry *e = &c->entries[s][c->n[s]];

			if (!ename || c->n[s] == CATALOG_MAX_ENTRIES) {
				diag_add(&d, v, "too many catalog entries");
				r = -EINVAL;
				break;
			}
			memset(e, 0, sizeof(*e));
			r = parse_entry(&doc, (enum catalog_section)s, ename,
					yaml_node(&doc, q->value), e, &d);
			if (r == 0) {
				c->names[s][c->n[s]] = e->name;
				c->n[s]++;
			}
		}
	}
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
