/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dns/decision.h - what the DNS proxy decided about one question, and the
 * observer it tells. The proxy knows nothing of logs or requests: the
 * attempt wires an observer that hands each decision to the event log
 * (observe/events.h) and, for refused lookups, to the request log.
 */
#ifndef EGRET_DNS_DECISION_H
#define EGRET_DNS_DECISION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "dns/wire.h"

enum dns_verdict {
	DNS_VERDICT_ALLOW,		/* forwarded and answered */
	DNS_VERDICT_DENY,		/* NXDOMAIN, never forwarded */
	DNS_VERDICT_WOULD_DENY,		/* --audit: answered, nothing learned */
	DNS_VERDICT_SERVFAIL,		/* allowed, but no usable answer */
	DNS_VERDICT_MAX,
};

/* Why a question got no upstream answer (events' "reason", the summary). */
enum dns_why {
	DNS_WHY_NONE = 0,
	DNS_WHY_NOT_ALLOWED,		/* no host rule: NXDOMAIN */
	DNS_WHY_CLASS,			/* a class other than IN: NXDOMAIN */
	DNS_WHY_TIMEOUT,		/* the upstream resolver did not answer */
	DNS_WHY_UPSTREAM,		/* it failed otherwise (refused, unreachable) */
	DNS_WHY_MALFORMED,		/* its answer did not parse */
	DNS_WHY_TOO_MANY,		/* more addresses than egret learns */
	DNS_WHY_MAP_FULL,		/* the allow map is full */
	DNS_WHY_BUSY,			/* too many questions upstream at once */
	DNS_WHY_QUIET,			/* an agent profile's known noise: NXDOMAIN,
					 * never a request (policy/host.h) */
	DNS_WHY_MAX,
};

struct dns_decision {
	const char *name;		/* lower case, no trailing dot; "" = root */
	unsigned int qtype;
	enum dns_verdict verdict;
	enum dns_why why;		/* DNS_WHY_NONE for a plain allow */
	const struct dns_addr *addrs;	/* the answer's, learned unless would-deny */
	int naddrs;
	uint32_t ttl;			/* their lifetime after --dns-min-ttl */
	/* Who asked: set for a refused question only (its request's
	 * example process); @client_tcp: it came over TCP. */
	const struct sockaddr *client;
	bool client_tcp;
};

struct dns_observer {
	void (*decided)(void *ctx, const struct dns_decision *d);
	void *ctx;
};

#endif
