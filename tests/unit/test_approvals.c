// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_approvals.c - approvals files: paths, parsing, writing, merging. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "requests/approvals.h"

static int parse(struct approvals *a, const char *text, const char *repo,
		 struct diag *d)
{
	memset(d, 0, sizeof(*d));
	return approvals_parse(a, text, strlen(text), "t.yaml", repo, d);
}

static bool diag_has(const struct diag *d, const char *needle)
{
	for (int i = 0; i < d->n; i++)
		if (strstr(d->msg[i], needle))
			return true;
	return false;
}

static void test_paths(void **state)
{
	char buf[256];

	(void)state;
	assert_int_equal(approvals_path(NULL, "Owner/Repo.js", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/etc/egret/approved.d/owner__repo.js.yaml");
	assert_int_equal(approvals_path("/srv/egret/p.yaml", "a/b", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/srv/egret/approved.d/a__b.yaml");
	assert_int_equal(approvals_dir("p.yaml", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "./approved.d");
	assert_int_equal(approvals_path(NULL, "a/b", buf, 10), -ENAMETOOLONG);
}

static void test_parse(void **state)
{
	struct approvals a;
	struct diag d;

	(void)state;
	assert_int_equal(parse(&a,
		"version: 1\n"
		"repo: owner/a\n"
		"approvals:\n"
		"  - host: files.example.net\n"
		"    ports: \"443,8000-8100\"\n"
		"    request: 17\n"
		"    approved_by: \"alice (uid 0)\"\n"
		"    approved_at: \"2026-11-30T08:31:02Z\"\n"
		"  - cidr: 203.0.113.7\n"
		"    ports: [5432]\n"
		"  - host: \"*.cdn.example\"\n", "Owner/A", &d), 0);
	assert_int_equal(a.n, 3);
	assert_true(a.items[0].is_host);
	assert_string_equal(a.items[0].host.name, "files.example.net");
	assert_int_equal(a.items[0].host.nports, 2);
	assert_int_equal(a.items[0].host.ports[1].hi, 8100);
	assert_int_equal(a.items[0].request, 17);
	assert_string_equal(a.items[0].by, "alice (uid 0)");
	assert_false(a.items[1].is_host);
	assert_int_equal(a.items[1].spec.prefixlen, 32);
	assert_int_equal(a.items[1].spec.ports[0].lo, 5432);
	assert_true(a.items[2].host.wildcard);
	assert_int_equal(a.items[2].host.nports, PORTS_FROM_POLICY);
	approvals_free(&a);

	/* An empty file is no approvals. */
	assert_int_equal(parse(&a, "", "o/a", &d), 0);
	assert_int_equal(a.n, 0);
	approvals_free(&a);
}

static void test_refused(void **state)
{
	struct approvals a;
	struct diag d;

	(void)state;
	/* Another repository's file (a name collision, or a copy). */
	assert_int_equal(parse(&a, "version: 1\nrepo: owner/b\napprovals: []\n",
			       "owner/a", &d), -EINVAL);
	assert_true(diag_has(&d, "holds approvals for 'owner/b', not 'owner/a'"));
	approvals_free(&a);
	assert_int_equal(parse(&a, "version: 1\napprovals: []\n", "owner/a", &d), -EINVAL);
	assert_true(diag_has(&d, "missing 'repo: owner/a'"));
	approvals_free(&a);
	assert_int_equal(parse(&a, "version: 1\nrepo: o/a\napprovals:\n"
			       "  - host: x.example\n    prots: [1]\n", "o/a", &d), -EINVAL);
	assert_true(diag_has(&d, "t.yaml:5:5: unknown key 'prots' in an approval (did you mean 'ports'?)"));
	approvals_free(&a);
	assert_int_equal(parse(&a, "version: 1\nrepo: o/a\napprovals:\n"
			       "  - host: bad_name!\n", "o/a", &d), -EINVAL);
	approvals_free(&a);
	assert_int_equal(parse(&a, "version: 1\nrepo: o/a\napprovals:\n"
			       "  - host: a.example\n    cidr: 10.0.0.1\n", "o/a", &d), -EINVAL);
	assert_true(diag_has(&d, "one host or one cidr"));
	approvals_free(&a);
	assert_int_equal(parse(&a, "version: 1\nrepo: o/a\napprovals:\n"
			       "  - host: a.example:443\n    ports: [80]\n", "o/a", &d), -EINVAL);
	assert_true(diag_has(&d, "names ports twice"));
	approvals_free(&a);
	assert_int_equal(parse(&a, "version: 2\nrepo: o/a\n", "o/a", &d), -EINVAL);
	approvals_free(&a);
	/* A key twice: YAML would keep the last, a reader the first. */
	assert_int_equal(parse(&a, "version: 1\nrepo: o/a\napprovals:\n"
			       "  - host: a.example\n    host: b.example\n", "o/a", &d), -EINVAL);
	assert_true(diag_has(&d, "t.yaml:5:5: duplicate key 'host' (first at line 4)"));
	approvals_free(&a);
}

/* What approvals_save writes, approvals_load reads back the same; hostile
 * text in approved_by stays one quoted scalar. */
static void test_save_load(void **state)
{
	char dir[] = "/tmp/egret-unit-appr.XXXXXX", path[128], err[128];
	struct approvals a = {}, back;
	struct approval ap = {};
	struct diag d = {};
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	chmod(dir, 0755);
	snprintf(path, sizeof(path), "%s/o__a.yaml", dir);
	strcpy(a.repo, "o/a");
	ap.is_host = true;
	assert_int_equal(host_rule_parse("pkg.example:443", &ap.host, err, sizeof(err)), 0);
	ap.request = 5;
	strcpy(ap.by, "m\"allory\n  - host: evil.test");
	strcpy(ap.at, "2026-11-30T00:00:00Z");
	assert_int_equal(approvals_add(&a, &ap), 0);
	assert_int_equal(approvals_add(&a, &ap), 1);	/* the same again */
	memset(&ap, 0, sizeof(ap));
	assert_int_equal(allow_spec_parse("2001:db8::/64", &ap.spec, err, sizeof(err)), 0);
	ap.spec.nports = PORTS_FROM_POLICY;
	assert_int_equal(approvals_add(&a, &ap), 0);
	assert_int_equal(approvals_save(&a, path), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);

	assert_int_equal(approvals_load(&back, path, "o/a", &d), 0);
	assert_int_equal(back.n, 2);
	assert_string_equal(back.items[0].host.name, "pkg.example");
	assert_int_equal(back.items[0].host.nports, 1);
	assert_string_equal(back.items[0].by, "m\"allory\n  - host: evil.test");
	assert_int_equal(back.items[1].spec.prefixlen, 64);
	assert_int_equal(back.items[1].spec.nports, PORTS_FROM_POLICY);
	approvals_free(&back);

	/* Absent: no approvals, no error. */
	unlink(path);
	assert_int_equal(approvals_load(&back, path, "o/a", &d), 0);
	assert_int_equal(back.n, 0);
	approvals_free(&back);
	/* Writable by others: refused like a policy. */
	assert_int_equal(approvals_save(&a, path), 0);
	chmod(path, 0666);
	assert_int_equal(approvals_load(&back, path, "o/a", &d), -EPERM);
	approvals_free(&back);
	unlink(path);
	rmdir(dir);
	approvals_free(&a);
}

/* Entries join a policy with the policy's ports where they name none, and
 * an origin that names the request, who and when. */
static void test_apply(void **state)
{
	struct approvals a;
	struct policy p;
	struct diag d;

	(void)state;
	assert_int_equal(parse(&a, "version: 1\nrepo: o/a\napprovals:\n"
			       "  - host: x.example\n    request: 9\n"
			       "    approved_by: bob (uid 0)\n    approved_at: 2026-11-30T01:02:03Z\n"
			       "  - cidr: 198.51.100.0/24\n    ports: any\n", "o/a", &d), 0);
	policy_init(&p);
	p.nentry_ports = 1;
	p.entry_ports[0] = (struct port_range){ 8443, 8443 };
	assert_int_equal(approvals_apply(&a, &p), 0);
	assert_int_equal(p.nhosts, 1);
	assert_int_equal(p.hosts[0].nports, 1);
	assert_int_equal(p.hosts[0].ports[0].lo, 8443);
	assert_string_equal(p.hosts[0].origin, "approval #9, bob (uid 0), 2026-11-30");
	assert_int_equal(p.nspecs, 1);
	assert_int_equal(p.specs[0].nports, 0);
	assert_true(policy_has_host(&p, &p.hosts[0]));
	policy_free(&p);
	approvals_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_save_load),
		cmocka_unit_test(test_apply),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
