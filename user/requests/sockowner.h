/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * requests/sockowner.h - which process of an attempt sent a DNS query.
 *
 * The DNS proxy sees only the client socket's address. Its inode comes
 * from /proc/net/{udp,tcp}[6] (egret shares the attempt's network
 * namespace: the BPF redirect targets loopback), and the process from the
 * fd tables of the pids in the attempt's cgroup. Used once per refused
 * name and attempt, for the request's example process; never to decide.
 */
#ifndef EGRET_SOCKOWNER_H
#define EGRET_SOCKOWNER_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/socket.h>

#define SOCKOWNER_MAX_FDS	65536	/* fd links read per lookup, at most */

/* The tgid and comm of the process in @cgroup holding the socket whose
 * local address is @peer. -ENOENT if none is found. */
int sock_owner_find(const char *cgroup, const struct sockaddr *peer, bool tcp,
		    uint32_t *ret_pid, char *comm, size_t commlen);

#endif
