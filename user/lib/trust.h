/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lib/trust.h - the checks on files and directories egret trusts, one
 * home: "trusted" (owned by root or egret's uid, not writable by group or
 * others: their author decides what attempts reach) and "private" (egret's
 * own, mode 0700: pins, records, spares, state).
 */
#ifndef EGRET_TRUST_H
#define EGRET_TRUST_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "lib/diag.h"

/* Owned by root or us, not writable by group or others. */
bool stat_trusted(const struct stat *st);

/* A directory of ours with mode 0700, as private_dir_ensure() makes it. */
bool stat_private_dir(const struct stat *st);

/*
 * Make @path a directory owned by us with mode 0700, creating it if needed.
 * An existing one owned by someone else, or not a directory, is refused
 * (-EPERM / -ENOTDIR): anyone who could write there could tamper with pins
 * or records. Looser modes on our own directory are tightened.
 */
int private_dir_ensure(const char *path);

/* Make @path a directory (mode 0755) if missing; refused (-EPERM) unless
 * it is one and stat_trusted (the approvals directory the loader reads). */
int trusted_dir_ensure(const char *path);

/* @path's directory made (trusted_dir_ensure) or found root's and not
 * group/world-writable; a stale socket at @path removed, but nothing that
 * is not a socket. For a socket about to be bound there: 0 or -errno. */
int trusted_socket_prepare(const char *path);

/* A unix socket of @type (SOCK_STREAM, SOCK_SEQPACKET; | SOCK_NONBLOCK)
 * listening at @path (trusted_socket_prepare()), root:@gid with @mode and
 * never wider while it is made. The fd, or -errno. */
int trusted_socket_listen(const char *path, int type, gid_t gid, mode_t mode, int backlog);

/*
 * Read a file whose author decides what attempts reach (the policy, an
 * approvals file): refused (-EPERM) unless it and the directories above its
 * real path are owned by root or egret's uid and not writable by group or
 * others (sshd's StrictModes). -ENOENT when absent. @what names the file
 * in messages ("policy", "approvals file").
 */
int trusted_file_read(const char *path, const char *what, size_t max,
		      char **ret_text, size_t *ret_len, struct diag *d);

#endif
