/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * requests/approvals.h - hosts and addresses an operator approved for one
 * repository, from `egret requests approve` (docs/POLICY.md, "Requests").
 *
 * One file per repository, <policy dir>/approved.d/<owner>__<name>.yaml,
 * under the policy's ownership rules. Its entries join the repository's
 * effective policy after its policy section, each with an origin naming
 * the request, who approved it and when. The file records its repository
 * and is refused for any other, so two names mapping to one file name
 * cannot share approvals.
 */
#ifndef EGRET_APPROVALS_H
#define EGRET_APPROVALS_H

#include <stdbool.h>
#include <sys/stat.h>

#include "policy/host.h"
#include "policy/policy.h"
#include "policy/spec.h"

#define APPROVALS_DIR_NAME	"approved.d"
#define APPROVALS_MAX		1024
#define APPROVAL_BY_MAX		64
#define APPROVAL_AT_MAX		32

struct approval {
	bool is_host;
	struct host_rule host;		/* is_host; PORTS_FROM_POLICY if unset */
	struct allow_spec spec;		/* !is_host */
	unsigned long request;		/* request id; 0: written by hand */
	char by[APPROVAL_BY_MAX];	/* "alice (uid 0)" */
	char at[APPROVAL_AT_MAX];	/* "2026-11-30T08:31:02Z" */
};

struct approvals {
	char repo[POLICY_REPO_MAX];
	struct approval *items;
	size_t n, cap;
};

/* The approvals directory next to @policy_file (NULL: the default policy
 * path), and the file of @repo in it. -ENAMETOOLONG. */
int approvals_dir(const char *policy_file, char *buf, size_t len);
int approvals_path(const char *policy_file, const char *repo, char *buf,
		   size_t len);

/* Parse @text for @repo; every problem goes to @d. -EINVAL if any. */
int approvals_parse(struct approvals *a, const char *text, size_t len,
		    const char *file, const char *repo, struct diag *d);

/* Load @path for @repo with trusted_file_read(); absent is empty, not an
 * error. */
int approvals_load(struct approvals *a, const char *path, const char *repo,
		   struct diag *d);

/* Append @ap unless the same host or address with the same ports is there
 * (returns 1). -E2BIG past APPROVALS_MAX. */
int approvals_add(struct approvals *a, const struct approval *ap);

/* Write atomically (same directory, fsync, rename), mode 0644. */
int approvals_save(const struct approvals *a, const char *path);

/* Add every entry to @out: ports from @out's `ports:` where none are
 * given, origin "approval #ID, BY, DATE". */
int approvals_apply(const struct approvals *a, struct policy *out);

/* Did @path change since *@stamp (updated)? Absent counts as a state. */
bool approvals_changed(const char *path, struct stat *stamp);

void approvals_free(struct approvals *a);

#endif
