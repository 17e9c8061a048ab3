/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * enforce/tasks.h - which uids the host's tasks run as, through the set's
 * task iterator (bpf/tasks.bpf.c): the fast answer to "does anything run
 * as this uid?" (attempt/preflight.h).
 */
#ifndef EGRET_TASKS_H
#define EGRET_TASKS_H

#include <sys/types.h>

/* Does a live task of egret's PID namespace run with @uid as its real,
 * effective, saved or filesystem uid (any thread)? 1, 0, or -errno when
 * it cannot tell (no iterator pinned: -ENOENT). Which one is /proc's to
 * say, in egret's own numbering. */
int tasks_uid_runs(uid_t uid);

#endif
