/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * launch/landlock.h - a Landlock domain around COMMAND: what it cannot reach
 * outside its attempt, even as its own uid.
 *
 * Any Landlock domain (ABI 1, Linux 5.13) keeps its processes from
 * ptracing, or reading the memory and fds of, processes outside it. ABI 6
 * (Linux 6.12) adds scopes: no connect or send to an abstract unix socket
 * created outside the domain (they have no owner or mode, so file
 * permissions never judged them: containerd-shim's CVE-2020-15257), and no
 * signal to a process outside it. The attempt's own abstract sockets and
 * children are inside, so they keep working. It needs no privilege and no
 * BPF LSM. Without a view the filesystem is left alone: the ruleset
 * handles creating block devices (which COMMAND cannot do anyway; a domain
 * needs one right) and REFER, granted beneath "/", because a domain that
 * does not handle REFER refuses every rename and link across directories
 * (EXDEV). ABI 1 has no REFER right, so there egret makes no domain at all.
 *
 * With a view (launch/view.h), COMMAND writes only its own places: every
 * right to write, make, remove or truncate is handled, and granted beneath
 * the trees the view mapped and its fresh places alone, plus writing
 * (never making) in /dev and /proc and to COMMAND's stdio files. Nothing
 * outside them, however its modes read (a world-writable file in another
 * caller's worktree, /var/crash, a spool), takes a byte from the attempt.
 */
#ifndef EGRET_LANDLOCK_H
#define EGRET_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct landlock_plan {
	int abi;		/* 0: none (no Landlock, disabled, or ABI 1) */
	__u64 handled_fs;
	__u64 scoped;		/* LANDLOCK_SCOPE_* (ABI 6) */
	size_t attr_size;	/* the ruleset attr as this ABI knows it */
};

#define EGRET_LANDLOCK_SCOPE_ABSTRACT_UNIX	(1ULL << 0)
#define EGRET_LANDLOCK_SCOPE_SIGNAL		(1ULL << 1)

/* The kernel's Landlock ABI version, 0 when there is none. */
int landlock_abi(void);

/*
 * What COMMAND's domain restricts on this kernel. @abstract_scope: keep
 * abstract unix sockets to the attempt's own (off when the operator allows
 * some outside by name: the scope has no exceptions, so the BPF unix
 * programs judge them instead).
 */
void landlock_plan_make(struct landlock_plan *ret, int abi, bool abstract_scope);

/*
 * The same for --nested-sandbox: a domain that handles no filesystem right
 * (one that does refuses every mount, and an agent's sandbox mounts): the
 * scopes alone, so none before ABI 6, and no view rule (landlock_apply's
 * @writable must be NULL).
 */
void landlock_plan_make_nested(struct landlock_plan *ret, int abi, bool abstract_scope);

/* In the child, after no_new_privs (async-signal-safe). @writable: NULL,
 * or the NULL-terminated places COMMAND may write beneath (paths in its
 * mounts; a missing one is skipped). 0 or -errno; a plan with abi 0 does
 * nothing. */
int landlock_apply(const struct landlock_plan *p, const char *const *writable);

#endif
