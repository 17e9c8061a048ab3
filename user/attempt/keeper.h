/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attempt/keeper.h - a small root process between egretd's supervisor and
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
#ifndef EGRET_ATTEMPT_KEEPER_H
#define EGRET_ATTEMPT_KEEPER_H

#include <sys/types.h>

/* In the supervisor: the pidfd the keeper hands over on @sock, and its
 * pid as our PID namespace numbers it. 0 or -errno. */
int keeper_take_pidfd(int sock, int *ret_pidfd, pid_t *ret_pid);

/* The pid of @pidfd's process in our PID namespace, or -ESRCH. */
pid_t pidfd_pid(int pidfd);

/* The status a keeper wrote to @exit_fd: 0-255, or -ENODATA if none (it
 * was killed before COMMAND ended). */
int keeper_read_status(int exit_fd);

#endif
