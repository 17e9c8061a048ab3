// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/lockfile.h"

/* Is @fd still the file at @path? A holder that dropped it unlinked the
 * name, maybe made anew by someone else since. */
static int still_named(int fd, const char *path)
{
	struct stat mine, named;

	if (fstat(fd, &mine) < 0)
		return -errno;
	if (mine.st_nlink == 0 || stat(path, &named) < 0)
		return 0;
	return mine.st_dev == named.st_dev && mine.st_ino == named.st_ino;
}

int lockfile_take(const char *path, int op)
{
	/* Each lap means a holder dropped the name between our open and our
	 * lock: bounded, as each needs another process's whole turn. */
	for (int lap = 0; lap < 64; lap++) {
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600), r;

		if (fd < 0)
			return -errno;
		if (flock(fd, op) < 0) {
			r = errno == EAGAIN ? -EWOULDBLOCK : -errno;
			close(fd);
			return r;
		}
		r = still_named(fd, path);
		if (r > 0)
			return fd;
		close(fd);
		if (r < 0)
			return r;
	}
	return -EAGAIN;
}

void lockfile_drop(const char *path, int fd)
{
	if (fd < 0)
		return;
	if (path)
		unlink(path);
	close(fd);
}

int lockfile_held(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), r;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (flock(fd, LOCK_SH | LOCK_NB) == 0)
		r = 0;
	else
		r = errno == EWOULDBLOCK ? 1 : -errno;
	close(fd);
	return r;
}
