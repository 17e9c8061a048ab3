/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * daemon/run_argv.h - the command line of the egret run egretd starts for
 * a request: egretd's own options (the user, the view, the cgroup, the
 * state), the request's fields as options, the options it passes on, then
 * "--" and COMMAND's words. Every option is a row of egret run's table
 * (attempt/run_options.def) that says who writes it; the request's
 * strings are only ever option values or COMMAND's words.
 */
#ifndef EGRET_DAEMON_RUN_ARGV_H
#define EGRET_DAEMON_RUN_ARGV_H

#include <sys/types.h>

#include "daemon/config.h"
#include "daemon/peer.h"
#include "daemon/wire.h"
#include "lib/strv.h"

/* What egretd writes of its own, beside the request. */
struct run_argv_from {
	uid_t uid;				/* the attempt's */
	const struct daemon_peer *peer;		/* the caller */
	const struct daemon_caller *caller;	/* its entry in egretd.yaml */
	const char *cgroup_mount;		/* the cgroup2 mount, in egretd's view */
	const char *state_dir;
};

/*
 * The most words egretd writes for any request the wire admits (the
 * wire's limits, and the rows egretd writes itself or a field carries):
 * the capacity of the strv daemon_run_argv() fills.
 */
size_t daemon_run_argv_max(void);

/*
 * The command line for @run into @argv (strv_init()ed): 0, or -E2BIG when
 * it does not fit, -ENOMEM, or -EINVAL for a word that no row of the
 * table lets egretd write (a bug, caught before any attempt runs).
 */
int daemon_run_argv(struct strv *argv, const struct wire_run *run,
		    const struct run_argv_from *from);

#endif
