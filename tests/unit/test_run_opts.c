// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_run_opts.c - the `egret run` command line. Failures log to stderr. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "attempt/options.h"

/* Parse a NULL-terminated argv into a fresh @o; the caller frees it. */
#define PARSE(o, ...) ({						\
	char *argv_[] = { "run", __VA_ARGS__, NULL };			\
	*(o) = (struct run_opts){};					\
	run_opts_parse((int)(sizeof(argv_) / sizeof(argv_[0])) - 1,	\
		       argv_, (o));					\
})

/* Only the return value matters: parse, free, return. */
#define PARSE_RC(...) ({						\
	struct run_opts o_;						\
	int r_ = PARSE(&o_, __VA_ARGS__);				\
	run_opts_free(&o_);						\
	r_;								\
})

/* --umask is octal, the permission bits only; --view takes no value. */
static void umask_and_view(void **state)
{
	struct run_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "--", "true"), 0);
	assert_int_equal(o.umask, -1);
	assert_false(o.view);
	run_opts_free(&o);
	assert_int_equal(PARSE(&o, "--umask=0002", "--view", "--view-owner", "1000:1000",
			       "--", "true"), 0);
	assert_int_equal(o.umask, 02);
	assert_true(o.view);
	assert_string_equal(o.view_owner, "1000:1000");
	run_opts_free(&o);
	assert_int_equal(PARSE_RC("--umask", "777", "--", "true"), 0);
	assert_int_equal(PARSE_RC("--umask", "1000", "--", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--umask", "8", "--", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--umask", "", "--", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--umask", "-1", "--", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--umask", "u=rwx", "--", "true"), -EINVAL);
}

/* --pty-size is COLSxROWS, each 1..4096, and asks for a pty. */
static void pty_size(void **state)
{
	static char *const bad[] = { "0x50", "80x0", "80x", "x24", "80x24x", "+80x24",
				     "80x-24", "80 x24", "4097x24", "80X24", "" };
	struct run_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "--pty-size", "132x50", "--", "true"), 0);
	assert_int_equal(o.pty_cols, 132);
	assert_int_equal(o.pty_rows, 50);
	assert_true(o.pty);
	run_opts_free(&o);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(PARSE_RC("--pty-size", bad[i], "--", "true"), -EINVAL);
}

static void allows_and_command(void **state)
{
	struct run_opts o;
	char buf[64];

	assert_int_equal(PARSE(&o, "--allow", "203.0.113.1",
			       "--allow=10.0.0.0/8:443", "--allow",
			       "[2001:db8::1]:80", "--", "curl", "-s", "x"), 0);
	assert_int_equal(o.cli.nspecs, 3);
	assert_int_equal(spec_format(&o.cli.specs[0], buf, sizeof(buf)), 0);
	assert_string_equal(buf, "203.0.113.1");
	assert_int_equal(spec_format(&o.cli.specs[1], buf, sizeof(buf)), 0);
	assert_string_equal(buf, "10.0.0.0/8:443");
	assert_int_equal(spec_format(&o.cli.specs[2], buf, sizeof(buf)), 0);
	assert_string_equal(buf, "[2001:db8::1]:80");
	assert_string_equal(o.argv[0], "curl");
	assert_string_equal(o.argv[2], "x");
	assert_null(o.argv[3]);
	/* Not given: -1, so the policy, then the defaults, apply. */
	assert_int_equal(o.max_entries, -1);
	assert_int_equal(o.max_cidrs, -1);
	assert_null(o.id);
	assert_null(o.user);
	assert_false(o.allow_root);
	run_opts_free(&o);

	/* Hostnames are host rules; a wildcard over a whole TLD is refused. */
	assert_int_equal(PARSE(&o, "--allow", "Example.COM.", "--allow",
			       "*.githubusercontent.com:443", "--", "true"), 0);
	assert_int_equal(o.cli.nspecs, 0);
	assert_int_equal(o.cli.nhosts, 2);
	assert_string_equal(o.cli.hosts[0].name, "example.com");
	assert_false(o.cli.hosts[0].wildcard);
	assert_int_equal(o.cli.hosts[0].nports, 0);
	assert_string_equal(o.cli.hosts[1].name, "githubusercontent.com");
	assert_true(o.cli.hosts[1].wildcard);
	assert_int_equal(o.cli.hosts[1].nports, 1);
	assert_int_equal(o.cli.hosts[1].ports[0].lo, 443);
	run_opts_free(&o);
	assert_int_equal(PARSE_RC("--allow", "*.com", "--", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--allow", "exa mple.com", "--", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--allow", "1.2.3.4:0", "--", "true"), -EINVAL);
}

static void plain_options(void **state)
{
	struct run_opts o;

	assert_int_equal(PARSE(&o, "--user", "nobody:nogroup", "--allow-root",
			       "--id", "build-42", "--cgroup-parent",
			       "/sys/fs/cgroup/ci", "-v", "true"), 0);
	assert_string_equal(o.user, "nobody:nogroup");
	assert_true(o.allow_root);
	assert_string_equal(o.id, "build-42");
	assert_string_equal(o.cgroup_parent, "/sys/fs/cgroup/ci");
	assert_string_equal(o.argv[0], "true");
	assert_int_equal(o.cli.nspecs, 0);
	run_opts_free(&o);
}

/* --allow-unix takes abstract names only, up to 107 bytes, and the new
 * switches are plain flags. */
static void unix_names_and_flags(void **state)
{
	char longest[109], too_long[110];
	struct run_opts o;

	memset(longest, 'n', sizeof(longest));
	longest[0] = '@';
	longest[108] = '\0';
	memset(too_long, 'n', sizeof(too_long));
	too_long[0] = '@';
	too_long[109] = '\0';
	assert_int_equal(PARSE(&o, "--allow-unix", "@/tmp/.X11-unix/X0", "--allow-unix",
			       longest, "--pty", "--allow-shared-uid",
			       "--allow-unconfined-unix", "true"), 0);
	assert_int_equal(o.nunix_names, 2);
	assert_int_equal(o.unix_names[0].len, 17);
	assert_memory_equal(o.unix_names[0].name, "/tmp/.X11-unix/X0", 17);
	assert_int_equal(o.unix_names[1].len, 107);
	assert_int_equal(o.unix_names[1].name[107], 0);
	assert_true(o.pty && o.allow_shared_uid && o.allow_unconfined_unix);
	run_opts_free(&o);
	assert_int_equal(PARSE_RC("--allow-unix", "/run/docker.sock", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--allow-unix", "@", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--allow-unix", too_long, "true"), -EINVAL);
}

static void id_validation(void **state)
{
	char id64[65], id65[66];

	memset(id64, 'a', 64);
	id64[64] = '\0';
	memset(id65, 'a', 65);
	id65[65] = '\0';

	assert_int_equal(PARSE_RC("--id", "A-b_c.1", "true"), 0);
	assert_int_equal(PARSE_RC("--id", id64, "true"), 0);
	assert_int_equal(PARSE_RC("--id", id65, "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--id", "../x", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--id", ".x", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--id", "-x", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--id=-x", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--id", "a/b", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--id", "", "true"), -EINVAL);
}

static void cgroup_parent_absolute(void **state)
{
	assert_int_equal(PARSE_RC("--cgroup-parent", "/sys/fs/cgroup/x", "true"), 0);
	assert_int_equal(PARSE_RC("--cgroup-parent", "sys/fs/cgroup/x", "true"),
			 -EINVAL);
	assert_int_equal(PARSE_RC("--cgroup-parent", "", "true"), -EINVAL);
}

static void max_entries_bounds(void **state)
{
	struct run_opts o;

	assert_int_equal(PARSE(&o, "--max-entries", "1", "true"), 0);
	assert_int_equal(o.max_entries, 1);
	run_opts_free(&o);
	assert_int_equal(PARSE(&o, "--max-entries", "16777216", "--max-cidrs",
			       "7", "true"), 0);
	assert_int_equal(o.max_entries, 16777216);
	assert_int_equal(o.max_cidrs, 7);
	run_opts_free(&o);

	assert_int_equal(PARSE_RC("--max-entries", "0", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--max-entries", "16777217", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--max-entries", "12x", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--max-entries", "-1", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--max-entries", "", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--max-entries", "99999999999999999999999",
				  "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--max-cidrs", "0", "true"), -EINVAL);
}

/* --upload-limit: a size; given twice (egretd's ceiling, then the
 * caller's), the smaller stands whichever comes first. */
static void upload_limit_smallest(void **state)
{
	struct run_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, "true"), 0);
	assert_int_equal(o.upload_limit, 0);
	run_opts_free(&o);
	assert_int_equal(PARSE(&o, "--upload-limit", "1M", "true"), 0);
	assert_int_equal(o.upload_limit, 1048576);
	run_opts_free(&o);
	assert_int_equal(PARSE(&o, "--upload-limit=256K", "--upload-limit=10M", "true"), 0);
	assert_int_equal(o.upload_limit, 262144);
	run_opts_free(&o);
	assert_int_equal(PARSE(&o, "--upload-limit=10M", "--upload-limit=256K", "true"), 0);
	assert_int_equal(o.upload_limit, 262144);
	run_opts_free(&o);
	assert_int_equal(PARSE_RC("--upload-limit", "0", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--upload-limit", "1.5M", "true"), -EINVAL);
}

static void command_required(void **state)
{
	assert_int_equal(PARSE_RC("--allow", "1.2.3.4"), -EINVAL);
	assert_int_equal(PARSE_RC("--allow", "1.2.3.4", "--"), -EINVAL);
}

static void unknown_option(void **state)
{
	assert_int_equal(PARSE_RC("--bogus", "--", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("-x", "--", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--allow"), -EINVAL);	/* missing argument */
}

static void command_options_not_parsed(void **state)
{
	struct run_opts o;

	assert_int_equal(PARSE(&o, "--allow", "1.2.3.4", "--", "sh", "-c", "x",
			       "--allow"), 0);
	assert_int_equal(o.cli.nspecs, 1);
	assert_string_equal(o.argv[0], "sh");
	assert_string_equal(o.argv[1], "-c");
	assert_string_equal(o.argv[3], "--allow");
	assert_null(o.argv[4]);
	run_opts_free(&o);

	/* Without "--", options stop at COMMAND too. */
	assert_int_equal(PARSE(&o, "ls", "--help", "--id", "../x"), 0);
	assert_string_equal(o.argv[0], "ls");
	assert_string_equal(o.argv[1], "--help");
	assert_null(o.id);
	run_opts_free(&o);

	/* A second "--" belongs to COMMAND. */
	assert_int_equal(PARSE(&o, "--", "--", "x"), 0);
	assert_string_equal(o.argv[0], "--");
	run_opts_free(&o);
}

static void help(void **state)
{
	int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY);
	int r1, r2;

	/* The usage text goes to stdout; keep it out of the test report. */
	assert_true(saved >= 0 && null >= 0);
	fflush(stdout);
	dup2(null, STDOUT_FILENO);
	r1 = PARSE_RC("--help");
	r2 = PARSE_RC("-h", "--", "true");
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(null);
	assert_int_equal(r1, 1);
	assert_int_equal(r2, 1);
}

/* --repo and --git-remote are checked while parsing; the policy file is
 * read later (effective.c), so naming one is not an error here. */
static void repo_and_remote(void **state)
{
	struct run_opts o;

	assert_int_equal(PARSE(&o, "--repo", "owner/name", "--git-remote",
			       "git@github.com:owner/name.git", "--policy",
			       "/nonexistent/egret.yaml", "--", "true"), 0);
	assert_string_equal(o.repo, "owner/name");
	assert_true(o.has_remote);
	assert_string_equal(o.remote.host, "github.com");
	assert_int_equal(o.remote.port, 22);
	assert_string_equal(o.policy_file, "/nonexistent/egret.yaml");
	run_opts_free(&o);

	assert_int_equal(PARSE_RC("--repo", "no-slash", "--", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--repo", "a/b/c", "--", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--git-remote", "/srv/git/repo", "--", "true"), -EINVAL);
	assert_int_equal(PARSE_RC("--git-remote", "file:///srv/repo", "--", "true"), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(allows_and_command),
		cmocka_unit_test(plain_options),
		cmocka_unit_test(unix_names_and_flags),
		cmocka_unit_test(id_validation),
		cmocka_unit_test(cgroup_parent_absolute),
		cmocka_unit_test(max_entries_bounds),
		cmocka_unit_test(upload_limit_smallest),
		cmocka_unit_test(umask_and_view),
		cmocka_unit_test(pty_size),
		cmocka_unit_test(command_required),
		cmocka_unit_test(unknown_option),
		cmocka_unit_test(command_options_not_parsed),
		cmocka_unit_test(help),
		cmocka_unit_test(repo_and_remote),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
