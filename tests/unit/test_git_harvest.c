// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_git_harvest.c - egret git's argv (git/harvest.h): the base options,
 * what the repository's own configuration needs overridden (the miner's
 * value first, else a neutral one; credential helpers reset and given
 * back), what makes it refuse, the command table, the checked appends.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "git/harvest.h"

/* A listing as `git config --list --show-scope -z` prints it, from
 * "SCOPE KEY=VALUE" lines (a line without '=' has no value). */
static size_t listing(char *buf, size_t len, const char *const *lines)
{
	size_t at = 0;

	for (; *lines; lines++) {
		const char *sp = strchr(*lines, ' '), *eq = strchr(sp + 1, '=');

		at += (size_t)snprintf(buf + at, len - at, "%.*s", (int)(sp - *lines), *lines) + 1;
		if (eq)
			at += (size_t)snprintf(buf + at, len - at, "%.*s\n%s", (int)(eq - sp - 1),
					       sp + 1, eq + 1) + 1;
		else
			at += (size_t)snprintf(buf + at, len - at, "%s", sp + 1) + 1;
	}
	return at;
}

/* The "-c" values of @h after its first @from words, joined by spaces. */
static const char *overrides(const struct git_harvest *h, size_t from, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (size_t i = from; i + 1 < h->argc; i++)
		if (!strcmp(h->argv[i], "-c"))
			at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? " " : "", h->argv[++i]);
	return buf;
}

static int scan(struct git_harvest *h, const char *const *lines, char *err, size_t errlen)
{
	static char text[8192];
	size_t n = listing(text, sizeof(text), lines);

	git_harvest_init(h, "/usr/bin/git");
	return git_harvest_scan(h, text, n, err, errlen);
}

static void base_options(void **state)
{
	struct git_harvest h;
	char buf[2048];

	git_harvest_init(&h, "/usr/bin/git");
	assert_int_equal(git_harvest_base(&h), 0);
	assert_string_equal(h.argv[0], "/usr/bin/git");
	assert_string_equal(h.argv[1], "--no-pager");
	overrides(&h, 0, buf, sizeof(buf));
	assert_non_null(strstr(buf, "core.fsmonitor=false"));
	assert_non_null(strstr(buf, "core.hooksPath=/dev/null"));
	assert_non_null(strstr(buf, "diff.ignoreSubmodules=all"));
	assert_non_null(strstr(buf, "submodule.recurse=false"));
	assert_non_null(strstr(buf, "protocol.ext.allow=never"));
	assert_null(h.argv[h.argc]);
	git_harvest_free(&h);
}

/* The repository's filter and textconv: neutral, or the miner's own. */
static void repository_programs_replaced(void **state)
{
	static const char *const lines[] = {
		"global filter.lfs.clean=git-lfs clean -- %f",
		"local filter.lfs.clean=evil clean",
		"local filter.evil.smudge=evil smudge",
		"local filter.evil.smudge=evil again",
		"local diff.img.textconv=evil textconv",
		"local core.sshcommand=evil ssh",
		"worktree http.proxy=http://evil:3128",
		"local user.name=agent",
		"system core.askpass=/usr/lib/ssh/askpass",
		NULL,
	};
	struct git_harvest h;
	char err[256], buf[2048];

	assert_int_equal(scan(&h, lines, err, sizeof(err)), 0);
	assert_string_equal(overrides(&h, 0, buf, sizeof(buf)),
			    "filter.lfs.clean=git-lfs clean -- %f filter.evil.smudge= "
			    "diff.img.textconv=cat core.sshcommand=ssh http.proxy=");
	git_harvest_free(&h);
}

/* Credential helpers: each repository key reset, then the miner's given
 * back in their order. */
static void credential_helpers_reset(void **state)
{
	static const char *const lines[] = {
		"system credential.https://example.com.helper=store",
		"global credential.helper=cache",
		"local credential.helper=!evil",
		"local credential.https://forge.example.helper=!evil2",
		NULL,
	};
	struct git_harvest h;
	char err[256], buf[2048];

	assert_int_equal(scan(&h, lines, err, sizeof(err)), 0);
	assert_string_equal(overrides(&h, 0, buf, sizeof(buf)),
			    "credential.helper= credential.https://forge.example.helper= "
			    "credential.https://example.com.helper=store credential.helper=cache");
	git_harvest_free(&h);
}

/* Keys no later value undoes: refused, with the key named. The miner's
 * own (global) are not the repository's business. */
static void refused_keys(void **state)
{
	static const char *const refused[] = {
		"local url.ssh://evil/.insteadof=https://forge/",
		"local url.x.pushinsteadof=y",
		"local core.gitproxy=evil for example.com",
		"worktree diff.external=evil",
		"local diff.x.command=evil",
		"local merge.x.driver=evil %A",
		"local hook.pre-commit.command=evil",
		"local remote.origin.vcs=evil",
		"local trailer.sign.cmd=evil",
		"local gpg.ssh.defaultkeycommand=evil",
	};
	struct git_harvest h;
	char err[256];

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		const char *lines[] = { "global url.a.insteadof=b", refused[i], NULL };
		char key[128];

		sscanf(strchr(refused[i], ' ') + 1, "%127[^=]", key);
		assert_int_equal(scan(&h, lines, err, sizeof(err)), -EPERM);
		assert_non_null(strstr(err, key));
		git_harvest_free(&h);
	}
	{
		const char *lines[] = { "global url.a.insteadof=b", "global diff.external=d", NULL };

		assert_int_equal(scan(&h, lines, err, sizeof(err)), 0);
		assert_int_equal(h.argc, 1);
		git_harvest_free(&h);
	}
}

/* A key -c cannot carry (an '=' in its subsection): refused. */
static void key_with_equals_refused(void **state)
{
	static const char text[] = "local\0credential.https://x/?a=b.helper\n!evil";
	struct git_harvest h;
	char err[256];

	git_harvest_init(&h, "/usr/bin/git");
	assert_int_equal(git_harvest_scan(&h, text, sizeof(text), err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "cannot override"));
	git_harvest_free(&h);
}

static void malformed_listing(void **state)
{
	struct git_harvest h;
	char err[256];

	git_harvest_init(&h, "/usr/bin/git");
	assert_int_equal(git_harvest_scan(&h, "local", 5, err, sizeof(err)), -EINVAL);
	assert_int_equal(git_harvest_scan(&h, "local\0", 6, err, sizeof(err)), -EINVAL);
	assert_int_equal(git_harvest_scan(&h, "", 0, err, sizeof(err)), 0);
	git_harvest_free(&h);
}

static void commands(void **state)
{
	char list[1024];

	assert_non_null(git_harvest_cmd("status"));
	assert_string_equal(git_harvest_cmd("diff")->adds[0], "--no-ext-diff");
	assert_string_equal(git_harvest_cmd("push")->adds[0], "--receive-pack=git-receive-pack");
	assert_null(git_harvest_cmd("st"));
	assert_null(git_harvest_cmd("submodule"));
	assert_null(git_harvest_cmd("-c"));
	git_harvest_cmd_list(list, sizeof(list));
	assert_non_null(strstr(list, "add, "));
}

static void appends_checked(void **state)
{
	struct git_harvest h;
	size_t pushed = 0;
	int r;

	git_harvest_init(&h, "/usr/bin/git");
	while ((r = git_harvest_push(&h, "x")) == 0)
		pushed++;
	assert_int_equal(r, -E2BIG);
	assert_int_equal(pushed + 1, GIT_HARVEST_ARGS_MAX);
	assert_null(h.argv[h.argc]);
	assert_int_equal(git_harvest_config(&h, "a.b", "c"), -E2BIG);
	git_harvest_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(base_options),
		cmocka_unit_test(repository_programs_replaced),
		cmocka_unit_test(credential_helpers_reset),
		cmocka_unit_test(refused_keys),
		cmocka_unit_test(key_with_equals_refused),
		cmocka_unit_test(malformed_listing),
		cmocka_unit_test(commands),
		cmocka_unit_test(appends_checked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
