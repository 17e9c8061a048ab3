// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dns/upstream.c - the upstreams' channels (one c-ares channel per
 * upstream and transport, UDP's two in turn), c-ares' sockets and timer
 * in the caller's loop, setup and teardown.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>

#include "dns/socks.h"
#include "dns/upstream_impl.h"
#include "dns/wire.h"
#include "lib/log.h"

/* Queries one UDP socket to an upstream carries before the next goes out
 * from a fresh one (a new source port): what c-ares 1.20 calls
 * udp_max_queries. Opening a socket per query, as c-ares 1.18 does when
 * it closes them whenever none is in flight, was a third of the proxy's
 * system calls. */
#define UDP_PER_PORT	64
#define UDP_FLAGS	(ARES_FLAG_IGNTC | ARES_FLAG_STAYOPEN)	/* TC reaches the client */
#define TCP_FLAGS	ARES_FLAG_USEVC				/* for clients on TCP */

/* ---- c-ares in the loop ------------------------------------------- */

/* Arm the timer for the soonest deadline of every channel - unless it is
 * armed for that or sooner already: a query in flight adds a later
 * deadline, and re-arming for each was a system call per query. A timer
 * that fires early finds nothing due and arms for what is. */
void upstream_rearm(struct dns_upstreams *ups)
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
	upstream_rearm(ups);
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
	upstream_rearm(ups);
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
struct chan *upstream_chan_udp(struct dns_upstreams *ups, struct upstream *u)
{
	struct chan *c = &u->udp[u->active], *other = &u->udp[!u->active];

	if (c->sent >= UDP_PER_PORT && other->pending == 0 &&
	    chan_fresh(ups, other, u->name) == 0)
		u->active = !u->active;
	c = &u->udp[u->active];
	/* The first query to @u makes its channel: NULL (the query fails,
	 * SERVFAIL) if it cannot be made. */
	if (!c->ch && chan_init(ups, c, UDP_FLAGS, u->name) < 0)
		return NULL;
	return c;
}

struct chan *upstream_chan_tcp(struct dns_upstreams *ups, struct upstream *u)
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
	/* Each channel is made at its first query (upstream_chan_udp,
	 * upstream_chan_tcp): a c-ares channel clears 72 KiB of its own at
	 * its making (18 page faults) and reads /etc/resolv.conf, which a
	 * COMMAND that asks nothing never needs (issue 42). The names are
	 * egret's own "ADDR:PORT" texts, checked when the options or the
	 * policy were read (endpoint_parse) or written from resolv.conf's
	 * addresses above. */
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
