/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lib/lockfile.h - flock()ed files that leave with their last holder.
 *
 * A lock file kept forever costs an inode per name ever locked (a uid, a
 * build, an egretd); one removed by its holder opens a race: a second
 * process opens the file, the holder unlinks it and lets go, the second
 * locks the unlinked inode while a third creates and locks a new file of
 * the same name, and both believe they hold it. So a lock is taken only
 * on the inode the name still points to, checked after flock(); the
 * holder of an exclusive lock may then unlink the name before it closes.
 */
#ifndef EGRET_LOCKFILE_H
#define EGRET_LOCKFILE_H

/* Open @path (created 0600 if missing) and flock() it with @op (LOCK_EX
 * or LOCK_SH, | LOCK_NB). The fd, or -errno: -EWOULDBLOCK when another
 * holds it and @op has LOCK_NB. */
int lockfile_take(const char *path, int op);

/* Let go of the exclusive lock @fd on @path, unlinking the name first
 * (NULL @path: only close). Accepts fd -1. */
void lockfile_drop(const char *path, int fd);

/* Does anyone hold an exclusive lock on @path? 1, 0 (free, or no such
 * file), or -errno. Never creates the file; a shared lock taken for an
 * instant may make a LOCK_NB taker fail meanwhile. */
int lockfile_held(const char *path);

#endif
