/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attempt/supervise.h - serve the attempt while COMMAND runs.
 */
#ifndef EGRET_ATTEMPT_SUPERVISE_H
#define EGRET_ATTEMPT_SUPERVISE_H

#include <sys/types.h>

#include "attempt/attempt.h"
#include "attempt/terminal.h"

/* Serve DNS, events, requests and approvals for @a, relay @term and the
 * signals of @sigfd, until COMMAND (@pid, @pidfd) exits. Returns its exit
 * status, or -errno. */
int supervise(struct attempt *a, const struct run_opts *o, pid_t pid,
	      int pidfd, int sigfd, struct terminal *term);

#endif
