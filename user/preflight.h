/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * preflight.h - what COMMAND would hold or reach from the start, checked
 * before it runs.
 *
 * Two ways around the cgroup's programs need no system call egret could
 * judge: a socket created outside the attempt (judged by its creator's
 * cgroup, if at all) handed over as stdin/stdout/stderr, and a unix socket
 * of a daemon that acts as root (docker, containerd, podman, cri-o),
 * through which COMMAND could start an unconfined container.
 */
#ifndef EGRET_PREFLIGHT_H
#define EGRET_PREFLIGHT_H

#include <stddef.h>

#include "launch.h"

/* Is fd 0, 1 or 2 a socket other than unix (inet, packet, vsock...)?
 * -EPERM with a reason in @err. */
int preflight_std_fds(char *err, size_t errlen);

/*
 * Could @user (or root, for NULL) write - that is, connect - to one of the
 * root-equivalent daemon sockets that exist on this host (docker,
 * containerd, podman, cri-o, buildkit, libvirt, LXD, Incus, microk8s)?
 * -EPERM naming it in @err. Asked of the kernel by a child that has become
 * @user, so groups, modes and ACLs count as they will for COMMAND.
 */
int preflight_daemon_sockets(const struct launch_user *user, char *err,
			     size_t errlen);

#endif
