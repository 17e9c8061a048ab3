// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_run_argv.c - the command line egretd writes for a request
 * (daemon/run_argv.c) and the checked array it writes into (lib/strv.c).
 * The largest request the wire admits, from a caller whose entry has
 * allow, audit, cache and upload_limit, is written whole and parsed by
 * egret run, or refused; never written past its array (build it with
 * -fsanitize=address to see that: issue 39 found one slot too few).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "attempt/options.h"
#include "attempt/run_options.h"
#include "daemon/run_argv.h"
#include "daemon/wire.h"
#include "lib/strv.h"

/* Large (about 81 KiB each): static. */
static struct wire_msg req, got;
static uint8_t buf[WIRE_MAX];
static char allow[WIRE_ALLOW_MAX][WIRE_ALLOW_LEN_MAX + 1];
static char option[WIRE_OPTION_MAX][32];
static char arg[WIRE_ARGV_MAX][24];
static char env[WIRE_ENV_MAX][16];
static char cwd[WIRE_CWD_MAX + 1];
static char repo[WIRE_REPO_MAX + 1];

static const struct daemon_caller caller = {
	.uid = 1000, .allow = true, .audit = true,
	.cache = "/home/miner/.cache", .upload_limit = 64 << 20,
};
static struct daemon_peer peer = { .uid = 1000, .gid = 1000 };
static const struct run_argv_from from = {
	.uid = 70001, .peer = &peer, .caller = &caller,
	.cgroup_mount = "/sys/fs/cgroup", .state_dir = "/var/lib/egret",
};

/* "hNNaaa...aaa:443": a host name of 251 bytes in labels of at most
 * 63, so that the entry is ALLOW's 255. */
static void fill_allow(char *out, size_t i)
{
	size_t host = WIRE_ALLOW_LEN_MAX - strlen(":443");

	memset(out, 'a', host);
	out[0] = 'h';
	out[1] = (char)('0' + i / 10);
	out[2] = (char)('0' + i % 10);
	for (size_t dot = 63; dot < host; dot += 64)
		out[dot] = '.';
	strcpy(out + host, ":443");
}

/*
 * Every field of a RUN at its limit: each repeated field's count, CWD
 * and REPO and ALLOW's items at their length, AUDIT and PTY; OPTION's
 * items are --setenv and --pass-env, as many as egret run's parser takes
 * of each.
 * Encoded and decoded, as egretd reads it, into got.
 */
static void largest_request(void)
{
	struct wire_run *r = &req.run;
	char err[256];
	int n;

	memset(&req, 0, sizeof(req));
	req.type = WIRE_RUN;
	for (size_t i = 0; i < WIRE_ARGV_MAX; i++) {
		snprintf(arg[i], sizeof(arg[i]), i ? "argument-%05zu" : "true", i);
		r->argv[r->argc++] = arg[i];
	}
	for (size_t i = 0; i < WIRE_ENV_MAX; i++) {
		snprintf(env[i], sizeof(env[i]), "V%04zu=x", i);
		r->env[r->envc++] = env[i];
	}
	memset(cwd, 'w', WIRE_CWD_MAX);
	for (size_t i = 0; i < WIRE_CWD_MAX; i += 200)
		cwd[i] = '/';
	r->cwd = cwd;
	memset(repo, 'r', WIRE_REPO_MAX);
	repo[5] = '/';
	r->repo = repo;
	for (size_t i = 0; i < WIRE_ALLOW_MAX; i++) {
		fill_allow(allow[i], i);
		r->allow[r->nallow++] = allow[i];
	}
	r->audit = r->pty = true;
	for (size_t i = 0; i < WIRE_OPTION_MAX; i++) {
		snprintf(option[i], sizeof(option[i]), i % 2 ? "setenv=S%03zu=v" : "pass-env=P%03zu",
			 i);
		r->option[r->noption++] = option[i];
	}
	n = wire_encode(&req, buf, sizeof(buf), err, sizeof(err));
	if (n < 0)
		fail_msg("the largest request does not encode: %s", err);
	if (wire_decode(buf, (size_t)n, &got, err, sizeof(err)) < 0)
		fail_msg("the largest request does not decode: %s", err);
}

/* The words egretd writes for it, as the request and the caller's entry
 * ask: "run"; --view, --user, --view-owner, --view-cache, --upload-limit,
 * --cgroup-parent, --state-dir; --repo, --chdir, --audit, --pty; each
 * ALLOW and OPTION; "--"; COMMAND's words. */
#define LARGEST_WORDS	(1 + 7 + 4 + WIRE_ALLOW_MAX + WIRE_OPTION_MAX + 1 + WIRE_ARGV_MAX)

/* Served: written whole within its capacity, and egret run takes it. */
static void largest_request_served(void **state)
{
	struct strv argv;
	struct run_opts o = {};

	(void)state;
	largest_request();
	strcpy(peer.cgroup, "/user.slice/user-1000.slice/session-1.scope");
	assert_int_equal(strv_init(&argv, daemon_run_argv_max()), 0);
	assert_int_equal(daemon_run_argv(&argv, &got.run, &from), 0);
	assert_int_equal(argv.n, LARGEST_WORDS);
	assert_true(argv.n <= argv.cap);
	assert_null(argv.v[argv.n]);
	assert_string_equal(argv.v[0], "run");
	assert_string_equal(argv.v[argv.n - WIRE_ARGV_MAX - 1], "--");
	assert_string_equal(argv.v[argv.n - 1], got.run.argv[WIRE_ARGV_MAX - 1]);
	/* Every word is an option egret run has (the table's), with a value
	 * it takes: the attempt could start. */
	assert_int_equal(run_opts_parse((int)argv.n, argv.v, &o), 0);
	assert_string_equal(o.user, "70001");
	assert_true(o.view && o.audit && o.pty);
	assert_int_equal(o.env.nset + o.env.npass, WIRE_OPTION_MAX);
	assert_int_equal(o.upload_limit, 64 << 20);
	assert_int_equal(o.argv - argv.v, (long)(argv.n - WIRE_ARGV_MAX));
	run_opts_free(&o);
	strv_free(&argv);
}

/* One word short: refused with -E2BIG, nothing written past the array. */
static void too_small_refused(void **state)
{
	struct strv argv;

	(void)state;
	largest_request();
	assert_int_equal(strv_init(&argv, LARGEST_WORDS - 1), 0);
	assert_int_equal(daemon_run_argv(&argv, &got.run, &from), -E2BIG);
	assert_int_equal(argv.n, LARGEST_WORDS - 1);
	assert_null(argv.v[argv.n]);
	strv_free(&argv);
}

/* The capacity is the table's and the wire's, not a count kept by hand:
 * whatever the request, what egretd writes fits it. */
static void capacity_from_table(void **state)
{
	(void)state;
	assert_true(daemon_run_argv_max() >= LARGEST_WORDS);
}

/* A minimal request: only egretd's words, the CWD and COMMAND. */
static void smallest_request(void **state)
{
	static const struct daemon_caller plain = { .uid = 1000 };
	struct run_argv_from f = from;
	struct wire_run *r = &req.run;
	struct strv argv;

	(void)state;
	f.caller = &plain;
	strcpy(peer.cgroup, "/");
	memset(&req, 0, sizeof(req));
	r->argv[r->argc++] = "id";
	r->cwd = "/work";
	assert_int_equal(strv_init(&argv, daemon_run_argv_max()), 0);
	assert_int_equal(daemon_run_argv(&argv, r, &f), 0);
	assert_int_equal(argv.n, 9);
	assert_string_equal(argv.v[1], "--view");
	assert_string_equal(argv.v[2], "--user=70001");
	assert_string_equal(argv.v[3], "--chdir=/work");
	assert_string_equal(argv.v[4], "--view-owner=1000:1000");
	assert_string_equal(argv.v[5], "--cgroup-parent=/sys/fs/cgroup");
	assert_string_equal(argv.v[6], "--state-dir=/var/lib/egret");
	assert_string_equal(argv.v[7], "--");
	assert_string_equal(argv.v[8], "id");
	assert_null(argv.v[9]);
	strv_free(&argv);
}

/* Full is -E2BIG, and the first failure sticks; the array always ends
 * in NULL; a zeroed strv holds nothing and frees fine. */
static void strv_checked(void **state)
{
	struct strv s = {};

	(void)state;
	assert_int_equal(strv_add(&s, "x"), -E2BIG);
	strv_free(&s);
	assert_int_equal(strv_init(&s, 2), 0);
	assert_int_equal(strv_add(&s, "a"), 0);
	assert_int_equal(strv_addf(&s, "--%s=%d", "n", 7), 0);
	assert_int_equal(strv_add(&s, "c"), -E2BIG);
	assert_int_equal(strv_addf(&s, "%s", "d"), -E2BIG);
	assert_int_equal(strv_fail(&s, -EINVAL), -E2BIG);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.v[1], "--n=7");
	assert_null(s.v[2]);
	strv_free(&s);
	assert_null(s.v);
	assert_int_equal(strv_init(&s, 4), 0);
	assert_int_equal(strv_fail(&s, -EINVAL), -EINVAL);
	assert_int_equal(strv_add(&s, "a"), -EINVAL);
	assert_int_equal(s.n, 0);
	strv_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(largest_request_served),
		cmocka_unit_test(too_small_refused),
		cmocka_unit_test(capacity_from_table),
		cmocka_unit_test(smallest_request),
		cmocka_unit_test(strv_checked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
