// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_yaml_util.c - policy/yaml_util.h's walk over a mapping's keys, which
 * every parser of egret's YAML reads its mappings with: each known key
 * yielded once, in the file's order, and every other one (not a plain
 * name, unknown with its "did you mean", given twice) reported at its
 * position while the walk goes on; a refusal hook words them its own way.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "policy/yaml_util.h"

static const char *const names[] = { "ports", "hosts", "pin" };

struct walked {
	int order[8], n;
	unsigned int seen;
	int r;
};

static void walk(const char *text, const struct yaml_keys *keys, struct diag *d,
		 struct walked *ret)
{
	yaml_document_t doc;
	struct yaml_walk w = { .doc = &doc, .d = d, .keys = keys };
	int i;

	*d = (struct diag){ .file = "t.yaml" };
	*ret = (struct walked){ 0 };
	assert_int_equal(yaml_load_text(&doc, text, strlen(text), d), 0);
	if (yaml_walk_start(&w, yaml_document_get_root_node(&doc)) == 0)
		while ((i = yaml_walk_next(&w)) >= 0 && ret->n < 8)
			ret->order[ret->n++] = i;
	ret->seen = w.seen;
	ret->r = w.r;
	yaml_document_delete(&doc);
}

static void known_keys_in_order(void **state)
{
	static const struct yaml_keys keys = YAML_KEYS("x", names);
	struct walked got;
	struct diag d;

	(void)state;
	walk("pin: 1\nports: 2\n", &keys, &d, &got);
	assert_int_equal(got.r, 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(got.n, 2);
	assert_int_equal(got.order[0], 2);
	assert_int_equal(got.order[1], 0);
	assert_int_equal(got.seen, 1u << 0 | 1u << 2);
}

static void every_other_key_told(void **state)
{
	static const struct yaml_keys keys = YAML_KEYS("a thing", names);
	struct walked got;
	struct diag d;

	(void)state;
	walk("prots: 1\nhosts: 2\n? [a]\n: 3\nhosts: 4\npin: 5\n", &keys, &d, &got);
	assert_int_equal(got.r, -EINVAL);
	assert_int_equal(got.n, 2);	/* hosts, pin: the walk went on */
	assert_int_equal(got.order[0], 1);
	assert_int_equal(got.order[1], 2);
	assert_int_equal(d.n, 3);
	assert_string_equal(d.msg[0], "t.yaml:1:1: unknown key 'prots' in a thing (did you mean 'ports'?)");
	assert_string_equal(d.msg[1], "t.yaml:3:3: keys must be plain names (in a thing)");
	assert_string_equal(d.msg[2], "t.yaml:5:1: duplicate key 'hosts' in a thing");
}

static void refused_as_unknown(void **state)
{
	static const struct yaml_keys keys = YAML_KEYS("dns", names, .refuse = yaml_refuse_unknown);
	struct walked got;
	struct diag d;

	(void)state;
	walk("? [a]\n: 3\nhost: 1\n", &keys, &d, &got);
	assert_int_equal(got.r, -EINVAL);
	assert_int_equal(d.n, 2);
	assert_string_equal(d.msg[0], "t.yaml:1:3: unknown key '?' in dns");
	assert_string_equal(d.msg[1], "t.yaml:3:1: unknown key 'host' in dns (did you mean 'hosts'?)");
}

static void not_a_mapping(void **state)
{
	static const struct yaml_keys keys = YAML_KEYS("maps", names);
	struct walked got;
	struct diag d;

	(void)state;
	walk("[1, 2]\n", &keys, &d, &got);
	assert_int_equal(got.r, -EINVAL);
	assert_int_equal(got.n, 0);
	assert_int_equal(got.seen, 0);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.msg[0], "t.yaml:1:1: maps: want a mapping (ports, hosts, pin)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(known_keys_in_order),
		cmocka_unit_test(every_other_key_told),
		cmocka_unit_test(refused_as_unknown),
		cmocka_unit_test(not_a_mapping),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
