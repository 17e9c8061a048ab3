/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * launch/launch_impl.h - what launch/launch.c (the parent's side of a
 * spawn) and launch/spawned.c (the child's) share. Nothing else includes
 * this.
 */
#ifndef EGRET_LAUNCH_IMPL_H
#define EGRET_LAUNCH_IMPL_H

struct launch;

/* In the clone3 child: COMMAND's steps to exec; a step that fails is
 * reported on @pipe_fd (struct launch_error) and the child exits 125
 * (127 or 126 for exec itself). */
_Noreturn void spawned_command(const struct launch *l, int pipe_fd);

/* In the clone3 child, with l->exit_fd: the keeper (keeper.h). Starts
 * COMMAND, hands its pidfd over @sock, waits, writes its status to
 * l->exit_fd and exits with it. */
_Noreturn void spawned_keeper(const struct launch *l, int pipe_fd, int sock);

#endif
