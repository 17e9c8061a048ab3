/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * launch/seccomp.h - the syscall filter COMMAND runs under.
 *
 * egret's enforcement lives in the attempt's cgroup and the initial user
 * namespace. The filter closes the ways around that which need no
 * capability: creating a user namespace (where COMMAND would hold
 * CAP_NET_ADMIN, CAP_SYS_ADMIN...), io_uring (whose operations no syscall
 * filter sees), taking a file descriptor out of another process
 * (pidfd_getfd), loading BPF, and socket families other than unix, inet,
 * inet6 and netlink (AF_VSOCK reaches the hypervisor host; no BPF LSM is
 * needed for this), and set-id bits on any file (chmod and its kin, and
 * the mode of every call that creates one; openat2 is ENOSYS), which would
 * let whoever runs a file COMMAND left run it as the attempt uid; no
 * chmod that lets others write, no extended attributes (POSIX ACLs).
 * Everything else passes.
 *
 * With --nested-sandbox (an agent's own sandbox inside the attempt) user
 * namespaces are let through: COMMAND holds capabilities in a namespace of
 * its own, over mounts it cannot unlock (copied into a less privileged
 * namespace, they are locked together) and sockets the attempt's cgroup
 * programs still judge (they run whatever the network namespace); a new
 * network namespace starts with nothing but its own loopback. What it
 * opens is kernel surface: docs/SECURITY.md, "Nested sandboxes".
 */
#ifndef EGRET_SECCOMP_H
#define EGRET_SECCOMP_H

#include <stdbool.h>

/*
 * Install the filter on the calling thread (after PR_SET_NO_NEW_PRIVS).
 * Runs in the child between clone3 and exec: async-signal-safe, no
 * allocation. Returns 0 or -errno.
 */
int seccomp_install(bool user_namespaces);

#endif
