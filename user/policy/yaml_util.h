/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * policy/yaml_util.h - small helpers over libyaml's document API, shared by
 * the policy, catalog, approvals and egretd configuration parsers, and
 * their diagnostics (lib/diag.h) at a node's file:line:column; the one
 * walker over a mapping's keys they all read their mappings with.
 */
#ifndef EGRET_YAML_UTIL_H
#define EGRET_YAML_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#include "lib/diag.h"
#include "lib/util.h"
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

/* ---- a mapping's keys ---------------------------------------------- */

#define YAML_KEYS_MAX	32	/* keys of one mapping: bits of yaml_walk.seen */

struct yaml_walk;

/* The keys one mapping may hold. */
struct yaml_keys {
	const char *where;		/* the mapping in messages: "dns", "a caller" */
	const char *const *names;	/* in the order "did you mean" prefers */
	size_t n;			/* at most YAML_KEYS_MAX */
	/*
	 * A key that is not a plain name (@key NULL) or none of @names, told
	 * (at w->key, or w->value) by @refuse; NULL: as "keys must be plain
	 * names (in WHERE)" or "unknown key 'KEY' in WHERE (did you mean
	 * 'NAME'?)".
	 */
	void (*refuse)(const struct yaml_walk *w, const char *key);
};

/*
 * A walk over one mapping's pairs, each yielded by yaml_walk_next() when
 * its key is one of the keys, the first time it is given. Every other key
 * (not a plain name, unknown, or given again: "duplicate key 'KEY' in
 * WHERE") is reported on the way and the walk goes on, so one typo hides
 * no other mistake. Set up with designated initializers:
 *   struct yaml_walk w = { .doc = doc, .d = d, .keys = &dns_keys };
 */
struct yaml_walk {
	yaml_document_t *doc;
	struct diag *d;
	const struct yaml_keys *keys;
	const void *ctx;		/* the caller's, for keys->refuse */
	yaml_node_t *key, *value;	/* the pair yielded last */
	unsigned int seen;		/* bit i: names[i] was given */
	int r;				/* -EINVAL once a key was refused */
	yaml_node_pair_t *at, *end;
};

/* A struct yaml_keys of the array @list_ (its size checked when compiled),
 * then any other member: YAML_KEYS("dns", dns_names, .refuse = ...). */
#define YAML_KEYS(where_, list_, ...) {						\
	.where = (where_), .names = (list_),					\
	.n = ARRAY_SIZE(list_) + 0 * sizeof(struct {				\
		_Static_assert(ARRAY_SIZE(list_) <= YAML_KEYS_MAX,		\
			       "more keys than YAML_KEYS_MAX");			\
		int unused; }),							\
	__VA_ARGS__ }

/* Start @w on @map; not a mapping: "WHERE: want a mapping (KEYS)" and
 * -EINVAL. */
int yaml_walk_start(struct yaml_walk *w, yaml_node_t *map);

/* The index in keys->names of the next pair's key (w->key, w->value), or
 * -1 at the end. */
int yaml_walk_next(struct yaml_walk *w);

/* A refusal for yaml_keys.refuse: every key refused as an unknown one,
 * '?' when it is not a plain name. */
void yaml_refuse_unknown(const struct yaml_walk *w, const char *key);

/* A `ports:` value: a list, a number, "LO-HI,..." or "any" (*@ret_any). */
int policy_yaml_ports(yaml_document_t *doc, yaml_node_t *node, struct diag *d,
		      struct port_range *ret, unsigned int *ret_n, bool *ret_any);

#endif
