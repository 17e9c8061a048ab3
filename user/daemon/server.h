/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * daemon/server.h - egretd's socket and its accept loop: one process per
 * connection (daemon/handle.h), so that each attempt is supervised on its
 * own and outlives a restart of the loop that accepted it.
 */
#ifndef EGRET_DAEMON_SERVER_H
#define EGRET_DAEMON_SERVER_H

#include "daemon/config.h"

/* The listening socket systemd passed (LISTEN_FDS, socket activation;
 * sd_listen_fds(3) without libsystemd): exactly one, meant for this
 * process. The fd, -ENOENT when none was passed, or -errno. */
int daemon_activated_fd(void);

/*
 * The listening socket at @cfg's path, made 0660 root:socket_gid in a
 * directory 0755 of root's (a stale socket there is replaced: call with
 * the instance's lock held, attempt/instance.h). The fd or -errno.
 */
int daemon_listen(const struct daemon_config *cfg);

/* Accept on @fd, as egretd @instance (attempt/instance.h), whose lock
 * @instance_lock this process holds, until SIGTERM or SIGINT; 0, or
 * -errno. */
int daemon_serve(const struct daemon_config *cfg, const char *instance,
		 int instance_lock, int fd);

#endif
