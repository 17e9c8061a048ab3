/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attempt/preflight.h - what COMMAND would hold or reach from the start, checked
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
#include <sys/types.h>

struct attempt_world;
struct launch_user;

/* Is fd 0, 1 or 2 a socket other than unix (inet, packet, vsock...)?
 * -EPERM with a reason in @err. */
int preflight_std_fds(char *err, size_t errlen);

/*
 * Could @user (or root, for NULL) write - that is, connect - to one of the
 * root-equivalent daemon sockets that exist on this host (docker,
 * containerd, podman, cri-o, buildkit, libvirt, LXD, Incus, microk8s)?
 * -EPERM naming it in @err. Asked of the kernel by a child that has become
 * @user, in COMMAND's @world (NULL: ours), so groups, modes, ACLs and the
 * mounts count as they will for COMMAND.
 */
int preflight_daemon_sockets(const struct launch_user *user,
			     const struct attempt_world *world, char *err,
			     size_t errlen);

/*
 * Does a process run as @uid (real, effective, saved or filesystem; in any
 * of its threads, zombie threads aside)? One
 * outside the attempt that shares COMMAND's uid can be reached by it
 * through everything the uid owns: its files, its unix sockets, and,
 * where Landlock is missing, ptrace and /proc/PID/mem. -EEXIST naming the
 * first such process in @err; 0 when none; another -errno when /proc
 * cannot be read (the caller then refuses as well).
 */
int preflight_shared_uid(uid_t uid, char *err, size_t errlen);

/*
 * Hold EGRET_UID_LOCK_DIR/uid-<@uid> for the attempt's lifetime: two
 * egrets starting COMMANDs of one uid at once would both find no process
 * of it in /proc. -EWOULDBLOCK when another egret holds it (its pid in
 * *@ret_pid); else 0 with the lock's fd in *@ret_fd, or -errno.
 */
int preflight_uid_lock(uid_t uid, int *ret_fd, pid_t *ret_pid);

/* Let go of @uid's lock @fd (-1: none), its file with it: the directory
 * holds one file per uid in use, not one per uid ever used. */
void preflight_uid_unlock(uid_t uid, int fd);

/* @uid's lock file, if nobody holds it (its holder was killed): gone. */
void preflight_uid_prune(uid_t uid);

/* The same for every uid from @first to @last that has a lock file
 * (egretd's range: a process killed before its attempt's record named
 * the uid leaves one no gc would find). */
void preflight_uid_prune_range(uid_t first, uid_t last);

/*
 * Where COMMAND starts (@dir, or egret's cwd for NULL) and its @home, as
 * @user sees them. Returns PLACES_* bits for what it cannot use: a start
 * directory it cannot search and read, a HOME that is no directory it can
 * write. Asked of the kernel by a child that has become @user, in @world
 * (NULL: ours); -errno if that child could not run.
 */
enum { PLACES_CWD = 1, PLACES_HOME = 2 };
int preflight_places(const struct launch_user *user,
		     const struct attempt_world *world, const char *dir,
		     const char *home);

#endif
