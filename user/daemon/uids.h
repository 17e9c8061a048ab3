/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * daemon/uids.h - which uid of attempts.uids a caller's attempt runs as.
 *
 * A uid is one caller's for good: the first attempt that runs as it makes
 * its caller the uid's owner (EGRET_UID_LOCK_DIR/owner-<uid>, kept until
 * reboot, or for as long as that directory lives), and no other caller's
 * attempt ever runs as it. Whatever an attempt could leave behind as its
 * uid - a process, an IPC object, a file in a place no view privatizes -
 * can then reach only later attempts of the same caller, which that
 * caller could run itself. A caller owns at most its share of the range,
 * UIDS_SHARE times its callers.max: holding its own uids busy (processes
 * that outlive attempts) never starves another caller.
 */
#ifndef EGRET_DAEMON_UIDS_H
#define EGRET_DAEMON_UIDS_H

#include <sys/types.h>

#include "daemon/config.h"

#define UIDS_SHARE	2

/* The uids @k may own: UIDS_SHARE x its max, at most the whole range. */
unsigned int uids_share(const struct daemon_config *cfg, const struct daemon_caller *k);

/* In the accept loop, before it forks a connection's process: the owner
 * files it has not read yet (at most every 100 ms), and the next turn
 * among a caller's own uids. Its process's picks start from both. */
void uids_prepare(const struct daemon_config *cfg);

/*
 * A uid for caller @k's next attempt, locked (preflight_uid_lock(), the fd
 * in *@ret_lock): one of its own that is free (the lowest, else from
 * the loop's turn on), else a uid nobody owns yet,
 * which becomes its own, while it owns fewer than its share. A uid some
 * process runs as is passed over. -EBUSY: every uid of its share is busy;
 * -ENOSPC: the range has no unowned uid left for it; other -errno.
 */
int uids_pick(const struct daemon_config *cfg, const struct daemon_caller *k,
	      uid_t *ret, int *ret_lock);

/* Who owns @uid: 0 with the caller's uid in *@ret_owner, -ENOENT when
 * nobody does, -errno (an unreadable owner file counts as owned). */
int uids_owner(uid_t uid, uid_t *ret_owner);

#endif
