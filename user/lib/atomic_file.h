/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lib/atomic_file.h - a file written whole, then given its name: readers
 * see the old content or the new, never a mix, and a writer's death leaves
 * no half-written file behind.
 *
 * The new file is born unnamed (O_TMPFILE) and flocked by its writer, then
 * linked. Created, it is linked at its name at once (never replacing one).
 * Replacing, it is linked at a hidden ".NAME.new-PID-N" and renamed over
 * NAME: a writer killed between those two system calls leaves a whole file
 * under the hidden name, unlocked, and atomic_file_sweep() removes it.
 *
 * Where the filesystem has no O_TMPFILE the hidden name is created first,
 * locked, and checked to be still its own (a sweep may have taken it
 * between the two: then it is made anew); a death while it is filled
 * leaves it unlocked, for the next sweep. Either way a hidden name is
 * locked for exactly as long as its writer lives, so a sweep never removes
 * a file that is being written.
 */
#ifndef EGRET_ATOMIC_FILE_H
#define EGRET_ATOMIC_FILE_H

#include <stdio.h>
#include <sys/types.h>

/*
 * Write @path with @mode (exactly: umask does not apply) from @fill, which
 * prints to the stream and returns 0 or -errno; then fsync and rename over
 * @path. Symlinks are not followed at the hidden name. 0 or -errno.
 */
int atomic_file_write(const char *path, mode_t mode,
		      int (*fill)(FILE *f, const void *ctx), const void *ctx);

/*
 * Create @path with @mode, filled by @fill (which writes to the descriptor
 * and returns 0 or -errno), never replacing a file there (-EEXIST). The
 * descriptor (read-write, flocked LOCK_EX) in *@ret_fd. 0 or -errno.
 */
int atomic_file_create(const char *path, mode_t mode,
		       int (*fill)(int fd, const void *ctx), const void *ctx,
		       int *ret_fd);

/*
 * Remove the hidden files of writers that died in the flat directory
 * @dir; leave those still being written. The number removed, or -errno
 * (a missing @dir has none: 0).
 */
int atomic_file_sweep(const char *dir);

/* One hidden file @name of the directory @dfd: 1 removed, 0 left (being
 * written, renamed into place, or not a regular file), or -errno. */
int atomic_file_sweep_at(int dfd, const char *name);

/* The same for the directory @path lies in. */
int atomic_file_sweep_beside(const char *path);

/* Is @name a writer's hidden file (".NAME.new-...")? */
int atomic_file_is_hidden(const char *name);

#endif
