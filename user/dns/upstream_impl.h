/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dns/upstream_impl.h - the upstreams' insides, shared by their three files
 * only: dns/upstream.c (the channels, c-ares in the loop, setup and
 * teardown), dns/upstream_try.c (one query's tries: where each goes, and
 * what its outcome says of the upstream), dns/upstream_check.c (which
 * upstream cannot be reached at start). Nothing outside dns/ includes
 * this.
 */
#ifndef EGRET_DNS_UPSTREAM_IMPL_H
#define EGRET_DNS_UPSTREAM_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <arpa/inet.h>
#include <ares.h>

#include "dns/upstream.h"
#include "lib/loop.h"
#include "lib/spares.h"

#define MAX_SOCKS	32	/* c-ares sockets watched at once */

/* One c-ares channel: its one server over one transport. */
struct chan {
	struct dns_upstreams *ups;
	ares_channel ch;			/* NULL: not made yet */
	unsigned int sent;			/* queries since its socket opened */
	unsigned int pending;			/* queries it has not answered */
};

/* UDP goes over two channels in turn: one carries the queries while the
 * other's last ones are answered; then that one's socket is closed and it
 * takes over with a new one. */
struct upstream {
	char name[INET6_ADDRSTRLEN + 8];	/* "ADDR:PORT", "[V6]:PORT" */
	struct chan udp[2];
	unsigned int active;			/* the udp[] that sends */
	struct chan tcp;			/* made at the first TCP client's query */
	uint64_t dead_until_ms;			/* 0: answering, as far as we know */
	bool said_dead;
};

/* A c-ares socket in the caller's loop. */
struct sock {
	struct loop_source src;
	struct dns_upstreams *ups;
	ares_channel ch;
};

struct dns_upstreams {
	struct upstream s[DNS_UPSTREAM_MAX];
	size_t n;
	const char *origin;			/* "--dns-upstream", "/etc/resolv.conf" */
	bool library;				/* ares_library_init() succeeded */
	struct loop *loop;
	struct loop_source timer;		/* c-ares' next deadline */
	uint64_t armed_ms;			/* when it fires (now_ms()), 0: not armed */
	struct dns_rx *rx;			/* UDP answers read in batches */
	struct spares spare;			/* finished queries' state, for the next */
	void (*after)(void *ctx);		/* at the end of each event */
	void *after_ctx;
	struct sock socks[MAX_SOCKS];
};

static inline uint64_t now_ms(void)
{
	return mono_us() / 1000;
}

/* dns/upstream.c: the UDP channel for @u's next query, or its TCP channel
 * (made at the first TCP query; NULL: it could not be); the timer armed
 * for the soonest deadline of every channel. */
struct chan *upstream_chan_udp(struct dns_upstreams *ups, struct upstream *u);
struct chan *upstream_chan_tcp(struct dns_upstreams *ups, struct upstream *u);
void upstream_rearm(struct dns_upstreams *ups);

#endif
