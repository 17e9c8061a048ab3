// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_cgroup.c - finding cgroup2 in mountinfo and /proc/self/cgroup text. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "attempt/cgroup.h"

/* A hybrid host like the one these tests were written on. */
static const char hybrid_mountinfo[] =
	"23 1 0:21 / / rw,relatime - overlay overlay rw,lowerdir=/l\n"
	"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	"40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
	"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

/* systemd's unified layout: optional fields before the separator. */
static const char pure_v2_mountinfo[] =
	"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
	"26 22 0:23 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
	"29 26 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 master:2 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n"
	"30 26 0:27 / /sys/fs/bpf rw,nosuid,nodev,noexec,relatime shared:8 - bpf bpf rw,mode=700\n";

/* Things that mention cgroup2 without being a cgroup2 mount. */
static const char no_cgroup2_mountinfo[] =
	"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
	"50 22 0:40 / /mnt/cgroup2 rw,relatime - tmpfs cgroup2 rw\n"
	"51 22 0:41 / /sys/fs/cgroup rw,relatime - cgroup cgroup rw,cpu\n"
	"52 22 0:42 / /srv/a rw,relatime - cgroup2fs x rw\n";

static FILE *stream(const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");

	assert_non_null(f);
	return f;
}

static int mount_parse(const char *text, char *ret, size_t len)
{
	FILE *f = stream(text);
	int r = cgroup2_mount_parse(f, ret, len);

	fclose(f);
	return r;
}

/* The text of @n bytes through both parsers, which must agree. */
static int self_parse_n(const char *text, size_t n, char *ret, size_t len)
{
	FILE *f = fmemopen((void *)text, n, "r");
	char again[PATH_MAX] = "untouched";
	int r, r2;

	assert_non_null(f);
	r = cgroup2_self_parse(f, ret, len);
	fclose(f);
	r2 = cgroup2_self_parse_text(text, n, again, len);
	assert_int_equal(r, r2);
	if (r == 0)
		assert_string_equal(ret, again);
	return r;
}

static int self_parse(const char *text, char *ret, size_t len)
{
	return self_parse_n(text, strlen(text), ret, len);
}

static void mount_hybrid(void **state)
{
	char path[PATH_MAX];

	assert_int_equal(mount_parse(hybrid_mountinfo, path, sizeof(path)), 0);
	assert_string_equal(path, "/sys/fs/cgroup/unified");
}

static void mount_pure_v2(void **state)
{
	char path[PATH_MAX];

	assert_int_equal(mount_parse(pure_v2_mountinfo, path, sizeof(path)), 0);
	assert_string_equal(path, "/sys/fs/cgroup");
}

static void mount_none(void **state)
{
	char path[PATH_MAX] = "untouched";

	assert_int_equal(mount_parse(no_cgroup2_mountinfo, path, sizeof(path)),
			 -ENOENT);
	assert_int_equal(mount_parse("", path, sizeof(path)), -ENOENT);
	assert_string_equal(path, "untouched");
}

static void mount_skips_escaped_and_checks_room(void **state)
{
	static const char escaped[] =
		"60 22 0:50 / /mnt/a\\040b rw - cgroup2 cgroup2 rw\n"
		"61 22 0:51 / /mnt/ok rw - cgroup2 cgroup2 rw\n";
	char path[PATH_MAX];

	assert_int_equal(mount_parse(escaped, path, sizeof(path)), 0);
	assert_string_equal(path, "/mnt/ok");

	/* "/sys/fs/cgroup" is 14 characters. */
	assert_int_equal(mount_parse(pure_v2_mountinfo, path, 15), 0);
	assert_int_equal(mount_parse(pure_v2_mountinfo, path, 14), -ENAMETOOLONG);
}

static void self_v2(void **state)
{
	char path[PATH_MAX];

	assert_int_equal(self_parse("0::/a/b\n", path, sizeof(path)), 0);
	assert_string_equal(path, "/a/b");
	assert_int_equal(self_parse("0::/\n", path, sizeof(path)), 0);
	assert_string_equal(path, "/");
	/* No newline at the end of the stream. */
	assert_int_equal(self_parse("0::/user.slice/x.scope", path, sizeof(path)), 0);
	assert_string_equal(path, "/user.slice/x.scope");
}

static void self_hybrid(void **state)
{
	static const char hybrid[] =
		"9:name=systemd:/\n"
		"4:memory:/process_api/4a57\n"
		"1:cpu:/\n"
		"0::/egret/run1\n";
	char path[PATH_MAX];

	assert_int_equal(self_parse(hybrid, path, sizeof(path)), 0);
	assert_string_equal(path, "/egret/run1");
}

static void self_missing_or_bad(void **state)
{
	char path[PATH_MAX] = "untouched";

	assert_int_equal(self_parse("9:name=systemd:/\n1:cpu:/\n", path,
				    sizeof(path)), -ENOENT);
	assert_int_equal(self_parse("", path, sizeof(path)), -ENOENT);
	/* "10::/x" is a v1 hierarchy numbered 10, not the v2 line. */
	assert_int_equal(self_parse("10::/x\n", path, sizeof(path)), -ENOENT);
	assert_string_equal(path, "untouched");

	assert_int_equal(self_parse("0::a/b\n", path, sizeof(path)), -EINVAL);
	assert_int_equal(self_parse("0::/abc\n", path, 4), -ENAMETOOLONG);
	assert_int_equal(self_parse("0::/abc\n", path, 5), 0);
	assert_string_equal(path, "/abc");
	/* No path at all; a v2 line with a NUL in it is not trusted. */
	assert_int_equal(self_parse("0::\n", path, sizeof(path)), -EINVAL);
	assert_int_equal(self_parse("0::", path, sizeof(path)), -EINVAL);
	assert_int_equal(self_parse_n("0::/a\0b\n", 8, path, sizeof(path)), -EINVAL);
	/* Blank lines and a v2 line after them; the first v2 line counts. */
	assert_int_equal(self_parse("\n\n0::/x\n0::/y\n", path, sizeof(path)), 0);
	assert_string_equal(path, "/x");
	assert_int_equal(self_parse("1:cpu:/\n0:", path, sizeof(path)), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mount_hybrid),
		cmocka_unit_test(mount_pure_v2),
		cmocka_unit_test(mount_none),
		cmocka_unit_test(mount_skips_escaped_and_checks_room),
		cmocka_unit_test(self_v2),
		cmocka_unit_test(self_hybrid),
		cmocka_unit_test(self_missing_or_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
