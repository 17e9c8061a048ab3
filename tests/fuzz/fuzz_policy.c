// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_policy.c - libFuzzer target for the policy parser and resolver
 * (user/policy/yaml.c, user/policy/policy.c). The input is a policy file's YAML,
 * parsed against the built-in registry catalog; a policy that parses is
 * resolved for no repository and for each repository it names, as
 * `egret run --repo` would.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "policy/catalog.h"
#include "policy/load.h"
#include "policy/yaml.h"

static struct catalog cat;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];

	(void)argc;
	(void)argv;
	if (catalog_load(&cat, err, sizeof(err)) < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct diag d;
	struct policy_doc doc;
	struct policy p;

	d = (struct diag){ 0 };
	if (policy_doc_parse(&doc, (const char *)data, size, "fuzz.yaml", &cat, &d) == 0) {
		for (size_t i = 0; i <= doc.nrepos; i++) {
			policy_init(&p);
			d = (struct diag){ 0 };
			policy_resolve(&doc, &cat, i < doc.nrepos ? doc.repos[i].name : NULL,
				       NULL, &p, &d);
			policy_free(&p);
		}
	}
	if (d.n > DIAG_MAX)
		__builtin_trap();
	policy_doc_free(&doc);
	return 0;
}
