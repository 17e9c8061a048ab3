// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_state.c - parsing an attempt record; its paths are acted on. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "attempt/state.h"

/* A record with one line replaced (or added): @key=@val. */
static int parse_with(const char *key, const char *val,
		      struct attempt_state *ret)
{
	static const char *const keys[] = { "id", "cgroup", "pins", "pid",
					    "started" };
	static const char *const vals[] = {
		"run1", "/sys/fs/cgroup/egret/run1", "/sys/fs/bpf/egret/run1",
		"4242", "1700000000",
	};
	char text[8192];
	size_t i, off = 0;

	for (i = 0; i < 5; i++)
		off += (size_t)snprintf(text + off, sizeof(text) - off, "%s=%s\n",
					keys[i],
					strcmp(keys[i], key) ? vals[i] : val);
	return state_parse(text, ret);
}

static void accepts_record(void **state)
{
	struct attempt_state st;

	assert_int_equal(state_parse("id=run1\n"
				     "cgroup=/sys/fs/cgroup/egret/run1\n"
				     "pins=/sys/fs/bpf/egret/run1\n"
				     "pid=4242\n"
				     "started=1700000000\n", &st), 0);
	assert_string_equal(st.id, "run1");
	assert_string_equal(st.cgroup, "/sys/fs/cgroup/egret/run1");
	assert_string_equal(st.pins, "/sys/fs/bpf/egret/run1");
	assert_int_equal(st.pid, 4242);
	assert_int_equal(st.started, 1700000000);

	/* Order does not matter; a missing final newline is fine. */
	assert_int_equal(state_parse("pins=/sys/fs/bpf/egret/x\nid=x\n"
				     "cgroup=/x", &st), 0);
	assert_string_equal(st.id, "x");
	assert_string_equal(st.cgroup, "/x");
}

static void rejects_bad_id(void **state)
{
	struct attempt_state st = { .pid = 99 };

	assert_int_equal(parse_with("id", "../run1", &st), -EINVAL);
	assert_int_equal(parse_with("id", ".run1", &st), -EINVAL);
	assert_int_equal(parse_with("id", "", &st), -EINVAL);
	assert_int_equal(state_parse("", &st), -EINVAL);
	assert_int_equal(st.pid, 99);	/* untouched on failure */
}

static void rejects_foreign_pins(void **state)
{
	struct attempt_state st;

	assert_int_equal(parse_with("pins", "/tmp/run1", &st), -EINVAL);
	assert_int_equal(parse_with("pins", "/sys/fs/bpf/run1", &st), -EINVAL);
	assert_int_equal(parse_with("pins", "/sys/fs/bpf/egretrun1", &st), -EINVAL);
	assert_int_equal(parse_with("pins", "/sys/fs/bpf/egret/other", &st), -EINVAL);
	assert_int_equal(parse_with("pins", "/sys/fs/bpf/egret/run1/x", &st), -EINVAL);
	assert_int_equal(parse_with("pins", "/sys/fs/bpf/egret/", &st), -EINVAL);
	assert_int_equal(parse_with("pins", "/sys/fs/bpf/egret/../run1", &st),
			 -EINVAL);
	assert_int_equal(parse_with("pins", "", &st), -EINVAL);
}

static void rejects_bad_cgroup(void **state)
{
	struct attempt_state st;

	assert_int_equal(parse_with("cgroup", "sys/fs/cgroup/egret/run1", &st),
			 -EINVAL);
	assert_int_equal(parse_with("cgroup", "", &st), -EINVAL);
	assert_int_equal(parse_with("cgroup", "/sys/fs/cgroup/../../etc", &st),
			 -EINVAL);
	assert_int_equal(parse_with("cgroup", "/../sys/fs/cgroup", &st), -EINVAL);
	/* A trailing ".." climbs just the same as an inner one. */
	assert_int_equal(parse_with("cgroup", "/sys/fs/cgroup/egret/..", &st),
			 -EINVAL);
}

static void rejects_overlong_fields(void **state)
{
	static char cgroup[PATH_MAX + 8];
	struct attempt_state st;

	cgroup[0] = '/';
	memset(cgroup + 1, 'a', PATH_MAX);
	cgroup[PATH_MAX + 1] = '\0';
	assert_true(parse_with("cgroup", cgroup, &st) < 0);
}

/* egretd's fields survive a write and a read (what a re-adopting egretd
 * acts on), and a record rewritten shorter has nothing left over. */
static void daemon_fields_round_trip(void **state)
{
	struct attempt_state st = { .id = "run1", .cgroup = "/sys/fs/cgroup/a/run1",
				    .pins = "/sys/fs/bpf/egret/run1", .pid = 7,
				    .started = 1700000000, .daemon = 1, .caller = 1000,
				    .keeper = 4100, .command = 4101, .dns_port = 40053,
				    .instance = "/run/egretd/egret.sock", .unserved = 1700000300,
				    .uid = 200001, .held_dns = { 5, 0, 6, 0 }, .held_pty = 9 };
	struct attempt_state got;
	int fd = memfd_create("record", 0);

	assert_true(fd >= 0);
	assert_int_equal(state_update(fd, &st), 0);
	assert_int_equal(state_read_fd(fd, &got), 0);
	assert_int_equal(got.daemon, 1);
	assert_int_equal(got.caller, 1000);
	assert_int_equal(got.keeper, 4100);
	assert_int_equal(got.command, 4101);
	assert_int_equal(got.dns_port, 40053);
	assert_string_equal(got.instance, "/run/egretd/egret.sock");
	assert_int_equal(got.unserved, 1700000300);
	assert_int_equal(got.uid, 200001);
	assert_memory_equal(got.held_dns, st.held_dns, sizeof(st.held_dns));
	assert_int_equal(got.held_pty, 9);
	st.daemon = 0;
	assert_int_equal(state_update(fd, &st), 0);
	assert_int_equal(state_read_fd(fd, &got), 0);
	assert_int_equal(got.daemon, 0);
	assert_int_equal(got.keeper, 0);
	assert_string_equal(got.instance, "");
	assert_int_equal(got.unserved, 0);
	close(fd);
}

/* COMMAND's uid: a record without one, or with a value that is no uid,
 * names none (-1), so that nobody's lock is pruned on its word. */
static void uid_field(void **state)
{
	struct attempt_state st;

	assert_int_equal(parse_with("started", "1", &st), 0);
	assert_int_equal(st.uid, -1);
	assert_int_equal(state_parse("id=run1\ncgroup=/x\npins=/sys/fs/bpf/egret/run1\nuid=0\n", &st), 0);
	assert_int_equal(st.uid, 0);
	assert_int_equal(state_parse("id=run1\ncgroup=/x\npins=/sys/fs/bpf/egret/run1\nuid=-5\n", &st), 0);
	assert_int_equal(st.uid, -1);
	assert_int_equal(state_parse("id=run1\ncgroup=/x\npins=/sys/fs/bpf/egret/run1\nuid=4294967295\n", &st), 0);
	assert_int_equal(st.uid, -1);
	assert_int_equal(state_parse("id=run1\ncgroup=/x\npins=/sys/fs/bpf/egret/run1\nuid=12x\n", &st), 0);
	assert_int_equal(st.uid, -1);
}

/* The fds a keeper holds: numbers a re-adopting egretd takes from it by
 * pidfd_getfd(), so never 0-2 (its stdio, not ours to take) nor a word
 * that is not five numbers. */
static void held_field(void **state)
{
	static const char *const bad[] = { "1,0,0,0,0", "3,4,5,6", "3,4,5,6,7,8",
					   "3,x,5,6,7", "3,4,5,6,-1", "3,4,5,6,99999999" };
	const char *base = "id=run1\ncgroup=/x\npins=/sys/fs/bpf/egret/run1\nheld=";
	struct attempt_state st;
	char text[256];

	(void)state;
	snprintf(text, sizeof(text), "%s3,0,4,0,12\n", base);
	assert_int_equal(state_parse(text, &st), 0);
	assert_int_equal(st.held_dns[0], 3);
	assert_int_equal(st.held_dns[2], 4);
	assert_int_equal(st.held_pty, 12);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "%s%s\n", base, bad[i]);
		assert_int_equal(state_parse(text, &st), -EINVAL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(accepts_record),
		cmocka_unit_test(rejects_bad_id),
		cmocka_unit_test(rejects_foreign_pins),
		cmocka_unit_test(rejects_bad_cgroup),
		cmocka_unit_test(rejects_overlong_fields),
		cmocka_unit_test(daemon_fields_round_trip),
		cmocka_unit_test(uid_field),
		cmocka_unit_test(held_field),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
