/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * policy.h - the operator's policy: what one attempt may reach.
 *
 * Built from `--allow` flags and a YAML file (docs/POLICY.md). Parsers do
 * not log: they describe the first problem in the caller's buffer.
 */
#ifndef EGRET_POLICY_H
#define EGRET_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include "host.h"
#include "spec.h"

/* Anything a policy makes us allocate has a limit. */
#define POLICY_MAX_SPECS	4096
#define POLICY_MAX_SPECS_TEXT	"4096"
#define EGRET_PORT_SLOTS_TEXT	"8"	/* EGRET_PORT_SLOTS, for messages */
#define POLICY_MAX_FILE_SIZE	(1024 * 1024)

struct policy {
	struct allow_spec *specs;	/* addresses and prefixes */
	size_t nspecs;
	size_t cap;
	struct host_rule *hosts;	/* names, learned through DNS */
	size_t nhosts;
	size_t hosts_cap;
};

int policy_add_spec(struct policy *p, const struct allow_spec *spec);
int policy_add_host(struct policy *p, const struct host_rule *host);

/* `--allow TEXT`: an address spec or a host rule. */
int policy_add_allow_text(struct policy *p, const char *text, char *err,
			  size_t errlen);

/* Parse YAML text (named @name in messages) and append its entries. */
int policy_parse_yaml(struct policy *p, const char *text, size_t len,
		      const char *name, char *err, size_t errlen);

/*
 * Load the file at @path. Refused (-EPERM) unless it is a regular file
 * owned by root or by egret's own uid and not writable by group or others:
 * whoever can write the policy decides what the attempt reaches.
 */
int policy_load_file(struct policy *p, const char *path, char *err,
		     size_t errlen);

void policy_free(struct policy *p);

#endif
