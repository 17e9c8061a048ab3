/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dns/proxy_impl.h - the proxy's insides, shared by its four files only:
 * dns/proxy.c (its life: open, start, close), dns/query.c (the decision:
 * judge, forward, learn, answer), dns/tcp.c (TCP clients: framing,
 * bounded output), dns/listen.c (the loopback listeners and UDP queries).
 * Nothing outside dns/ includes this.
 *
 * The transports (listen.c, tcp.c) know nothing of the decision: each
 * query they read goes to the proxy's handle_query (query_handle), and
 * the decision replies through them. Calls go one way: proxy.c and
 * query.c call the transports, never the reverse.
 */
#ifndef EGRET_DNS_PROXY_IMPL_H
#define EGRET_DNS_PROXY_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "dns/proxy.h"
#include "dns/wire.h"
#include "enforce/allow.h"
#include "lib/loop.h"
#include "lib/spares.h"

struct dns_upstreams;
struct names;

#define DNS_MAX_INFLIGHT	256	/* queries upstream at once */
#define DNS_MAX_TCP_CONNS	64
#define DNS_UDP_BATCH		16	/* datagrams read or sent per system call */
#define DNS_UDP_QUERY_MAX	4096	/* a UDP query's room; longer ones are FORMERR */
#define DNS_UDP_SLOT		1280	/* a queued answer's room; longer ones go alone */

struct dns_stats {
	uint64_t queries;
	uint64_t allowed;		/* forwarded upstream */
	uint64_t denied;		/* NXDOMAIN: name not allowed */
	uint64_t quiet;			/* of those, an agent's known noise */
	uint64_t nodata;		/* HTTPS/SVCB answered empty */
	uint64_t notimp;		/* a type egret does not forward */
	uint64_t servfail;		/* upstream failure, full map, over cap */
	uint64_t learned;		/* addresses written to the maps */
};

/* A listener that knows its proxy. */
struct proxy_source {
	struct loop_source src;
	struct dns_proxy *p;
};

struct tcp_conn;
struct query;

/* UDP answers waiting for the end of the event that made them, to leave
 * in one sendmmsg(). */
struct udp_out {
	int fd;				/* the listener they leave from */
	unsigned int n;
	struct mmsghdr msgs[DNS_UDP_BATCH];
	struct iovec iov[DNS_UDP_BATCH];
	struct sockaddr_storage to[DNS_UDP_BATCH];
	uint8_t data[DNS_UDP_BATCH][DNS_UDP_SLOT];
};

struct dns_proxy {
	struct dns_proxy_config cfg;
	struct loop *loop;
	struct allow_maps maps;
	uint16_t port;			/* host order, same on all four sockets */
	bool ip6_loopback;		/* ::1 usable; else v6 goes to ::ffff:127.0.0.1 */
	struct proxy_source udp4, udp6, tcp4, tcp6;
	struct dns_upstreams *ups;	/* where allowed names go */
	struct tcp_conn *conns;
	unsigned int nconns;
	unsigned int inflight;
	struct dns_stats stats;
	struct names *names;		/* learned address -> name */
	struct udp_out *out;
	struct spares spare;		/* answered queries' state, for the next */
	/* Where the transports hand each query they read (@tmpl: where it
	 * came from; copied if it goes upstream): query_handle. */
	void (*handle_query)(struct dns_proxy *p, const uint8_t *msg, size_t len,
			     struct query *tmpl);
};

/* Where a query came from, so its answer goes back the same way. */
struct query {
	struct dns_proxy *p;
	struct dns_question q;
	uint8_t qraw[DNS_HEADER_LEN + DNS_NAME_MAX + 2 + 4];	/* header+question */
	struct port_range ports[EGRET_PORT_SLOTS];
	unsigned int nports;
	bool any_port;
	bool audit_only;		/* not allowed; answered for --audit */
	bool quiet;			/* and an agent's known noise */
	bool pinned;			/* its addresses get SNI pinning */
	__u64 upload_limit;		/* its rules' upload budget; 0: none */
	bool oversize;			/* a UDP query longer than its room */
	bool client_edns;		/* the client sent an OPT record */
	uint16_t client_limit;		/* largest UDP answer it takes */
	int udp_fd;			/* -1 for TCP */
	struct sockaddr_storage from;
	socklen_t fromlen;
	struct tcp_conn *conn;
};

struct outbuf {
	struct outbuf *next;
	size_t len, off;
	uint8_t data[];
};

struct tcp_conn {
	struct loop_source src;
	struct dns_proxy *p;
	struct tcp_conn *next;
	unsigned int refs;		/* queries upstream that answer here */
	bool dead;			/* socket closed; answers are dropped */
	bool eof;			/* client finished sending */
	size_t inlen;
	size_t queued;
	struct outbuf *out_head, *out_tail;
	uint8_t in[2 + DNS_MAX_MSG];
};

/* dns/query.c: one query from a client (the proxy's handle_query). */
void query_handle(struct dns_proxy *p, const uint8_t *msg, size_t len,
		  struct query *tmpl);

/* dns/tcp.c */
void tcp_on_accept(struct loop_source *src, uint32_t events);
void tcp_send(struct tcp_conn *c, const uint8_t *msg, size_t len);
int tcp_flush(struct tcp_conn *c);
void tcp_close(struct tcp_conn *c);

/* dns/listen.c: the four listeners on one free loopback port. */
int listen_bind(struct dns_proxy *p);
/* An answer to a UDP client, queued; all leave at listen_flush(), which
 * every event that can answer ends with. */
void listen_send(struct dns_proxy *p, int fd, const struct sockaddr_storage *to,
		 socklen_t tolen, const uint8_t *msg, size_t len);
void listen_flush(struct dns_proxy *p);
int listen_adopt(struct dns_proxy *p, int *fds);
void listen_on_udp(struct loop_source *src, uint32_t events);
void listen_close(struct dns_proxy *p);

#endif
