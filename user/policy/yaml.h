/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * policy/yaml.h - the policy language's YAML (docs/POLICY.md) into a
 * struct policy_doc. libyaml stays behind it (policy/yaml_util.h is the
 * only header that includes <yaml.h>).
 */
#ifndef EGRET_POLICY_YAML_H
#define EGRET_POLICY_YAML_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/diag.h"
#include "policy/policy.h"

/* Parse a document; every problem goes to @d. -EINVAL if there was any. */
int policy_doc_parse(struct policy_doc *doc, const char *text, size_t len,
		     const char *name, const struct catalog *cat,
		     struct diag *d);

#endif
