// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_requests.c - the request store: records, merging, ids, files. */
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
#include <time.h>
#include <unistd.h>

#include "requests/log.h"
#include "requests/store.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/egret-unit-req.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	/* mkdtemp makes it 0700 and ours: a store as egret would. */
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static struct request seen(enum request_kind kind, const char *target,
			   uint16_t port, uint64_t count, int64_t t)
{
	struct request r = { .kind = kind, .port = port, .count = count,
			     .first = t, .last = t };

	snprintf(r.target, sizeof(r.target), "%s", target);
	strcpy(r.proto, port ? "tcp" : "dns");
	return r;
}

/* Hostile strings (comm is the sandbox's choice) survive a round trip
 * and can never add a field or a line. */
static void test_record_round_trip(void **state)
{
	struct request r = seen(REQUEST_ADDR, "2001:db8::1", 443, 7, 100), back;
	char line[4096];

	(void)state;
	r.id = 42;
	r.status = REQUEST_DENIED;
	r.nattempts = 3;
	r.last = 200;
	strcpy(r.attempts[0], "a1");
	strcpy(r.attempts[1], "b-2.x");
	r.nrecent = 2;
	r.pid = 1234;
	strcpy(r.comm, "ev\til\n\\x41 -");
	strcpy(r.decided_by, "alice (uid 0)");
	r.decided_at = 300;
	assert_int_equal(request_format(&r, line, sizeof(line)), 0);
	assert_null(strchr(line, '\n'));
	assert_int_equal(request_parse(line, &back), 0);
	assert_int_equal(back.id, 42);
	assert_int_equal(back.status, REQUEST_DENIED);
	assert_int_equal(back.kind, REQUEST_ADDR);
	assert_string_equal(back.target, "2001:db8::1");
	assert_int_equal(back.port, 443);
	assert_int_equal(back.count, 7);
	assert_int_equal(back.nattempts, 3);
	assert_int_equal(back.first, 100);
	assert_int_equal(back.last, 200);
	assert_int_equal(back.nrecent, 2);
	assert_string_equal(back.attempts[1], "b-2.x");
	assert_int_equal(back.pid, 1234);
	assert_string_equal(back.comm, "ev\til\n\\x41 -");
	assert_string_equal(back.decided_by, "alice (uid 0)");
	assert_int_equal(back.decided_at, 300);

	/* Empty strings and a lone "-" stay distinct. */
	strcpy(r.comm, "-");
	r.decided_by[0] = '\0';
	assert_int_equal(request_format(&r, line, sizeof(line)), 0);
	assert_int_equal(request_parse(line, &back), 0);
	assert_string_equal(back.comm, "-");
	assert_string_equal(back.decided_by, "");
}

/* Each distinct command is kept, up to REQUEST_COMMANDS, whatever it is
 * called (a comma, a tab, a lone "-"); a line of the older format (15
 * fields) reads with its one example as its command. */
static void test_record_commands(void **state)
{
	struct request r = seen(REQUEST_NAME, "registry.npmjs.org", 443, 12, 100), back;
	char line[4096];

	(void)state;
	r.id = 7;
	request_add_command(&r, "curl");
	request_add_command(&r, "npm");
	request_add_command(&r, "curl");
	request_add_command(&r, "a,b\tc");
	request_add_command(&r, "-");
	request_add_command(&r, "node");	/* the fifth: not kept */
	assert_int_equal(r.ncommands, 4);
	assert_int_equal(request_format(&r, line, sizeof(line)), 0);
	assert_int_equal(request_parse(line, &back), 0);
	assert_int_equal(back.ncommands, 4);
	assert_string_equal(back.commands[0], "curl");
	assert_string_equal(back.commands[1], "npm");
	assert_string_equal(back.commands[2], "a,b\tc");
	assert_string_equal(back.commands[3], "-");
	assert_int_equal(request_parse("1\tpending\tname\tx\t0\ttcp\t1\t1\t1\t1\t-\t9\tcurl\t-\t0",
				       &back), 0);
	assert_int_equal(back.ncommands, 1);
	assert_string_equal(back.commands[0], "curl");
}

static void test_record_corrupt(void **state)
{
	struct request r;

	(void)state;
	assert_int_equal(request_parse("", &r), -EBADMSG);
	assert_int_equal(request_parse("1\tpending\tname\tx\t0\tdns\t1\t1\t1\t1\t-\t0\t-\t-", &r),
			 -EBADMSG);	/* 14 fields */
	assert_int_equal(request_parse("1\tmaybe\tname\tx\t0\tdns\t1\t1\t1\t1\t-\t0\t-\t-\t0", &r),
			 -EBADMSG);	/* status */
	assert_int_equal(request_parse("0\tpending\tname\tx\t0\tdns\t1\t1\t1\t1\t-\t0\t-\t-\t0", &r),
			 -EBADMSG);	/* id 0 */
	assert_int_equal(request_parse("1\tpending\tname\tx\t70000\tdns\t1\t1\t1\t1\t-\t0\t-\t-\t0", &r),
			 -EBADMSG);	/* port */
	assert_int_equal(request_parse("1\tpending\tname\tx\t0\tdns\t1\t1\t1\t1\ta/b\t0\t-\t-\t0", &r),
			 -EBADMSG);	/* attempt id */
	assert_int_equal(request_parse("1\tpending\tname\tx\\q\t0\tdns\t1\t1\t1\t1\t-\t0\t-\t-\t0", &r),
			 -EBADMSG);	/* escape */
	assert_int_equal(request_parse("1\tpending\tname\tx\t0\tdns\t1\t1\t1\t1\t-\t0\t-\t-\t0", &r), 0);
}

/* Dedup by (kind, target, port); counts add; attempts counted once each;
 * a decided request keeps its status; ids are global and never reused. */
static void test_merge(void **state)
{
	struct request_store st;
	struct request_file a, b, back;
	struct request s1 = seen(REQUEST_NAME, "pkg.example", 0, 3, 10);
	struct request s2 = seen(REQUEST_NAME, "pkg.example", 443, 1, 11);
	char err[256];

	(void)state;
	assert_int_equal(request_store_open(&st, dir, 0), 0);
	assert_int_equal(request_file_load(&st, "Owner/A", &a, err, sizeof(err)), 0);
	assert_int_equal(a.n, 0);
	assert_int_equal(request_file_merge(&st, &a, &s1, "att1", true), 0);
	assert_int_equal(request_file_merge(&st, &a, &s2, "att1", true), 0);
	s1.count = 2;
	s1.first = 5;
	s1.last = 20;
	s1.pid = 99;
	strcpy(s1.comm, "npm");
	assert_int_equal(request_file_merge(&st, &a, &s1, "att1", false), 0);
	assert_int_equal(request_file_merge(&st, &a, &s1, "att2", true), 0);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.items[0].id, 1);
	assert_int_equal(a.items[1].id, 2);
	assert_int_equal(a.items[0].count, 7);
	assert_int_equal(a.items[0].nattempts, 2);
	assert_int_equal(a.items[0].first, 5);
	assert_int_equal(a.items[0].last, 20);
	assert_int_equal(a.items[0].nrecent, 2);
	assert_string_equal(a.items[0].attempts[1], "att2");
	assert_string_equal(a.items[0].comm, "npm");
	a.items[0].status = REQUEST_DENIED;
	assert_int_equal(request_file_save(&st, &a), 0);

	/* Another repo: its own file, the next global id. */
	assert_int_equal(request_file_load(&st, "owner/b", &b, err, sizeof(err)), 0);
	assert_int_equal(request_file_merge(&st, &b, &s1, "att3", true), 0);
	assert_int_equal(b.items[0].id, 3);
	assert_int_equal(request_file_save(&st, &b), 0);

	/* Reloaded (case-insensitive repo): denied stays denied and counts. */
	assert_int_equal(request_file_load(&st, "owner/a", &back, err, sizeof(err)), 0);
	assert_string_equal(back.repo, "Owner/A");
	assert_int_equal(back.n, 2);
	assert_int_equal(back.items[0].status, REQUEST_DENIED);
	assert_int_equal(request_file_merge(&st, &back, &s1, "att4", true), 0);
	assert_int_equal(back.items[0].status, REQUEST_DENIED);
	assert_int_equal(back.items[0].count, 9);
	assert_int_equal(back.n, 2);
	request_file_free(&a);
	request_file_free(&b);
	request_file_free(&back);
	request_store_close(&st);
}

/* Pending requests are bounded per repository; what does not fit is
 * counted; decided requests do not hold the cap. */
static void test_cap(void **state)
{
	struct request_store st;
	struct request_file f;
	struct request s;
	char err[256], name[64];

	(void)state;
	assert_int_equal(request_store_open(&st, dir, 0), 0);
	assert_int_equal(request_file_load(&st, "o/cap", &f, err, sizeof(err)), 0);
	for (int i = 0; i < REQUESTS_MAX_PENDING; i++) {
		snprintf(name, sizeof(name), "n%d.example", i);
		s = seen(REQUEST_NAME, name, 0, 1, 1);
		assert_int_equal(request_file_merge(&st, &f, &s, "a", true), 0);
	}
	s = seen(REQUEST_NAME, "one-more.example", 0, 1, 1);
	assert_int_equal(request_file_merge(&st, &f, &s, "a", true), -ENOSPC);
	assert_int_equal(f.dropped, 1);
	/* An existing request still counts. */
	s = seen(REQUEST_NAME, "n0.example", 0, 1, 1);
	assert_int_equal(request_file_merge(&st, &f, &s, "a", false), 0);
	assert_int_equal(f.items[0].count, 2);
	/* Deny one: room for one more. */
	f.items[5].status = REQUEST_DENIED;
	s = seen(REQUEST_NAME, "one-more.example", 0, 1, 1);
	assert_int_equal(request_file_merge(&st, &f, &s, "a", true), 0);
	assert_int_equal(f.n, REQUESTS_MAX_PENDING + 1);
	request_file_free(&f);
	request_store_close(&st);
}

/* Ids survive a lost or damaged next-id: numbering goes on after the
 * highest id in the store, never reusing one. */
static void test_next_id_recovery(void **state)
{
	struct request_store st;
	struct request_file a, b;
	struct request s = seen(REQUEST_ADDR, "203.0.113.1", 443, 1, 1);
	char err[256], path[128];
	FILE *out;

	(void)state;
	assert_int_equal(request_store_open(&st, dir, 0), 0);
	assert_int_equal(request_file_load(&st, "o/a", &a, err, sizeof(err)), 0);
	assert_int_equal(request_file_merge(&st, &a, &s, "x", true), 0);
	strcpy(s.target, "203.0.113.2");
	assert_int_equal(request_file_merge(&st, &a, &s, "x", true), 0);
	assert_int_equal(request_file_save(&st, &a), 0);
	request_store_close(&st);

	snprintf(path, sizeof(path), "%s/next-id", dir);
	out = fopen(path, "w");
	assert_non_null(out);
	fprintf(out, "garbage\n");
	fclose(out);
	assert_int_equal(request_store_open(&st, dir, 0), 0);
	assert_int_equal(request_file_load(&st, "o/b", &b, err, sizeof(err)), 0);
	strcpy(s.target, "203.0.113.3");
	assert_int_equal(request_file_merge(&st, &b, &s, "y", true), 0);
	assert_int_equal(b.items[0].id, 3);
	assert_int_equal(request_file_save(&st, &b), 0);
	request_store_close(&st);

	unlink(path);
	assert_int_equal(request_store_open(&st, dir, 0), 0);
	strcpy(s.target, "203.0.113.4");
	assert_int_equal(request_file_merge(&st, &b, &s, "y", true), 0);
	assert_int_equal(b.items[1].id, 4);
	request_file_free(&a);
	request_file_free(&b);
	request_store_close(&st);
}

/* A record that does not fit its buffer is refused, never cut short. */
static void test_record_too_long(void **state)
{
	struct request r = seen(REQUEST_NAME, "a-rather-long-name.example", 0, 1, 1);
	char small[48], big[4096];

	(void)state;
	r.id = 1;
	strcpy(r.comm, "\x01\x02\x03\x04\x05\x06\x07\x08");
	assert_int_equal(request_format(&r, small, sizeof(small)), -ENOSPC);
	assert_int_equal(request_format(&r, big, sizeof(big)), 0);
}

/* A file for another repository (two names, one file name) is refused. */
static void test_wrong_repo(void **state)
{
	struct request_store st;
	struct request_file f;
	char path[256], err[512] = "";
	FILE *out;

	(void)state;
	assert_int_equal(request_store_open(&st, dir, 0), 0);
	snprintf(path, sizeof(path), "%s/requests/a__b__c", dir);
	out = fopen(path, "w");
	assert_non_null(out);
	fprintf(out, "# egret requests v1 repo=a__b/c dropped=0\n");
	fclose(out);
	assert_int_equal(request_file_load(&st, "a/b__c", &f, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "not 'a/b__c'"));
	request_file_free(&f);
	request_store_close(&st);
}

/* The store's lock: a second opener gets -EAGAIN, at once or after its
 * bounded wait. */
static void test_lock(void **state)
{
	struct request_store a, b;
	struct timespec t0, t1;

	(void)state;
	assert_int_equal(request_store_open(&a, dir, 0), 0);
	assert_int_equal(request_store_open(&b, dir, 0), -EAGAIN);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(request_store_open(&b, dir, 200), -EAGAIN);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 >= 200);
	request_store_close(&a);
	assert_int_equal(request_store_open(&b, dir, 0), 0);
	request_store_close(&b);
}

/* The attempt's log folds repeated denials into one request per key and
 * keeps the first process as the example. */
static void test_log_folds(void **state)
{
	struct request_log l;
	struct request_store st;
	struct request_file f;
	char err[256];

	(void)state;
	assert_int_equal(request_log_open(&l, dir, "o/log", "att", NULL), 0);
	for (int i = 0; i < 1000; i++)
		request_log_note(&l, REQUEST_ADDR, "203.0.113.9", 443, "tcp",
				 (uint32_t)(100 + i), i ? "later" : "first");
	request_log_note(&l, REQUEST_NAME, "x.example", 0, "dns", 0, NULL);
	assert_int_equal(request_log_flush(&l, true), 0);
	request_log_note(&l, REQUEST_ADDR, "203.0.113.9", 443, "tcp", 7, "again");
	request_log_close(&l);

	assert_int_equal(request_store_open(&st, dir, 0), 0);
	assert_int_equal(request_file_load(&st, "o/log", &f, err, sizeof(err)), 0);
	assert_int_equal(f.n, 2);
	assert_int_equal(f.items[0].count, 1001);
	assert_int_equal(f.items[0].nattempts, 1);
	assert_int_equal(f.items[0].pid, 100);
	assert_string_equal(f.items[0].comm, "first");
	assert_int_equal(f.items[1].port, 0);
	request_file_free(&f);
	request_store_close(&st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_round_trip),
		cmocka_unit_test(test_record_commands),
		cmocka_unit_test(test_record_corrupt),
		cmocka_unit_test_setup_teardown(test_merge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_next_id_recovery, setup, teardown),
		cmocka_unit_test(test_record_too_long),
		cmocka_unit_test_setup_teardown(test_wrong_repo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_folds, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
