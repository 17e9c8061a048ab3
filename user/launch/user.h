/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* launch/user.h - who COMMAND runs as: --user USER[:GROUP] resolved. */
#ifndef EGRET_LAUNCH_USER_H
#define EGRET_LAUNCH_USER_H

#include <stdbool.h>
#include <sys/types.h>

#define LAUNCH_MAX_GROUPS 64

struct launch_user {
	bool set;		/* switch credentials; else stay root, capless */
	uid_t uid;
	gid_t gid;
	gid_t groups[LAUNCH_MAX_GROUPS];
	int ngroups;
	/* From the passwd entry; "" for a bare uid that has none. */
	char name[64];
	char home[1024];
	char shell[256];
};

/* "USER[:GROUP]" (names or numbers) -> credentials with supplementary groups. */
int launch_user_parse(const char *text, struct launch_user *ret);

#endif
