// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_catalog.c - the compiled-in registry catalog and its loader. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy/catalog.h"

/* Hosts that must never be in the catalog: multi-tenant storage and
 * user-creatable subdomains, where anyone can publish. */
static const char *const forbidden_suffixes[] = {
	"github.io", "s3.amazonaws.com", "blob.core.windows.net",
	"storage.googleapis.com", "cloudfront.net", "herokuapp.com",
	"workers.dev", "pages.dev", "r2.cloudflarestorage.com",
	"gist.githubusercontent.com", "gitlab.io", "bitbucket.io",
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix) &&
	       (n == m || s[n - m - 1] == '.');
}

static void builtin_catalog(void **state)
{
	struct catalog *c = calloc(1, sizeof(*c));
	static const char *const required[][2] = {
		{ "os_registries", "debian" }, { "os_registries", "ubuntu" },
		{ "os_registries", "alpine" }, { "os_registries", "fedora" },
		{ "ecosystems", "npm" }, { "ecosystems", "pypi" },
		{ "ecosystems", "crates" }, { "ecosystems", "go" },
		{ "ecosystems", "rubygems" }, { "ecosystems", "maven" },
		{ "ecosystems", "gradle" }, { "ecosystems", "nuget" },
		{ "ecosystems", "hex" }, { "ecosystems", "pub" },
		{ "ecosystems", "cocoapods" }, { "ecosystems", "conda" },
		{ "ecosystems", "docker-registry" }, { "forges", "github" },
	};
	char err[256];

	assert_int_equal(catalog_load(c, err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		int s;

		for (s = 0; s < CATALOG_NSECTIONS; s++)
			if (!strcmp(catalog_section_key(s), required[i][0]))
				break;
		if (!catalog_find(c, s, required[i][1]))
			fail_msg("catalog lacks %s: %s", required[i][0], required[i][1]);
	}
	/* Every entry cites a source and has ports; no forbidden host. */
	for (int s = 0; s < CATALOG_NSECTIONS; s++) {
		for (size_t i = 0; i < c->n[s]; i++) {
			const struct catalog_entry *e = &c->entries[s][i];

			assert_true(strlen(e->source) > 10);
			assert_true(e->nports > 0);
			for (size_t h = 0; h < e->nhosts; h++)
				for (size_t k = 0; k < sizeof(forbidden_suffixes) /
						       sizeof(forbidden_suffixes[0]); k++)
					if (ends_with(e->hosts[h], forbidden_suffixes[k]))
						fail_msg("%s lists %s", e->name, e->hosts[h]);
		}
	}
	assert_string_equal(catalog_forge_for(c, "github.com")->name, "github");
	assert_null(catalog_forge_for(c, "git.example.org"));
	free(c);
}

static int parse(struct catalog *c, const char *text)
{
	char err[256];

	return catalog_parse(c, text, strlen(text), "t", err, sizeof(err));
}

static void loader_is_strict(void **state)
{
	struct catalog *c = calloc(1, sizeof(*c));

	/* A wildcard host, an unknown key, a missing source, a bad section. */
	assert_int_equal(parse(c, "ecosystems: {x: {source: s, ports: [443], hosts: [\"*.a.test\"]}}\n"), -EINVAL);
	assert_int_equal(parse(c, "ecosystems: {x: {source: s, ports: [443], hosts: [a.test], extra: 1}}\n"), -EINVAL);
	assert_int_equal(parse(c, "ecosystems: {x: {ports: [443], hosts: [a.test]}}\n"), -EINVAL);
	assert_int_equal(parse(c, "things: {}\n"), -EINVAL);
	assert_int_equal(parse(c, "forges: {f: {source: s, ports: [443], hosts: []}}\n"), -EINVAL);	/* no remote_hosts */
	assert_int_equal(parse(c, "ecosystems: {x: {source: s, ports: [443], hosts: [a.test]}}\n"), 0);
	assert_non_null(catalog_find(c, CATALOG_ECOSYSTEM, "x"));
	assert_null(catalog_find(c, CATALOG_OS, "x"));
	free(c);
}

/* What egret uses (parsed at build time: tools/catalog_gen.c) is what
 * the parser makes of the embedded YAML, entry for entry. */
static void built_catalog_is_parsed(void **state)
{
	const struct catalog *b = &egret_catalog_built;
	struct catalog *c = calloc(1, sizeof(*c));
	char err[256];

	assert_int_equal(catalog_load(c, err, sizeof(err)), 0);
	assert_memory_equal(b->upload_limits, c->upload_limits, sizeof(c->upload_limits));
	assert_memory_equal(b->n, c->n, sizeof(c->n));
	for (int s = 0; s < CATALOG_NSECTIONS; s++)
		for (size_t i = 0; i < c->n[s]; i++) {
			assert_memory_equal(&b->entries[s][i], &c->entries[s][i],
					    sizeof(c->entries[s][i]));
			assert_ptr_equal(b->names[s][i], b->entries[s][i].name);
		}
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(builtin_catalog),
		cmocka_unit_test(loader_is_strict),
		cmocka_unit_test(built_catalog_is_parsed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
