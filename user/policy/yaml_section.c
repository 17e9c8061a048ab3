// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * policy/yaml_section.c - a policy section's small mappings: dns, maps,
 * pinning, loopback and upload_limits (policy/yaml_impl.h), held to the
 * same strictness as the rest of the file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/yaml_impl.h"

/* `dns.upstreams:` into @lists; -E2BIG (told) when there are too many. */
static int parse_upstreams(struct parser *ps, yaml_node_t *v, struct policy *lists)
{
	yaml_node_item_t *it;
	int r = 0;

	if (v->type != YAML_SEQUENCE_NODE) {
		diag_add(ps->d, v, "dns.upstreams: want a list");
		return -EINVAL;
	}
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *item = yp_node_at(ps, *it);
		char msg[160];
		int q = yaml_scalar(item) ?
			upstream_list_add(lists->upstreams_csv, sizeof(lists->upstreams_csv),
					  yaml_scalar(item), msg, sizeof(msg)) :
			-EINVAL;

		if (q == -E2BIG) {
			diag_add(ps->d, item, "dns.upstreams: too many");
			return -E2BIG;
		}
		if (q < 0) {
			diag_add(ps->d, item, "dns.upstreams: want ADDR[:PORT] or [V6]:PORT");
			r = -EINVAL;
		}
	}
	return r;
}

/* `dns: {upstreams: [...], min_ttl: N}` */
int yp_dns(struct parser *ps, yaml_node_t *node, struct policy *lists)
{
	enum { DNS_UPSTREAMS, DNS_MIN_TTL };
	static const char *const names[] = { "upstreams", "min_ttl" };
	static const struct yaml_keys keys = YAML_KEYS("dns", names, .refuse = yaml_refuse_unknown);
	struct yaml_walk w = PARSER_WALK(ps, &keys);
	int i, r = 0;

	if (yaml_walk_start(&w, node) < 0)
		return -EINVAL;
	while ((i = yaml_walk_next(&w)) >= 0) {
		int q = i == DNS_MIN_TTL ? yp_number(ps, w.value, 0, 86400, &lists->min_ttl) :
					   parse_upstreams(ps, w.value, lists);

		if (q == -E2BIG)
			return -EINVAL;	/* the rest unread */
		r |= q;
	}
	return r || w.r ? -EINVAL : 0;
}

/* `maps: {max_entries: N, max_cidrs: N}` */
int yp_maps(struct parser *ps, yaml_node_t *node, struct policy *lists)
{
	static const char *const names[] = { "max_entries", "max_cidrs" };
	static const struct yaml_keys keys = YAML_KEYS("maps", names, .refuse = yaml_refuse_unknown);
	struct yaml_walk w = PARSER_WALK(ps, &keys);
	long *const fields[] = { &lists->max_entries, &lists->max_cidrs };
	int i, r = 0;

	if (yaml_walk_start(&w, node) < 0)
		return -EINVAL;
	while ((i = yaml_walk_next(&w)) >= 0)
		r |= yp_number(ps, w.value, 1, 1L << 24, fields[i]);
	return r || w.r ? -EINVAL : 0;
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
	if (yp_ports(ps, v, pr, &n, &any) < 0)
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
int yp_pinning(struct parser *ps, yaml_node_t *node,
			 struct policy_section *sec)
{
	static const char *const names[] = { "ports", "http_ports" };
	static const struct yaml_keys keys = YAML_KEYS("pinning", names,
						       .refuse = yaml_refuse_unknown);
	struct yaml_walk w = PARSER_WALK(ps, &keys);
	__u16 *const ports[] = { sec->pin_ports, sec->http_ports };
	unsigned int *const nports[] = { &sec->npin_ports, &sec->nhttp_ports };
	int k, on, r = 0;

	sec->pinning_set = true;
	memset(sec->pin_ports, 0, sizeof(sec->pin_ports));
	memset(sec->http_ports, 0, sizeof(sec->http_ports));
	sec->npin_ports = sec->nhttp_ports = 0;
	if (yaml_scalar(node)) {
		if (yp_bool(ps, node, &on) < 0)
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
	yaml_walk_start(&w, node);
	while ((k = yaml_walk_next(&w)) >= 0)
		if (parse_pin_ports(ps, w.value, names[k], ports[k], nports[k]) < 0)
			r = -EINVAL;
	r |= w.r;
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
int yp_category_limits(struct parser *ps, yaml_node_t *node,
				 struct policy_section *sec)
{
	static const struct yaml_keys keys = YAML_KEYS("upload_limits", upload_category_keys,
						       .refuse = yaml_refuse_unknown);
	struct yaml_walk w = PARSER_WALK(ps, &keys);
	int c, r = 0;

	if (yaml_walk_start(&w, node) < 0)
		return -EINVAL;
	while ((c = yaml_walk_next(&w)) >= 0) {
		/* `none`: no budget for the category, not even the catalog's. */
		if (yaml_scalar(w.value) && !strcmp(yaml_scalar(w.value), "none"))
			sec->category_limits[c] = UPLOAD_LIMIT_NONE;
		else
			r |= yp_size(ps, w.value, &sec->category_limits[c]);
	}
	return r || w.r ? -EINVAL : 0;
}

/* `loopback: false`, `loopback: true` (any port), `loopback: {ports: [...]}` */
int yp_loopback(struct parser *ps, yaml_node_t *node,
			  struct policy_section *sec)
{
	static const char *const names[] = { "ports" };
	static const struct yaml_keys keys = YAML_KEYS("loopback", names,
						       .refuse = yaml_refuse_unknown);
	struct yaml_walk w = PARSER_WALK(ps, &keys);
	int on, r = 0;

	sec->loopback_set = true;
	if (yaml_scalar(node)) {
		if (yp_bool(ps, node, &on) < 0)
			return -EINVAL;
		sec->loopback_any = on;
		sec->nloopback = 0;
		return 0;
	}
	if (node->type != YAML_MAPPING_NODE) {
		diag_add(ps->d, node, "loopback: want false, true or {ports: [...]}");
		return -EINVAL;
	}
	yaml_walk_start(&w, node);
	while (yaml_walk_next(&w) >= 0)
		r |= yp_ports(ps, w.value, sec->loopback, &sec->nloopback,
				 &sec->loopback_any);
	return r || w.r ? -EINVAL : 0;
}

