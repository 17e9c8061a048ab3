/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * daemon/config_impl.h - what config.c (the file, socket:, attempts:) and
 * config_caller.c (callers:) share: the parser's state, its walk of a
 * mapping through a table of rules, and the readers of scalars.
 */
#ifndef EGRET_DAEMON_CONFIG_IMPL_H
#define EGRET_DAEMON_CONFIG_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "daemon/config.h"
#include "policy/yaml_util.h"

struct parser {
	yaml_document_t *doc;
	struct diag *d;
	struct daemon_config *out;
	int oom;			/* -ENOMEM once an allocation failed */
	yaml_node_t *uids, *max;	/* attempts.uids and .max, if given */
	bool attempts_bad;		/* then the callers are not held to them */
	/* Per caller, for the checks that need the whole file (its uid
	 * against attempts.uids, its max against attempts.max): the node
	 * that named its uid (NULL: none, or named twice) and its max:. */
	yaml_node_t *who[DAEMON_CALLERS_MAX], *kmax[DAEMON_CALLERS_MAX];
};

static inline yaml_node_t *node_at(struct parser *ps, int index)
{
	return yaml_node(ps->doc, index);
}

/* The caller being read: the next of ps->out->callers. */
static inline struct daemon_caller *caller_cur(struct parser *ps)
{
	return &ps->out->callers[ps->out->ncallers];
}

/* One key of a mapping and what reads its value. */
struct key_rule {
	const char *name;
	int (*parse)(struct parser *ps, yaml_node_t *v);
};

/*
 * Each pair of the mapping @map through its rule, every other key
 * reported on the way (policy/yaml_util.h: yaml_walk). *@ret_seen: bit i
 * set when @rules[i]'s key is present.
 */
int config_parse_keys(struct parser *ps, yaml_node_t *map, const struct key_rule *rules,
		      size_t n, const char *where, unsigned int *ret_seen);

/* config_parse_keys() for a table whose size the compiler checks. */
#define parse_mapping(ps, map, rules, where, ret_seen) ({			\
	_Static_assert(ARRAY_SIZE(rules) <= YAML_KEYS_MAX, "more keys than YAML_KEYS_MAX"); \
	config_parse_keys(ps, map, rules, ARRAY_SIZE(rules), where, ret_seen);	\
})

/* Decimal digits only, at least one. */
bool config_all_digits(const char *t);

/* A number from @lo to @hi (decimal, no sign, no leading zero) into *@ret;
 * else "WHAT: want a number from LO to HI" and -EINVAL. */
int config_scalar_number(struct parser *ps, yaml_node_t *v, const char *what,
			 unsigned long long lo, unsigned long long hi,
			 unsigned long long *ret);

/* true/yes or false/no, as the policy spells them; else -EINVAL, told. */
int config_scalar_bool(struct parser *ps, yaml_node_t *v, const char *what, bool *ret);

/* A user or group name for NSS; NULL, told, if it cannot be one. */
const char *config_scalar_name(struct parser *ps, yaml_node_t *v, const char *what);

/* A gid, or a group name resolved now, into *@ret; else -EINVAL, told. */
int config_scalar_group(struct parser *ps, yaml_node_t *v, const char *what, gid_t *ret);

/* An absolute path that fits a unix socket's address into @ret
 * (DAEMON_SOCKET_PATH_MAX bytes); else -EINVAL, told. */
int config_scalar_socket(struct parser *ps, yaml_node_t *v, const char *what, char *ret);

/* `callers:` into ps->out (config_caller.c). */
int config_parse_callers(struct parser *ps, yaml_node_t *v);

/* `metrics:` into ps->out->metrics (config_metrics.c). */
int config_parse_metrics(struct parser *ps, yaml_node_t *v);

/* What needs the whole file: caller uids outside attempts.uids, caller
 * maxima within attempts.max (and defaulted to it). */
int config_check_callers(struct parser *ps);

#endif
