/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dns/proxy.h - the attempt's only resolver.
 *
 * The BPF programs send every port-53 query of the attempt here (UDP and
 * TCP, on 127.0.0.1 and ::1). A question for an allowed name is forwarded
 * upstream (dns/upstream.h); the A/AAAA records of its answer (queried name
 * and CNAME chain) are written into the allow maps, and only then is the
 * answer released. Any other name gets NXDOMAIN and never leaves egret.
 * Every decision goes to the configured observer (dns/decision.h).
 */
#ifndef EGRET_DNS_PROXY_H
#define EGRET_DNS_PROXY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dns/decision.h"

struct allow_maps;
struct dns_proxy;
struct host_rule;
struct loop;
struct names;

#define DNS_PROXY_LISTENERS	4

struct dns_proxy_config {
	const struct host_rule *rules;
	size_t nrules;
	const char *upstreams_csv;	/* "ADDR:PORT,[V6]:PORT" or NULL: resolv.conf */
	const char *resolv_conf;	/* which resolv.conf; NULL: /etc/resolv.conf */
	uint16_t port;			/* this port only (re-adoption), or 0: any free one */
	/* Re-adoption: the listeners as the attempt's keeper held them
	 * (udp4, udp6, tcp4, tcp6; -1 for none), taken over if each is a
	 * listener of @port on loopback, else closed and @port bound anew.
	 * Always consumed. NULL: bind. */
	int *adopt_fds;
	bool pinning;			/* SNI pinning: the attempt pins ports */
	uint32_t min_ttl;		/* seconds */
	/* --audit: names not allowed are answered too (and logged as
	 * would-deny); their addresses are attributed, never learned. */
	bool audit;
	struct dns_observer observer;	/* .decided may be NULL */
};

/*
 * Bind the listening sockets on a free loopback port and set up the
 * upstreams. Before the BPF object is configured: the port is one of its
 * settings. On failure *@ret_step says which step, and nothing is left.
 */
int dns_proxy_open(struct dns_proxy **ret, const struct dns_proxy_config *cfg,
		   const char **ret_step);

/* The listeners' fds (udp4, udp6, tcp4, tcp6; -1 for none): a keeper
 * holds them while egretd may be down (launch.h: hold_fds). */
void dns_proxy_listen_fds(const struct dns_proxy *p, int fds[DNS_PROXY_LISTENERS]);

/* The port of all four listeners (host order), and whether ::1 is one of
 * them (else IPv6 queries go to ::ffff:127.0.0.1). */
uint16_t dns_proxy_port(const struct dns_proxy *p);
bool dns_proxy_ip6_loopback(const struct dns_proxy *p);

/* Which name's answer taught each learned address (for the events). */
const struct names *dns_proxy_names(const struct dns_proxy *p);

/* Start serving from @loop, writing learned addresses into @maps. */
int dns_proxy_start(struct dns_proxy *p, struct loop *loop,
		    const struct allow_maps *maps);

/* Judge later queries by @rules (approvals taken while COMMAND runs). */
void dns_proxy_set_rules(struct dns_proxy *p, const struct host_rule *rules,
			 size_t n);

/* Stop and free everything; queries still upstream are dropped. NULL is
 * fine. */
void dns_proxy_close(struct dns_proxy *p);

#endif
