/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attempt/state.h - the record of a live attempt, EGRET_RUN_DIR/<id>.
 *
 * The egret that owns an attempt holds an exclusive flock on its record for
 * as long as it lives. The kernel drops the lock when that process dies, by
 * SIGKILL too, so "lockable" means "stale" with no pid-reuse guesswork.
 */
#ifndef EGRET_STATE_H
#define EGRET_STATE_H

#include <limits.h>
#include <sys/types.h>
#include <time.h>

#include "lib/paths.h"

#define STATE_HELD_DNS	4

struct attempt_state {
	char id[EGRET_ID_MAX + 1];
	char cgroup[PATH_MAX];	/* absolute cgroupfs path */
	char pins[PATH_MAX];	/* EGRET_PIN_ROOT/<id> */
	pid_t pid;		/* the owning egret */
	time_t started;		/* wall clock, seconds */
	char repo[128];		/* --repo, or "" */
	long uid;		/* COMMAND's uid (--user), or -1: its lock
				 * (preflight.h) goes with the attempt */
	/* egretd's attempts only (daemon = 1), from the record's creation:
	 * whose they are (the egretd instance, and its caller), and, once
	 * COMMAND runs, what a re-adopting egretd needs (daemon/adopt.h). */
	int daemon;
	char instance[108];	/* the socket its egretd serves (attempt/instance.h) */
	uid_t caller;		/* the caller's uid (SO_PEERCRED) */
	pid_t keeper;		/* COMMAND's keeper (keeper.h), host pid; 0 before */
	pid_t command;		/* COMMAND, host pid; 0 before */
	unsigned int dns_port;	/* the DNS proxy's loopback port */
	/* What the keeper holds for a re-adopting egretd, by the fd numbers
	 * it has them under (> 2), 0 for none: the DNS proxy's listeners
	 * (udp4, udp6, tcp4, tcp6), so that nobody takes the port the
	 * programs send DNS to while egretd is down, and COMMAND's pty. */
	int held_dns[STATE_HELD_DNS];
	int held_pty;
	/* When a gc first found it served by nobody, its egretd not running
	 * (wall clock, seconds), or 0: gc removes it a grace period later
	 * (attempt/gc.h). */
	time_t unserved;
	/* The caller asked for a receipt (--receipt): a re-adopting egretd,
	 * which does not hold the caller's file, keeps one. */
	int receipt;
};

/* Create and lock the record; -EEXIST if the id is taken. @ret_fd keeps
 * the lock and must stay open for the attempt's lifetime. */
int state_create(const struct attempt_state *st, int *ret_fd);

/* Write @st over the record behind @fd (the lock stays). */
int state_update(int fd, const struct attempt_state *st);

/* EGRETD_ATTEMPT_DIR/<@id>.<@suffix>: egretd's files of an attempt
 * ("argv", "exit", "sock"). 0 or -ENAMETOOLONG. */
int state_file_path(const char *id, const char *suffix, char *buf, size_t len);

/* Unlink the record and egretd's files of it (the lock goes with @fd's
 * close). */
int state_remove(const char *id);

/* Parse a record's text. */
int state_parse(const char *text, struct attempt_state *ret);

/* Read the record behind @fd. */
int state_read_fd(int fd, struct attempt_state *ret);

/* Is the record's egret alive (its lock held)? 1, 0, or -errno. */
int state_is_live(int fd);

#endif
