// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/landlock.h>

#include "launch/landlock.h"

/* Debian 12's uapi header stops at ABI 3: the attr with its later fields,
 * laid out as the kernel has it (handled_access_net: ABI 4; scoped: 6). */
struct egret_landlock_attr {
	__u64 handled_access_fs;
	__u64 handled_access_net;
	__u64 scoped;
};

int landlock_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0,
			 LANDLOCK_CREATE_RULESET_VERSION);

	return v > 0 ? (int)v : 0;
}

void landlock_plan_make(struct landlock_plan *ret, int abi, bool abstract_scope)
{
	struct landlock_plan p = { .abi = abi };

	/* A domain that does not handle REFER denies every rename and link
	 * across directories (EXDEV): ABI 1 has no such right, so no domain
	 * at all there; from ABI 2 it is handled, and granted beneath "/". */
	if (abi < 2) {
		*ret = (struct landlock_plan){ .abi = 0 };
		return;
	}
	p.handled_fs = LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_REFER;
	p.attr_size = abi >= 4 ? 16 : 8;
	if (abi >= 6) {
		p.scoped = EGRET_LANDLOCK_SCOPE_SIGNAL |
			   (abstract_scope ? EGRET_LANDLOCK_SCOPE_ABSTRACT_UNIX : 0);
		p.attr_size = sizeof(struct egret_landlock_attr);
	}
	*ret = p;
}

#define FS_TRUNCATE	(1ULL << 14)	/* ABI 3; Debian 12's header stops before */

/* Every right that changes what is on disk, as this ABI knows them. */
static __u64 write_rights(int abi)
{
	return LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
	       LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
	       LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
	       LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
	       LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM |
	       (abi >= 3 ? FS_TRUNCATE : 0);
}

/* @rights beneath @path (or on it, a file). A missing path: nothing. */
static int allow_path(int ruleset, const char *path, __u64 rights)
{
	struct landlock_path_beneath_attr rule = { .allowed_access = rights };
	int r = 0;

	rule.parent_fd = open(path, O_PATH | O_CLOEXEC);
	if (rule.parent_fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) < 0)
		r = -errno;
	close(rule.parent_fd);
	return r;
}

/* Writing to stdio that is a file or a device (a log the caller gave,
 * its terminal), reopened as /dev/stdout: a rule on the file itself. */
static int allow_stdio(int ruleset, __u64 file_rights)
{
	for (int fd = 0; fd <= 2; fd++) {
		struct landlock_path_beneath_attr rule = {
			.allowed_access = file_rights, .parent_fd = fd,
		};
		struct stat st;

		if (fstat(fd, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode)))
			continue;
		if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) < 0)
			return -errno;
	}
	return 0;
}

/* The view's rules: all of @writes beneath its places; writing (not
 * making) in /dev and /proc and to stdio. */
static int allow_view(int ruleset, int abi, const char *const *writable)
{
	__u64 writes = write_rights(abi) | LANDLOCK_ACCESS_FS_REFER;
	__u64 file = LANDLOCK_ACCESS_FS_WRITE_FILE | (abi >= 3 ? FS_TRUNCATE : 0);
	int r = 0;

	for (; r == 0 && *writable; writable++)
		r = allow_path(ruleset, *writable, writes & ~LANDLOCK_ACCESS_FS_MAKE_BLOCK);
	if (r == 0)
		r = allow_path(ruleset, "/dev", file);
	if (r == 0)
		r = allow_path(ruleset, "/proc", file);
	return r < 0 ? r : allow_stdio(ruleset, file);
}

void landlock_plan_make_nested(struct landlock_plan *ret, int abi, bool abstract_scope)
{
	landlock_plan_make(ret, abi, abstract_scope);
	if (ret->abi < 6) {
		*ret = (struct landlock_plan){ .abi = 0 };
		return;
	}
	ret->handled_fs = 0;
}

int landlock_apply(const struct landlock_plan *p, const char *const *writable)
{
	struct egret_landlock_attr attr = {
		.handled_access_fs = p->handled_fs | (writable ? write_rights(p->abi) : 0),
		.scoped = p->scoped,
	};
	long fd;
	int r = 0;

	if (p->abi <= 0)
		return 0;
	fd = syscall(SYS_landlock_create_ruleset, &attr, p->attr_size, 0);
	if (fd < 0)
		return -errno;
	/* Links and renames across directories: everywhere (the write
	 * rights above still judge both ends). */
	if (attr.handled_access_fs & LANDLOCK_ACCESS_FS_REFER)
		r = allow_path((int)fd, "/", LANDLOCK_ACCESS_FS_REFER);
	if (r == 0 && writable)
		r = allow_view((int)fd, p->abi, writable);
	if (r == 0 && syscall(SYS_landlock_restrict_self, (int)fd, 0) < 0)
		r = -errno;
	close((int)fd);
	return r;
}
