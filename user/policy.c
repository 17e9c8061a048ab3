// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "policy.h"
#include "util.h"

/* Default ports of policy entries that name none (docs/POLICY.md). */
static const struct port_range default_ports[] = { { 443, 443 }, { 80, 80 } };

struct parse_ctx {
	yaml_document_t *doc;
	const char *name;
	char *err;
	size_t errlen;
	/* top-level `ports:`; nports 0 with any_port false = not given */
	struct port_range ports[EGRET_PORT_SLOTS];
	unsigned int nports;
	bool any_port;
	bool ports_given;
};

static int perr(struct parse_ctx *c, const yaml_node_t *node,
		const char *fmt, const char *arg)
{
	char msg[256];

	snprintf(msg, sizeof(msg), fmt, arg);
	snprintf(c->err, c->errlen, "%s:%zu: %s", c->name,
		 node ? node->start_mark.line + 1 : 0, msg);
	return -EINVAL;
}

static const char *scalar(const yaml_node_t *node)
{
	return node && node->type == YAML_SCALAR_NODE ?
		       (const char *)node->data.scalar.value : NULL;
}

/* `ports: [443, "8000-8100"]`, `ports: 443`, or `ports: any`. */
static int parse_ports_node(struct parse_ctx *c, yaml_node_t *node,
			    struct port_range *ret, unsigned int *ret_n,
			    bool *ret_any)
{
	char msg[128];
	unsigned int n = 0;
	yaml_node_item_t *item;
	int r;

	*ret_any = false;
	if (scalar(node) && !strcmp(scalar(node), "any")) {
		*ret_any = true;
		*ret_n = 0;
		return 0;
	}
	if (scalar(node)) {
		r = ports_parse(scalar(node), ret, EGRET_PORT_SLOTS, msg,
				sizeof(msg));
		if (r < 0)
			return perr(c, node, "%s", msg);
		*ret_n = (unsigned int)r;
		return 0;
	}
	if (node->type != YAML_SEQUENCE_NODE)
		return perr(c, node, "ports: want a list, a number or 'any'%s",
			    "");
	for (item = node->data.sequence.items.start;
	     item < node->data.sequence.items.top; item++) {
		yaml_node_t *port = yaml_document_get_node(c->doc, *item);

		if (!scalar(port))
			return perr(c, port, "ports: items must be scalars%s",
				    "");
		if (n == EGRET_PORT_SLOTS)
			return perr(c, port, "ports: more than %s items",
				    EGRET_PORT_SLOTS_TEXT);
		r = ports_parse(scalar(port), ret + n, EGRET_PORT_SLOTS - n,
				msg, sizeof(msg));
		if (r < 0)
			return perr(c, port, "%s", msg);
		n += (unsigned int)r;
	}
	if (n == 0)
		return perr(c, node, "ports: empty list%s", "");
	*ret_n = n;
	return 0;
}

/* Give an entry that named no ports the policy's default ports. */
static void apply_default_ports(struct parse_ctx *c, struct port_range *ports,
				unsigned int *nports)
{
	if (c->any_port)
		return;
	if (c->ports_given) {
		memcpy(ports, c->ports, sizeof(c->ports));
		*nports = c->nports;
		return;
	}
	memcpy(ports, default_ports, sizeof(default_ports));
	*nports = ARRAY_SIZE(default_ports);
}

/* One `cidrs:` item: "SPEC" or {cidr: SPEC, ports: ...}. */
static int parse_cidr_item(struct parse_ctx *c, struct policy *p,
			   yaml_node_t *node)
{
	struct allow_spec spec;
	yaml_node_t *ports = NULL;
	const char *text = scalar(node);
	char msg[192];
	int r;

	if (node->type == YAML_MAPPING_NODE) {
		yaml_node_pair_t *pair;

		for (pair = node->data.mapping.pairs.start;
		     pair < node->data.mapping.pairs.top; pair++) {
			yaml_node_t *k = yaml_document_get_node(c->doc, pair->key);
			yaml_node_t *v = yaml_document_get_node(c->doc, pair->value);

			if (scalar(k) && !strcmp(scalar(k), "cidr") && scalar(v))
				text = scalar(v);
			else if (scalar(k) && !strcmp(scalar(k), "ports"))
				ports = v;
			else
				return perr(c, k, "unknown key '%s' in cidrs item (want cidr, ports)",
					    scalar(k) ? scalar(k) : "?");
		}
		if (!text)
			return perr(c, node, "cidrs item lacks 'cidr:'%s", "");
	} else if (!text) {
		return perr(c, node, "cidrs: items are strings or mappings%s",
			    "");
	}

	r = allow_spec_parse(text, &spec, msg, sizeof(msg));
	if (r < 0)
		return perr(c, node, "%s", msg);
	if (ports) {
		bool any;

		if (spec.nports)
			return perr(c, node, "'%s' names ports twice", text);
		r = parse_ports_node(c, ports, spec.ports, &spec.nports, &any);
		if (r < 0)
			return r;
	} else if (!spec.nports) {
		/* Marked for the defaults, applied once `ports:` is known. */
		spec.nports = EGRET_PORT_SLOTS + 1;
	}
	r = policy_add_spec(p, &spec);
	if (r < 0)
		return perr(c, node, "more than %s address entries", POLICY_MAX_SPECS_TEXT);
	return 0;
}

/* One `hosts:` item: "NAME[:PORTS]" or {host: NAME, ports: ...}. */
static int parse_host_item(struct parse_ctx *c, struct policy *p,
			   yaml_node_t *node)
{
	struct host_rule rule;
	yaml_node_t *ports = NULL;
	const char *text = scalar(node);
	char msg[192];
	int r;

	if (node->type == YAML_MAPPING_NODE) {
		yaml_node_pair_t *pair;

		text = NULL;
		for (pair = node->data.mapping.pairs.start;
		     pair < node->data.mapping.pairs.top; pair++) {
			yaml_node_t *k = yaml_document_get_node(c->doc, pair->key);
			yaml_node_t *v = yaml_document_get_node(c->doc, pair->value);

			if (scalar(k) && !strcmp(scalar(k), "host") && scalar(v))
				text = scalar(v);
			else if (scalar(k) && !strcmp(scalar(k), "ports"))
				ports = v;
			else
				return perr(c, k, "unknown key '%s' in hosts item (want host, ports)",
					    scalar(k) ? scalar(k) : "?");
		}
		if (!text)
			return perr(c, node, "hosts item lacks 'host:'%s", "");
	} else if (!text) {
		return perr(c, node, "hosts: items are strings or mappings%s", "");
	}

	r = host_rule_parse(text, &rule, msg, sizeof(msg));
	if (r < 0)
		return perr(c, node, "%s", msg);
	if (ports) {
		bool any;

		if (rule.nports)
			return perr(c, node, "'%s' names ports twice", text);
		r = parse_ports_node(c, ports, rule.ports, &rule.nports, &any);
		if (r < 0)
			return r;
	} else if (!rule.nports) {
		rule.nports = EGRET_PORT_SLOTS + 1;	/* defaults, below */
	}
	if (policy_add_host(p, &rule) < 0)
		return perr(c, node, "more than %s host entries", POLICY_MAX_SPECS_TEXT);
	return 0;
}

static int parse_root(struct parse_ctx *c, struct policy *p, yaml_node_t *root)
{
	yaml_node_t *cidrs = NULL, *hosts = NULL;
	yaml_node_pair_t *pair;
	yaml_node_item_t *item;
	size_t first = p->nspecs, first_host = p->nhosts, i;
	int r;

	if (!root)
		return 0;	/* an empty file allows nothing */
	if (root->type != YAML_MAPPING_NODE)
		return perr(c, root, "the policy must be a mapping%s", "");

	for (pair = root->data.mapping.pairs.start;
	     pair < root->data.mapping.pairs.top; pair++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, pair->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, pair->value);
		const char *key = scalar(k);

		if (!key)
			return perr(c, k, "keys must be scalars%s", "");
		if (!strcmp(key, "version")) {
			if (!scalar(v) || strcmp(scalar(v), "1"))
				return perr(c, v, "unsupported version (want 1)%s", "");
		} else if (!strcmp(key, "ports")) {
			r = parse_ports_node(c, v, c->ports, &c->nports,
					     &c->any_port);
			if (r < 0)
				return r;
			c->ports_given = true;
		} else if (!strcmp(key, "cidrs")) {
			if (v->type != YAML_SEQUENCE_NODE)
				return perr(c, v, "cidrs: want a list%s", "");
			cidrs = v;
		} else if (!strcmp(key, "hosts")) {
			if (v->type != YAML_SEQUENCE_NODE)
				return perr(c, v, "hosts: want a list%s", "");
			hosts = v;
		} else {
			/* Fail closed on typos: an ignored key is a rule the
			 * operator believes in and egret does not enforce. */
			return perr(c, k, "unknown key '%s'", key);
		}
	}

	if (cidrs) {
		for (item = cidrs->data.sequence.items.start;
		     item < cidrs->data.sequence.items.top; item++) {
			r = parse_cidr_item(c, p,
					    yaml_document_get_node(c->doc, *item));
			if (r < 0)
				return r;
		}
	}
	if (hosts) {
		for (item = hosts->data.sequence.items.start;
		     item < hosts->data.sequence.items.top; item++) {
			r = parse_host_item(c, p,
					    yaml_document_get_node(c->doc, *item));
			if (r < 0)
				return r;
		}
	}
	for (i = first; i < p->nspecs; i++) {
		if (p->specs[i].nports == EGRET_PORT_SLOTS + 1) {
			p->specs[i].nports = 0;
			apply_default_ports(c, p->specs[i].ports,
					    &p->specs[i].nports);
		}
	}
	for (i = first_host; i < p->nhosts; i++) {
		if (p->hosts[i].nports == EGRET_PORT_SLOTS + 1) {
			p->hosts[i].nports = 0;
			apply_default_ports(c, p->hosts[i].ports,
					    &p->hosts[i].nports);
		}
	}
	return 0;
}

int policy_add_host(struct policy *p, const struct host_rule *host)
{
	if (p->nhosts == p->hosts_cap) {
		size_t cap = p->hosts_cap ? 2 * p->hosts_cap : 16;
		struct host_rule *hosts;

		if (p->nhosts >= POLICY_MAX_SPECS)
			return -E2BIG;
		hosts = reallocarray(p->hosts, cap, sizeof(*hosts));
		if (!hosts)
			return -ENOMEM;
		p->hosts = hosts;
		p->hosts_cap = cap;
	}
	p->hosts[p->nhosts++] = *host;
	return 0;
}

int policy_add_allow_text(struct policy *p, const char *text, char *err,
			  size_t errlen)
{
	struct allow_spec spec;
	struct host_rule host;
	int r;

	if (host_text_is_name(text)) {
		r = host_rule_parse(text, &host, err, errlen);
		if (r == 0 && (r = policy_add_host(p, &host)) < 0)
			snprintf(err, errlen, "more than %d hosts", POLICY_MAX_SPECS);
		return r;
	}
	r = allow_spec_parse(text, &spec, err, errlen);
	if (r == 0 && (r = policy_add_spec(p, &spec)) < 0)
		snprintf(err, errlen, "more than %d entries", POLICY_MAX_SPECS);
	return r;
}

int policy_add_spec(struct policy *p, const struct allow_spec *spec)
{
	if (p->nspecs == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;
		struct allow_spec *specs;

		if (p->nspecs >= POLICY_MAX_SPECS)
			return -E2BIG;
		specs = reallocarray(p->specs, cap, sizeof(*specs));
		if (!specs)
			return -ENOMEM;
		p->specs = specs;
		p->cap = cap;
	}
	p->specs[p->nspecs++] = *spec;
	return 0;
}

int policy_parse_yaml(struct policy *p, const char *text, size_t len,
		      const char *name, char *err, size_t errlen)
{
	struct parse_ctx c = { .name = name, .err = err, .errlen = errlen };
	yaml_parser_t parser;
	yaml_document_t doc;
	int r;

	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, errlen, "%s:%zu: %s", name,
			 parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "YAML syntax error");
		yaml_parser_delete(&parser);
		return -EINVAL;
	}
	c.doc = &doc;
	r = parse_root(&c, p, yaml_document_get_root_node(&doc));
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	return r;
}

int policy_load_file(struct policy *p, const char *path, char *err,
		     size_t errlen)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	ssize_t n;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		return -EINVAL;
	}
	if ((st.st_uid != 0 && st.st_uid != geteuid()) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(err, errlen,
			 "%s: refused: must be owned by root and not group/world-writable (chown root; chmod go-w)",
			 path);
		return -EPERM;
	}
	if (st.st_size > POLICY_MAX_FILE_SIZE) {
		snprintf(err, errlen, "%s: larger than %d bytes", path,
			 POLICY_MAX_FILE_SIZE);
		return -EFBIG;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text)
		return -ENOMEM;
	n = read(fd, text, (size_t)st.st_size);
	if (n < 0)
		return -errno;
	text[n] = '\0';
	return policy_parse_yaml(p, text, (size_t)n, path, err, errlen);
}

void policy_free(struct policy *p)
{
	free(p->specs);
	free(p->hosts);
	*p = (struct policy){};
}
