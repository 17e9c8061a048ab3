// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preflight.h"
#include "util.h"

/* Daemons whose API socket grants root: a container they start for
 * COMMAND would run outside the attempt's cgroup. */
static const char *const daemon_sockets[] = {
	"/run/docker.sock",
	"/var/run/docker.sock",
	"/run/containerd/containerd.sock",
	"/run/podman/podman.sock",
	"/run/crio/crio.sock",
	"/var/run/crio/crio.sock",
	"/run/cri-dockerd.sock",
	"/run/buildkit/buildkitd.sock",
};

int preflight_std_fds(char *err, size_t errlen)
{
	static const char *const names[] = { "stdin", "stdout", "stderr" };

	for (int fd = 0; fd <= 2; fd++) {
		socklen_t len = sizeof(int);
		struct stat st;
		int domain;

		if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
			continue;
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 &&
		    (domain == AF_INET || domain == AF_INET6)) {
			snprintf(err, errlen,
				 "%s is an inet socket made outside the attempt: COMMAND could send through it unjudged (give it a pipe or a file)",
				 names[fd]);
			return -EPERM;
		}
	}
	return 0;
}

static bool in_groups(const struct launch_user *u, gid_t gid)
{
	if (u->gid == gid)
		return true;
	for (int i = 0; i < u->ngroups; i++)
		if (u->groups[i] == gid)
			return true;
	return false;
}

int preflight_daemon_sockets(const struct launch_user *user, char *err,
			     size_t errlen)
{
	for (size_t i = 0; i < ARRAY_SIZE(daemon_sockets); i++) {
		struct stat st;
		bool writable;

		if (stat(daemon_sockets[i], &st) < 0 || !S_ISSOCK(st.st_mode))
			continue;
		if (!user)
			writable = true;	/* uid 0 owns or may use it */
		else if (st.st_uid == user->uid)
			writable = st.st_mode & S_IWUSR;
		else if (in_groups(user, st.st_gid))
			writable = st.st_mode & S_IWGRP;
		else
			writable = st.st_mode & S_IWOTH;
		if (writable) {
			snprintf(err, errlen,
				 "COMMAND's user could connect to %s, which acts as root outside the attempt (run COMMAND as a user outside that socket's group)",
				 daemon_sockets[i]);
			return -EPERM;
		}
	}
	return 0;
}
