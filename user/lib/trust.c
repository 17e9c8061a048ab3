// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/trust.h"
#include "lib/util.h"

static bool owned_by_root_or_us(const struct stat *st)
{
	return st->st_uid == 0 || st->st_uid == geteuid();
}

bool stat_trusted(const struct stat *st)
{
	return owned_by_root_or_us(st) && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

bool stat_private_dir(const struct stat *st)
{
	return S_ISDIR(st->st_mode) && st->st_uid == geteuid() &&
	       (st->st_mode & 07777) == 0700;
}

int private_dir_ensure(const char *path)
{
	struct stat st;

	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != geteuid())
		return -EPERM;
	if ((st.st_mode & 07777) != 0700 && chmod(path, 0700) < 0)
		return -errno;
	return 0;
}

int trusted_dir_ensure(const char *path)
{
	struct stat st;

	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(path, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) && stat_trusted(&st) ? 0 : -EPERM;
}

/*
 * Like sshd's StrictModes, for the real path of the opened policy file
 * (symlinks resolved, so a link cannot vouch for a loose directory): its
 * directory must be stat_trusted; every directory above it too, but
 * a sticky one (like /tmp) may be writable by others when the entry below
 * it is ours, since nobody else can then rename or remove that entry.
 */
static int check_ancestors(int fd, const char *what, struct diag *d)
{
	char link[64], real[4096], *slash;
	struct stat st, child;
	ssize_t n;
	bool first = true;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, real, sizeof(real) - 1);
	if (n <= 0 || real[0] != '/') {
		diag_say(d, "cannot resolve the %s's real path", what);
		return -EINVAL;
	}
	real[n] = '\0';
	if (fstat(fd, &child) < 0)
		return -errno;
	while ((slash = strrchr(real, '/'))) {
		slash[slash == real ? 1 : 0] = '\0';
		if (stat(real, &st) < 0)
			return -errno;
		if (!owned_by_root_or_us(&st))
			goto refuse;
		if (!stat_trusted(&st) &&
		    (first || !(st.st_mode & S_ISVTX) || !owned_by_root_or_us(&child)))
			goto refuse;
		if (slash == real)
			break;
		child = st;
		first = false;
	}
	return 0;
refuse:
	diag_say(d, "refused: %s (above the %s) must be owned by root and not group/world-writable (chown root; chmod go-w)",
		 real, what);
	return -EPERM;
}

int trusted_file_read(const char *path, const char *what, size_t max,
		      char **ret_text, size_t *ret_len, struct diag *d)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	ssize_t n;
	int r;

	d->file = path;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		int err = errno;

		diag_say(d, "%s", strerror(err));
		return -err;
	}
	if (fstat(fd, &st) < 0) {
		diag_say(d, "%s", strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		diag_say(d, "not a regular file");
		return -EINVAL;
	}
	/* Whoever can write it (or replace it in a directory above)
	 * decides what the attempt reaches. */
	if (!stat_trusted(&st)) {
		diag_say(d, "refused: the %s must be owned by root and not group/world-writable (chown root; chmod go-w)",
			 what);
		return -EPERM;
	}
	r = check_ancestors(fd, what, d);
	if (r < 0)
		return r;
	if ((size_t)st.st_size > max) {
		diag_say(d, "larger than %zu bytes", max);
		return -EFBIG;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text)
		return -ENOMEM;
	n = read(fd, text, (size_t)st.st_size);
	if (n < 0) {
		diag_say(d, "%s", strerror(errno));
		return -errno;
	}
	text[n] = '\0';
	*ret_len = (size_t)n;
	*ret_text = TAKE_PTR(text);
	return 0;
}

int trusted_socket_prepare(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)], *slash;
	struct stat st;
	int r;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return -EINVAL;
	*slash = '\0';
	r = trusted_dir_ensure(dir);
	if (r < 0)
		return r;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return -EEXIST;
		if (unlink(path) < 0)
			return -errno;
	}
	return 0;
}

int trusted_socket_listen(const char *path, int type, gid_t gid, mode_t mode, int backlog)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, r;
	mode_t old;

	r = trusted_socket_prepare(path);
	if (r < 0)
		return r;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Made 0600 (umask), then opened to the group: never wider. */
	old = umask(0177);
	r = bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ? -errno : 0;
	umask(old);
	if (r == 0 && (chown(path, 0, gid) < 0 || chmod(path, mode) < 0 ||
		       listen(fd, backlog) < 0))
		r = -errno;
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}
