/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dns/proxy.h - the attempt's only resolver.
 *
 * The BPF programs send every port-53 query of the attempt here (UDP and
 * TCP, on 127.0.0.1 and ::1). A question for an allowed name is forwarded
 * upstream (dns_upstream.h); the A/AAAA records of its answer (queried name
 * and CNAME chain) are written into the allow maps, and only then is the
 * answer released. Any other name gets NXDOMAIN and never leaves egret.
 */
#ifndef EGRET_DNS_PROXY_H
#define EGRET_DNS_PROXY_H

#include <stdbool.h>
#include <stdint.h>
#include <ares.h>

#include "dns/names.h"
#include "dns/upstream.h"
#include "enforce/allow.h"
#include "lib/loop.h"
#include "observe/events.h"
#include "policy/host.h"

#define DNS_MAX_INFLIGHT	256	/* queries upstream at once */
#define DNS_MAX_TCP_CONNS	64
#define DNS_MAX_ARES_SOCKS	32

struct dns_proxy_config {
	const struct host_rule *rules;
	size_t nrules;
	const char *upstreams_csv;	/* "ADDR:PORT,[V6]:PORT" or NULL: resolv.conf */
	uint32_t min_ttl;		/* seconds */
	/* --audit: names not allowed are answered too (and logged as
	 * would-deny); their addresses are attributed, never learned. */
	bool audit;
	struct events *events;		/* decisions go here, or NULL */
};

struct dns_stats {
	uint64_t queries;
	uint64_t allowed;		/* forwarded upstream */
	uint64_t denied;		/* NXDOMAIN: name not allowed */
	uint64_t nodata;		/* HTTPS/SVCB answered empty */
	uint64_t notimp;		/* a type egret does not forward */
	uint64_t servfail;		/* upstream failure, full map, over cap */
	uint64_t learned;		/* addresses written to the maps */
};

/* A loop source that knows its proxy (listeners, timer, c-ares sockets). */
struct proxy_source {
	struct loop_source src;
	struct dns_proxy *p;
	ares_channel channel;		/* c-ares sockets only */
};

struct tcp_conn;

struct dns_proxy {
	struct dns_proxy_config cfg;
	struct loop *loop;
	struct allow_maps maps;
	uint16_t port;			/* host order, same on all four sockets */
	bool ip6_loopback;		/* ::1 usable; else v6 goes to ::ffff:127.0.0.1 */
	struct proxy_source udp4, udp6, tcp4, tcp6;
	struct proxy_source ares_timer;
	struct dns_upstreams ups;	/* where allowed names go (dns_upstream.h) */
	struct proxy_source socks[DNS_MAX_ARES_SOCKS];
	struct tcp_conn *conns;
	unsigned int nconns;
	unsigned int inflight;
	bool channels_ready;
	struct dns_stats stats;
	struct names *names;		/* learned address -> name */
};

/* Bind the listening sockets on a free loopback port and set up c-ares.
 * Before the BPF object loads: the port goes into its read-only data. */
int dns_proxy_open(struct dns_proxy *p, const struct dns_proxy_config *cfg,
		   const char **ret_step);

/* Start serving from @loop, writing learned addresses into @maps. */
int dns_proxy_start(struct dns_proxy *p, struct loop *loop,
		    const struct allow_maps *maps);

/* Judge later queries by @rules (approvals taken while COMMAND runs). */
void dns_proxy_set_rules(struct dns_proxy *p, const struct host_rule *rules,
			 size_t n);

void dns_proxy_close(struct dns_proxy *p);

#endif
