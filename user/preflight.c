// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include "preflight.h"
#include "util.h"

/* Daemons whose API socket grants root: a container they start for
 * COMMAND would run outside the attempt's cgroup. */
static const char *const daemon_sockets[] = {
	"/run/docker.sock",
	"/var/run/docker.sock",
	"/run/containerd/containerd.sock",
	"/run/docker/containerd/containerd.sock",
	"/run/k3s/containerd/containerd.sock",
	"/run/podman/podman.sock",
	"/run/crio/crio.sock",
	"/var/run/crio/crio.sock",
	"/run/cri-dockerd.sock",
	"/run/buildkit/buildkitd.sock",
	"/run/libvirt/libvirt-sock",
	"/run/libvirt/virtqemud-sock",
	"/var/snap/lxd/common/lxd/unix.socket",
	"/var/lib/lxd/unix.socket",
	"/var/lib/incus/unix.socket",
	"/var/snap/microk8s/current/var/kubernetes/backend/kine.sock",
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
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 ||
		    domain != AF_UNIX) {
			snprintf(err, errlen,
				 "%s is a non-unix socket made outside the attempt: COMMAND could send through it unjudged (give it a pipe or a file)",
				 names[fd]);
			return -EPERM;
		}
	}
	return 0;
}

/*
 * In a child that has become @user, can the socket at each path be
 * written (connected to)? access() as that user is the kernel's own
 * answer: owner, groups, mode and ACLs, and search permission on every
 * directory above. Returns the index of the first reachable socket, or -1.
 */
static int first_reachable(const struct launch_user *user)
{
	siginfo_t info = {};
	pid_t pid = fork();

	if (pid < 0)
		return -2;
	if (pid == 0) {
		if (setgroups((size_t)user->ngroups, user->groups) < 0 ||
		    setresgid(user->gid, user->gid, user->gid) < 0 ||
		    setresuid(user->uid, user->uid, user->uid) < 0)
			_exit(255);
		for (size_t i = 0; i < ARRAY_SIZE(daemon_sockets); i++) {
			struct stat st;

			if (stat(daemon_sockets[i], &st) == 0 && S_ISSOCK(st.st_mode) &&
			    access(daemon_sockets[i], W_OK) == 0)
				_exit((int)i + 1);
		}
		_exit(0);
	}
	if (waitid(P_PID, (id_t)pid, &info, WEXITED) < 0 ||
	    info.si_code != CLD_EXITED || info.si_status == 255)
		return -2;
	return info.si_status - 1;
}

int preflight_daemon_sockets(const struct launch_user *user, char *err,
			     size_t errlen)
{
	int i = -1;

	if (user) {
		i = first_reachable(user);
		if (i == -2) {
			snprintf(err, errlen, "cannot check which daemon sockets COMMAND's user reaches");
			return -EPERM;
		}
	} else {
		/* uid 0 owns them: any that exists is reachable. */
		for (size_t k = 0; k < ARRAY_SIZE(daemon_sockets) && i < 0; k++) {
			struct stat st;

			if (stat(daemon_sockets[k], &st) == 0 && S_ISSOCK(st.st_mode))
				i = (int)k;
		}
	}
	if (i < 0)
		return 0;
	snprintf(err, errlen,
		 "COMMAND's user could connect to %s, which acts as root outside the attempt (run COMMAND as a user that cannot)",
		 daemon_sockets[i]);
	return -EPERM;
}
