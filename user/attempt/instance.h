/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attempt/instance.h - which egretd an attempt belongs to.
 *
 * Several egretds may share a host (a packaged one, a test suite's, one
 * per tenant), and with it /run/egret. An egretd is known by the socket
 * it serves: a restart of it serves the same path, another egretd
 * another. Its attempts' records name that path from their creation
 * (state.h: instance); an egretd re-adopts only its own, and `egret gc`
 * leaves an egretd's attempts alone while that egretd runs.
 *
 * While its accept loop runs, an egretd holds an exclusive lock named
 * after its socket: a second egretd of the same socket is refused (it
 * would steal the socket's name), and anyone can tell a running egretd
 * from one that is gone.
 */
#ifndef EGRET_ATTEMPT_INSTANCE_H
#define EGRET_ATTEMPT_INSTANCE_H

#include <stddef.h>

/* The instance served on @listen_fd: the path it is bound to (a socket
 * systemd passed may sit elsewhere than @configured), else @configured.
 * 0 or -ENAMETOOLONG. */
int daemon_instance_name(int listen_fd, const char *configured, char *ret, size_t len);

/* Take @instance's lock for this process (not for the processes it
 * forks: they close it). The fd, or -EBUSY when another egretd holds it
 * (for a second, in case it is about to let go), or -errno. */
int daemon_instance_lock(const char *instance);

/* Let go of it (the lock file goes too). */
void daemon_instance_unlock(const char *instance, int fd);

/* Does an egretd of @instance run? 1, 0, or -errno. */
int daemon_instance_running(const char *instance);

/* The lock files of egretds that are not running (killed: one that
 * stops lets go of its own), removed. */
void daemon_instance_prune(void);

#endif
