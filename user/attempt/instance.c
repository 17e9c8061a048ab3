// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "attempt/instance.h"
#include "lib/lockfile.h"
#include "lib/paths.h"
#include "lib/trust.h"
#include "lib/util.h"

#define INSTANCE_LOCK_TRIES	10	/* 100 ms apart */

int daemon_instance_name(int listen_fd, const char *configured, char *ret, size_t len)
{
	struct sockaddr_un sun = {};
	socklen_t slen = sizeof(sun);
	const char *name = configured;

	if (getsockname(listen_fd, (struct sockaddr *)&sun, &slen) == 0 &&
	    sun.sun_family == AF_UNIX && slen > offsetof(struct sockaddr_un, sun_path) &&
	    sun.sun_path[0] == '/')
		name = sun.sun_path;
	return path_fmt(ret, len, "%s", name);
}

/* EGRETD_ATTEMPT_DIR/egretd-<hash of the path>.lock */
static int lock_path(const char *instance, char *buf, size_t len)
{
	uint64_t h = fnv1a(14695981039346656037ULL, instance, strlen(instance));

	return path_fmt(buf, len, EGRETD_ATTEMPT_DIR "/egretd-%016llx.lock",
			(unsigned long long)h);
}

int daemon_instance_lock(const char *instance)
{
	char path[PATH_MAX];
	int r = private_dir_ensure(EGRETD_ATTEMPT_DIR);

	if (r == 0)
		r = lock_path(instance, path, sizeof(path));
	if (r < 0)
		return r;
	/* A gc looking whether we run holds it shared for an instant. */
	for (int i = 0; i < INSTANCE_LOCK_TRIES; i++) {
		r = lockfile_take(path, LOCK_EX | LOCK_NB);
		if (r != -EWOULDBLOCK)
			return r;
		poll(NULL, 0, 100);
	}
	return -EBUSY;
}

void daemon_instance_unlock(const char *instance, int fd)
{
	char path[PATH_MAX];

	lockfile_drop(lock_path(instance, path, sizeof(path)) == 0 ? path : NULL, fd);
}

int daemon_instance_running(const char *instance)
{
	char path[PATH_MAX];
	int r = lock_path(instance, path, sizeof(path));

	return r < 0 ? r : lockfile_held(path);
}

void daemon_instance_prune(void)
{
	_cleanup_(closedirp) DIR *d = opendir(EGRETD_ATTEMPT_DIR);
	struct dirent *de;
	char path[PATH_MAX];

	while (d && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		int fd;

		if (strncmp(de->d_name, "egretd-", 7) || n < 5 ||
		    strcmp(de->d_name + n - 5, ".lock") ||
		    path_fmt(path, sizeof(path), EGRETD_ATTEMPT_DIR "/%s", de->d_name) < 0)
			continue;
		fd = lockfile_take(path, LOCK_EX | LOCK_NB);
		lockfile_drop(path, fd);
	}
}
