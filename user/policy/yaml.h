/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * policy/yaml.h - the policy language's YAML (docs/POLICY.md) into a
 * struct policy_doc. The only policy header that brings in libyaml.
 */
#ifndef EGRET_POLICY_YAML_H
#define EGRET_POLICY_YAML_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"
#include "policy/yaml_util.h"

/* Parse a document; every problem goes to @d. -EINVAL if there was any. */
int policy_doc_parse(struct policy_doc *doc, const char *text, size_t len,
		     const char *name, const struct catalog *cat,
		     struct diag *d);

/* A `ports:` value: a list, a number, "LO-HI,..." or "any" (*@ret_any). */
int policy_yaml_ports(yaml_document_t *doc, yaml_node_t *node, struct diag *d,
		      struct port_range *ret, unsigned int *ret_n, bool *ret_any);

#endif
