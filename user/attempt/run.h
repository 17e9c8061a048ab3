/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attempt/run.h - one attempt from start to teardown: its record, cgroup,
 * programs, DNS proxy and event log; COMMAND started in it and supervised
 * until it exits; then everything removed.
 */
#ifndef EGRET_ATTEMPT_RUN_H
#define EGRET_ATTEMPT_RUN_H

#include "attempt/landlock.h"
#include "attempt/launch.h"
#include "attempt/options.h"
#include "attempt/supervise.h"

/* Run @o's COMMAND as @user under @landlock (@control: egretd's client,
 * or NULL). Returns COMMAND's exit
 * status (128+N for signal N), or EXIT_SETUP (125) when egret could not
 * enforce, after one line saying why. */
int attempt_run(const struct run_opts *o, const struct launch_user *user,
		const struct landlock_plan *landlock,
		struct attempt_control *control);

#endif
