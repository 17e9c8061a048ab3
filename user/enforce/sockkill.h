/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * enforce/sockkill.h - destroying an attempt's TCP sockets (teardown).
 */
#ifndef EGRET_SOCKKILL_H
#define EGRET_SOCKKILL_H

#include <linux/types.h>

/*
 * Destroy every TCP socket of the current network namespace whose cgroup
 * is @cgroup_id (its id: the attempt's key), listeners and orphans
 * included, with SOCK_DESTROY (CONFIG_INET_DIAG_DESTROY; CAP_NET_ADMIN).
 * Returns how many, or the first -errno.
 */
int sockets_destroy_cgroup(__u64 cgroup_id);

/* Destroy the one TCP socket of cgroup @cgroup_id whose socket cookie
 * is @cookie (an over-budget connection, bpf/lib/account.h): 1, 0 when
 * it is gone already, or -errno. */
int sockets_destroy_cookie(__u64 cgroup_id, __u64 cookie);

/* Can this kernel destroy sockets (CONFIG_INET_DIAG_DESTROY)? 0, or the
 * -errno the kernel gave (-EOPNOTSUPP without it). Asked once. */
int sockets_destroy_probe(void);

#endif
