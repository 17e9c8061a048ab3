// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <string.h>
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

int landlock_apply(const struct landlock_plan *p)
{
	struct egret_landlock_attr attr = {
		.handled_access_fs = p->handled_fs,
		.scoped = p->scoped,
	};
	long fd;
	int r = 0;

	if (p->abi <= 0)
		return 0;
	struct landlock_path_beneath_attr everywhere = {
		.allowed_access = LANDLOCK_ACCESS_FS_REFER,
	};

	fd = syscall(SYS_landlock_create_ruleset, &attr, p->attr_size, 0);
	if (fd < 0)
		return -errno;
	everywhere.parent_fd = open("/", O_PATH | O_CLOEXEC);
	if (everywhere.parent_fd < 0 ||
	    syscall(SYS_landlock_add_rule, (int)fd, LANDLOCK_RULE_PATH_BENEATH,
		    &everywhere, 0) < 0 ||
	    syscall(SYS_landlock_restrict_self, (int)fd, 0) < 0)
		r = -errno;
	if (everywhere.parent_fd >= 0)
		close(everywhere.parent_fd);
	close((int)fd);
	return r;
}
