/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * daemon/adopt_impl.h - what adopt.c (the re-adopter) takes from
 * adopt_hub.c (where its caller comes back): the record, the hub.
 */
#ifndef EGRET_DAEMON_ADOPT_IMPL_H
#define EGRET_DAEMON_ADOPT_IMPL_H

/* Attempt @id's record (EGRET_RUN_DIR/<id>) opened with @flags: the fd,
 * or -errno (-EINVAL: not an attempt id). */
int adopt_record_open(const char *id, int flags);

/* Listen on attempt @id's <id>.sock (root's only, non-blocking): the fd,
 * or -errno. */
int adopt_hub_listen(const char *id);

#endif
