/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * policy/show.h - the effective policy written out: `egret check` and the
 * limits manifest of an attempt (attempt/limits.h) print the same.
 */
#ifndef EGRET_POLICY_SHOW_H
#define EGRET_POLICY_SHOW_H

#include <stdbool.h>
#include <stdio.h>

#include "policy/policy.h"

/* The table `egret check` prints: hosts, quiet names, prefixes, settings.
 * @source names the policy, @repo the section (NULL: none). */
void policy_show_text(FILE *f, const struct policy *p, const char *source,
		      const char *repo, long max_entries, long max_cidrs, long min_ttl);

/* The same as one JSON object and a newline; the schema is docs/POLICY.md's
 * ("egret check --json"). */
void policy_show_json(FILE *f, const struct policy *p, const char *source, bool builtin,
		      const char *repo, long max_entries, long max_cidrs, long min_ttl);

#endif
