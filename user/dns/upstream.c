// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <ares.h>

#include "dns/socks.h"
#include "dns/upstream.h"
#include "dns/wire.h"
#include "lib/log.h"
#include "lib/spares.h"

#define CHECK_WAIT_MS	50
#define MAX_SOCKS	32	/* c-ares sockets watched at once */
/* Queries one UDP socket to an upstream carries before the next goes out
 * from a fresh one (a new source port): what c-ares 1.20 calls
 * udp_max_queries. Opening a socket per query, as c-ares 1.18 does when
 * it closes them whenever none is in flight, was a third of the proxy's
 * system calls. */
#define UDP_PER_PORT	64
#define UDP_FLAGS	(ARES_FLAG_IGNTC | ARES_FLAG_STAYOPEN)	/* TC reaches the client */
#define TCP_FLAGS	ARES_FLAG_USEVC				/* for clients on TCP */

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

/* One query on its way: where it has been, for where it goes next. */
struct up_query {
	struct dns_upstreams *ups;
	dns_upstream_done done;
	void *arg;
	bool tcp;
	struct chan *via;		/* the channel of the current try */
	uint64_t start_ms;
	unsigned int tries;
	uint32_t tried;			/* bit i: upstream i had a try */
	size_t at;			/* the upstream of the current try */
	size_t len;
	uint8_t msg[DNS_BUILT_QUERY_MAX];
};

static uint64_t now_ms(void)
{
	return mono_us() / 1000;
}

/* ---- c-ares in the loop ------------------------------------------- */

/* Arm the timer for the soonest deadline of every channel - unless it is
 * armed for that or sooner already: a query in flight adds a later
 * deadline, and re-arming for each was a system call per query. A timer
 * that fires early finds nothing due and arms for what is. */
static void rearm(struct dns_upstreams *ups)
{
	struct timeval tv = { .tv_sec = 3600 }, buf, *t;
	uint64_t ms, now = now_ms();

	if (!ups->loop)
		return;
	for (size_t i = 0; i < ups->n; i++) {
		struct chan *all[] = { &ups->s[i].udp[0], &ups->s[i].udp[1], &ups->s[i].tcp };

		for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) {
			if (!all[k]->ch)
				continue;
			t = ares_timeout(all[k]->ch, &tv, &buf);
			tv = *t;
		}
	}
	ms = (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
	if (!ms)
		ms = 1;
	if (ups->armed_ms && ups->armed_ms > now && ups->armed_ms <= now + ms)
		return;
	if (timerfd_arm_ms(ups->timer.fd, ms, false) == 0)
		ups->armed_ms = now + ms;
}

static void on_timer(struct loop_source *src, uint32_t events)
{
	struct dns_upstreams *ups = container_of(src, struct dns_upstreams, timer);
	uint64_t ticks;

	(void)events;
	ups->armed_ms = 0;
	if (read(src->fd, &ticks, sizeof(ticks)) < 0) {
		/* nothing: a re-armed timer may have no expiry to read */
	}
	for (size_t i = 0; i < ups->n; i++) {
		struct chan *all[] = { &ups->s[i].udp[0], &ups->s[i].udp[1], &ups->s[i].tcp };

		for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++)
			if (all[k]->ch)
				ares_process_fd(all[k]->ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
	}
	rearm(ups);
	if (ups->after)
		ups->after(ups->after_ctx);
}

static void on_sock(struct loop_source *src, uint32_t events)
{
	struct sock *s = container_of(src, struct sock, src);
	struct dns_upstreams *ups = s->ups;
	int fd = src->fd;

	ares_process_fd(s->ch, events & (EPOLLIN | EPOLLERR | EPOLLHUP) ? fd : ARES_SOCKET_BAD,
			events & EPOLLOUT ? fd : ARES_SOCKET_BAD);
	/* c-ares stops reading only at EAGAIN or a closed socket: answers of
	 * a batch it left (it does for one from the wrong address) get one
	 * more round, then go, like that one. A batch never outlives this
	 * event: the next one reads the socket afresh. */
	if (dns_rx_pending(ups->rx, fd) && src->fn == on_sock && src->fd == fd)
		ares_process_fd(s->ch, fd, ARES_SOCKET_BAD);
	dns_rx_drop(ups->rx);
	rearm(ups);
	if (ups->after)
		ups->after(ups->after_ctx);
}

/* c-ares opened, changed or closed a socket of @data's channel: watch it. */
static void sock_state(void *data, ares_socket_t fd, int readable, int writable)
{
	struct chan *c = data;
	struct dns_upstreams *ups = c->ups;
	struct sock *slot = NULL;
	int i;

	for (i = 0; i < MAX_SOCKS; i++) {
		if (ups->socks[i].src.fn && ups->socks[i].src.fd == fd) {
			slot = &ups->socks[i];
			break;
		}
	}
	if (!readable && !writable) {
		if (slot) {
			loop_unwatch(ups->loop, &slot->src);
			slot->src.fn = NULL;
		}
		return;
	}
	for (i = 0; !slot && i < MAX_SOCKS; i++)
		if (!ups->socks[i].src.fn)
			slot = &ups->socks[i];
	if (!slot || !ups->loop) {
		log_warn("dns: cannot watch an upstream socket (%s)",
			 slot ? "not started" : "too many");
		return;
	}
	slot->src.fd = fd;
	slot->src.fn = on_sock;
	slot->ups = ups;
	slot->ch = c->ch;
	if (loop_watch(ups->loop, &slot->src, (readable ? EPOLLIN : 0) |
					       (writable ? EPOLLOUT : 0)) < 0)
		log_warn("dns: cannot watch an upstream socket");
}

/* ---- setup -------------------------------------------------------- */

static int chan_init(struct dns_upstreams *ups, struct chan *c, int flags,
		     const char *server)
{
	/* EDNS: c-ares then reads UDP answers up to the size our queries
	 * announce (it would cut them at 512 bytes otherwise). One try:
	 * egret chooses where the next one goes. NOCHECKRESP: a SERVFAIL or
	 * REFUSED answer comes back as the answer it is (c-ares would make
	 * it ARES_ECONNREFUSED, which then means nothing). */
	struct ares_options opts = {
		.flags = flags | ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES |
			 ARES_FLAG_EDNS | ARES_FLAG_NOCHECKRESP,
		.ednspsz = DNS_UPSTREAM_EDNS_SIZE,
		.timeout = DNS_UPSTREAM_TRY_MS,
		.tries = 1,
		.sock_state_cb = sock_state,
		.sock_state_cb_data = c,
	};

	c->ups = ups;
	if (ares_init_options(&c->ch, &opts, ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS |
			      ARES_OPT_TRIES | ARES_OPT_SOCK_STATE_CB |
			      ARES_OPT_EDNSPSZ) != ARES_SUCCESS) {
		c->ch = NULL;
		return -EIO;
	}
	dns_socks_use(c->ch, ups->rx);
	if (ares_set_servers_ports_csv(c->ch, server) != ARES_SUCCESS) {
		/* Not left with resolv.conf's servers in place of @server. */
		ares_destroy(c->ch);
		c->ch = NULL;
		return -EINVAL;
	}
	return 0;
}

/* @c made, with no socket open: the next query opens one. -EBUSY while
 * c-ares still holds a query of it (inside its own callback). */
static int chan_fresh(struct dns_upstreams *ups, struct chan *c, const char *server)
{
	int r;

	if (!c->ch)
		return chan_init(ups, c, UDP_FLAGS, server);
	if (c->sent == 0)
		return 0;
	/* c-ares refuses while it has queries, and closes the sockets. */
	r = ares_set_servers_ports_csv(c->ch, server);
	if (r != ARES_SUCCESS)
		return r == ARES_ENOTIMP ? -EBUSY : -EIO;
	c->sent = 0;
	return 0;
}

/* The UDP channel for @u's next query: the other one once this one's
 * socket has carried UDP_PER_PORT and the other's queries are all
 * answered. */
static struct chan *chan_udp(struct dns_upstreams *ups, struct upstream *u)
{
	struct chan *c = &u->udp[u->active], *other = &u->udp[!u->active];

	if (c->sent >= UDP_PER_PORT && other->pending == 0 &&
	    chan_fresh(ups, other, u->name) == 0)
		u->active = !u->active;
	return &u->udp[u->active];
}

static struct chan *chan_tcp(struct dns_upstreams *ups, struct upstream *u)
{
	if (!u->tcp.ch && chan_init(ups, &u->tcp, TCP_FLAGS, u->name) < 0)
		return NULL;
	return &u->tcp;
}

/* resolv.conf's servers, as c-ares reads them, into "ADDR:PORT" texts. */
static int servers_from_resolv_conf(struct dns_upstreams *ups, const char *path)
{
	struct ares_options opts = { .resolvconf_path = (char *)path };
	struct ares_addr_port_node *list = NULL, *n;
	ares_channel ch;
	int r = 0;

	if (ares_init_options(&ch, &opts, path ? ARES_OPT_RESOLVCONF : 0) != ARES_SUCCESS)
		return -EIO;
	if (ares_get_servers_ports(ch, &list) != ARES_SUCCESS)
		r = -EIO;
	for (n = list; r == 0 && n && ups->n < DNS_UPSTREAM_MAX; n = n->next) {
		char a[INET6_ADDRSTRLEN];
		int port = n->udp_port ? n->udp_port : 53;

		if (!inet_ntop(n->family, &n->addr, a, sizeof(a)))
			continue;
		snprintf(ups->s[ups->n++].name, sizeof(ups->s[0].name),
			 n->family == AF_INET6 ? "[%s]:%d" : "%s:%d", a, port);
	}
	ares_free_data(list);
	ares_destroy(ch);
	return r;
}

static int servers_from_csv(struct dns_upstreams *ups, const char *csv)
{
	const char *p = csv;

	while (*p) {
		size_t len = strcspn(p, ",");

		if (ups->n == DNS_UPSTREAM_MAX || len == 0 ||
		    len >= sizeof(ups->s[0].name))
			return -EINVAL;
		memcpy(ups->s[ups->n].name, p, len);
		ups->s[ups->n++].name[len] = '\0';
		p += len + (p[len] == ',');
	}
	return 0;
}

int dns_upstreams_open(struct dns_upstreams **ret, const char *csv,
		       const char *resolv_conf)
{
	struct dns_upstreams *ups = calloc(1, sizeof(*ups));
	int r;

	*ret = NULL;
	if (!ups)
		return -ENOMEM;
	ups->timer.fd = -1;
	ups->origin = csv ? "--dns-upstream" : resolv_conf ?
		      "the caller's /etc/resolv.conf" : "/etc/resolv.conf";
	r = ares_library_init(ARES_LIB_INIT_ALL) == ARES_SUCCESS ? 0 : -EIO;
	ups->library = r == 0;
	if (r == 0 && !(ups->rx = dns_rx_new()))
		r = -ENOMEM;
	if (r == 0)
		r = csv ? servers_from_csv(ups, csv) :
			    servers_from_resolv_conf(ups, resolv_conf);
	if (r == 0 && ups->n == 0)
		r = -EINVAL;
	/* One channel each now, which checks the address; the others when
	 * they are first needed. */
	for (size_t i = 0; r == 0 && i < ups->n; i++)
		r = chan_init(ups, &ups->s[i].udp[0], UDP_FLAGS, ups->s[i].name);
	if (r == 0) {
		ups->timer.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (ups->timer.fd < 0)
			r = -errno;
	}
	if (r < 0) {
		dns_upstreams_close(ups);
		return r;
	}
	*ret = ups;
	return 0;
}

int dns_upstreams_start(struct dns_upstreams *ups, struct loop *loop,
			void (*after)(void *ctx), void *ctx)
{
	ups->loop = loop;
	ups->after = after;
	ups->after_ctx = ctx;
	ups->timer.fn = on_timer;
	return loop_watch(loop, &ups->timer, EPOLLIN);
}

void dns_upstreams_close(struct dns_upstreams *ups)
{
	if (!ups)
		return;
	/* Destroying a channel fails its queries (ARES_EDESTRUCTION), each
	 * told DNS_UPSTREAM_GONE, while its caller's state still exists. */
	for (size_t i = 0; i < ups->n; i++) {
		struct chan *all[] = { &ups->s[i].udp[0], &ups->s[i].udp[1], &ups->s[i].tcp };

		for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++)
			if (all[k]->ch)
				ares_destroy(all[k]->ch);
	}
	if (ups->loop && ups->timer.fn)
		loop_unwatch(ups->loop, &ups->timer);
	if (ups->timer.fd >= 0)
		close(ups->timer.fd);
	if (ups->library)
		ares_library_cleanup();
	spares_free(&ups->spare);
	dns_rx_free(ups->rx);
	free(ups);
}

/* ---- reachability at start ---------------------------------------- */

static int parse_name(const char *name, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[INET6_ADDRSTRLEN + 8];
	const char *colon = strrchr(name, ':');
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	size_t hlen;

	if (!colon)
		return -EINVAL;
	hlen = (size_t)(colon - name);
	if (name[0] == '[' && hlen >= 2 && name[hlen - 1] == ']') {
		memcpy(host, name + 1, hlen - 2);
		host[hlen - 2] = '\0';
	} else if (hlen < sizeof(host)) {
		memcpy(host, name, hlen);
		host[hlen] = '\0';
	} else {
		return -EINVAL;
	}
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)atoi(colon + 1));
		*len = sizeof(*sin);
	} else if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)atoi(colon + 1));
		*len = sizeof(*sin6);
	} else {
		return -EINVAL;
	}
	return 0;
}

static bool is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

/*
 * 0 if @name may answer; else why not: -ENETUNREACH & co. (no route),
 * -ECONNREFUSED (loopback, nothing listening). A connected UDP socket
 * learns of the ICMP port unreachable loopback sends back at once.
 */
static int reachable(const char *name)
{
	static const struct dns_question root_ns = { .id = 0x4567, .type = 2, .qclass = 1 };
	struct sockaddr_storage ss;
	uint8_t q[DNS_BUILT_QUERY_MAX], buf[512];
	struct pollfd pfd;
	socklen_t len;
	int fd, n, r = 0;

	if (parse_name(name, &ss, &len) < 0)
		return -EINVAL;
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return 0;	/* not ours to judge: c-ares will say */
	if (connect(fd, (struct sockaddr *)&ss, len) < 0) {
		r = -errno;
		goto out;
	}
	if (!is_loopback(&ss))
		goto out;
	n = dns_build_query(&root_ns, root_ns.id, q, sizeof(q));
	if (n < 0 || send(fd, q, (size_t)n, 0) < 0) {
		r = n < 0 ? 0 : -errno;
		goto out;
	}
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	if (poll(&pfd, 1, CHECK_WAIT_MS) == 1 && recv(fd, buf, sizeof(buf), 0) < 0)
		r = -errno;
out:
	close(fd);
	return r == -EAGAIN ? 0 : r;
}

int dns_upstreams_check(struct dns_upstreams *ups)
{
	size_t bad = 0;

	for (size_t i = 0; i < ups->n; i++) {
		int r = reachable(ups->s[i].name);

		if (r == 0)
			continue;
		bad++;
		ups->s[i].dead_until_ms = now_ms() + DNS_UPSTREAM_DEAD_MS;
		ups->s[i].said_dead = true;
		log_warn("dns: upstream %s (%s) cannot be reached: %s%s", ups->s[i].name,
			 ups->origin, r == -ECONNREFUSED ? "nothing listens there" : strerror(-r),
			 bad < ups->n ? "" : ups->n > 1 ? "; allowed names will get SERVFAIL until one answers (--dns-upstream ADDR picks another)" :
			 "; allowed names will get SERVFAIL (--dns-upstream ADDR picks another)");
	}
	return (int)bad;
}

/* The first upstream in order not known dead and not tried by this query;
 * else the first not tried; else the first alive, else the first. */
static size_t pick(const struct dns_upstreams *ups, uint32_t tried, uint64_t now)
{
	size_t i;

	for (i = 0; i < ups->n; i++)
		if (!(tried & (1U << i)) && ups->s[i].dead_until_ms <= now)
			return i;
	for (i = 0; i < ups->n; i++)
		if (!(tried & (1U << i)))
			return i;
	for (i = 0; i < ups->n; i++)
		if (ups->s[i].dead_until_ms <= now)
			return i;
	return 0;
}

/* A try that says the upstream is not there: no answer in time, or (an
 * ICMP error on the socket, a TCP connection refused) no resolver. */
static bool upstream_silent(int status)
{
	return status == ARES_ETIMEOUT || status == ARES_ECONNREFUSED;
}

/* An answer another upstream may improve on: SERVFAIL, NOTIMP, REFUSED.
 * The upstream is there; it is not shunned for it. */
static bool answer_failed(int status, const unsigned char *abuf, int alen)
{
	int rcode = status == ARES_SUCCESS && abuf && alen >= 4 ? abuf[3] & 0x0f : 0;

	return rcode == 2 || rcode == 4 || rcode == 5;
}

static bool all_tried(const struct dns_upstreams *ups, uint32_t tried)
{
	return tried == (ups->n >= 32 ? ~0U : (1U << ups->n) - 1);
}

static void mark(struct dns_upstreams *ups, size_t i, int status, uint64_t now)
{
	struct upstream *u = &ups->s[i];

	if (status == ARES_SUCCESS) {
		if (u->said_dead)
			log_warn("dns: upstream %s (%s) answers again", u->name, ups->origin);
		u->dead_until_ms = 0;
		u->said_dead = false;
		return;
	}
	if (!upstream_silent(status))
		return;
	u->dead_until_ms = now + DNS_UPSTREAM_DEAD_MS;
	if (!u->said_dead)
		log_warn("dns: upstream %s (%s) did not answer (%s)%s", u->name, ups->origin,
			 ares_strerror(status), ups->n > 1 ?
			 "; it goes last for 30 s" : "; allowed names get SERVFAIL while it is silent");
	u->said_dead = true;
}

static int try_next(struct up_query *uq);

/* c-ares' word for the outcome of a query, in ours. */
static enum dns_upstream_status status_of(int status)
{
	return status == ARES_SUCCESS ? DNS_UPSTREAM_ANSWER :
	       status == ARES_EDESTRUCTION ? DNS_UPSTREAM_GONE :
	       upstream_silent(status) ? DNS_UPSTREAM_SILENT : DNS_UPSTREAM_FAILED;
}

static void on_try(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
	struct up_query *uq = arg;
	struct dns_upstreams *ups = uq->ups;
	uint64_t now = now_ms();

	(void)timeouts;
	uq->via->pending--;
	if (status != ARES_EDESTRUCTION) {
		bool failed = status != ARES_SUCCESS || answer_failed(status, abuf, alen);

		mark(ups, uq->at, status, now);
		if (failed && uq->tries < DNS_UPSTREAM_MAX_TRIES &&
		    now - uq->start_ms < DNS_UPSTREAM_BUDGET_MS &&
		    (upstream_silent(status) || !all_tried(ups, uq->tried)) &&
		    try_next(uq) == 0)
			return;
	}
	if (status == ARES_SUCCESS && (!abuf || alen <= 0))
		status = ARES_EBADRESP;
	uq->done(uq->arg, status_of(status), abuf, status == ARES_SUCCESS ? (size_t)alen : 0);
	spares_put(&ups->spare, uq);
}

/* The next try of @uq; -ENOMEM if its channel could not be made (then
 * @uq is the caller's). */
static int try_next(struct up_query *uq)
{
	struct dns_upstreams *ups = uq->ups;
	struct upstream *u;
	struct chan *c;

	uq->at = pick(ups, uq->tried, now_ms());
	uq->tried |= 1U << uq->at;
	uq->tries++;
	u = &ups->s[uq->at];
	c = uq->tcp ? chan_tcp(ups, u) : chan_udp(ups, u);
	if (!c)
		return -ENOMEM;
	uq->via = c;
	c->sent++;
	c->pending++;
	ares_send(c->ch, uq->msg, (int)uq->len, on_try, uq);
	rearm(ups);
	return 0;
}
int dns_upstream_send(struct dns_upstreams *ups, bool tcp, const uint8_t *msg,
		      size_t len, dns_upstream_done done, void *arg)
{
	struct up_query *uq;

	if (len > sizeof(uq->msg))
		return -EMSGSIZE;
	/* No allocation of egret's per query once as many were in flight. */
	uq = spares_get(&ups->spare, sizeof(*uq));
	if (!uq)
		return -ENOMEM;
	*uq = (struct up_query){ .ups = ups, .done = done, .arg = arg, .tcp = tcp,
				 .start_ms = now_ms(), .len = len };
	memcpy(uq->msg, msg, len);
	if (try_next(uq) < 0) {
		spares_put(&ups->spare, uq);
		return -ENOMEM;
	}
	return 0;
}
