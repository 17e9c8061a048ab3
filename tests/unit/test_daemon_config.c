// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_daemon_config.c - egretd.yaml: a full file, defaults, every refusal
 * with its exact message, loading, and what the config admits. */
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
#include <arpa/inet.h>

#include "daemon/config.h"

/* Lines 1-3 of most files below: what every valid file needs but callers. */
#define HEAD		"version: 1\nsocket:\n  group: root\n"
#define ONE_CALLER	"callers:\n  - uid: 1000\n"

static struct diag d;

static int parse(const char *text, struct daemon_config *c)
{
	memset(&d, 0, sizeof(d));
	return daemon_config_parse(text, strlen(text), "e.yaml", c, &d);
}

/* @text is refused with exactly the messages given, in order. */
static void refused(const char *text, int n, ...)
{
	struct daemon_config c = { .ncallers = 77 };
	va_list ap;

	assert_int_equal(parse(text, &c), -EINVAL);
	assert_int_equal(c.ncallers, 77);	/* not written on failure */
	if (d.n != n) {	/* say which file, and what came instead */
		print_message("  file: %s\n", text);
		for (int i = 0; i < d.n; i++)
			print_message("  got: %s\n", d.msg[i]);
	}
	assert_int_equal(d.n, n);
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		assert_string_equal(d.msg[i], va_arg(ap, const char *));
	va_end(ap);
}

static void test_full(void **state)
{
	struct daemon_config c;
	const struct daemon_caller *k;

	(void)state;
	assert_int_equal(parse(
		"# egretd's own configuration\n"
		"version: 1\n"
		"socket:\n"
		"  path: /run/egretd/test.sock\n"
		"  group: root\n"
		"attempts:\n"
		"  uids: 300000-300099\n"
		"  max: 8\n"
		"callers:\n"
		"  - uid: 1000\n"
		"    cgroup: /system.slice/docker-*\n"
		"    repos: [octo/app, \"acme/*\"]\n"
		"    allow: true\n"
		"    audit: yes\n"
		"    max: 4\n"
		"    cache: /var/cache/egret/miner\n"
		"    upload_limit: 64M\n"
		"  - user: root\n"
		"    cgroup: /user.slice/\n"
		"    repos: [\"*\"]\n"
		"    allow: no\n"
		"  - { uid: 1001, cgroup: / }\n", &c), 0);
	assert_int_equal(d.n, 0);
	assert_string_equal(c.socket_path, "/run/egretd/test.sock");
	assert_int_equal(c.socket_gid, 0);
	assert_int_equal(c.uid_first, 300000);
	assert_int_equal(c.uid_last, 300099);
	assert_int_equal(c.max, 8);
	assert_int_equal(c.ncallers, 3);
	assert_string_equal(c.node, "");	/* none: the host's name, at start */

	k = &c.callers[0];
	assert_int_equal(k->uid, 1000);
	assert_string_equal(k->cgroup, "/system.slice/docker-");
	assert_true(k->cgroup_literal);
	assert_int_equal(k->nrepos, 2);
	assert_string_equal(k->repos[0], "octo/app");
	assert_string_equal(k->repos[1], "acme/*");
	assert_true(k->allow);
	assert_true(k->audit);
	assert_int_equal(k->max, 4);
	assert_string_equal(k->cache, "/var/cache/egret/miner");
	assert_int_equal(k->upload_limit, 64ULL << 20);

	k = &c.callers[1];
	assert_null(k->cache);
	assert_int_equal(k->upload_limit, 0);
	assert_int_equal(k->uid, 0);	/* user: root, resolved at load */
	assert_string_equal(k->cgroup, "/user.slice");	/* trailing '/' dropped */
	assert_false(k->cgroup_literal);
	assert_int_equal(k->nrepos, 1);
	assert_false(k->allow);
	assert_false(k->audit);
	assert_int_equal(k->max, 8);	/* attempts.max */

	k = &c.callers[2];
	assert_int_equal(k->uid, 1001);
	assert_string_equal(k->cgroup, "/");
	assert_int_equal(k->nrepos, 0);
	assert_null(k->repos);
	daemon_config_free(&c);
	assert_int_equal(c.ncallers, 0);
	daemon_config_free(&c);	/* twice, and NULL: harmless */
	daemon_config_free(NULL);
}

static void test_defaults(void **state)
{
	struct daemon_config c;

	(void)state;
	assert_int_equal(parse("version: 1\nsocket: {group: 4}\ncallers: [{uid: 1000}]\n", &c), 0);
	assert_string_equal(c.socket_path, "/run/egretd/egret.sock");
	assert_int_equal(c.socket_gid, 4);
	assert_int_equal(c.uid_first, 200000);
	assert_int_equal(c.uid_last, 200999);
	assert_int_equal(c.max, 16);
	assert_int_equal(c.ncallers, 1);
	assert_int_equal(c.callers[0].uid, 1000);
	assert_null(c.callers[0].cgroup);
	assert_int_equal(c.callers[0].nrepos, 0);
	assert_false(c.callers[0].allow);
	assert_false(c.callers[0].audit);
	assert_int_equal(c.callers[0].max, 16);
	daemon_config_free(&c);

	/* One uid is a range of one; a caller may use all of attempts.max. */
	assert_int_equal(parse(HEAD "attempts: {uids: 4000, max: 1}\n"
			       "callers: [{uid: 1000, max: 1}]\n", &c), 0);
	assert_int_equal(c.uid_first, 4000);
	assert_int_equal(c.uid_last, 4000);
	assert_int_equal(c.callers[0].max, 1);
	daemon_config_free(&c);
}

/* One problem each, said at its position. */
struct refusal {
	const char *text;
	const char *msg;
};

static void refused_each(const struct refusal *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		refused(r[i].text, 1, r[i].msg);
}

static void test_refused_keys(void **state)
{
	static const struct refusal cases[] = {
		{ HEAD "callers:\n  - uid: 1000\n    repo: [octo/app]\n",
		  "e.yaml:6:5: unknown key 'repo' in a caller (did you mean 'repos'?)" },
		{ HEAD "attempts: {uids: 300000-300010, maximum: 2}\n" ONE_CALLER,
		  "e.yaml:4:33: unknown key 'maximum' in attempts" },
		{ HEAD "  pth: /run/egretd.sock\n" ONE_CALLER,
		  "e.yaml:4:3: unknown key 'pth' in socket (did you mean 'path'?)" },
		{ HEAD "  mode: 0660\n" ONE_CALLER,
		  "e.yaml:4:3: unknown key 'mode' in socket" },
		/* Duplicates: the second is refused, never silently the winner. */
		{ HEAD "version: 1\n" ONE_CALLER,
		  "e.yaml:4:1: duplicate key 'version' in the configuration" },
		{ HEAD "callers:\n  - uid: 1000\n    allow: false\n    allow: true\n",
		  "e.yaml:7:5: duplicate key 'allow' in a caller" },
		{ HEAD "  group: 0\n" ONE_CALLER,
		  "e.yaml:4:3: duplicate key 'group' in socket" },
		{ HEAD "? [a]\n: 1\n" ONE_CALLER,
		  "e.yaml:4:3: keys must be plain names (in the configuration)" },
	};

	(void)state;
	/* A missing key is said too: the typo is not taken for it. */
	refused("version: 1\nsockt:\n  group: root\n" ONE_CALLER, 2,
		"e.yaml:2:1: unknown key 'sockt' in the configuration (did you mean 'socket'?)",
		"e.yaml:1:1: missing 'socket:' (socket.group, the group that may connect, is required)");
	refused_each(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_refused_types(void **state)
{
	static const struct refusal cases[] = {
		{ "version: 1\nsocket: /run/egretd/egret.sock\n" ONE_CALLER,
		  "e.yaml:2:9: socket: want a mapping (path, group)" },
		{ HEAD "callers:\n  uid: 1000\n",
		  "e.yaml:5:3: callers: want a list of callers" },
		{ HEAD "callers:\n  - 1000\n",
		  "e.yaml:5:5: a caller: want a mapping (uid, user, cgroup, repos, allow, audit, max, cache, upload_limit, git_remote, nested_sandbox, home)" },
		{ HEAD "callers:\n  - uid: 1000\n    repos: octo/app\n",
		  "e.yaml:6:12: repos: want a list of OWNER/NAME, OWNER/* or *" },
		{ HEAD "attempts:\n  max: 0\n" ONE_CALLER,
		  "e.yaml:5:8: attempts.max: want a number from 1 to 1024" },
		{ HEAD "attempts:\n  max: 1025\n" ONE_CALLER,
		  "e.yaml:5:8: attempts.max: want a number from 1 to 1024" },
		{ "- version: 1\n",
		  "e.yaml:1:1: the configuration: want a mapping (version, socket, attempts, callers, node, metrics)" },
		{ "", "e.yaml: empty (want version, socket and callers: docs/EGRETD.md)" },
		{ "version: 1\nsocket: {group: root\n",
		  "e.yaml:3:1: did not find expected ',' or '}'" },
		/* version */
		{ "socket:\n  group: root\n" ONE_CALLER,
		  "e.yaml:1:1: missing 'version: 1'" },
		{ "version: 2\nsocket:\n  group: root\n" ONE_CALLER,
		  "e.yaml:1:10: unsupported version (want 1)" },
		{ "version: [1]\nsocket:\n  group: root\n" ONE_CALLER,
		  "e.yaml:1:10: unsupported version (want 1)" },
	};

	(void)state;
	refused_each(cases, sizeof(cases) / sizeof(cases[0]));
	refused(HEAD "callers:\n  - uid: 1000\n    allow: 1\n    audit: [true]\n", 2,
		"e.yaml:6:12: allow: want true or false",
		"e.yaml:7:12: audit: want true or false");
	refused(HEAD "callers:\n  - uid: -1\n  - uid: 4294967295\n  - uid: ten\n  - uid: 01000\n", 4,
		"e.yaml:5:10: uid: want a number from 0 to 4294967294",
		"e.yaml:6:10: uid: want a number from 0 to 4294967294",
		"e.yaml:7:10: uid: want a number from 0 to 4294967294",
		"e.yaml:8:10: uid: want a number from 0 to 4294967294");
}

static void test_refused_socket(void **state)
{
	static const struct refusal cases[] = {
		{ "version: 1\nsocket:\n  path: run/egretd.sock\n  group: root\n" ONE_CALLER,
		  "e.yaml:3:9: socket.path: want an absolute path of a file" },
		{ "version: 1\nsocket:\n  path: /run/egretd/\n  group: root\n" ONE_CALLER,
		  "e.yaml:3:9: socket.path: want an absolute path of a file" },
		{ "version: 1\nsocket:\n  path: /run/egretd/egret.sock\n" ONE_CALLER,
		  "e.yaml:3:3: socket: missing 'group:' (the group that may connect)" },
		{ "version: 1\nsocket:\n  group: no-such-group-egret\n" ONE_CALLER,
		  "e.yaml:3:10: socket.group: unknown group 'no-such-group-egret' (groupadd --system no-such-group-egret)" },
		{ "version: 1\nsocket:\n  group: 4294967295\n" ONE_CALLER,
		  "e.yaml:3:10: socket.group: want a number from 0 to 4294967294" },
		{ "version: 1\n" ONE_CALLER,
		  "e.yaml:1:1: missing 'socket:' (socket.group, the group that may connect, is required)" },
	};
	char text[256], path[DAEMON_SOCKET_PATH_MAX + 1];
	struct daemon_config c;

	(void)state;
	refused_each(cases, sizeof(cases) / sizeof(cases[0]));
	/* sun_path holds 107 bytes and a NUL: 107 fit, 108 do not. */
	memset(path, 'x', sizeof(path));
	path[0] = '/';
	path[DAEMON_SOCKET_PATH_MAX - 1] = '\0';
	snprintf(text, sizeof(text), "version: 1\nsocket:\n  path: %s\n  group: root\n"
		 ONE_CALLER, path);
	assert_int_equal(parse(text, &c), 0);
	assert_int_equal(strlen(c.socket_path), 107);
	daemon_config_free(&c);
	path[DAEMON_SOCKET_PATH_MAX - 1] = 'x';
	path[DAEMON_SOCKET_PATH_MAX] = '\0';
	snprintf(text, sizeof(text), "version: 1\nsocket:\n  path: %s\n  group: root\n"
		 ONE_CALLER, path);
	refused(text, 1, "e.yaml:3:9: socket.path: longer than 107 bytes (a unix socket's limit)");
}

static void test_refused_uids(void **state)
{
	static const struct refusal cases[] = {
		{ HEAD "attempts:\n  uids: 0-999\n" ONE_CALLER,
		  "e.yaml:5:9: attempts.uids: never 0 (attempts do not run as root)" },
		{ HEAD "attempts:\n  uids: 0\n" ONE_CALLER,
		  "e.yaml:5:9: attempts.uids: never 0 (attempts do not run as root)" },
		{ HEAD "attempts:\n  uids: 200999-200000\n" ONE_CALLER,
		  "e.yaml:5:9: attempts.uids: FIRST 200999 is above LAST 200000" },
		{ HEAD "attempts:\n  uids: 100000-165536\n" ONE_CALLER,
		  "e.yaml:5:9: attempts.uids: 65537 uids, at most 65536" },
		{ HEAD "attempts:\n  uids: 100000-\n  max: 1\n" ONE_CALLER,
		  "e.yaml:5:9: attempts.uids: want FIRST-LAST, uids up to 4294967294" },
		{ HEAD "attempts:\n  uids: \" 1-2\"\n" ONE_CALLER,
		  "e.yaml:5:9: attempts.uids: want FIRST-LAST, uids up to 4294967294" },
		{ HEAD "attempts:\n  uids: 1-4294967295\n" ONE_CALLER,
		  "e.yaml:5:9: attempts.uids: want FIRST-LAST, uids up to 4294967294" },
		/* YAML 1.1 would read it as octal: refused, not guessed. */
		{ HEAD "attempts:\n  uids: 0200000-0200999\n" ONE_CALLER,
		  "e.yaml:5:9: attempts.uids: want FIRST-LAST, uids up to 4294967294" },
		/* Every live attempt needs a uid of its own. */
		{ HEAD "attempts:\n  uids: 300000-300009\n" ONE_CALLER,
		  "e.yaml:5:9: attempts.max: 16 attempts at once need 16 uids, attempts.uids has 10" },
		{ HEAD "attempts:\n  max: 3\n  uids: 300000-300001\n" ONE_CALLER,
		  "e.yaml:5:8: attempts.max: 3 attempts at once need 3 uids, attempts.uids has 2" },
		/* A caller whose uid attempts run as could be an attempt. */
		{ HEAD "callers:\n  - uid: 200500\n",
		  "e.yaml:5:10: caller uid 200500 is in attempts.uids (200000-200999), which attempts run as" },
	};
	struct daemon_config c;

	(void)state;
	refused_each(cases, sizeof(cases) / sizeof(cases[0]));
	/* The largest range is fine. */
	assert_int_equal(parse(HEAD "attempts:\n  uids: 100000-165535\n" ONE_CALLER, &c), 0);
	assert_int_equal(c.uid_last - c.uid_first + 1, 65536);
	daemon_config_free(&c);
}

static void test_refused_callers(void **state)
{
	static const struct refusal cases[] = {
		{ HEAD "callers:\n  - uid: 1000\n  - uid: 1001\n  - uid: 1000\n",
		  "e.yaml:7:10: caller uid 1000 is listed twice (first at line 5)" },
		/* The same uid by number and by name. */
		{ HEAD "callers:\n  - uid: 0\n  - user: root\n",
		  "e.yaml:6:11: caller uid 0 is listed twice (first at line 5)" },
		{ HEAD "callers:\n  - uid: 0\n    user: root\n",
		  "e.yaml:5:5: a caller names one of uid: or user:, not both" },
		{ HEAD "callers:\n  - allow: true\n",
		  "e.yaml:5:5: a caller names one of uid: or user:" },
		{ HEAD "callers: []\n",
		  "e.yaml:4:10: callers: empty (name who may launch attempts)" },
		{ HEAD, "e.yaml:1:1: missing 'callers:' (who may launch attempts)" },
		{ HEAD "attempts:\n  max: 4\ncallers:\n  - uid: 1000\n    max: 5\n",
		  "e.yaml:8:10: max: 5 is above attempts.max (4)" },
	};

	(void)state;
	refused_each(cases, sizeof(cases) / sizeof(cases[0]));
	refused(HEAD "callers:\n  - user: no-such-user-egret\n  - user: \"1000\"\n", 2,
		"e.yaml:5:11: user: unknown user 'no-such-user-egret'",
		"e.yaml:6:11: user: unknown user '1000' (a number goes in uid:)");
}

static void test_refused_too_many(void **state)
{
	size_t cap = 64 * 1024, o;
	char *text = malloc(cap + 1);
	int i;

	(void)state;
	assert_non_null(text);
	o = (size_t)snprintf(text, cap, HEAD "callers:\n");
	for (i = 1; i <= DAEMON_CALLERS_MAX + 1; i++)
		o += (size_t)snprintf(text + o, cap - o, "  - uid: %d\n", 1000 + i);
	/* Line 5 holds caller 1: caller 257 is on line 261. */
	refused(text, 1, "e.yaml:261:5: callers: more than 256");

	o = (size_t)snprintf(text, cap, HEAD "callers:\n  - uid: 1000\n    repos: [");
	for (i = 0; i <= DAEMON_REPOS_MAX; i++)
		o += (size_t)snprintf(text + o, cap - o, "%so/r%d", i ? ", " : "", i);
	snprintf(text + o, cap - o, "]\n");
	refused(text, 1, "e.yaml:6:12: repos: more than 64 patterns");

	/* 64 KiB is the most a file may hold. */
	memset(text, ' ', cap);
	memcpy(text, HEAD ONE_CALLER, strlen(HEAD ONE_CALLER));
	memset(&d, 0, sizeof(d));
	{
		struct daemon_config c;

		assert_int_equal(daemon_config_parse(text, cap + 0, "e.yaml", &c, &d), 0);
		daemon_config_free(&c);
		assert_int_equal(daemon_config_parse(text, cap + 1, "e.yaml", &c, &d), -EINVAL);
		assert_string_equal(d.msg[0], "e.yaml: larger than 65536 bytes");
	}
	free(text);
}

static void test_refused_cgroup_repos(void **state)
{
	(void)state;
	refused(HEAD "callers:\n  - uid: 1000\n    cache: var/cache\n"
		"  - uid: 1001\n    cache: /a/../b\n"
		"  - uid: 1002\n    cache: /\n", 3,
		"e.yaml:6:12: cache: want an absolute path of a directory",
		"e.yaml:8:12: cache: want an absolute path of a directory",
		"e.yaml:10:12: cache: want an absolute path of a directory");
	refused("version: 1\nnode: \"a b\"\nsocket: {group: root}\ncallers: [{uid: 1000}]\n", 1,
		"e.yaml:2:7: node: want a name of letters, digits, '.', '-' or '_' (at most 63)");
	refused(HEAD "callers:\n  - uid: 1000\n    upload_limit: 1.5M\n", 1,
		"e.yaml:6:19: upload_limit: want a size: bytes, or a number with K, M or G (1M, 512K)");
	refused(HEAD "callers:\n  - uid: 1000\n    cgroup: system.slice/docker-*\n", 1,
		"e.yaml:6:13: cgroup: want an absolute path (from the host's cgroup root)");
	refused(HEAD "callers:\n  - uid: 1000\n    cgroup: /system.slice/*.scope\n"
		"  - uid: 1001\n    cgroup: /a/../b\n"
		"  - uid: 1002\n    cgroup: /a//b\n"
		"  - uid: 1003\n    cgroup: [/a]\n", 4,
		"e.yaml:6:13: cgroup: '*' may only end it (PREFIX*)",
		"e.yaml:8:13: cgroup: an empty, '.' or '..' component, or a control character",
		"e.yaml:10:13: cgroup: an empty, '.' or '..' component, or a control character",
		"e.yaml:12:13: cgroup: want an absolute path (from the host's cgroup root)");
	refused(HEAD "callers:\n  - uid: 1000\n    repos: [octo, \"*/app\", \"oc*/app\", \"octo/a*\", octo/app, Octo/App]\n", 5,
		"e.yaml:6:13: repos: 'octo' is not OWNER/NAME, OWNER/* or *",
		"e.yaml:6:19: repos: '*/app' is not OWNER/NAME, OWNER/* or *",
		"e.yaml:6:28: repos: 'oc*/app' is not OWNER/NAME, OWNER/* or *",
		"e.yaml:6:39: repos: 'octo/a*' is not OWNER/NAME, OWNER/* or *",
		"e.yaml:6:60: repos: 'Octo/App' given twice");
}

/* Every problem of a file at once, not only the first. */
static void test_collects_all(void **state)
{
	(void)state;
	refused("version: 2\nsocket:\n  path: x\n  group: root\n"
		"attempts:\n  uids: 5-1\n"
		"callers:\n  - uid: 1000\n    alow: true\n  - user: root\n    uid: 1\n", 5,
		"e.yaml:1:10: unsupported version (want 1)",
		"e.yaml:3:9: socket.path: want an absolute path of a file",
		"e.yaml:6:9: attempts.uids: FIRST 5 is above LAST 1",
		"e.yaml:9:5: unknown key 'alow' in a caller (did you mean 'allow'?)",
		"e.yaml:10:5: a caller names one of uid: or user:, not both");
}

static void test_load(void **state)
{
	char dir[] = "/tmp/egret-unit-dconf.XXXXXX", path[128];
	struct daemon_config c;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	chmod(dir, 0755);
	snprintf(path, sizeof(path), "%s/egretd.yaml", dir);

	memset(&d, 0, sizeof(d));
	assert_int_equal(daemon_config_load(path, &c, &d), -ENOENT);

	f = fopen(path, "w");
	assert_non_null(f);
	fputs(HEAD ONE_CALLER, f);
	fclose(f);
	chmod(path, 0644);
	memset(&d, 0, sizeof(d));
	assert_int_equal(daemon_config_load(path, &c, &d), 0);
	assert_int_equal(c.callers[0].uid, 1000);
	daemon_config_free(&c);

	/* Whoever could write it would decide who launches: refused. */
	chmod(path, 0664);
	memset(&d, 0, sizeof(d));
	assert_int_equal(daemon_config_load(path, &c, &d), -EPERM);
	assert_int_equal(d.n, 1);
	assert_non_null(strstr(d.msg[0], "refused: the egretd configuration must be owned by root"));
	chmod(path, 0644);
	chmod(dir, 0775);
	memset(&d, 0, sizeof(d));
	assert_int_equal(daemon_config_load(path, &c, &d), -EPERM);
	chmod(dir, 0755);

	/* A parse error names the file by its path. */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("version: 1\n", f);
	fclose(f);
	memset(&d, 0, sizeof(d));
	assert_int_equal(daemon_config_load(path, &c, &d), -EINVAL);
	assert_int_equal(d.n, 2);
	assert_non_null(strstr(d.msg[0], "/egretd.yaml:1:1: missing 'socket:'"));
	assert_int_equal(strncmp(d.msg[0], dir, strlen(dir)), 0);

	unlink(path);
	rmdir(dir);
}

static const char *const lookup_yaml =
	HEAD
	"callers:\n"
	"  - { uid: 1000, cgroup: \"/system.slice/docker-*\" }\n"
	"  - { uid: 1001, cgroup: /kubepods/burstable }\n"
	"  - { uid: 1002 }\n"
	"  - { uid: 1003, cgroup: / }\n"
	"  - { uid: 1004, cgroup: \"/user.slice/*\" }\n";

static void test_caller_lookup(void **state)
{
	struct daemon_config c;
	const struct daemon_caller *k;

	(void)state;
	assert_int_equal(parse(lookup_yaml, &c), 0);

	/* A literal prefix: any path that starts with it. */
	k = daemon_config_caller(&c, 1000, "/system.slice/docker-4f2a.scope");
	assert_ptr_equal(k, &c.callers[0]);
	assert_non_null(daemon_config_caller(&c, 1000, "/system.slice/docker-4f2a.scope/init"));
	assert_non_null(daemon_config_caller(&c, 1000, "/system.slice/docker-"));
	assert_null(daemon_config_caller(&c, 1000, "/system.slice/dockerd.service"));
	assert_null(daemon_config_caller(&c, 1000, "/system.slice"));
	assert_null(daemon_config_caller(&c, 1000, "/user.slice/system.slice/docker-1.scope"));
	/* Starts with the prefix as text, escapes it as a path. */
	assert_null(daemon_config_caller(&c, 1000, "/system.slice/docker-1/../../user.slice"));
	assert_null(daemon_config_caller(&c, 1000, NULL));

	/* A component prefix: the cgroup or below it, not a sibling. */
	assert_ptr_equal(daemon_config_caller(&c, 1001, "/kubepods/burstable"), &c.callers[1]);
	assert_non_null(daemon_config_caller(&c, 1001, "/kubepods/burstable/pod7/cri-1.scope"));
	assert_null(daemon_config_caller(&c, 1001, "/kubepods/burstable2"));
	assert_null(daemon_config_caller(&c, 1001, "/kubepods/burstable-x/pod7"));
	assert_null(daemon_config_caller(&c, 1001, "/kubepods"));
	assert_null(daemon_config_caller(&c, 1001, "/kubepods/burstable/"));	/* not the kernel's spelling */

	/* No prefix: any cgroup, an unknown one too. */
	assert_ptr_equal(daemon_config_caller(&c, 1002, "/anything/at/all"), &c.callers[2]);
	assert_non_null(daemon_config_caller(&c, 1002, NULL));
	assert_null(daemon_config_caller(&c, 1002, "relative"));
	assert_null(daemon_config_caller(&c, 1002, "/a/./b"));

	/* "/" is every cgroup; "/user.slice/" + "*" every one strictly below. */
	assert_non_null(daemon_config_caller(&c, 1003, "/"));
	assert_non_null(daemon_config_caller(&c, 1003, "/x/y"));
	assert_non_null(daemon_config_caller(&c, 1004, "/user.slice/user-1004.slice"));
	assert_null(daemon_config_caller(&c, 1004, "/user.slice"));
	assert_null(daemon_config_caller(&c, 1004, "/user.slicex"));

	/* A uid not listed is refused whatever its cgroup; uid 1001 is
	 * refused outside its prefix, not passed on to another entry. */
	assert_null(daemon_config_caller(&c, 999, "/"));
	assert_null(daemon_config_caller(&c, 0, "/system.slice/docker-1.scope"));
	assert_null(daemon_config_caller(&c, 1001, "/system.slice/docker-1.scope"));
	daemon_config_free(&c);
}

static void test_repo_matching(void **state)
{
	struct daemon_config c;
	const struct daemon_caller *some, *any, *none;

	(void)state;
	assert_int_equal(parse(HEAD "callers:\n"
			       "  - { uid: 1000, repos: [octo/app, \"acme/*\"] }\n"
			       "  - { uid: 1001, repos: [\"*\"] }\n"
			       "  - { uid: 1002, repos: [] }\n", &c), 0);
	some = &c.callers[0];
	any = &c.callers[1];
	none = &c.callers[2];

	assert_true(daemon_caller_may_repo(some, "octo/app"));
	assert_true(daemon_caller_may_repo(some, "Octo/App"));	/* as the policy's repos: */
	assert_false(daemon_caller_may_repo(some, "octo/app2"));
	assert_false(daemon_caller_may_repo(some, "octo/ap"));
	assert_false(daemon_caller_may_repo(some, "octo/other"));
	assert_true(daemon_caller_may_repo(some, "acme/web"));
	assert_true(daemon_caller_may_repo(some, "ACME/tooling"));
	assert_false(daemon_caller_may_repo(some, "acmes/web"));
	assert_false(daemon_caller_may_repo(some, "acm/web"));
	assert_false(daemon_caller_may_repo(some, "acme"));
	assert_false(daemon_caller_may_repo(some, "acme/"));
	assert_false(daemon_caller_may_repo(some, "acme/a/b"));

	assert_true(daemon_caller_may_repo(any, "anyone/anything"));
	assert_false(daemon_caller_may_repo(any, "not a repo"));

	assert_false(daemon_caller_may_repo(none, "octo/app"));
	assert_false(daemon_caller_may_repo(none, "a/b"));

	/* Without --repo every caller may run. */
	assert_true(daemon_caller_may_repo(some, NULL));
	assert_true(daemon_caller_may_repo(any, NULL));
	assert_true(daemon_caller_may_repo(none, NULL));
	daemon_config_free(&c);
}

/* The gated options (attempt/run_options.def: RUN_VIA_GATED): --git-remote
 * by callers.git_remote (true: any; a list: those hosts), --nested-sandbox
 * by callers.nested_sandbox; home: a path; a bad value at its position. */
static void test_gated_options(void **state)
{
	struct daemon_config c;
	const struct daemon_caller *none, *any, *listed;
	const char *why;

	(void)state;
	assert_int_equal(parse(HEAD "callers:\n"
			       "  - { uid: 1000 }\n"
			       "  - { uid: 1001, git_remote: true, nested_sandbox: true, home: /srv/h }\n"
			       "  - { uid: 1002, git_remote: [github.com, \"*.gitlab.example\"] }\n", &c), 0);
	none = &c.callers[0];
	any = &c.callers[1];
	listed = &c.callers[2];
	why = daemon_caller_may_option(none, "git-remote", "https://github.com/o/r.git");
	assert_non_null(why);
	assert_non_null(strstr(why, "callers.git_remote"));
	assert_null(daemon_caller_may_option(any, "git-remote", "git@example.org:o/r.git"));
	assert_null(daemon_caller_may_option(listed, "git-remote", "https://github.com/o/r.git"));
	assert_null(daemon_caller_may_option(listed, "git-remote", "ssh://git@a.gitlab.example/o/r"));
	assert_non_null(daemon_caller_may_option(listed, "git-remote", "https://gitlab.example/o/r"));
	assert_non_null(daemon_caller_may_option(listed, "git-remote", "https://evil.test/o/r"));
	assert_non_null(daemon_caller_may_option(listed, "git-remote", "https://192.0.2.1/o/r"));
	assert_non_null(daemon_caller_may_option(any, "git-remote", "ext::sh -c evil"));
	assert_non_null(daemon_caller_may_option(any, "git-remote", "/local/path"));
	assert_non_null(daemon_caller_may_option(none, "nested-sandbox", NULL));
	assert_null(daemon_caller_may_option(any, "nested-sandbox", NULL));
	assert_non_null(daemon_caller_may_option(any, "no-such-gated-option", NULL));
	assert_string_equal(any->home, "/srv/h");
	assert_null(none->home);
	daemon_config_free(&c);

	refused(HEAD "callers: [{uid: 1000, git_remote: [github.com:443]}]\n", 1,
		"e.yaml:4:36: git_remote: 'github.com:443' is not a host name or *.DOMAIN");
	refused(HEAD "callers: [{uid: 1000, git_remote: []}]\n", 1,
		"e.yaml:4:35: git_remote: want true, false, or 1 to 64 hosts (NAME or *.DOMAIN)");
	refused(HEAD "callers: [{uid: 1000, home: relative}]\n", 1,
		"e.yaml:4:29: home: want an absolute path of a directory");
}

static void test_grammar(void **state)
{
	(void)state;
	assert_true(daemon_cgroup_path_clean("/", 1));
	assert_true(daemon_cgroup_path_clean("/a/b.scope", 10));
	assert_true(daemon_cgroup_path_clean("/a/..b", 6));
	assert_true(daemon_cgroup_path_clean("/a/b/", 4));	/* the first 4 bytes */
	assert_false(daemon_cgroup_path_clean("", 0));
	assert_false(daemon_cgroup_path_clean("a/b", 3));
	assert_false(daemon_cgroup_path_clean("/a/", 3));
	assert_false(daemon_cgroup_path_clean("//", 2));
	assert_false(daemon_cgroup_path_clean("/.", 2));
	assert_false(daemon_cgroup_path_clean("/a/..", 5));
	assert_false(daemon_cgroup_path_clean("/a\n/b", 5));

	assert_true(daemon_repo_pattern_valid("*"));
	assert_true(daemon_repo_pattern_valid("o/n"));
	assert_true(daemon_repo_pattern_valid("o/*"));
	assert_false(daemon_repo_pattern_valid("/*"));
	assert_false(daemon_repo_pattern_valid("*/*"));
	assert_false(daemon_repo_pattern_valid("**"));
	assert_false(daemon_repo_pattern_valid(".o/*"));
	assert_false(daemon_repo_pattern_valid(""));
}

/* metrics: a unix socket (root's alone, or a group's), a literal
 * loopback address, and the repositories' label cap. */
static void test_metrics(void **state)
{
	struct daemon_config c;

	(void)state;
	assert_int_equal(parse(HEAD "metrics:\n  socket: /run/egretd/metrics.sock\n"
			       "  group: 4\n  listen: 127.0.0.1:9464\n  repositories: 50\n"
			       ONE_CALLER, &c), 0);
	assert_string_equal(c.metrics.socket, "/run/egretd/metrics.sock");
	assert_true(c.metrics.group_set);
	assert_int_equal(c.metrics.group, 4);
	assert_string_equal(c.metrics.listen, "127.0.0.1:9464");
	assert_int_equal(c.metrics.addr.sa.sa_family, AF_INET);
	assert_int_equal(ntohs(c.metrics.addr.in.sin_port), 9464);
	assert_int_equal(c.metrics.repositories, 50);
	assert_false(c.metrics.expose);
	daemon_config_free(&c);

	assert_int_equal(parse(HEAD "metrics: {listen: \"[::1]:9464\"}\n" ONE_CALLER, &c), 0);
	assert_int_equal(c.metrics.addr.sa.sa_family, AF_INET6);
	assert_false(c.metrics.group_set);
	assert_string_equal(c.metrics.socket, "");
	assert_int_equal(c.metrics.repositories, 0);
	daemon_config_free(&c);

	/* A pod's own address, said twice on purpose. */
	assert_int_equal(parse(HEAD "metrics: {listen: \"0.0.0.0:9464\", expose: true}\n"
			       ONE_CALLER, &c), 0);
	assert_true(c.metrics.expose);
	daemon_config_free(&c);

	/* None by default. */
	assert_int_equal(parse(HEAD ONE_CALLER, &c), 0);
	assert_string_equal(c.metrics.socket, "");
	assert_string_equal(c.metrics.listen, "");
	daemon_config_free(&c);
}

static void test_refused_metrics(void **state)
{
	static const struct { const char *text, *msg; } cases[] = {
		{ HEAD "metrics: {listen: \"0.0.0.0:9464\"}\n" ONE_CALLER,
		  "e.yaml:4:10: metrics.listen: 0.0.0.0:9464 is not a loopback address: add 'expose: true' if it is meant to be reached from elsewhere" },
		{ HEAD "metrics: {listen: \"10.1.2.3:9464\"}\n" ONE_CALLER,
		  "e.yaml:4:10: metrics.listen: 10.1.2.3:9464 is not a loopback address: add 'expose: true' if it is meant to be reached from elsewhere" },
		{ HEAD "metrics: {listen: \"localhost:9464\"}\n" ONE_CALLER,
		  "e.yaml:4:19: metrics.listen: want ADDRESS:PORT, an IPv4 address or [IPv6] and a port (127.0.0.1:9464)" },
		{ HEAD "metrics: {listen: \"9464\"}\n" ONE_CALLER,
		  "e.yaml:4:19: metrics.listen: want ADDRESS:PORT, an IPv4 address or [IPv6] and a port (127.0.0.1:9464)" },
		{ HEAD "metrics: {listen: \"::1:9464\"}\n" ONE_CALLER,
		  "e.yaml:4:19: metrics.listen: want ADDRESS:PORT, an IPv4 address or [IPv6] and a port (127.0.0.1:9464)" },
		{ HEAD "metrics: {listen: \"127.0.0.1:65536\"}\n" ONE_CALLER,
		  "e.yaml:4:19: metrics.listen: want ADDRESS:PORT, an IPv4 address or [IPv6] and a port (127.0.0.1:9464)" },
		{ HEAD "metrics: {listen: \"127.0.0.1:09464\"}\n" ONE_CALLER,
		  "e.yaml:4:19: metrics.listen: want ADDRESS:PORT, an IPv4 address or [IPv6] and a port (127.0.0.1:9464)" },
		{ HEAD "metrics: {socket: run/m.sock}\n" ONE_CALLER,
		  "e.yaml:4:19: metrics.socket: want an absolute path of a file" },
		{ HEAD "metrics: {group: 4, listen: \"127.0.0.1:1\"}\n" ONE_CALLER,
		  "e.yaml:4:10: metrics.group: only with metrics.socket" },
		{ HEAD "metrics: {repositories: 1001, socket: /m.sock}\n" ONE_CALLER,
		  "e.yaml:4:25: metrics.repositories: want a number from 0 to 1000" },
		{ HEAD "metrics: {}\n" ONE_CALLER,
		  "e.yaml:4:10: metrics: want socket: or listen: (or no metrics: at all)" },
		{ HEAD "metrics: {socket: /m.sock, lisen: x}\n" ONE_CALLER,
		  "e.yaml:4:28: unknown key 'lisen' in metrics (did you mean 'listen'?)" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		refused(cases[i].text, 1, cases[i].msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_refused_keys),
		cmocka_unit_test(test_refused_types),
		cmocka_unit_test(test_refused_socket),
		cmocka_unit_test(test_refused_uids),
		cmocka_unit_test(test_refused_callers),
		cmocka_unit_test(test_refused_too_many),
		cmocka_unit_test(test_refused_cgroup_repos),
		cmocka_unit_test(test_collects_all),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_caller_lookup),
		cmocka_unit_test(test_repo_matching),
		cmocka_unit_test(test_grammar),
		cmocka_unit_test(test_gated_options),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_refused_metrics),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
