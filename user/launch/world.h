/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * launch/world.h - the namespaces an attempt starts in when they are not
 * egret's own: those of egretd's caller (a container, a pod), named by a
 * pidfd of the caller's process that egretd got from the kernel.
 *
 * Where each namespace is entered, and why there:
 *  - network: by the supervisor, for the attempt's life, before anything
 *    is made. The DNS proxy's listener and its upstream sockets, and the
 *    host addresses read over rtnetlink, must be the caller's; the BPF
 *    programs judge sockets of any network namespace.
 *  - PID: by the supervisor around clone3 only (pid_for_children), so
 *    that COMMAND lands in the caller's and nothing else egret forks does.
 *  - mount, UTS, IPC, cgroup: by the child after clone3, while it still
 *    has root's capabilities. CLONE_INTO_CGROUP needs the host's cgroup
 *    namespace (the attempt cgroup is outside a delegated namespace's
 *    view), so the cgroup namespace comes after it.
 *  - user: not entered. A caller in a user namespace of its own is
 *    refused (docs/DEPLOYMENT.md): COMMAND's uid and the caller's mapping
 *    would have to be matched first.
 */
#ifndef EGRET_LAUNCH_WORLD_H
#define EGRET_LAUNCH_WORLD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct attempt_world {
	int pidfd;		/* the caller's process; -1: egret's own world */
	pid_t pid;		/* its pid, host view (for /proc/PID/root) */
	int differ;		/* CLONE_NEW* of each namespace not ours */
};

#define WORLD_NONE ((struct attempt_world){ .pidfd = -1 })

/* The namespaces of @pid (its pidfd @pidfd, kept by the caller) that are
 * not this process's, into @ret. -errno when /proc cannot tell. */
int world_read(struct attempt_world *ret, int pidfd, pid_t pid);

static inline bool world_foreign(const struct attempt_world *w)
{
	return w && w->pidfd >= 0 && w->differ;
}

/* Join the caller's network namespace, for this process's life. */
int world_enter_net(const struct attempt_world *w);

/* Make (@enter) or stop making (!@enter) children in the caller's PID
 * namespace. */
int world_pid_for_children(const struct attempt_world *w, bool enter);

/* In a child, before it drops root: the caller's mount, UTS, IPC and
 * cgroup namespaces. Async-signal-safe. 0 or -errno. */
int world_enter_child(const struct attempt_world *w);

/*
 * The caller's /etc/resolv.conf, opened with symlinks resolved inside the
 * caller's root (never the host's): a path to it, "/proc/self/fd/N", in
 * @path, and its fd (to close when done), or -errno.
 */
int world_open_resolv_conf(const struct attempt_world *w, char *path, size_t len);

/* The directory @path (absolute) as the caller sees it, resolved inside
 * its root (never the host's): an O_PATH fd, or -errno. For a check
 * before anything is made; the child checks again where it mounts. */
int world_open_dir(const struct attempt_world *w, const char *path);

/* The same, opened by a child that has become @uid:@gid with no
 * supplementary group: a directory the caller itself can reach (egretd
 * never walks a path with its own rights for a caller). */
int world_open_dir_as(const struct attempt_world *w, const char *path, uid_t uid, gid_t gid);

/* "net, mnt" for @differ, into @buf. */
const char *world_names(int differ, char *buf, size_t len);

#endif
