// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_policy.c - the policy language, its resolution, and its file checks. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/load.h"
#include "policy/yaml.h"

struct fixture {
	struct catalog *cat;
	struct policy_doc doc;
	struct policy p;
	struct diag d;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];

	if (!f || !(f->cat = calloc(1, sizeof(*f->cat))) ||
	    catalog_load(f->cat, err, sizeof(err)) < 0)
		return -1;
	policy_init(&f->p);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	policy_doc_free(&f->doc);
	policy_free(&f->p);
	free(f->cat);
	free(f);
	return 0;
}

static int parse(struct fixture *f, const char *yaml)
{
	policy_doc_free(&f->doc);
	memset(&f->d, 0, sizeof(f->d));
	return policy_doc_parse(&f->doc, yaml, strlen(yaml), "t.yaml", f->cat, &f->d);
}

/* Parse and resolve for @repo with @remote_url (NULL: none). */
static void resolve_ok(struct fixture *f, const char *yaml, const char *repo,
		       const char *remote_url)
{
	struct git_remote remote;
	char err[128];

	if (parse(f, yaml) != 0)
		fail_msg("rejected: %s", f->d.n ? f->d.msg[0] : "?");
	if (remote_url)
		assert_int_equal(git_remote_parse(remote_url, &remote, err, sizeof(err)), 0);
	policy_free(&f->p);
	assert_int_equal(policy_resolve(&f->doc, f->cat, repo,
					remote_url ? &remote : NULL, &f->p, &f->d), 0);
}

/* Some diagnostic starts with t.yaml:LINE:COL: and mentions @what. */
static void assert_diag(struct fixture *f, int line, int col, const char *what)
{
	char where[32];

	snprintf(where, sizeof(where), "t.yaml:%d:%d: ", line, col);
	for (int i = 0; i < f->d.n; i++)
		if (!strncmp(f->d.msg[i], where, strlen(where)) &&
		    strstr(f->d.msg[i], what))
			return;
	for (int i = 0; i < f->d.n; i++)
		print_message("  diag: %s\n", f->d.msg[i]);
	fail_msg("no diagnostic '%s...%s'", where, what);
}

static void parse_fails(struct fixture *f, const char *yaml, int line, int col,
			const char *what)
{
	assert_int_equal(parse(f, yaml), -EINVAL);
	assert_diag(f, line, col, what);
}

/* The entry of @name among the hosts, or fail. */
static const struct host_rule *host(struct fixture *f, const char *name,
				    const char *origin)
{
	for (size_t i = 0; i < f->p.nhosts; i++)
		if (!strcmp(f->p.hosts[i].name, name) &&
		    (!origin || !strcmp(f->p.hosts[i].origin, origin)))
			return &f->p.hosts[i];
	fail_msg("no host %s from %s", name, origin ? origin : "anywhere");
	return NULL;
}

static bool has_host(struct fixture *f, const char *name)
{
	for (size_t i = 0; i < f->p.nhosts; i++)
		if (!strcmp(f->p.hosts[i].name, name))
			return true;
	return false;
}

static void assert_ports(const struct port_range *p, unsigned int n,
			 const char *want)
{
	char buf[128] = "";
	size_t off = 0;

	for (unsigned int i = 0; i < n; i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%u",
					i ? "," : "", p[i].lo);
	assert_string_equal(n ? buf : "any", want);
}

static void spec_text(const struct allow_spec *s, char *buf, size_t len)
{
	assert_int_equal(spec_format(s, buf, len), 0);
}

/* ---- the language ------------------------------------------------- */

static void entries_and_default_ports(void **state)
{
	struct fixture *f = *state;
	char buf[64];

	resolve_ok(f, "version: 1\n"
		      "hosts: [GitHub.com, \"*.npmjs.org:443\", {host: a.test, ports: [8443, 9000-9001]}]\n"
		      "cidrs: [203.0.113.0/24, \"198.51.100.7:22\", {cidr: \"2001:db8::/32\", ports: any}]\n",
		   NULL, NULL);
	assert_ports(host(f, "github.com", "hosts")->ports,
		     host(f, "github.com", NULL)->nports, "443,80");
	assert_true(host(f, "npmjs.org", NULL)->wildcard);
	assert_ports(host(f, "a.test", NULL)->ports, host(f, "a.test", NULL)->nports,
		     "8443,9000");
	assert_int_equal(f->p.nspecs, 3);
	spec_text(&f->p.specs[0], buf, sizeof(buf));
	assert_string_equal(buf, "203.0.113.0/24:443,80");
	spec_text(&f->p.specs[1], buf, sizeof(buf));
	assert_string_equal(buf, "198.51.100.7:22");
	assert_int_equal(f->p.specs[2].nports, 0);	/* any */
	assert_string_equal(f->p.specs[2].origin, "cidrs");
}

static void top_level_ports(void **state)
{
	struct fixture *f = *state;

	resolve_ok(f, "ports: [8080]\nhosts: [a.test]\n", NULL, NULL);
	assert_ports(f->p.hosts[0].ports, f->p.hosts[0].nports, "8080");
	resolve_ok(f, "ports: 9090\nhosts: [a.test]\n", NULL, NULL);
	assert_ports(f->p.hosts[0].ports, f->p.hosts[0].nports, "9090");
	resolve_ok(f, "ports: any\nhosts: [a.test]\n", NULL, NULL);
	assert_int_equal(f->p.hosts[0].nports, 0);
}

static void settings(void **state)
{
	struct fixture *f = *state;

	resolve_ok(f, "dns: {upstreams: [198.51.100.53, \"[2001:db8::53]:5353\"], min_ttl: 30}\n"
		      "maps: {max_entries: 1024, max_cidrs: 64}\n", NULL, NULL);
	assert_string_equal(f->p.upstreams_csv, "198.51.100.53:53,[2001:db8::53]:5353");
	assert_int_equal(f->p.min_ttl, 30);
	assert_int_equal(f->p.max_entries, 1024);
	assert_int_equal(f->p.max_cidrs, 64);
	/* Unset: -1, the caller's defaults apply. */
	resolve_ok(f, "hosts: []\n", NULL, NULL);
	assert_int_equal(f->p.min_ttl, -1);
	assert_int_equal(f->p.max_entries, -1);
}

/* `nested_sandbox:` a scalar: the repository's word wins, off unless said. */
static void nested_sandbox(void **state)
{
	struct fixture *f = *state;

	resolve_ok(f, "hosts: [a.example]\n", NULL, NULL);
	assert_false(f->p.nested_sandbox);
	resolve_ok(f, "nested_sandbox: true\n", NULL, NULL);
	assert_true(f->p.nested_sandbox);
	resolve_ok(f, "repos:\n  acme/x:\n    nested_sandbox: true\n", "acme/x", NULL);
	assert_true(f->p.nested_sandbox);
	resolve_ok(f, "repos:\n  acme/x:\n    nested_sandbox: true\n", "acme/y", NULL);
	assert_false(f->p.nested_sandbox);
	resolve_ok(f, "nested_sandbox: true\nrepos:\n  acme/x:\n    nested_sandbox: false\n",
		   "acme/x", NULL);
	assert_false(f->p.nested_sandbox);
}

/* `upload_limit:` at the top and in a repo's section: sizes; the
 * section's overrides, like any scalar (`none` lifts it); a size egret
 * cannot read is refused where it stands. */
static void upload_limit(void **state)
{
	struct fixture *f = *state;

	resolve_ok(f, "upload_limit: 1M\n", NULL, NULL);
	assert_int_equal(f->p.upload_limit, 1048576);
	resolve_ok(f, "upload_limit: 512K\nrepos:\n  acme/x:\n    upload_limit: 2M\n",
		   "acme/x", NULL);
	assert_int_equal(f->p.upload_limit, 2097152);
	resolve_ok(f, "upload_limit: 512K\nrepos:\n  acme/x:\n    upload_limit: none\n",
		   "acme/x", NULL);
	assert_int_equal(f->p.upload_limit, 0);
	resolve_ok(f, "upload_limit: 512K\nrepos:\n  acme/x:\n    upload_limit: 2M\n",
		   "acme/y", NULL);
	assert_int_equal(f->p.upload_limit, 524288);
	resolve_ok(f, "upload_limit: 2M\nrepos:\n  acme/x:\n    upload_limit: 4096\n",
		   "acme/x", NULL);
	assert_int_equal(f->p.upload_limit, 4096);
	resolve_ok(f, "hosts: []\n", NULL, NULL);
	assert_int_equal(f->p.upload_limit, 0);
	/* Per entry, and per catalog category: on the rules they make. */
	resolve_ok(f, "hosts: [{host: a.test, upload_limit: 2K}, b.test]\n"
		      "cidrs: [{cidr: 203.0.113.0/24, upload_limit: 3K}]\n", NULL, NULL);
	assert_int_equal(host(f, "a.test", NULL)->upload_limit, 2048);
	assert_int_equal(host(f, "b.test", NULL)->upload_limit, 0);
	assert_int_equal(f->p.specs[0].upload_limit, 3072);
	resolve_ok(f, "ecosystems: [npm]\nupload_limits: {ecosystems: 4M}\n"
		      "repos:\n  acme/x:\n    upload_limits: {ecosystems: 64M, git_remote: 9M}\n",
		   "acme/x", NULL);
	assert_int_equal(host(f, "registry.npmjs.org", NULL)->upload_limit, 64ULL << 20);
	resolve_ok(f, "ecosystems: [npm]\nupload_limits: {ecosystems: 4M}\n", NULL, NULL);
	assert_int_equal(host(f, "registry.npmjs.org", NULL)->upload_limit, 4194304);
	/* No budget given: the catalog's default; the operator may raise it
	 * or say `none`. */
	resolve_ok(f, "ecosystems: [npm]\n", NULL, NULL);
	assert_int_equal(host(f, "registry.npmjs.org", NULL)->upload_limit, 32ULL << 20);
	resolve_ok(f, "ecosystems: [npm]\nupload_limits: {ecosystems: 1G}\n", NULL, NULL);
	assert_int_equal(host(f, "registry.npmjs.org", NULL)->upload_limit, 1ULL << 30);
	resolve_ok(f, "ecosystems: [npm]\nupload_limits: {ecosystems: none}\n", NULL, NULL);
	assert_int_equal(host(f, "registry.npmjs.org", NULL)->upload_limit, 0);
	/* A repo's section overrides the top level's `none` too. */
	resolve_ok(f, "ecosystems: [npm]\nupload_limits: {ecosystems: none}\n"
		      "repos:\n  acme/x:\n    upload_limits: {ecosystems: 2M}\n", "acme/x", NULL);
	assert_int_equal(host(f, "registry.npmjs.org", NULL)->upload_limit, 2ULL << 20);
	parse_fails(f, "upload_limits: {npm: 1M}\n", 1, 17, "unknown key");
	parse_fails(f, "hosts: [{host: a.test, upload_limit: 1.5M}]\n", 1, 38, "want a size");
	parse_fails(f, "upload_limit: 1Q\n", 1, 15, "want a size");
	parse_fails(f, "upload_limit: 0\n", 1, 15, "want a size");
	parse_fails(f, "upload_limit: -5\n", 1, 15, "want a size");
}

static void loopback(void **state)
{
	struct fixture *f = *state;
	char buf[64];

	resolve_ok(f, "loopback: {ports: [5432]}\n", NULL, NULL);
	assert_int_equal(f->p.nspecs, 2);
	spec_text(&f->p.specs[0], buf, sizeof(buf));
	assert_string_equal(buf, "127.0.0.1:5432");
	spec_text(&f->p.specs[1], buf, sizeof(buf));
	assert_string_equal(buf, "[::1]:5432");
	assert_string_equal(f->p.specs[1].origin, "loopback");
	resolve_ok(f, "loopback: false\n", NULL, NULL);
	assert_int_equal(f->p.nspecs, 0);
	resolve_ok(f, "loopback: true\n", NULL, NULL);
	assert_int_equal(f->p.nspecs, 2);
	assert_int_equal(f->p.specs[0].nports, 0);
}

/* SNI pinning: on at 443 by default; its ports, per-host and per-prefix
 * exceptions; what does not speak TLS on 443 is never pinned. */
static void pinning(void **state)
{
	struct fixture *f = *state;

	resolve_ok(f, "", NULL, NULL);
	assert_int_equal(f->p.npin_ports, 1);
	assert_int_equal(f->p.pin_ports[0], 443);
	assert_int_equal(f->p.nhttp_ports, 1);
	assert_int_equal(f->p.http_ports[0], 80);
	resolve_ok(f, "pinning: false\n", NULL, NULL);
	assert_int_equal(f->p.npin_ports, 0);
	assert_int_equal(f->p.nhttp_ports, 0);
	resolve_ok(f, "pinning: true\n", NULL, NULL);
	assert_int_equal(f->p.npin_ports, 1);
	assert_int_equal(f->p.nhttp_ports, 1);
	/* A key left out keeps its default. */
	resolve_ok(f, "pinning: {ports: [443, 8443]}\n", NULL, NULL);
	assert_int_equal(f->p.npin_ports, 2);
	assert_int_equal(f->p.pin_ports[1], 8443);
	assert_int_equal(f->p.nhttp_ports, 1);
	assert_int_equal(f->p.http_ports[0], 80);
	resolve_ok(f, "pinning: {http_ports: [80, 8080]}\n", NULL, NULL);
	assert_int_equal(f->p.npin_ports, 1);
	assert_int_equal(f->p.nhttp_ports, 2);
	assert_int_equal(f->p.http_ports[1], 8080);
	resolve_ok(f, "pinning: {http_ports: []}\n", NULL, NULL);
	assert_int_equal(f->p.npin_ports, 1);
	assert_int_equal(f->p.nhttp_ports, 0);
	/* A port is TLS's or HTTP's. */
	parse_fails(f, "pinning: {ports: [443, 80]}\n", 1, 10, "port 80 is in both");
	parse_fails(f, "pinning: {http_ports: [80-90]}\n", 1, 23, "single ports");
	/* A repository's section overrides it, as scalars do. */
	resolve_ok(f, "pinning: true\nrepos:\n  acme/x:\n    pinning: false\n", "acme/x", NULL);
	assert_int_equal(f->p.npin_ports, 0);

	resolve_ok(f, "hosts: [{host: ssh.example.com, ports: [443], pin: false}, pinned.example.com]\n"
		   "cidrs: [{cidr: 203.0.113.0/24, pin: true}, 198.51.100.0/24]\n", NULL, NULL);
	assert_true(host(f, "ssh.example.com", "hosts")->no_pin);
	assert_false(host(f, "pinned.example.com", "hosts")->no_pin);
	assert_true(f->p.specs[0].pin);
	assert_false(f->p.specs[1].pin);
	assert_true(host_rules_unpinned(f->p.hosts, f->p.nhosts, "ssh.example.com"));
	assert_false(host_rules_unpinned(f->p.hosts, f->p.nhosts, "pinned.example.com"));

	/* SSH on 443 (the catalog's not_tls), a remote over SSH: by address. */
	resolve_ok(f, "", NULL, "https://github.com/o/r");
	assert_true(host(f, "ssh.github.com", "git_remote: github")->no_pin);
	assert_false(host(f, "codeload.github.com", "git_remote: github")->no_pin);
	assert_false(host(f, "github.com", "git_remote")->no_pin);
	resolve_ok(f, "", NULL, "ssh://git@github.com:443/o/r");
	assert_true(host(f, "github.com", "git_remote")->no_pin);

	parse_fails(f, "pinning: {ports: [\"443-445\"]}\n", 1, 18, "single ports");
	parse_fails(f, "pinning: {ports: [1, 2, 3, 4, 5]}\n", 1, 18, "at most 4");
	parse_fails(f, "pinning: {port: [443]}\n", 1, 11, "unknown key");
	parse_fails(f, "hosts: [{host: a.example.com, pin: maybe}]\n", 1, 36, "true or false");
}

static void empty_allows_nothing(void **state)
{
	struct fixture *f = *state;

	resolve_ok(f, "", NULL, "https://github.com/o/r");
	/* git_remote defaults to on, even in an empty file. */
	assert_true(has_host(f, "github.com"));
	resolve_ok(f, "git_remote: false\n", NULL, "https://github.com/o/r");
	assert_int_equal(f->p.nhosts, 0);
	assert_int_equal(f->p.nspecs, 0);
}

/* ---- strict validation -------------------------------------------- */

static void every_problem_reported(void **state)
{
	struct fixture *f = *state;

	/* Three independent mistakes: three diagnostics, each positioned. */
	assert_int_equal(parse(f, "ecosystem: [npm]\n"
				  "hosts: [\"bad host\"]\n"
				  "cidrs: [10.0.0.1/8]\n"), -EINVAL);
	assert_int_equal(f->d.n, 3);
	assert_diag(f, 1, 1, "unknown key 'ecosystem'");
	assert_diag(f, 1, 1, "did you mean 'ecosystems'?");
	assert_diag(f, 2, 9, "bad host");
	assert_diag(f, 3, 9, "host bits");
}

/* A key given twice is refused, not decided by YAML's "last one wins":
 * a reader of the file would take the first. */
static void duplicate_keys_refused(void **state)
{
	struct fixture *f = *state;

	parse_fails(f, "loopback: false\n"
		       "hosts: [a.example]\n"
		       "loopback: true\n", 3, 1,
		    "duplicate key 'loopback' (first at line 1)");
	parse_fails(f, "repos:\n"
		       "  octo/app:\n"
		       "    hosts: [a.example]\n"
		       "    hosts: [b.example]\n", 4, 5,
		    "duplicate key 'hosts' (first at line 3)");
}

static void catalog_names_and_hints(void **state)
{
	struct fixture *f = *state;

	parse_fails(f, "ecosystems: [npm, pipy]\n", 1, 19, "did you mean 'pypi'?");
	parse_fails(f, "os_registries: [debain]\n", 1, 17, "did you mean 'debian'?");
	parse_fails(f, "ecosystems: [nothing-like-it]\n", 1, 14, "unknown name 'nothing-like-it'");
	parse_fails(f, "ecosystems: npm\n", 1, 13, "want a list");
	parse_fails(f, "hsots: [a.test]\n", 1, 1, "did you mean 'hosts'?");
}

static void bad_values(void **state)
{
	struct fixture *f = *state;

	parse_fails(f, "version: 2\n", 1, 10, "unsupported version");
	parse_fails(f, "hosts: [\"*.com\"]\n", 1, 9, "wildcard");
	parse_fails(f, "hosts: [{name: a.test}]\n", 1, 10, "unknown key 'name'");
	parse_fails(f, "hosts: [{ports: [1]}]\n", 1, 9, "lacks 'host:'");
	parse_fails(f, "hosts: [\"a.test:443\"]\nports: [0]\n", 2, 9, "bad port");
	parse_fails(f, "hosts: [{host: \"a.test:443\", ports: [80]}]\n", 1, 9, "ports twice");
	parse_fails(f, "ports: [1,2,3,4,5,6,7,8,9]\n", 1, 25, "more than 8");
	parse_fails(f, "ports: []\n", 1, 8, "empty list");
	parse_fails(f, "cidrs: [\"[10.0.0.1]:80\"]\n", 1, 9, "brackets");
	parse_fails(f, "git_remote: maybe\n", 1, 13, "true or false");
	parse_fails(f, "dns: {upstreams: [dns.example]}\n", 1, 19, "ADDR[:PORT]");
	parse_fails(f, "dns: {min_ttl: 86401}\n", 1, 16, "0 to 86400");
	parse_fails(f, "dns: {min_tl: 1}\n", 1, 7, "did you mean 'min_ttl'?");
	parse_fails(f, "maps: {max_entries: 0}\n", 1, 21, "1 to");
	parse_fails(f, "loopback: {port: [1]}\n", 1, 12, "did you mean 'ports'?");
	parse_fails(f, "loopback: sometimes\n", 1, 11, "true or false");
	parse_fails(f, "hosts: a.test\n", 1, 8, "want a list");
}

static void repos_validation(void **state)
{
	struct fixture *f = *state;

	parse_fails(f, "repos: {noslash: {}}\n", 1, 9, "not owner/name");
	parse_fails(f, "repos: {a/b: {}, A/B: {}}\n", 1, 18, "twice");
	parse_fails(f, "repos:\n  a/b:\n    repos: {}\n", 3, 5, "top level");
	parse_fails(f, "repos:\n  a/b:\n    version: 1\n", 3, 5, "top level");
	parse_fails(f, "repos:\n  a/b:\n    ecosystems: [nmp]\n", 3, 18, "did you mean 'npm'?");
	parse_fails(f, "repos: [a/b]\n", 1, 8, "want a mapping");
}

static void syntax_error(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(parse(f, "hosts: [a.test\ncidrs: x\n"), -EINVAL);
	assert_int_equal(f->d.n, 1);
	assert_non_null(strstr(f->d.msg[0], "t.yaml:"));
}

static void limits(void **state)
{
	struct fixture *f = *state;
	size_t len = 16 + (POLICY_MAX_SPECS + 1) * 24, off;
	char *yaml = malloc(len);

	off = (size_t)snprintf(yaml, len, "cidrs:\n");
	for (int i = 0; i <= POLICY_MAX_SPECS; i++)
		off += (size_t)snprintf(yaml + off, len - off, "- 10.%d.%d.0/24\n",
					i / 256, i % 256);
	assert_int_equal(parse(f, yaml), -EINVAL);
	assert_non_null(strstr(f->d.msg[0], "more than 4096"));
	free(yaml);
}

/* ---- resolution ---------------------------------------------------- */

static void catalog_expansion(void **state)
{
	struct fixture *f = *state;
	const struct host_rule *h;

	resolve_ok(f, "os_registries: [debian]\necosystems: [npm, pypi]\n", NULL, NULL);
	h = host(f, "deb.debian.org", "os_registries: debian");
	assert_ports(h->ports, h->nports, "80,443");
	h = host(f, "registry.npmjs.org", "ecosystems: npm");
	assert_ports(h->ports, h->nports, "443");
	host(f, "files.pythonhosted.org", "ecosystems: pypi");
	/* Catalog hosts are exact, never wildcards. */
	for (size_t i = 0; i < f->p.nhosts; i++)
		assert_false(f->p.hosts[i].wildcard);
}

static const char *repos_yaml =
	"ports: [443]\n"
	"ecosystems: [npm]\n"
	"hosts: [base.test]\n"
	"dns: {min_ttl: 60}\n"
	"repos:\n"
	"  owner/a:\n"
	"    ecosystems: [pypi]\n"
	"    hosts: [a-only.test]\n"
	"    ports: [8443]\n"
	"    dns: {min_ttl: 5}\n"
	"  owner/b:\n"
	"    git_remote: false\n";

static void repo_sections_merge(void **state)
{
	struct fixture *f = *state;

	/* owner/a: lists add, scalars override (ports, min_ttl). */
	resolve_ok(f, repos_yaml, "owner/a", "https://github.com/owner/a.git");
	host(f, "registry.npmjs.org", "ecosystems: npm");
	host(f, "pypi.org", "ecosystems: pypi");
	assert_ports(host(f, "a-only.test", "repos.owner/a.hosts")->ports, 1, "8443");
	assert_ports(host(f, "base.test", "hosts")->ports, 1, "8443");
	assert_int_equal(f->p.min_ttl, 5);
	host(f, "github.com", "git_remote");

	/* owner/b: only the defaults; its git remote is switched off. */
	resolve_ok(f, repos_yaml, "OWNER/B", "https://github.com/owner/b.git");
	assert_false(has_host(f, "pypi.org"));
	assert_false(has_host(f, "a-only.test"));
	assert_false(has_host(f, "github.com"));
	assert_ports(host(f, "base.test", NULL)->ports, 1, "443");
	assert_int_equal(f->p.min_ttl, 60);

	/* A repo without a section, and no repo at all: the defaults. */
	resolve_ok(f, repos_yaml, "someone/else", NULL);
	assert_false(has_host(f, "pypi.org"));
	resolve_ok(f, repos_yaml, NULL, NULL);
	assert_false(has_host(f, "a-only.test"));
}

static void git_remote_and_forge(void **state)
{
	struct fixture *f = *state;
	char buf[64];

	resolve_ok(f, "", NULL, "git@github.com:owner/repo.git");
	assert_ports(host(f, "github.com", "git_remote")->ports, 1, "22");
	host(f, "codeload.github.com", "git_remote: github");
	host(f, "objects.githubusercontent.com", "git_remote: github");

	/* A forge the catalog does not know: the remote host alone. */
	resolve_ok(f, "", NULL, "https://git.example.org:8443/o/r");
	assert_int_equal(f->p.nhosts, 1);
	assert_ports(host(f, "git.example.org", "git_remote")->ports, 1, "8443");

	/* An address remote becomes an address entry. */
	resolve_ok(f, "", NULL, "ssh://git@[2001:db8::7]:2222/o/r");
	assert_int_equal(f->p.nspecs, 1);
	spec_text(&f->p.specs[0], buf, sizeof(buf));
	assert_string_equal(buf, "[2001:db8::7]:2222");
}

static void builtin_default(void **state)
{
	struct fixture *f = *state;
	struct git_remote remote;
	char err[128];

	assert_int_equal(policy_doc_load_default(&f->doc, f->cat, &f->d), 0);
	assert_int_equal(git_remote_parse("https://gitlab.com/o/r", &remote, err, sizeof(err)), 0);
	assert_int_equal(policy_resolve(&f->doc, f->cat, NULL, &remote, &f->p, &f->d), 0);
	host(f, "deb.debian.org", "os_registries: debian");
	host(f, "archive.ubuntu.com", "os_registries: ubuntu");
	assert_ports(host(f, "gitlab.com", "git_remote")->ports, 1, "443");
	assert_false(has_host(f, "registry.npmjs.org"));
	assert_int_equal(f->p.nspecs, 0);
}

/* ---- files -------------------------------------------------------- */

static char tmpdir[64];

static int dir_setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/egret-policy-XXXXXX");
	if (!mkdtemp(tmpdir) || chmod(tmpdir, 0755) < 0)
		return -1;
	return setup(state);
}

static int dir_teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		return -1;
	return teardown(state);
}

static const char *write_file(const char *name, const char *text, mode_t mode)
{
	static char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
	return path;
}

static int load(struct fixture *f, const char *path)
{
	policy_doc_free(&f->doc);
	memset(&f->d, 0, sizeof(f->d));
	return policy_doc_load_file(&f->doc, path, f->cat, &f->d);
}

static void load_files(void **state)
{
	struct fixture *f = *state;
	char path[128];

	assert_int_equal(load(f, write_file("ok.yaml", "cidrs: [203.0.113.1]\n", 0644)), 0);
	assert_int_equal(f->doc.base.lists.nspecs, 1);
	/* Errors from the text name the file. */
	assert_int_equal(load(f, write_file("bad.yaml", "cidrs: [nope]\n", 0600)), -EINVAL);
	assert_non_null(strstr(f->d.msg[0], "bad.yaml:1:9:"));

	assert_int_equal(load(f, write_file("a.yaml", "{}\n", 0666)), -EPERM);
	assert_non_null(strstr(f->d.msg[0], "refused"));
	assert_int_equal(load(f, write_file("b.yaml", "{}\n", 0620)), -EPERM);
	assert_int_equal(load(f, write_file("c.yaml", "{}\n", 0602)), -EPERM);

	assert_true(load(f, tmpdir) < 0);
	snprintf(path, sizeof(path), "%s/missing.yaml", tmpdir);
	assert_int_equal(load(f, path), -ENOENT);
}

static void load_refuses_loose_directory(void **state)
{
	struct fixture *f = *state;
	const char *path = write_file("ok.yaml", "{}\n", 0644);

	/* Anyone who can write the directory can replace the file. */
	assert_int_equal(chmod(tmpdir, 0777), 0);
	assert_int_equal(load(f, path), -EPERM);
	assert_int_equal(chmod(tmpdir, 0775), 0);
	assert_int_equal(load(f, path), -EPERM);
	assert_int_equal(chmod(tmpdir, 0755), 0);
	assert_int_equal(load(f, path), 0);
}

/* A symlink cannot vouch for the directory the policy really lives in;
 * directories above must be trusted too, but a sticky one (like /tmp)
 * may be open to others when the entry below it is ours. */
static void load_checks_real_path_and_ancestors(void **state)
{
	struct fixture *f = *state;
	char loose[128], real[160], link[128], deep[160];

	snprintf(loose, sizeof(loose), "%s/loose", tmpdir);
	assert_int_equal(mkdir(loose, 0777), 0);
	assert_int_equal(chmod(loose, 0777), 0);
	snprintf(real, sizeof(real), "%s/policy.yaml", loose);
	write_file("loose/policy.yaml", "{}\n", 0644);
	snprintf(link, sizeof(link), "%s/link.yaml", tmpdir);
	assert_int_equal(symlink(real, link), 0);
	assert_int_equal(load(f, link), -EPERM);
	assert_non_null(strstr(f->d.msg[0], "loose"));

	/* loose/sub is ours and 0755, but loose above it is 0777, unsticky. */
	snprintf(deep, sizeof(deep), "%s/sub", loose);
	assert_int_equal(mkdir(deep, 0755), 0);
	write_file("loose/sub/p.yaml", "{}\n", 0644);
	snprintf(deep, sizeof(deep), "%s/sub/p.yaml", loose);
	assert_int_equal(load(f, deep), -EPERM);
	/* Sticky, like /tmp: others cannot replace our sub. */
	assert_int_equal(chmod(loose, 01777), 0);
	assert_int_equal(load(f, deep), 0);
	/* ...but the policy's own directory may never be open to others. */
	assert_int_equal(load(f, real), -EPERM);
}

static void load_refuses_foreign_owner(void **state)
{
	struct fixture *f = *state;
	const char *path;

	if (geteuid() != 0) {
		print_message("skipped: chown to nobody needs root\n");
		skip();
	}
	path = write_file("nobody.yaml", "{}\n", 0644);
	assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(load(f, path), -EPERM);
	path = write_file("ok.yaml", "{}\n", 0644);
	assert_int_equal(chown(tmpdir, 65534, 65534), 0);
	assert_int_equal(load(f, path), -EPERM);
}

static void load_refuses_huge(void **state)
{
	struct fixture *f = *state;
	const char *path = write_file("huge.yaml", "{}\n", 0644);

	assert_int_equal(truncate(path, POLICY_MAX_FILE_SIZE + 1), 0);
	assert_int_equal(load(f, path), -EFBIG);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
#define TD(fn) cmocka_unit_test_setup_teardown(fn, dir_setup, dir_teardown)
	const struct CMUnitTest tests[] = {
		T(entries_and_default_ports),
		T(top_level_ports),
		T(settings),
		T(upload_limit),
		T(nested_sandbox),
		T(loopback),
		T(pinning),
		T(empty_allows_nothing),
		T(every_problem_reported),
		T(duplicate_keys_refused),
		T(catalog_names_and_hints),
		T(bad_values),
		T(repos_validation),
		T(syntax_error),
		T(limits),
		T(catalog_expansion),
		T(repo_sections_merge),
		T(git_remote_and_forge),
		T(builtin_default),
		TD(load_files),
		TD(load_refuses_loose_directory),
		TD(load_checks_real_path_and_ancestors),
		TD(load_refuses_foreign_owner),
		TD(load_refuses_huge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
