// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/random.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "dns/proxy.h"
#include "dns/wire.h"
#include "egret_match.h"
#include "lib/log.h"

#define DNS_MAX_TTL		86400	/* a day: bounds what an answer can grant */
#define TCP_MAX_QUEUED		(256 * 1024)
#define BIND_TRIES		16

/* Where a query came from, so its answer goes back the same way. */
struct query {
	struct dns_proxy *p;
	struct dns_question q;
	uint8_t qraw[DNS_HEADER_LEN + DNS_NAME_MAX + 2 + 4];	/* header+question */
	struct port_range ports[EGRET_PORT_SLOTS];
	unsigned int nports;
	bool any_port;
	bool audit_only;		/* not allowed; answered for --audit */
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

static void ares_rearm(struct dns_proxy *p);

/* ---- replies ------------------------------------------------------ */

static void conn_close(struct tcp_conn *c);

static int conn_flush(struct tcp_conn *c)
{
	while (c->out_head) {
		struct outbuf *b = c->out_head;
		ssize_t n = send(c->src.fd, b->data + b->off, b->len - b->off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n < 0)
			return -errno;
		b->off += (size_t)n;
		c->queued -= (size_t)n;
		if (b->off < b->len)
			break;
		c->out_head = b->next;
		if (!c->out_head)
			c->out_tail = NULL;
		free(b);
	}
	if (c->eof && !c->out_head && c->refs == 0)
		return -ECONNRESET;	/* all answered: done */
	return loop_watch(c->p->loop, &c->src,
			  (c->eof ? 0 : EPOLLIN) | (c->out_head ? EPOLLOUT : 0));
}

static void conn_send(struct tcp_conn *c, const uint8_t *msg, size_t len)
{
	struct outbuf *b;

	if (c->dead)
		return;
	if (c->queued + len + 2 > TCP_MAX_QUEUED) {
		conn_close(c);		/* a client that never reads */
		return;
	}
	b = malloc(sizeof(*b) + len + 2);
	if (!b) {
		conn_close(c);
		return;
	}
	b->next = NULL;
	b->len = len + 2;
	b->off = 0;
	b->data[0] = (uint8_t)(len >> 8);
	b->data[1] = (uint8_t)len;
	memcpy(b->data + 2, msg, len);
	if (c->out_tail)
		c->out_tail->next = b;
	else
		c->out_head = b;
	c->out_tail = b;
	c->queued += b->len;
}

static void reply(struct query *qy, const uint8_t *msg, size_t len)
{
	if (!qy->conn) {
		sendto(qy->udp_fd, msg, len, MSG_DONTWAIT,
		       (struct sockaddr *)&qy->from, qy->fromlen);
		return;
	}
	conn_send(qy->conn, msg, len);
	if (!qy->conn->dead && conn_flush(qy->conn) < 0)
		conn_close(qy->conn);
}

/* A reply with no records: NXDOMAIN, SERVFAIL, or NOERROR "no data". */
static void reply_rcode(struct query *qy, int rcode)
{
	uint8_t buf[sizeof(qy->qraw)];
	int n = dns_build_reply(qy->qraw, &qy->q, rcode, buf, sizeof(buf));

	if (n > 0)
		reply(qy, buf, (size_t)n);
}

/* For queries too broken to echo their question: the id alone. */
static void reply_header_only(struct query *qy, const uint8_t *query,
			      size_t len, int rcode)
{
	uint8_t buf[DNS_HEADER_LEN] = {};

	if (len < 2)
		return;
	buf[0] = query[0];
	buf[1] = query[1];
	buf[2] = 0x80;
	buf[3] = (uint8_t)(0x80 | rcode);
	reply(qy, buf, sizeof(buf));
}

/* Who asked, for the refused name's request (before the reply frees
 * the client to exit). */
static void note_asker(struct query *qy)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);

	if (qy->udp_fd >= 0)
		events_dns_client(qy->p->cfg.events, qy->q.name,
				  (struct sockaddr *)&qy->from, false);
	else if (qy->conn && getpeername(qy->conn->src.fd, (struct sockaddr *)&peer, &len) == 0)
		events_dns_client(qy->p->cfg.events, qy->q.name,
				  (struct sockaddr *)&peer, true);
}

static void query_free(struct query *qy)
{
	struct tcp_conn *c = qy->conn;

	free(qy);
	if (c && --c->refs == 0 && !c->dead && c->eof && !c->out_head)
		conn_close(c);
	else if (c && c->refs == 0 && c->dead)
		loop_release(c->p->loop, &c->src);
}

/* ---- answers ------------------------------------------------------ */

/*
 * Upstream answered egret's query (RD set, EDNS 1232): give the client an
 * answer to its own. RD as it asked; no OPT record if it sent none; and a
 * UDP answer larger than it takes becomes an empty one with TC set, so it
 * asks again over TCP, as a server would have made it.
 */
static void reply_answer(struct query *qy, uint8_t *msg, size_t len)
{
	uint8_t trunc[sizeof(qy->qraw)];
	long n;
	int t;

	msg[2] = (uint8_t)((msg[2] & ~0x01) | (qy->qraw[2] & 0x01));
	if (!qy->client_edns) {
		n = dns_strip_opt(msg, len);
		if (n > 0)
			len = (size_t)n;
	}
	if (len <= qy->client_limit) {
		reply(qy, msg, len);
		return;
	}
	t = dns_build_reply(qy->qraw, &qy->q, msg[3] & 0x0f, trunc, sizeof(trunc));
	if (t <= 0)
		return;
	trunc[2] |= 0x02;	/* TC */
	reply(qy, trunc, (size_t)t);
}

/* Write every address of the answer into the maps, and log it. Special
 * addresses (loopback, link-local, metadata, multicast, broadcast, the
 * host's own) are never learned from DNS; an --audit answer for a name not
 * allowed is only attributed. */
static int learn_answer(struct query *qy, const uint8_t *msg, size_t len)
{
	struct dns_addr addrs[DNS_MAX_ADDRS];
	struct dns_proxy *p = qy->p;
	__u64 now = allow_now_ns();
	uint32_t min_seen = DNS_MAX_TTL;
	int n, i, r;

	n = dns_collect_addrs(msg, len, &qy->q, addrs, DNS_MAX_ADDRS);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		uint32_t ttl = addrs[i].ttl;
		if (allow_special_addr(&p->maps, addrs[i].family, addrs[i].addr)) {
			log_debug("dns: %s: not learning a special address",
				  qy->q.name);
			continue;
		}
		if (ttl < p->cfg.min_ttl)
			ttl = p->cfg.min_ttl;
		if (ttl > DNS_MAX_TTL)
			ttl = DNS_MAX_TTL;
		if (ttl < min_seen)
			min_seen = ttl;
		names_put(p->names, addrs[i].family, addrs[i].addr, qy->q.name);
		/* Attribution only: a full names map never fails an answer. */
		allow_name(&p->maps, addrs[i].family, addrs[i].addr, qy->q.name);
		if (qy->audit_only)
			continue;
		r = allow_learn(&p->maps, addrs[i].family, addrs[i].addr,
				qy->ports, qy->nports, qy->any_port,
				now + (__u64)ttl * 1000000000ULL);
		/* The kernel says E2BIG for a full hash map: here that is the
		 * map, not the answer, so the caller reports it as such. */
		if (r == -E2BIG)
			return -ENOSPC;
		if (r < 0)
			return r;
		p->stats.learned++;
	}
	events_dns(p->cfg.events, qy->q.name, qy->q.type,
		   qy->audit_only ? "would-deny" : "allow",
		   qy->audit_only ? DNS_WHY_NOT_ALLOWED : DNS_WHY_NONE, addrs, n, min_seen);
	return n;
}

static void on_answer(void *arg, int status, const uint8_t *abuf, int alen)
{
	static uint8_t buf[DNS_MAX_MSG];
	struct query *qy = arg;
	struct dns_proxy *p = qy->p;
	enum dns_why why;
	int r;

	p->inflight--;
	if (status == ARES_EDESTRUCTION)
		goto out;
	if (status != ARES_SUCCESS || !abuf || alen < DNS_HEADER_LEN ||
	    alen > DNS_MAX_MSG) {
		log_info("dns: %s: upstream failed (%s): SERVFAIL", qy->q.name,
			 ares_strerror(status));
		why = status == ARES_ETIMEOUT || status == ARES_ECONNREFUSED ? DNS_WHY_TIMEOUT :
		      status == ARES_SUCCESS ? DNS_WHY_MALFORMED : DNS_WHY_UPSTREAM;
		goto servfail;
	}
	memcpy(buf, abuf, (size_t)alen);
	buf[0] = (uint8_t)(qy->q.id >> 8);	/* c-ares chose its own id */
	buf[1] = (uint8_t)qy->q.id;

	/* Truncated: pass it on untouched; the client retries over TCP,
	 * where the whole answer is learned. Error answers teach nothing. */
	if ((buf[2] & 0x02) || (buf[3] & 0x0f) != DNS_RCODE_NOERROR) {
		events_dns(p->cfg.events, qy->q.name, qy->q.type,
			   qy->audit_only ? "would-deny" : "allow",
			   qy->audit_only ? DNS_WHY_NOT_ALLOWED : DNS_WHY_NONE, NULL, 0, 0);
	} else {
		r = learn_answer(qy, buf, (size_t)alen);
		if (r < 0) {
			why = r == -EBADMSG ? DNS_WHY_MALFORMED : r == -E2BIG ? DNS_WHY_TOO_MANY :
			      DNS_WHY_MAP_FULL;
			log_warn("dns: %s: %s: SERVFAIL", qy->q.name,
				 r == -EBADMSG ? "malformed upstream answer" :
				 r == -E2BIG ? "more addresses than egret learns from one answer" :
				 "allow map full (raise --max-entries)");
			goto servfail;
		}
		log_debug("dns: %s type %u: learned %d address(es)",
			  qy->q.name, qy->q.type, r);
	}
	reply_answer(qy, buf, (size_t)alen);
	goto out;
servfail:
	p->stats.servfail++;
	events_dns(p->cfg.events, qy->q.name, qy->q.type, "servfail", why, NULL, 0, 0);
	reply_rcode(qy, DNS_RCODE_SERVFAIL);
out:
	query_free(qy);
}

/* ---- queries ------------------------------------------------------ */

static uint16_t random_id(void)
{
	uint16_t id = 0;

	if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != sizeof(id))
		id = (uint16_t)(allow_now_ns() ^ (allow_now_ns() >> 17));
	return id;
}

/* @tmpl says where the query came from; it is copied if forwarded. */
static void handle_query(struct dns_proxy *p, const uint8_t *msg, size_t len,
			 struct query *tmpl)
{
	uint8_t fresh[DNS_HEADER_LEN + DNS_NAME_MAX + 2 + 4 + 11];
	uint16_t edns_size = 0;
	struct query *qy;
	int r, do_bit = 0;

	p->stats.queries++;
	tmpl->p = p;
	r = dns_parse_query(msg, len, &tmpl->q);
	if (r == -EOPNOTSUPP) {
		reply_header_only(tmpl, msg, len, DNS_RCODE_NOTIMP);
		return;
	}
	if (r < 0 || tmpl->q.end > sizeof(tmpl->qraw)) {
		if (len >= DNS_HEADER_LEN && !(msg[2] & 0x80))
			reply_header_only(tmpl, msg, len, DNS_RCODE_FORMERR);
		return;
	}
	memcpy(tmpl->qraw, msg, tmpl->q.end);

	if (tmpl->q.qclass != DNS_CLASS_IN ||
	    host_rules_match(p->cfg.rules, p->cfg.nrules, tmpl->q.name,
			     tmpl->ports, &tmpl->nports, &tmpl->any_port) == 0) {
		p->stats.denied++;
		if (p->cfg.audit && tmpl->q.qclass == DNS_CLASS_IN) {
			/* --audit asked to see everything: forwarded, and
			 * logged as would-deny when the answer comes. */
			tmpl->audit_only = true;
		} else {
			/* Never forwarded: the name itself could carry data. */
			log_info("dns: denied %s (type %u): NXDOMAIN",
				 tmpl->q.name[0] ? tmpl->q.name : ".", tmpl->q.type);
			events_dns(p->cfg.events, tmpl->q.name, tmpl->q.type, "deny",
				   tmpl->q.qclass != DNS_CLASS_IN ? DNS_WHY_CLASS :
								   DNS_WHY_NOT_ALLOWED,
				   NULL, 0, 0);
			note_asker(tmpl);
			reply_rcode(tmpl, DNS_RCODE_NXDOMAIN);
			return;
		}
	}
	if (tmpl->q.type == DNS_TYPE_HTTPS || tmpl->q.type == DNS_TYPE_SVCB) {
		/* Their address hints would let a client connect to addresses
		 * we never learned: answer "no such data" instead. */
		p->stats.nodata++;
		reply_rcode(tmpl, DNS_RCODE_NOERROR);
		return;
	}
	if (!dns_type_forwarded(tmpl->q.type)) {
		/* The type is the client's choice of 16 bits: only those a
		 * connection needs go upstream. */
		p->stats.notimp++;
		reply_rcode(tmpl, DNS_RCODE_NOTIMP);
		return;
	}
	/* Upstream gets a query egret wrote (dns_build_query); the client
	 * gets an answer sized for what it said it takes. */
	r = dns_query_edns(msg, len, &tmpl->q, &edns_size, &do_bit);
	if (r < 0) {
		reply_rcode(tmpl, DNS_RCODE_FORMERR);
		return;
	}
	tmpl->client_edns = r == 1;
	tmpl->client_limit = tmpl->conn ? DNS_MAX_MSG :
			     !tmpl->client_edns || edns_size < 512 ? 512 : edns_size;
	if (p->inflight >= DNS_MAX_INFLIGHT || !(qy = malloc(sizeof(*qy)))) {
		p->stats.servfail++;
		events_dns(p->cfg.events, tmpl->q.name, tmpl->q.type, "servfail",
			   DNS_WHY_BUSY, NULL, 0, 0);
		reply_rcode(tmpl, DNS_RCODE_SERVFAIL);
		return;
	}
	*qy = *tmpl;
	r = dns_build_query(&qy->q, random_id(), fresh, sizeof(fresh));
	if (r < 0) {
		reply_rcode(tmpl, DNS_RCODE_FORMERR);
		free(qy);
		return;
	}
	if (qy->conn)
		qy->conn->refs++;
	p->inflight++;
	p->stats.allowed++;
	if (dns_upstream_send(&p->ups, qy->conn != NULL, fresh, (size_t)r, on_answer, qy) < 0)
		on_answer(qy, ARES_ENOMEM, NULL, 0);
	ares_rearm(p);
}

static void on_udp(struct loop_source *src, uint32_t events)
{
	struct dns_proxy *p = container_of(src, struct proxy_source, src)->p;
	static uint8_t buf[DNS_MAX_MSG];
	int i;

	(void)events;
	/* Bounded batch: TCP clients and c-ares get their turn. */
	for (i = 0; i < 64; i++) {
		struct query tmpl = { .udp_fd = src->fd,
				      .fromlen = sizeof(tmpl.from) };
		ssize_t n = recvfrom(src->fd, buf, sizeof(buf), MSG_DONTWAIT,
				     (struct sockaddr *)&tmpl.from,
				     &tmpl.fromlen);

		if (n < 0)
			break;
		handle_query(p, buf, (size_t)n, &tmpl);
	}
}

/* ---- TCP clients -------------------------------------------------- */

static void conn_release(struct loop_source *src)
{
	struct tcp_conn *c = container_of(src, struct tcp_conn, src);

	while (c->out_head) {
		struct outbuf *b = c->out_head;

		c->out_head = b->next;
		free(b);
	}
	free(c);
}

/* Close the socket now; free once no query upstream refers to it. */
static void conn_close(struct tcp_conn *c)
{
	struct tcp_conn **pp;

	if (c->dead)
		return;
	c->dead = true;
	loop_unwatch(c->p->loop, &c->src);
	close(c->src.fd);
	for (pp = &c->p->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	c->p->nconns--;
	if (c->refs == 0)
		loop_release(c->p->loop, &c->src);
}

static void on_conn(struct loop_source *src, uint32_t events)
{
	struct tcp_conn *c = container_of(src, struct tcp_conn, src);

	if (events & (EPOLLERR | EPOLLHUP) && !(events & EPOLLIN)) {
		conn_close(c);
		return;
	}
	if (events & EPOLLOUT && conn_flush(c) < 0) {
		conn_close(c);
		return;
	}
	if (!(events & EPOLLIN) || c->eof)
		return;
	for (;;) {
		size_t need = c->inlen < 2 ? 2 :
			      2 + ((size_t)c->in[0] << 8 | c->in[1]);
		ssize_t n;

		if (c->inlen >= 2 && c->inlen == need) {
			struct query tmpl = { .udp_fd = -1, .conn = c };

			c->inlen = 0;
			handle_query(c->p, c->in + 2, need - 2, &tmpl);
			if (c->dead)
				return;
			continue;
		}
		n = recv(src->fd, c->in + c->inlen, need - c->inlen,
			 MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			/* Sent all it will: answer what is pending, then close. */
			c->eof = true;
			if (n < 0 || c->refs == 0 || conn_flush(c) < 0)
				conn_close(c);
			return;
		}
		c->inlen += (size_t)n;
	}
}

static void on_accept(struct loop_source *src, uint32_t events)
{
	struct dns_proxy *p = container_of(src, struct proxy_source, src)->p;
	struct tcp_conn *c;
	int fd;

	(void)events;
	while ((fd = accept4(src->fd, NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		if (p->nconns >= DNS_MAX_TCP_CONNS ||
		    !(c = calloc(1, sizeof(*c)))) {
			close(fd);
			continue;
		}
		c->p = p;
		c->src.fd = fd;
		c->src.fn = on_conn;
		c->src.release = conn_release;
		if (loop_watch(p->loop, &c->src, EPOLLIN) < 0) {
			close(fd);
			free(c);
			continue;
		}
		c->next = p->conns;
		p->conns = c;
		p->nconns++;
	}
}

/* ---- c-ares in the loop ------------------------------------------- */

static void ares_rearm(struct dns_proxy *p)
{
	uint64_t ms = dns_upstreams_timeout_ms(&p->ups, 3600 * 1000);

	timerfd_arm_ms(p->ares_timer.src.fd, ms ? ms : 1, false);
}

static void on_ares_timer(struct loop_source *src, uint32_t events)
{
	struct dns_proxy *p = container_of(src, struct proxy_source, src)->p;
	uint64_t ticks;

	(void)events;
	if (read(src->fd, &ticks, sizeof(ticks)) < 0) {
		/* nothing: a re-armed timer may have no expiry to read */
	}
	dns_upstreams_process(&p->ups, NULL, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	ares_rearm(p);
}

static void on_ares_sock(struct loop_source *src, uint32_t events)
{
	struct proxy_source *s = container_of(src, struct proxy_source, src);
	struct dns_proxy *p = s->p;
	int fd = src->fd;

	dns_upstreams_process(&p->ups, s->channel,
			      events & (EPOLLIN | EPOLLERR | EPOLLHUP) ? fd : ARES_SOCKET_BAD,
			      events & EPOLLOUT ? fd : ARES_SOCKET_BAD);
	ares_rearm(p);
}

/* c-ares opened, changed or closed an upstream socket: watch it. */
static void sock_state(void *data, ares_channel ch, int fd, int readable, int writable)
{
	struct dns_proxy *p = data;
	struct proxy_source *slot = NULL;
	int i;

	for (i = 0; i < DNS_MAX_ARES_SOCKS; i++) {
		if (p->socks[i].src.fn && p->socks[i].src.fd == fd) {
			slot = &p->socks[i];
			break;
		}
	}
	if (!readable && !writable) {
		if (slot) {
			loop_unwatch(p->loop, &slot->src);
			slot->src.fn = NULL;
		}
		return;
	}
	for (i = 0; !slot && i < DNS_MAX_ARES_SOCKS; i++)
		if (!p->socks[i].src.fn)
			slot = &p->socks[i];
	if (!slot) {
		log_warn("dns: too many upstream sockets");
		return;
	}
	slot->src.fd = fd;
	slot->src.fn = on_ares_sock;
	slot->p = p;
	slot->channel = ch;
	if (loop_watch(p->loop, &slot->src, (readable ? EPOLLIN : 0) |
					     (writable ? EPOLLOUT : 0)) < 0)
		log_warn("dns: cannot watch an upstream socket");
}

/* ---- setup -------------------------------------------------------- */

static int listen_on(int family, int type, uint16_t port, int *ret_fd,
		     uint16_t *ret_port)
{
	struct sockaddr_storage ss = {};
	socklen_t len;
	int fd, one = 1;

	fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		sin6->sin6_addr = in6addr_loopback;
		len = sizeof(*sin6);
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 64) < 0) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	*ret_port = ntohs(family == AF_INET ?
			  ((struct sockaddr_in *)&ss)->sin_port :
			  ((struct sockaddr_in6 *)&ss)->sin6_port);
	*ret_fd = fd;
	return 0;
}

static void close_listeners(struct dns_proxy *p)
{
	struct proxy_source *all[] = { &p->udp4, &p->udp6, &p->tcp4, &p->tcp6 };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (p->loop)
			loop_unwatch(p->loop, &all[i]->src);
		if (all[i]->src.fd >= 0)
			close(all[i]->src.fd);
		all[i]->src.fd = -1;
	}
}

/* One port for UDP and TCP on 127.0.0.1 and ::1: BPF then needs one. */
static int bind_listeners(struct dns_proxy *p)
{
	uint16_t port, got;
	int r = -EADDRINUSE;

	for (int tries = 0; tries < BIND_TRIES && r == -EADDRINUSE; tries++) {
		close_listeners(p);
		r = listen_on(AF_INET, SOCK_DGRAM, 0, &p->udp4.src.fd, &port);
		if (r < 0)
			return r;
		r = listen_on(AF_INET, SOCK_STREAM, port, &p->tcp4.src.fd, &got);
		if (r < 0)
			continue;
		r = listen_on(AF_INET6, SOCK_DGRAM, port, &p->udp6.src.fd, &got);
		if (r == -EADDRNOTAVAIL || r == -EAFNOSUPPORT) {
			p->ip6_loopback = false;	/* no IPv6 here */
			p->port = port;
			return 0;
		}
		if (r < 0)
			continue;
		r = listen_on(AF_INET6, SOCK_STREAM, port, &p->tcp6.src.fd, &got);
		if (r == 0) {
			p->ip6_loopback = true;
			p->port = port;
		}
	}
	return r;
}

int dns_proxy_open(struct dns_proxy *p, const struct dns_proxy_config *cfg,
		   const char **ret_step)
{
	int r;

	*p = (struct dns_proxy){ .cfg = *cfg };
	p->udp4.src.fd = p->udp6.src.fd = p->tcp4.src.fd = p->tcp6.src.fd = -1;
	p->ares_timer.src.fd = -1;
	p->names = calloc(1, sizeof(*p->names));
	if (!p->names) {
		*ret_step = "allocate the DNS name table";
		return -ENOMEM;
	}

	*ret_step = "bind the DNS proxy on loopback";
	r = bind_listeners(p);
	if (r < 0)
		return r;
	*ret_step = "create the DNS proxy's timer";
	p->ares_timer.src.fd = timerfd_create(CLOCK_MONOTONIC,
					      TFD_NONBLOCK | TFD_CLOEXEC);
	if (p->ares_timer.src.fd < 0)
		return -errno;

	*ret_step = "initialise c-ares";
	if (ares_library_init(ARES_LIB_INIT_ALL) != ARES_SUCCESS)
		return -EIO;
	p->channels_ready = true;
	r = dns_upstreams_init(&p->ups, cfg->upstreams_csv, DNS_UPSTREAM_EDNS_SIZE,
			       sock_state, p);
	if (r == -EINVAL)
		*ret_step = cfg->upstreams_csv ?
			"set the DNS upstreams (want ADDR[:PORT] or [V6]:PORT, at most 4)" :
			"read the DNS upstreams from /etc/resolv.conf (none usable: give --dns-upstream)";
	if (r < 0)
		return r;
	/* Only worth saying when some name can go upstream. */
	if (cfg->nrules || cfg->audit)
		dns_upstreams_check(&p->ups);
	return 0;
}

int dns_proxy_start(struct dns_proxy *p, struct loop *loop,
		    const struct allow_maps *maps)
{
	struct proxy_source *ls[] = { &p->udp4, &p->udp6, &p->tcp4, &p->tcp6 };
	int r;

	p->loop = loop;
	p->maps = *maps;
	for (size_t i = 0; i < sizeof(ls) / sizeof(ls[0]); i++) {
		if (ls[i]->src.fd < 0)
			continue;
		ls[i]->p = p;
		ls[i]->src.fn = i < 2 ? on_udp : on_accept;
		r = loop_watch(loop, &ls[i]->src, EPOLLIN);
		if (r < 0)
			return r;
	}
	p->ares_timer.p = p;
	p->ares_timer.src.fn = on_ares_timer;
	return loop_watch(loop, &p->ares_timer.src, EPOLLIN);
}

void dns_proxy_set_rules(struct dns_proxy *p, const struct host_rule *rules,
			 size_t n)
{
	p->cfg.rules = rules;
	p->cfg.nrules = n;
}

void dns_proxy_close(struct dns_proxy *p)
{
	/* Destroying a channel fails its queries (ARES_EDESTRUCTION), which
	 * frees them while their TCP clients still exist. */
	dns_upstreams_destroy(&p->ups);
	while (p->conns)
		conn_close(p->conns);
	if (p->loop)
		loop_unwatch(p->loop, &p->ares_timer.src);
	if (p->ares_timer.src.fd >= 0)
		close(p->ares_timer.src.fd);
	p->ares_timer.src.fd = -1;
	close_listeners(p);
	if (p->channels_ready)
		ares_library_cleanup();
	p->channels_ready = false;
	free(p->names);
	p->names = NULL;
}
