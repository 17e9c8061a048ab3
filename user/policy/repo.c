// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* repo.c - what a repository's name may be; apart from policy.c so that
 * egretd's client, which checks --repo, links nothing of the policy. */
#include <stdbool.h>
#include <string.h>

#include "policy/policy.h"

bool policy_repo_name_valid(const char *name)
{
	const char *slash = strchr(name, '/'), *c;
	size_t len = strlen(name);

	if (!slash || slash == name || !slash[1] || strchr(slash + 1, '/') ||
	    len >= POLICY_REPO_MAX)
		return false;
	for (c = name; *c; c++)
		if (!(*c == '/' || *c == '.' || *c == '_' || *c == '-' ||
		      (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9')))
			return false;
	return name[0] != '.' && slash[1] != '.';
}
