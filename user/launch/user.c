// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch/user.h"

static int parse_id(const char *s, unsigned long *ret)
{
	char *end;

	if (!*s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*ret = strtoul(s, &end, 10);
	if (errno || *end || *ret >= (unsigned long)(uid_t)-1)
		return -EINVAL;
	return 0;
}

int launch_user_parse(const char *text, struct launch_user *ret)
{
	struct launch_user u = { .set = true };
	char name[256], *colon;
	struct passwd *pw;
	unsigned long id;

	if (strlen(text) >= sizeof(name) || !*text)
		return -EINVAL;
	strcpy(name, text);
	colon = strchr(name, ':');
	if (colon)
		*colon++ = '\0';

	pw = parse_id(name, &id) == 0 ? getpwuid((uid_t)id) : getpwnam(name);
	if (pw) {
		u.uid = pw->pw_uid;
		u.gid = pw->pw_gid;
		snprintf(u.name, sizeof(u.name), "%s", pw->pw_name);
		snprintf(u.home, sizeof(u.home), "%s", pw->pw_dir ? pw->pw_dir : "");
		snprintf(u.shell, sizeof(u.shell), "%s", pw->pw_shell ? pw->pw_shell : "");
		u.ngroups = LAUNCH_MAX_GROUPS;
		if (getgrouplist(pw->pw_name, pw->pw_gid, u.groups,
				 &u.ngroups) < 0)
			return -E2BIG;
	} else if (parse_id(name, &id) == 0) {
		/* A bare uid with no passwd entry: its own number as group. */
		u.uid = (uid_t)id;
		u.gid = (gid_t)id;
		u.groups[0] = u.gid;
		u.ngroups = 1;
	} else {
		return -ESRCH;
	}

	if (colon) {
		struct group *gr;

		gr = parse_id(colon, &id) == 0 ? getgrgid((gid_t)id) :
						getgrnam(colon);
		if (gr)
			u.gid = gr->gr_gid;
		else if (parse_id(colon, &id) == 0)
			u.gid = (gid_t)id;
		else
			return -ESRCH;
		/* An explicit group replaces the user's group list. */
		u.groups[0] = u.gid;
		u.ngroups = 1;
	}
	if (u.uid == 0)
		return -EPERM;
	*ret = u;
	return 0;
}
