/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * launch/keeper.h - a small root process between egretd's supervisor and
 * COMMAND, for attempts egretd may have to re-adopt.
 *
 * Only a parent can learn how its child ended. If the supervisor dies
 * (egretd killed, its unit restarted), an orphaned COMMAND's status would
 * go to whatever reaps it. The keeper is COMMAND's parent instead: it is
 * born in the attempt's cgroup (so it outlives egretd's own cgroup being
 * killed, and goes with the attempt's), waits for COMMAND, writes its
 * exit status to the attempt's exit file (paths.h) and exits with it.
 * It holds nothing else: every fd but that file is closed, every signal
 * but SIGKILL blocked; COMMAND, as another uid, can neither signal nor
 * trace it. It is started by launch.c (launch_spawn with an exit_fd);
 * here are the supervisor's ends of it.
 */
#ifndef EGRET_LAUNCH_KEEPER_H
#define EGRET_LAUNCH_KEEPER_H

#include <sys/types.h>

/*
 * The exit file holds KEEPER_STATUS_LEN bytes from its creation: a
 * placeholder, which the keeper overwrites in place with "%3d\n". Made
 * with its block, the file never needs another, so a full /run cannot
 * cost COMMAND's status.
 */
#define KEEPER_STATUS_LEN	4

/* Write the placeholder into the new exit file @fd. 0 or -errno
 * (-ENOSPC: no room for it). */
int keeper_status_reserve(int fd);

/* @status (0-255) as the keeper writes it, into @buf
 * (KEEPER_STATUS_LEN + 1 bytes). Async-signal-safe. */
void keeper_status_format(int status, char *buf);

/* In the supervisor: the pidfd the keeper hands over on @sock, and its
 * pid as our PID namespace numbers it (the keeper does not reap COMMAND
 * until @sock's other end closes). 0 or -errno. */
int keeper_take_pidfd(int sock, int *ret_pidfd, pid_t *ret_pid);

/* The pid of @pidfd's process in our PID namespace, or -ESRCH. */
pid_t pidfd_pid(int pidfd);

/* The status a keeper wrote to @exit_fd: 0-255, or -ENODATA if none (it
 * was killed before COMMAND ended, or the write failed). */
int keeper_read_status(int exit_fd);

#endif
