/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * policy/load.h - a policy document from a file or the built-in default:
 * read (lib/trust.h) then parsed (policy/yaml.h). Above both the model
 * (policy/policy.h) and its parser, so neither calls the other back.
 */
#ifndef EGRET_POLICY_LOAD_H
#define EGRET_POLICY_LOAD_H

#include "policy/policy.h"

/*
 * Load @path. Refused (-EPERM) unless the file and its directory are owned
 * by root or egret's uid and not writable by group or others (the policy
 * decides what the attempt reaches; whoever can write it is the operator).
 */
int policy_doc_load_file(struct policy_doc *doc, const char *path,
			 const struct catalog *cat, struct diag *d);

/* The built-in default policy (user/policy/default-policy.yaml). */
int policy_doc_load_default(struct policy_doc *doc, const struct catalog *cat,
			    struct diag *d);

#endif
