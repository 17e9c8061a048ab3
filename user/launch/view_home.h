/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * launch/view_home.h - COMMAND's HOME in the view (view.h): a fresh tmpfs
 * of its own at VIEW_HOME, outside /tmp (agents keep helpers there, and
 * some refuse a temporary directory), filled at start from a template the
 * owner keeps (--home-from; egretd: callers.home) and never written back,
 * so that an attempt of one repository cannot leave anything for the next.
 *
 * The copy is bounded (VIEW_HOME_FILES_MAX entries, VIEW_HOME_BYTES_MAX
 * bytes, VIEW_HOME_DEPTH levels: more is refused, never cut silently);
 * every entry must be the owner's (egret lends no file of anyone else's);
 * symlinks are copied as symlinks, never followed; special files are left
 * out; nothing the copy makes is writable by others.
 */
#ifndef EGRET_LAUNCH_VIEW_HOME_H
#define EGRET_LAUNCH_VIEW_HOME_H

#include <sys/types.h>

/* COMMAND's HOME in the view, when no --home names another: a tmpfs of
 * its own over this (empty, root's) directory of the host. */
#define VIEW_HOME		"/run/egret-home"

#define VIEW_HOME_FILES_MAX	10000
#define VIEW_HOME_BYTES_MAX	(256ULL << 20)
#define VIEW_HOME_DEPTH		16

/*
 * In the launch child, as root: mount HOME's tmpfs for @uid:@gid and, with
 * @from >= 0 (the template, an O_PATH fd opened with its owner's rights),
 * copy it in. Async-signal-safe. 0 or -errno (-EPERM: an entry not
 * @owner's; -E2BIG: over a bound).
 */
int view_home_make(int from, uid_t owner, uid_t uid, gid_t gid);

#endif
