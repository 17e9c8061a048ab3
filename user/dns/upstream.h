/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dns/upstream.h - the resolvers egret forwards allowed names to.
 *
 * One c-ares channel per upstream and transport, each making one try of
 * DNS_UPSTREAM_TRY_MS. egret itself decides where the next try goes: the
 * first upstream in order that is not known dead, failing over within the
 * time common clients wait for one try (glibc, Go and dig: 5 s), so a
 * silent resolver costs a SERVFAIL the client still sees, not a client
 * timeout. An upstream that did not answer is remembered as dead for
 * DNS_UPSTREAM_DEAD_MS: later lookups go to a live one first, with no
 * per-lookup penalty. Each change of an upstream's state is said once.
 *
 * The only part of egret that knows c-ares: its sockets and timer are
 * watched from the caller's loop, and what a query comes to is said in
 * egret's own terms (enum dns_upstream_status).
 */
#ifndef EGRET_DNS_UPSTREAM_H
#define EGRET_DNS_UPSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


#define DNS_UPSTREAM_MAX	4	/* resolv.conf takes 3 */
#define DNS_UPSTREAM_TRY_MS	1000	/* one try at one upstream */
#define DNS_UPSTREAM_MAX_TRIES	3
#define DNS_UPSTREAM_BUDGET_MS	2500	/* no try starts later: the answer beats 5 s */
#define DNS_UPSTREAM_DEAD_MS	30000	/* a silent upstream goes last this long */

struct loop;
struct dns_upstreams;

enum dns_upstream_status {
	DNS_UPSTREAM_ANSWER,		/* an answer (any rcode): @abuf */
	DNS_UPSTREAM_SILENT,		/* no upstream answered in time, or none listens */
	DNS_UPSTREAM_FAILED,		/* another failure (no memory, a bad reply) */
	DNS_UPSTREAM_GONE,		/* the upstreams are being closed */
};

/* What one query came to; runs exactly once per dns_upstream_send(). */
typedef void (*dns_upstream_done)(void *arg, enum dns_upstream_status status,
				  const uint8_t *abuf, size_t alen);

/*
 * Set up the upstreams of @csv ("ADDR:PORT,[V6]:PORT"), or, when NULL,
 * those of the resolv.conf at @resolv_conf (NULL: /etc/resolv.conf).
 * Returns 0, -EINVAL for a bad or empty list, -EIO or -ENOMEM.
 */
int dns_upstreams_open(struct dns_upstreams **ret, const char *csv,
		       const char *resolv_conf);

/*
 * Say now, in one line each, which upstream cannot be reached at all: no
 * route to it, or (loopback) nothing listening. Sends one "." NS query to a
 * loopback upstream only, and waits at most 50 ms. Returns how many.
 */
int dns_upstreams_check(struct dns_upstreams *ups);

/* Watch c-ares' sockets and deadlines from @loop (before any send).
 * @after(@ctx) runs at the end of each event that may have run a @done. */
int dns_upstreams_start(struct dns_upstreams *ups, struct loop *loop,
			void (*after)(void *ctx), void *ctx);

/* Send @msg (a query egret built) over UDP or TCP; @done runs once (maybe
 * before this returns). -EMSGSIZE, -ENOMEM: @done will not run. */
int dns_upstream_send(struct dns_upstreams *ups, bool tcp, const uint8_t *msg,
		      size_t len, dns_upstream_done done, void *arg);

/* Fail every query left (DNS_UPSTREAM_GONE), then free. NULL is fine. */
void dns_upstreams_close(struct dns_upstreams *ups);

#endif
