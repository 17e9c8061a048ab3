// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/atomic_file.h"
#include "lib/util.h"

/* Hidden names tried before giving up: each taken one is another live
 * writer's, or a dead one's that a sweep has not removed yet. */
#define HIDDEN_TRIES	64

/* The file being written: its directory, its name there, and (once it
 * has one) its hidden name. */
struct pending {
	int dfd;
	int fd;
	char dir[PATH_MAX];
	const char *name;
	char hidden[NAME_MAX + 1];
};

static int pending_split(struct pending *p, const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;

	p->name = slash ? slash + 1 : path;
	if (!*p->name)
		return -EISDIR;
	if (n >= sizeof(p->dir))
		return -ENAMETOOLONG;
	if (!slash)
		strcpy(p->dir, ".");
	else if (n == 0)
		strcpy(p->dir, "/");
	else
		memcpy(p->dir, path, n), p->dir[n] = '\0';
	return 0;
}

/* ".NAME.new-PID-N", N counted per process: unique while PID lives. */
static int hidden_name(struct pending *p)
{
	static unsigned int seq;

	if ((size_t)snprintf(p->hidden, sizeof(p->hidden), ".%s.new-%d-%u", p->name,
			     (int)getpid(), seq++) >= sizeof(p->hidden))
		return -ENAMETOOLONG;
	return 0;
}

/* Is @fd still the file named @name in @dfd? */
static int still_named(int dfd, const char *name, int fd)
{
	struct stat mine, named;

	if (fstat(fd, &mine) < 0)
		return -errno;
	if (mine.st_nlink == 0 || fstatat(dfd, name, &named, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	return mine.st_dev == named.st_dev && mine.st_ino == named.st_ino;
}

/* No O_TMPFILE here: a hidden name, created, locked and still ours. */
static int pending_open_named(struct pending *p, mode_t mode)
{
	for (int i = 0; i < HIDDEN_TRIES; i++) {
		int r = hidden_name(p);

		if (r < 0)
			return r;
		p->fd = openat(p->dfd, p->hidden,
			       O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
		if (p->fd < 0) {
			if (errno == EEXIST)
				continue;
			return -errno;
		}
		if (flock(p->fd, LOCK_EX) < 0)
			return -errno;
		/* A sweep may have taken the name between open and flock. */
		r = still_named(p->dfd, p->hidden, p->fd);
		if (r > 0)
			return 0;
		close(p->fd);
		p->fd = -1;
		if (r < 0)
			return r;
	}
	return -EEXIST;
}

static int pending_open(struct pending *p, const char *path, mode_t mode)
{
	int r;

	*p = (struct pending){ .dfd = -1, .fd = -1 };
	r = pending_split(p, path);
	if (r < 0)
		return r;
	p->dfd = open(p->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (p->dfd < 0)
		return -errno;
	p->fd = openat(p->dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
	if (p->fd < 0) {
		if (errno != EOPNOTSUPP && errno != EISDIR)
			return -errno;
		r = pending_open_named(p, mode);
	} else if (flock(p->fd, LOCK_EX) < 0) {
		r = -errno;
	}
	if (r == 0 && fchmod(p->fd, mode) < 0)
		r = -errno;
	return r;
}

/* Give the unnamed file @name in its directory (-EEXIST if taken). */
static int pending_link(struct pending *p, const char *name)
{
	char proc[64];

	if (linkat(p->fd, "", p->dfd, name, AT_EMPTY_PATH) == 0)
		return 0;
	/* Before Linux 6.10 AT_EMPTY_PATH wants CAP_DAC_READ_SEARCH. */
	if (errno != ENOENT && errno != EPERM)
		return -errno;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", p->fd);
	if (linkat(AT_FDCWD, proc, p->dfd, name, AT_SYMLINK_FOLLOW) < 0)
		return -errno;
	return 0;
}

/* Name the file: at its name directly when it must not replace one and
 * has no name yet; otherwise through its hidden name. */
static int pending_publish(struct pending *p, bool replace)
{
	int r = 0;

	if (!p->hidden[0] && !replace)
		return pending_link(p, p->name);
	for (int i = 0; !p->hidden[0] && i < HIDDEN_TRIES; i++) {
		r = hidden_name(p);
		if (r == 0)
			r = pending_link(p, p->hidden);
		if (r == -EEXIST)
			p->hidden[0] = '\0';
		else if (r < 0)
			return r;
	}
	if (!p->hidden[0])
		return r;
	if (renameat2(p->dfd, p->hidden, p->dfd, p->name, replace ? 0 : RENAME_NOREPLACE) < 0)
		return -errno;
	p->hidden[0] = '\0';
	return 0;
}

/* Whatever is left of a write that failed: its hidden name, its fds. */
static void pending_done(struct pending *p, bool close_fd)
{
	if (p->hidden[0])
		unlinkat(p->dfd, p->hidden, 0);
	if (close_fd && p->fd >= 0)
		close(p->fd);
	if (p->dfd >= 0)
		close(p->dfd);
}

int atomic_file_write(const char *path, mode_t mode,
		      int (*fill)(FILE *f, const void *ctx), const void *ctx)
{
	struct pending p;
	FILE *f = NULL;
	int r;

	r = pending_open(&p, path, mode);
	if (r == 0 && !(f = fdopen(p.fd, "w")))
		r = -errno;
	if (r == 0)
		r = fill(f, ctx);
	if (r == 0 && ferror(f))
		r = -EIO;
	if (r == 0 && fflush(f) != 0)
		r = -errno;
	if (r == 0 && fsync(p.fd) < 0)
		r = -errno;
	if (r == 0)
		r = pending_publish(&p, true);
	/* The stream owns the fd once it has one: closed with it, after
	 * the rename (the lock goes with it). */
	if (f && fclose(f) != 0 && r == 0)
		r = -errno;
	pending_done(&p, !f);
	return r;
}

int atomic_file_create(const char *path, mode_t mode,
		       int (*fill)(int fd, const void *ctx), const void *ctx,
		       int *ret_fd)
{
	struct pending p;
	int r;

	r = pending_open(&p, path, mode);
	if (r == 0)
		r = fill(p.fd, ctx);
	if (r == 0)
		r = pending_publish(&p, false);
	if (r == 0) {
		*ret_fd = TAKE_FD(p.fd);
		pending_done(&p, false);
		return 0;
	}
	pending_done(&p, true);
	return r;
}

int atomic_file_is_hidden(const char *name)
{
	/* ".new-ID-PID": an attempt's record being born, as egrets before
	 * O_TMPFILE named it; one sweep of /run/egret removes those too. */
	return name[0] == '.' && (!strncmp(name, ".new-", 5) || strstr(name + 1, ".new-"));
}

int atomic_file_sweep_at(int dfd, const char *name)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT || errno == ELOOP ? 0 : -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK ? 0 : -errno;
	/* Renamed into place, or removed, since we opened it: not ours. */
	if (still_named(dfd, name, fd) <= 0)
		return 0;
	if (unlinkat(dfd, name, 0) < 0)
		return errno == ENOENT ? 0 : -errno;
	return 1;
}

int atomic_file_sweep_beside(const char *path)
{
	struct pending p;
	int r = pending_split(&p, path);

	return r < 0 ? r : atomic_file_sweep(p.dir);
}

int atomic_file_sweep(const char *dir)
{
	_cleanup_(closedirp) DIR *d = opendir(dir);
	int removed = 0, failed = 0;
	struct dirent *de;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		int r;

		if (!atomic_file_is_hidden(de->d_name))
			continue;
		r = atomic_file_sweep_at(dirfd(d), de->d_name);
		if (r > 0)
			removed++;
		else if (r < 0 && !failed)
			failed = r;
	}
	return failed ? failed : removed;
}
