// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_policy.c - the YAML policy and the checks on its file. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"

struct fixture {
	struct policy p;
	char err[512];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	*state = f;
	return f ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	policy_free(&f->p);
	free(f);
	return 0;
}

static int parse(struct fixture *f, const char *yaml)
{
	f->err[0] = '\0';
	return policy_parse_yaml(&f->p, yaml, strlen(yaml), "t.yaml", f->err,
				 sizeof(f->err));
}

static void parse_ok(struct fixture *f, const char *yaml)
{
	if (parse(f, yaml) != 0)
		fail_msg("rejected: %s", f->err);
}

/* Rejected with an error naming the file, the line, and @what. */
static void parse_fails(struct fixture *f, const char *yaml, int line,
			const char *what)
{
	char where[32];

	assert_int_equal(parse(f, yaml), -EINVAL);
	snprintf(where, sizeof(where), "t.yaml:%d: ", line);
	if (strncmp(f->err, where, strlen(where)) || !strstr(f->err, what))
		fail_msg("error '%s' lacks '%s' or '%s'", f->err, where, what);
}

/* Compare through the canonical text: address, prefix and ports at once. */
static void assert_spec(const struct allow_spec *s, const char *want)
{
	char buf[128];

	assert_int_equal(spec_format(s, buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);
}

static void string_items_get_default_ports(void **state)
{
	struct fixture *f = *state;

	parse_ok(f, "version: 1\n"
		    "cidrs:\n"
		    "  - 203.0.113.7\n"
		    "  - 10.0.0.0/8:22\n"
		    "  - \"2001:db8::/32\"\n"
		    "  - \"[2001:db8::1]:8443\"\n");
	assert_int_equal(f->p.nspecs, 4);
	assert_spec(&f->p.specs[0], "203.0.113.7:443,80");
	assert_spec(&f->p.specs[1], "10.0.0.0/8:22");
	assert_spec(&f->p.specs[2], "[2001:db8::/32]:443,80");
	assert_spec(&f->p.specs[3], "[2001:db8::1]:8443");
}

static void mapping_items(void **state)
{
	struct fixture *f = *state;

	parse_ok(f, "cidrs:\n"
		    "  - cidr: 198.51.100.0/24\n"
		    "    ports: [8443, \"9000-9100\"]\n"
		    "  - {cidr: 198.51.100.9}\n"
		    "  - {cidr: 198.51.100.10, ports: 25}\n"
		    "  - {cidr: 198.51.100.11, ports: any}\n");
	assert_int_equal(f->p.nspecs, 4);
	assert_spec(&f->p.specs[0], "198.51.100.0/24:8443,9000-9100");
	assert_spec(&f->p.specs[1], "198.51.100.9:443,80");
	assert_spec(&f->p.specs[2], "198.51.100.10:25");
	assert_spec(&f->p.specs[3], "198.51.100.11");	/* any port */
}

static void top_level_ports(void **state)
{
	struct fixture *f = *state;

	/* Given after the list, it still applies; explicit ports win. */
	parse_ok(f, "cidrs:\n"
		    "  - 203.0.113.1\n"
		    "  - 203.0.113.2:22\n"
		    "  - {cidr: 203.0.113.3, ports: [25]}\n"
		    "ports: [8080, 8000-8001]\n");
	assert_int_equal(f->p.nspecs, 3);
	assert_spec(&f->p.specs[0], "203.0.113.1:8080,8000-8001");
	assert_spec(&f->p.specs[1], "203.0.113.2:22");
	assert_spec(&f->p.specs[2], "203.0.113.3:25");
}

static void top_level_ports_scalar_and_any(void **state)
{
	struct fixture *f = *state;

	parse_ok(f, "ports: 8080\ncidrs: [203.0.113.1]\n");
	assert_int_equal(f->p.nspecs, 1);
	assert_spec(&f->p.specs[0], "203.0.113.1:8080");

	parse_ok(f, "ports: any\ncidrs: [203.0.113.2, 203.0.113.3:53]\n");
	assert_int_equal(f->p.nspecs, 3);
	assert_spec(&f->p.specs[1], "203.0.113.2");	/* any port */
	assert_spec(&f->p.specs[2], "203.0.113.3:53");
	/* Parsing more leaves earlier entries alone. */
	assert_spec(&f->p.specs[0], "203.0.113.1:8080");
}

static void rejects_unknown_keys(void **state)
{
	struct fixture *f = *state;

	parse_fails(f, "version: 1\ncidrs: []\ncidr: [1.2.3.4]\n", 3,
		    "unknown key 'cidr'");
	parse_fails(f, "cidrs:\n  - cidr: 1.2.3.4\n    port: 443\n", 3,
		    "unknown key 'port'");
}

static void rejects_bad_values(void **state)
{
	struct fixture *f = *state;

	parse_fails(f, "version: 2\ncidrs: [1.2.3.4]\n", 1, "version");
	parse_fails(f, "version: [1]\n", 1, "version");
	parse_fails(f, "cidrs:\n  - 1.2.3.4\n  - example.com\n", 3, "example.com");
	parse_fails(f, "cidrs:\n  - 10.0.0.1/8\n", 2, "host bits");
	parse_fails(f, "cidrs: 1.2.3.4\n", 1, "list");
	parse_fails(f, "- 1.2.3.4\n", 1, "mapping");
	parse_fails(f, "cidrs:\n  - {ports: [443]}\n", 2, "cidr");
	parse_fails(f, "cidrs:\n  - {cidr: 1.2.3.4:80, ports: [443]}\n", 2,
		    "twice");
	parse_fails(f, "cidrs:\n  - {cidr: 1.2.3.4, ports: []}\n", 2, "empty");
	parse_fails(f, "cidrs:\n  - {cidr: 1.2.3.4, ports: [0]}\n", 2, "port");
	parse_fails(f, "ports: [1, 2, 3, 4, 5, 6, 7, 8, 9]\n", 1, "more than");
	parse_fails(f, "ports: {a: 1}\n", 1, "ports");
}

static void reports_syntax_error(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(parse(f, "cidrs: [1.2.3.4\n"), -EINVAL);
	assert_int_equal(strncmp(f->err, "t.yaml:", 7), 0);
	assert_int_equal(f->p.nspecs, 0);

	assert_int_equal(parse(f, "cidrs:\n  - a\n - b\n"), -EINVAL);
	assert_int_equal(strncmp(f->err, "t.yaml:", 7), 0);
}

static void empty_allows_nothing(void **state)
{
	struct fixture *f = *state;

	parse_ok(f, "");
	assert_int_equal(f->p.nspecs, 0);
	parse_ok(f, "# nothing here\n");
	assert_int_equal(f->p.nspecs, 0);
	parse_ok(f, "version: 1\ncidrs: []\n");
	assert_int_equal(f->p.nspecs, 0);
}

static void limits_entries(void **state)
{
	struct fixture *f = *state;
	size_t i, cap = 16 + (POLICY_MAX_SPECS + 1) * 24, off;
	char *yaml = malloc(cap);

	assert_non_null(yaml);
	off = (size_t)sprintf(yaml, "cidrs:\n");
	for (i = 0; i < POLICY_MAX_SPECS; i++)
		off += (size_t)sprintf(yaml + off, "  - 10.%zu.%zu.1\n",
				       i / 256, i % 256);
	parse_ok(f, yaml);
	assert_int_equal(f->p.nspecs, POLICY_MAX_SPECS);

	policy_free(&f->p);
	sprintf(yaml + off, "  - 11.0.0.1\n");
	parse_fails(f, yaml, POLICY_MAX_SPECS + 2, "more than");
	assert_true(f->p.nspecs <= POLICY_MAX_SPECS);
	free(yaml);
}

/* --- policy_load_file --- */

static char tmpdir[64];

static int dir_setup(void **state)
{
	strcpy(tmpdir, "/tmp/egret-test-policy-XXXXXX");
	if (!mkdtemp(tmpdir))
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
	f->err[0] = '\0';
	return policy_load_file(&f->p, path, f->err, sizeof(f->err));
}

static void load_good_file(void **state)
{
	struct fixture *f = *state;
	const char *path = write_file("ok.yaml", "cidrs: [203.0.113.1]\n", 0644);

	assert_int_equal(load(f, path), 0);
	assert_int_equal(f->p.nspecs, 1);
	assert_spec(&f->p.specs[0], "203.0.113.1:443,80");

	/* Errors from the text name the file. */
	path = write_file("bad.yaml", "cidrs: [nope]\n", 0600);
	assert_int_equal(load(f, path), -EINVAL);
	assert_non_null(strstr(f->err, "bad.yaml:1:"));
}

static void load_refuses_writable(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(load(f, write_file("a.yaml", "cidrs: [1.2.3.4]\n", 0666)),
			 -EPERM);
	assert_int_equal(load(f, write_file("b.yaml", "cidrs: [1.2.3.4]\n", 0620)),
			 -EPERM);
	assert_int_equal(load(f, write_file("c.yaml", "cidrs: [1.2.3.4]\n", 0602)),
			 -EPERM);
	assert_true(f->err[0]);
	assert_int_equal(f->p.nspecs, 0);
}

static void load_refuses_foreign_owner(void **state)
{
	struct fixture *f = *state;
	const char *path;

	if (geteuid() != 0) {
		print_message("skipped: chown to nobody needs root\n");
		skip();
	}
	path = write_file("nobody.yaml", "cidrs: [1.2.3.4]\n", 0644);
	assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(load(f, path), -EPERM);
	assert_int_equal(f->p.nspecs, 0);
}

static void load_refuses_non_files(void **state)
{
	struct fixture *f = *state;
	char path[128];
	int r;

	r = load(f, tmpdir);
	assert_true(r < 0);
	assert_true(f->err[0]);

	snprintf(path, sizeof(path), "%s/missing.yaml", tmpdir);
	assert_int_equal(load(f, path), -ENOENT);
	assert_true(f->err[0]);
	assert_int_equal(f->p.nspecs, 0);
}

static void load_refuses_huge(void **state)
{
	struct fixture *f = *state;
	const char *path = write_file("big.yaml", "cidrs: []\n", 0644);

	assert_int_equal(truncate(path, POLICY_MAX_FILE_SIZE + 1), 0);
	assert_int_equal(load(f, path), -EFBIG);
}

/* hosts: strings and mappings, default ports, wildcards, rejections. */
static void host_items(void **state)
{
	struct fixture *f = *state;

	parse_ok(f, "ports: [8443]\n"
		    "hosts:\n"
		    "  - GitHub.com\n"
		    "  - \"*.npmjs.org:443\"\n"
		    "  - {host: registry.yarnpkg.com, ports: [443, 80]}\n");
	assert_int_equal(f->p.nspecs, 0);
	assert_int_equal(f->p.nhosts, 3);
	assert_string_equal(f->p.hosts[0].name, "github.com");
	assert_int_equal(f->p.hosts[0].nports, 1);	/* the policy default */
	assert_int_equal(f->p.hosts[0].ports[0].lo, 8443);
	assert_true(f->p.hosts[1].wildcard);
	assert_string_equal(f->p.hosts[1].name, "npmjs.org");
	assert_int_equal(f->p.hosts[1].ports[0].lo, 443);
	assert_int_equal(f->p.hosts[2].nports, 2);

	parse_fails(f, "hosts:\n  - \"*.com\"\n", 2, "wildcard");
	parse_fails(f, "hosts:\n  - {name: a.test}\n", 2, "unknown key 'name'");
	parse_fails(f, "hosts: github.com\n", 1, "want a list");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(string_items_get_default_ports, setup, teardown),
		cmocka_unit_test_setup_teardown(mapping_items, setup, teardown),
		cmocka_unit_test_setup_teardown(top_level_ports, setup, teardown),
		cmocka_unit_test_setup_teardown(top_level_ports_scalar_and_any, setup, teardown),
		cmocka_unit_test_setup_teardown(rejects_unknown_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(rejects_bad_values, setup, teardown),
		cmocka_unit_test_setup_teardown(reports_syntax_error, setup, teardown),
		cmocka_unit_test_setup_teardown(empty_allows_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(limits_entries, setup, teardown),
		cmocka_unit_test_setup_teardown(host_items, setup, teardown),
		cmocka_unit_test_setup_teardown(load_good_file, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(load_refuses_writable, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(load_refuses_foreign_owner, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(load_refuses_non_files, dir_setup, dir_teardown),
		cmocka_unit_test_setup_teardown(load_refuses_huge, dir_setup, dir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
