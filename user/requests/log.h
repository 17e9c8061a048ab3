/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * requests/log.h - an attempt's denials, folded into the request store
 * (requests.h) about once a second and when the attempt ends.
 *
 * Kept in memory per distinct request so a flood of one denial costs one
 * record update; the store's lock is never waited for while COMMAND runs
 * (the DNS proxy shares the loop), only at the final flush.
 */
#ifndef EGRET_REQUEST_LOG_H
#define EGRET_REQUEST_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "dns/decision.h"
#include "egret.h"
#include "lib/loop.h"
#include "requests/store.h"

struct ask;

#define REQUEST_LOG_MAX		256	/* distinct requests per attempt */
#define REQUEST_LOG_FLUSH_MS	1000
#define REQUEST_LOG_OWNER_LOOKUPS 32	/* sock_owner_find() calls per attempt */

struct request_seen {
	struct request r;		/* key, first/last, example process */
	uint64_t unflushed;		/* denials not in the store yet */
	bool stored;			/* this attempt is counted in the store */
	bool owner_tried;		/* sock_owner_find() ran for it */
	bool asked;			/* the agent asked: its why not stored yet */
};

struct request_log {
	const char *dir, *repo, *attempt;
	const char *cgroup;		/* the attempt's, for sock_owner_find() */
	struct request_seen *seen;
	size_t n;
	uint64_t overflow;		/* distinct requests beyond the cap */
	unsigned int owner_lookups;	/* sock_owner_find() calls so far */
	bool warned;
	struct loop *loop;
	struct loop_source timer;
	bool armed;
	/* Each request also as a JSON line here (requests/export.h), when
	 * folded into the store; -1: not. egretd's stdout, for fleets. */
	int json_fd;
};

/* Nothing is written until something is noted. */
int request_log_open(struct request_log *l, const char *dir, const char *repo,
		     const char *attempt, const char *cgroup);
int request_log_start(struct request_log *l, struct loop *loop);

/* One denial. @kind REQUEST_NAME with @port 0 is a refused lookup. */
void request_log_note(struct request_log *l, enum request_kind kind,
		      const char *target, uint16_t port, const char *proto,
		      uint32_t pid, const char *comm);

/*
 * The agent asked for @a (requests/ask.h) from process @pid (@comm): a
 * request per port (or the name's lookup) with its reason, folded in
 * within a second like a denial, counting none. -ENOSPC when the attempt
 * holds REQUEST_LOG_MAX distinct requests already.
 */
int request_log_ask(struct request_log *l, const struct ask *a, uint32_t pid,
		    const char *comm);

/*
 * A refused lookup of @name came from @client: find the process (once per
 * name and attempt) for the request's example. Call after the note.
 */
void request_log_attribute(struct request_log *l, const char *name,
			   const struct sockaddr *client, bool tcp);

/*
 * Which denials become requests - the rule lives here. A destination the
 * allowlist refused (no entry, another port, a special address) is
 * something an operator may approve, @name (the name that taught its
 * address) or else the address itself; a socket type, an option, a
 * forged source or an expired entry (its name is allowed already) is not.
 */
void request_log_event(struct request_log *l, const struct egret_event *e,
		       const char *name, uint64_t count);

/* A refused (or, --audit, would-be refused) address lookup: a request for
 * the name, with who asked when the proxy knows. Other types are not, nor
 * is an agent profile's quiet name (DNS_WHY_QUIET). */
void request_log_lookup(struct request_log *l, const struct dns_decision *d);

/* Fold into the store. @wait: block for its lock (the final flush). */
int request_log_flush(struct request_log *l, bool wait);

/* Leave the loop (before it closes); notes are still kept. */
void request_log_detach(struct request_log *l);

/* Final flush, then free. */
void request_log_close(struct request_log *l);

#endif
