/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lib/atomic_file.h - replace a file whole: readers see the old content or the
 * new, never a mix, and a crash leaves at most a stray ".NAME.new-PID"
 * next to it.
 */
#ifndef EGRET_ATOMIC_FILE_H
#define EGRET_ATOMIC_FILE_H

#include <stdio.h>
#include <sys/types.h>

/*
 * Write @path with @mode (exactly: umask does not apply) from @fill, which
 * prints to the stream and returns 0 or -errno; then fsync and rename over
 * @path. Symlinks are not followed at the temporary name.
 */
int atomic_file_write(const char *path, mode_t mode,
		      int (*fill)(FILE *f, const void *ctx), const void *ctx);

#endif
