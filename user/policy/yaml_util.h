/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * policy/yaml_util.h - small helpers over libyaml's document API, shared by
 * the policy, catalog and approvals parsers, and their diagnostics
 * (lib/diag.h) at a node's file:line:column.
 */
#ifndef EGRET_YAML_UTIL_H
#define EGRET_YAML_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#include "lib/diag.h"
#include "policy/spec.h"

/* Record "FILE:LINE:COL: message" at @node (NULL: no position). */
void diag_add(struct diag *d, const yaml_node_t *node, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "unknown key 'KEY' in WHERE (did you mean 'K'?)" at @node: the closest
 * of @known, if one is close. */
void diag_unknown_key(struct diag *d, const yaml_node_t *node, const char *key,
		      const char *const *known, size_t n, const char *where);

/* The scalar text of @node, or NULL if it is not a scalar. */
const char *yaml_scalar(const yaml_node_t *node);

yaml_node_t *yaml_node(yaml_document_t *doc, int index);

/* Load @text into @doc; on a syntax error record it and return -EINVAL. */
int yaml_load_text(yaml_document_t *doc, const char *text, size_t len,
		   struct diag *d);

/* The candidate closest to @word (edit distance <= 2), for "did you mean". */
const char *closest_word(const char *word, const char *const *candidates,
			 size_t n);

/* Every key given twice in a mapping, each at its position: YAML would
 * let the last one win, and a policy must not mean less than it shows.
 * 0, or -EINVAL. */
int yaml_refuse_duplicate_keys(yaml_document_t *doc, struct diag *d);

/* A `ports:` value: a list, a number, "LO-HI,..." or "any" (*@ret_any). */
int policy_yaml_ports(yaml_document_t *doc, yaml_node_t *node, struct diag *d,
		      struct port_range *ret, unsigned int *ret_n, bool *ret_any);

#endif
