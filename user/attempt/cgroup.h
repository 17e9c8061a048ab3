/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* attempt/cgroup.h - finding cgroup v2, and creating, emptying, removing cgroups. */
#ifndef EGRET_CGROUP_H
#define EGRET_CGROUP_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Mount point of cgroup2 in a /proc/self/mountinfo stream. -ENOENT if none. */
int cgroup2_mount_parse(FILE *mountinfo, char *ret, size_t len);

/* Cgroup v2 path ("/a/b") in a /proc/self/cgroup stream ("0::/a/b"). */
int cgroup2_self_parse(FILE *proc_cgroup, char *ret, size_t len);

/* The same from @n bytes of such text (not NUL-terminated). */
int cgroup2_self_parse_text(const char *text, size_t n, char *ret, size_t len);

/* Both from /proc/self. */
int cgroup2_mount(char *ret, size_t len);
int cgroup2_self(char *ret, size_t len);

/* Where the set of programs keeps the kernel's cgroup hooks on
 * (enforce/shared.h): "<cgroup2 mount>/egret-keep", read once per
 * process. Into @ret, or "" and -errno. */
int cgroup_keep_path(char *ret, size_t len);

/*
 * The path ("/a/b", from the cgroup2 root) of the cgroup whose id is @id,
 * as the kernel finds it (open_by_handle_at on our cgroup2 mount, which
 * must show the whole hierarchy): for a process whose /proc/PID/cgroup
 * reads "/.." from a cgroup namespace of our own. -EXDEV when our mount
 * does not reach it; needs CAP_DAC_READ_SEARCH.
 */
int cgroup2_path_of_id(uint64_t id, char *ret, size_t len);

/*
 * The cgroup of process @pid (its pidfd @pidfd), from the cgroup2 root.
 * /proc/PID/cgroup says it relative to our cgroup namespace: from egretd
 * in a container of its own (a private cgroup namespace, Docker's default)
 * that reads "/../...". Then the kernel's cgroup id of the pidfd
 * (PIDFD_GET_INFO, Linux 6.13) names it instead; -EXDEV without.
 */
int cgroup2_of_pid(pid_t pid, int pidfd, char *ret, size_t len);

/* The cgroup id (a cgroup directory's inode number) and thread-group id
 * of the process of @pidfd, from the kernel (PIDFD_GET_INFO, Linux 6.13):
 * 0, -ENOTTY or -EINVAL on older kernels, -ESRCH once it is gone. */
int cgroup_id_of_pidfd(int pidfd, uint64_t *ret_id, pid_t *ret_tgid);

/* Is @path a directory on a cgroup2 filesystem? 0, -ENOTDIR, -EMEDIUMTYPE. */
int cgroup_check_dir(const char *path);

/* mkdir -p @path, refusing to create anything outside cgroup2. */
int cgroup_mkdir_parents(const char *path);

/* Kill every process in @path (cgroup.kill), wait up to @timeout_ms for it
 * to be empty, and remove it. -ENOENT if it is already gone. */
int cgroup_kill_remove(const char *path, int timeout_ms);

/* SIGKILL everything in @path's subtree and wait until it is empty, at
 * most @timeout_ms: 0, or a negative errno (-ETIMEDOUT). The cgroup
 * stays. */
int cgroup_kill_wait(const char *path, int timeout_ms);

/* Does @path's cgroup.events say populated 1? 1, 0 or negative errno. */
int cgroup_populated(const char *path);

#endif
