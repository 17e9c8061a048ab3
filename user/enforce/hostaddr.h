/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * enforce/hostaddr.h - the host's own addresses in the BPF host maps, kept current.
 *
 * The programs need to know which addresses are this host's (the only
 * sources a packet of the attempt may carry; special destinations, since a
 * service listening on 0.0.0.0 answers on each) and which are broadcast.
 * The kernel keeps exactly that in the network namespace's local routing
 * table: egret copies its local, broadcast and anycast routes into
 * egret_host4/6 before any program is attached, then follows rtnetlink in
 * the epoll loop. A lost notification (ENOBUFS) means a fresh dump, new
 * entries written before stale ones are removed.
 */
#ifndef EGRET_HOSTADDR_H
#define EGRET_HOSTADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "lib/loop.h"

#define HOSTADDR_MAX_ROUTES	2048

struct hostaddr_route {
	uint8_t family;			/* AF_INET or AF_INET6 */
	uint8_t prefixlen;
	uint8_t type;			/* RTN_LOCAL, RTN_BROADCAST, RTN_ANYCAST */
	uint32_t addr[4];		/* network order */
	uint32_t oif;
};

struct hostaddr {
	int map4, map6;			/* egret_host4/6 (not owned) */
	__u64 attempt;			/* whose entries these are */
	struct loop_source src;		/* the notification socket */
	struct loop *loop;
	struct hostaddr_route *routes;
	size_t nroutes;
	uint64_t resyncs;		/* dumps after lost notifications */
};

/* Subscribe, dump the local table into @map4/@map6 as attempt @attempt's
 * entries. Returns 0 or -errno. */
int hostaddr_open(struct hostaddr *h, int map4, int map6, __u64 attempt);

/* Follow the table's changes in @loop. */
int hostaddr_start(struct hostaddr *h, struct loop *loop);

void hostaddr_close(struct hostaddr *h);

/* Is @addr (@family AF_INET/AF_INET6, network order) in a prefix of the
 * local table the maps hold (one of the host's addresses, a broadcast, an
 * anycast)? What egret_host4/6 answer, without asking the kernel. */
bool hostaddr_has(const struct hostaddr *h, int family, const void *addr);

/*
 * Parse one rtnetlink route message: a route of the local table of a type
 * we keep fills @ret and returns 1; any other message 0; malformed
 * -EBADMSG. For the unit tests and hostaddr.c.
 */
int hostaddr_parse_route(const void *msg, size_t len, struct hostaddr_route *ret);

/* The EGRET_HOST_* flag of a route type (0 for types we do not keep). */
__u32 hostaddr_flag(uint8_t type);

#endif
