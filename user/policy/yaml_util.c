// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "policy/yaml_util.h"

void diag_add(struct diag *d, const yaml_node_t *node, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_vat(d, node ? node->start_mark.line + 1 : 0,
		 node ? node->start_mark.column + 1 : 0, fmt, ap);
	va_end(ap);
}

void diag_unknown_key(struct diag *d, const yaml_node_t *node, const char *key,
		      const char *const *known, size_t n, const char *where)
{
	const char *hint = closest_word(key, known, n);

	if (hint)
		diag_add(d, node, "unknown key '%s' in %s (did you mean '%s'?)",
			 key, where, hint);
	else
		diag_add(d, node, "unknown key '%s' in %s", key, where);
}

const char *yaml_scalar(const yaml_node_t *node)
{
	return node && node->type == YAML_SCALAR_NODE ?
		       (const char *)node->data.scalar.value : NULL;
}

yaml_node_t *yaml_node(yaml_document_t *doc, int index)
{
	return yaml_document_get_node(doc, index);
}

int yaml_load_text(yaml_document_t *doc, const char *text, size_t len,
		   struct diag *d)
{
	yaml_parser_t parser;
	int ok;

	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	ok = yaml_parser_load(&parser, doc);
	if (!ok) {
		if (d->n < DIAG_MAX)
			snprintf(d->msg[d->n++], DIAG_LEN, "%.100s:%zu:%zu: %.200s",
				 d->file, parser.problem_mark.line + 1,
				 parser.problem_mark.column + 1,
				 parser.problem ? parser.problem : "YAML syntax error");
	}
	yaml_parser_delete(&parser);
	return ok ? 0 : -EINVAL;
}

/* Levenshtein distance, capped: words here are short keys and names. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[64], i, j;

	if (la >= 63 || lb >= 63)
		return 99;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

const char *closest_word(const char *word, const char *const *candidates,
			 size_t n)
{
	const char *best = NULL;
	size_t best_d = 3, i;

	for (i = 0; i < n; i++) {
		size_t d = edit_distance(word, candidates[i]);

		if (d < best_d) {
			best_d = d;
			best = candidates[i];
		}
	}
	return best;
}

int yaml_walk_start(struct yaml_walk *w, yaml_node_t *map)
{
	const struct yaml_keys *keys = w->keys;
	char list[DIAG_LEN] = "";

	w->seen = 0;
	w->r = 0;
	w->at = w->end = NULL;
	if (map->type == YAML_MAPPING_NODE) {
		w->at = map->data.mapping.pairs.start;
		w->end = map->data.mapping.pairs.top;
		return 0;
	}
	for (size_t i = 0; i < keys->n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
			 i ? ", " : "", keys->names[i]);
	diag_add(w->d, map, "%s: want a mapping (%s)", keys->where, list);
	return w->r = -EINVAL;
}

/* w->key, neither a plain name nor a new one of the keys: told. */
static void walk_refuse(struct yaml_walk *w, const char *key, size_t i)
{
	const struct yaml_keys *keys = w->keys;

	w->r = -EINVAL;
	if (key && i < keys->n)
		diag_add(w->d, w->key, "duplicate key '%s' in %s", key, keys->where);
	else if (keys->refuse)
		keys->refuse(w, key);
	else if (!key)
		diag_add(w->d, w->key, "keys must be plain names (in %s)", keys->where);
	else
		diag_unknown_key(w->d, w->key, key, keys->names, keys->n, keys->where);
}

int yaml_walk_next(struct yaml_walk *w)
{
	const struct yaml_keys *keys = w->keys;

	for (; w->at && w->at < w->end; w->at++) {
		const char *key;
		size_t i = 0;

		w->key = yaml_node(w->doc, w->at->key);
		w->value = yaml_node(w->doc, w->at->value);
		key = yaml_scalar(w->key);
		while (key && i < keys->n && strcmp(key, keys->names[i]))
			i++;
		if (key && i < keys->n && !(w->seen & 1u << i)) {
			w->seen |= 1u << i;
			w->at++;
			return (int)i;
		}
		walk_refuse(w, key, i);
	}
	return -1;
}

void yaml_refuse_unknown(const struct yaml_walk *w, const char *key)
{
	diag_unknown_key(w->d, w->key, key ? key : "?", w->keys->names, w->keys->n,
			 w->keys->where);
}

int policy_yaml_ports(yaml_document_t *doc, yaml_node_t *node, struct diag *d,
		      struct port_range *ret, unsigned int *ret_n, bool *ret_any)
{
	const char *text = yaml_scalar(node);
	yaml_node_item_t *it;
	unsigned int n = 0;
	char msg[160];
	int r;

	*ret_any = false;
	if (text && !strcmp(text, "any")) {
		*ret_any = true;
		*ret_n = 0;
		return 0;
	}
	if (text) {
		r = ports_parse(text, ret, EGRET_PORT_SLOTS, msg, sizeof(msg));
		if (r < 0) {
			diag_add(d, node, "%s", msg);
			return -EINVAL;
		}
		*ret_n = (unsigned int)r;
		return 0;
	}
	if (node->type != YAML_SEQUENCE_NODE) {
		diag_add(d, node, "ports: want a list, a number or 'any'");
		return -EINVAL;
	}
	for (it = node->data.sequence.items.start;
	     it < node->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_node(doc, *it);

		if (!yaml_scalar(item)) {
			diag_add(d, item, "ports: items are numbers or LO-HI");
			return -EINVAL;
		}
		if (n == EGRET_PORT_SLOTS) {
			diag_add(d, item, "ports: more than %d items", EGRET_PORT_SLOTS);
			return -EINVAL;
		}
		r = ports_parse(yaml_scalar(item), ret + n, EGRET_PORT_SLOTS - n,
				msg, sizeof(msg));
		if (r < 0) {
			diag_add(d, item, "%s", msg);
			return -EINVAL;
		}
		n += (unsigned int)r;
	}
	if (n == 0) {
		diag_add(d, node, "ports: empty list (use 'any' or omit)");
		return -EINVAL;
	}
	*ret_n = n;
	return 0;
}

int yaml_refuse_duplicate_keys(yaml_document_t *doc, struct diag *d)
{
	int r = 0;

	for (yaml_node_t *n = doc->nodes.start; n < doc->nodes.top; n++) {
		yaml_node_pair_t *a, *b;

		if (n->type != YAML_MAPPING_NODE)
			continue;
		for (a = n->data.mapping.pairs.start; a < n->data.mapping.pairs.top; a++) {
			const char *ka = yaml_scalar(yaml_node(doc, a->key));

			for (b = a + 1; ka && b < n->data.mapping.pairs.top; b++) {
				yaml_node_t *kb = yaml_node(doc, b->key);
				const char *s = yaml_scalar(kb);

				if (!s || strcmp(ka, s))
					continue;
				diag_add(d, kb, "duplicate key '%s' (first at line %zu)", s,
					 yaml_node(doc, a->key)->start_mark.line + 1);
				r = -EINVAL;
				break;
			}
		}
	}
	return r;
}
