/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * launch/environ.h - the environment COMMAND starts with: its user's, not egret's.
 *
 * egret runs as root; COMMAND runs as --user. What su, runuser and
 * systemd-run --uid do, egret does: HOME, USER, LOGNAME and SHELL are the
 * target user's (HOME from --home if given, e.g. a per-attempt directory
 * the miner prepared), and the variables that name the caller's own places
 * (MAIL, XDG_RUNTIME_DIR, XDG_*_HOME) are dropped; the rest passes, and PATH
 * keeps only the entries COMMAND's user can search (filtered in the child,
 * as that user). With --clean-env only the essentials and --pass-env names
 * survive: what a miner does with its agent's allowlist. --setenv comes
 * last. A login shell that refuses logins (nologin, false) reads as
 * /bin/sh: agents spawn $SHELL.
 */
#ifndef EGRET_ENVIRON_H
#define EGRET_ENVIRON_H

#include <stdbool.h>
#include <stddef.h>

struct launch_user;


#define ENVIRON_MAX_VARS	4096	/* more is an error, not a cut */
#define ENVIRON_MAX_OPTS	64	/* --pass-env, --setenv each */
#define ENVIRON_EGRET_VARS	4	/* egret's own after them (EGRET_LIMITS...) */
#define ENVIRON_CLEAN_PATH	"/usr/local/bin:/usr/bin:/bin"

struct environ_opts {
	const char *home;		/* --home DIR, or NULL: the user's */
	bool clean;			/* --clean-env */
	const char *pass[ENVIRON_MAX_OPTS];	/* --pass-env NAME */
	size_t npass;
	const char *set[ENVIRON_MAX_OPTS + ENVIRON_EGRET_VARS];	/* --setenv NAME=VALUE */
	size_t nset;
};

/* NAME=VALUE with a valid NAME ([A-Za-z_][A-Za-z0-9_]*), or just NAME
 * (@want_value false). */
bool environ_assignment_valid(const char *text, bool want_value);

/*
 * COMMAND's environment from egret's @from (NULL-terminated) for @user
 * (NULL: root, --allow-root: then nothing is replaced but --setenv and
 * --clean-env apply). The array and its strings are one allocation:
 * free(*@ret). Returns 0, or -E2BIG/-ENOMEM.
 */
int environ_build(char *const *from, const struct launch_user *user,
		  const struct environ_opts *o, bool pty, char ***ret);

/*
 * In the child, as COMMAND's user (async-signal-safe): drop the entries of
 * @envp's PATH that this user cannot search, in place.
 */
void environ_filter_path(char **envp);

/* Drop egret's own variables naming the attempt's limits directory
 * (EGRET_LIMITS, EGRET_LIMITS_JSON, EGRET_DENIALS, EGRET_REQUEST) from
 * @envp, in place: the directory is not in COMMAND's view. In the child:
 * async-signal-safe. */
void environ_drop_egret(char **envp);

#endif
