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
 */
#ifndef EGRET_DNS_UPSTREAM_H
#define EGRET_DNS_UPSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ares.h>
#include <arpa/inet.h>

#define DNS_UPSTREAM_MAX	4	/* resolv.conf takes 3 */
#define DNS_UPSTREAM_TRY_MS	1000	/* one try at one upstream */
#define DNS_UPSTREAM_MAX_TRIES	3
#define DNS_UPSTREAM_BUDGET_MS	2500	/* no try starts later: the answer beats 5 s */
#define DNS_UPSTREAM_DEAD_MS	30000	/* a silent upstream goes last this long */

struct dns_upstreams;

/* The outcome of one query: c-ares' status of the last try and, for
 * ARES_SUCCESS, its answer. */
typedef void (*dns_upstream_done)(void *arg, int status, const uint8_t *abuf, int alen);

/* Every socket c-ares opens or closes, for the caller's event loop. */
typedef void (*dns_upstream_sock_fn)(void *data, ares_channel ch, int fd,
				     int readable, int writable);

struct dns_upstream_chan {
	struct dns_upstreams *ups;
	ares_channel ch;
};

struct dns_upstream {
	char name[INET6_ADDRSTRLEN + 8];	/* "ADDR:PORT", "[V6]:PORT" */
	struct dns_upstream_chan udp;		/* ARES_FLAG_IGNTC: TC reaches the client */
	struct dns_upstream_chan tcp;		/* ARES_FLAG_USEVC: for clients on TCP */
	uint64_t dead_until_ms;			/* 0: answering, as far as we know */
	bool said_dead;
};

struct dns_upstreams {
	struct dns_upstream s[DNS_UPSTREAM_MAX];
	size_t n;
	const char *origin;			/* "--dns-upstream", "/etc/resolv.conf" */
	dns_upstream_sock_fn sock_fn;
	void *sock_data;
	unsigned int edns_size;
};

/*
 * Set up the upstreams of @csv ("ADDR:PORT,[V6]:PORT"), or resolv.conf's
 * when NULL. Returns 0, -EINVAL for a bad list, -EIO if c-ares fails.
 */
int dns_upstreams_init(struct dns_upstreams *ups, const char *csv,
		       unsigned int edns_size, dns_upstream_sock_fn fn, void *data);

/*
 * Say now, in one line each, which upstream cannot be reached at all: no
 * route to it, or (loopback) nothing listening. Sends one "." NS query to a
 * loopback upstream only, and waits at most 50 ms. Returns how many.
 */
int dns_upstreams_check(struct dns_upstreams *ups);

/* Send @msg (a query egret built) over UDP or TCP; @done runs once. */
int dns_upstream_send(struct dns_upstreams *ups, bool tcp, const uint8_t *msg,
		      size_t len, dns_upstream_done done, void *arg);

/* The sooner of @max and the next c-ares deadline, in ms. */
uint64_t dns_upstreams_timeout_ms(struct dns_upstreams *ups, uint64_t max);

/* Let c-ares handle @fd's readiness (ARES_SOCKET_BAD: deadlines only). */
void dns_upstreams_process(struct dns_upstreams *ups, ares_channel ch,
			   int rfd, int wfd);

/* Fails every query left (ARES_EDESTRUCTION). */
void dns_upstreams_destroy(struct dns_upstreams *ups);

#endif
