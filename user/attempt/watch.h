/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attempt/watch.h - approvals that land while COMMAND runs.
 *
 * The repository's approvals file is stat()ed every APPROVALS_POLL_MS; when
 * it changed, it is loaded under the same rules as at start and what is new
 * is added: names to the DNS proxy's rules (the next lookup is answered),
 * addresses to the allow maps (the next connect passes). Nothing is taken
 * away from a running attempt; removals apply from the next one.
 */
#ifndef EGRET_APPROVALS_WATCH_H
#define EGRET_APPROVALS_WATCH_H

#include <sys/stat.h>

#include "enforce/allow.h"
#include "lib/loop.h"
#include "policy/policy.h"

struct dns_proxy;

#define APPROVALS_POLL_MS	1000

struct approvals_watch {
	const char *path, *repo;
	struct stat stamp;		/* the file as it was when loaded */
	struct policy rules;		/* the attempt's entries, plus new ones */
	struct dns_proxy *dns;
	struct allow_maps maps;
	struct loop *loop;
	struct loop_source timer;
};

/*
 * Watch @path for @repo. @stamp: the file as effective_policy() read it;
 * @base: the attempt's effective policy (copied: the proxy is switched to
 * the watch's own rules).
 */
int approvals_watch_start(struct approvals_watch *w, struct loop *loop,
			  const char *path, const char *repo,
			  const struct stat *stamp, const struct policy *base,
			  struct dns_proxy *dns, const struct allow_maps *maps);

/* Stop polling; the rules stay until approvals_watch_free(). */
void approvals_watch_stop(struct approvals_watch *w);
void approvals_watch_free(struct approvals_watch *w);

#endif
