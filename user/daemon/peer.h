/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * daemon/peer.h - who is on the other end of an egretd connection, from
 * the kernel only: SO_PEERCRED for the credentials, a pidfd (SO_PEERPIDFD)
 * so that the process cannot be swapped for another with its pid while
 * egretd reads about it, and the process's cgroup and namespaces.
 * Nothing the caller sends says who it is.
 */
#ifndef EGRET_DAEMON_PEER_H
#define EGRET_DAEMON_PEER_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "launch/world.h"

struct daemon_peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;			/* its effective gid at connect() */
	int pidfd;			/* the caller's process; -1 when closed */
	char cgroup[PATH_MAX];		/* its cgroup v2 path, "/a/b", host view */
	struct attempt_world world;	/* its namespaces (pidfd above) */
};

/*
 * Read the peer of the connected unix socket @fd. -ESRCH when the kernel
 * cannot name a process for it (a caller in another PID namespace gets
 * pid 0), or when the process went away before egretd had read it.
 */
int daemon_peer_read(int fd, struct daemon_peer *ret);

void daemon_peer_close(struct daemon_peer *p);

/*
 * egretd's cgroup2 mount (attempt/cgroup.h: cgroup2_mount), read once: a
 * process's mount does not move (as cgroup_keep_path() has it), and the
 * handlers forked after egretd's start (cmd/daemon.c) inherit it instead
 * of each reading /proc/self/mountinfo twice. A failure is not kept. 0,
 * or -errno.
 */
int daemon_cgroup2_mount(char *ret, size_t len);

/*
 * Is the cgroup @cgroup ("/a/b", host view) inside an attempt? 1 when an
 * egret connect4 program is effective there (attached to it or to any
 * ancestor): the kernel's own view, whatever records say. 0, or -errno.
 */
int daemon_cgroup_in_attempt(const char *cgroup);

#endif
