/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* lib/paths.h - where egret keeps things, and checks on directories it trusts. */
#ifndef EGRET_PATHS_H
#define EGRET_PATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* bpffs mount point; pins live in EGRET_PIN_ROOT/<id>/. */
#define EGRET_BPFFS		"/sys/fs/bpf"
#define EGRET_PIN_ROOT		EGRET_BPFFS "/egret"
/* One record per live attempt, flocked by its egret (see state.h). */
#define EGRET_RUN_DIR		"/run/egret"
/* uid-<N>: flocked by the egret whose COMMAND runs as uid N (preflight.h). */
#define EGRET_UID_LOCK_DIR	"/run/egret-uids"
/* egretd's attempts: <id>.argv (how to re-adopt it), <id>.exit (its
 * keeper's status), <id>.sock (where its re-adopter takes callers back). */
#define EGRETD_ATTEMPT_DIR	"/run/egretd-attempts"
/* <id>/limits.txt, limits.json: what an attempt may reach, for COMMAND
 * to read (attempt/limits.h). Root's, mode 0711: searchable, not listable. */
#define EGRET_LIMITS_DIR	"/run/egret-limits"

#define EGRET_ID_MAX		64

/* Attempt ids name files and cgroups: [A-Za-z0-9_.-], not starting with '.'. */
bool attempt_id_valid(const char *id);

/* 16 random hex digits. */
int attempt_id_random(char *ret, size_t len);

/* snprintf for paths: -ENAMETOOLONG if it does not fit (a cut path names
 * another file), 0 otherwise. */
int path_fmt(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Mount bpffs at EGRET_BPFFS unless it already is. */
int bpffs_ensure(void);

/* Unlink every entry of the flat directory @path, then remove it. */
int flat_dir_remove(const char *path);

#endif
