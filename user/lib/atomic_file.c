// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/atomic_file.h"

int atomic_file_write(const char *path, mode_t mode,
		      int (*fill)(FILE *f, const void *ctx), const void *ctx)
{
	char tmp[PATH_MAX];
	FILE *f;
	int fd, r;

	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;

	/* ".NAME.new-PID": hidden, so no listing takes it for a file. */
	if ((size_t)snprintf(tmp, sizeof(tmp), "%.*s.%s.new-%d", dirlen, path,
			     path + dirlen, getpid()) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, mode) < 0 || !(f = fdopen(fd, "w"))) {
		r = -errno;
		close(fd);
		unlink(tmp);
		return r;
	}
	r = fill(f, ctx);
	if (r == 0 && ferror(f))
		r = -EIO;
	if (fflush(f) != 0 && r == 0)
		r = -errno;
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (fclose(f) != 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}
