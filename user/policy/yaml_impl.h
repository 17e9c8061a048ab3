/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * policy/yaml_impl.h - what the policy file's two readers share: yaml.c
 * (the document, its sections, their hosts: and cidrs:) and yaml_section.c
 * (a section's small mappings: dns, maps, pinning, loopback,
 * upload_limits). Not for anyone else.
 */
#ifndef EGRET_POLICY_YAML_IMPL_H
#define EGRET_POLICY_YAML_IMPL_H

#include <stdbool.h>
#include <yaml.h>

#include "policy/policy.h"
#include "policy/yaml_util.h"	/* IWYU pragma: keep (PARSER_WALK is a yaml_walk) */

struct parser {
	yaml_document_t *doc;
	const struct catalog *cat;
	struct diag *d;
	struct policy_doc *out;
	yaml_node_t *repos;		/* the top level's repos:, read last */
};

/* A yaml_walk of the mapping keys @keys_, its problems in ps->d. */
#define PARSER_WALK(ps, keys_) { .doc = (ps)->doc, .d = (ps)->d, .keys = (keys_) }

yaml_node_t *yp_node_at(struct parser *ps, int index);
int yp_ports(struct parser *ps, yaml_node_t *node, struct port_range *ret, unsigned int *ret_n,
	     bool *ret_any);
int yp_bool(struct parser *ps, yaml_node_t *node, int *ret);
int yp_number(struct parser *ps, yaml_node_t *node, long min, long max, long *ret);
int yp_size(struct parser *ps, yaml_node_t *node, __u64 *ret);

/* A section's small mappings (yaml_section.c): 0 or -EINVAL, each
 * problem in ps->d. */
int yp_dns(struct parser *ps, yaml_node_t *node, struct policy *lists);
int yp_maps(struct parser *ps, yaml_node_t *node, struct policy *lists);
int yp_pinning(struct parser *ps, yaml_node_t *node, struct policy_section *sec);
int yp_category_limits(struct parser *ps, yaml_node_t *node, struct policy_section *sec);
int yp_loopback(struct parser *ps, yaml_node_t *node, struct policy_section *sec);

#endif
