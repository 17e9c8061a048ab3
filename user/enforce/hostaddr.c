// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <bpf/bpf.h>

#include "egret.h"
#include "egret_match.h"
#include "enforce/hostaddr.h"
#include "lib/log.h"
#include "lib/pages.h"
#include "lib/util.h"

#define NL_BUF	(64 * 1024)
#define ROUTES_BYTES	(HOSTADDR_MAX_ROUTES * sizeof(struct hostaddr_route))

/* Room for HOSTADDR_MAX_ROUTES routes, zero (lib/pages.h): a host's
 * local table fills a page or two of it. NULL without memory. */
static struct hostaddr_route *routes_alloc(void)
{
	return pages_zeroed(ROUTES_BYTES);
}

static void routes_free(struct hostaddr_route **r)
{
	pages_free(*r, ROUTES_BYTES);
	*r = NULL;
}

__u32 hostaddr_flag(uint8_t type)
{
	switch (type) {
	case RTN_LOCAL:
		return EGRET_HOST_LOCAL;
	case RTN_BROADCAST:
		return EGRET_HOST_BROADCAST;
	case RTN_ANYCAST:
		return EGRET_HOST_ANYCAST;
	default:
		return 0;
	}
}

int hostaddr_parse_route(const void *msg, size_t len, struct hostaddr_route *ret)
{
	const struct nlmsghdr *nh = msg;
	const struct rtmsg *rtm;
	const struct rtattr *rta;
	struct hostaddr_route r = {};
	uint32_t table;
	size_t alen, want;
	bool have_dst = false;

	if (len < NLMSG_LENGTH(sizeof(*rtm)) || nh->nlmsg_len > len ||
	    nh->nlmsg_len < NLMSG_LENGTH(sizeof(*rtm)))
		return -EBADMSG;
	if (nh->nlmsg_type != RTM_NEWROUTE && nh->nlmsg_type != RTM_DELROUTE)
		return 0;
	rtm = NLMSG_DATA(nh);
	if ((rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6) ||
	    !hostaddr_flag(rtm->rtm_type))
		return 0;
	want = rtm->rtm_family == AF_INET ? 4 : 16;
	if (rtm->rtm_dst_len > want * 8)
		return -EBADMSG;
	table = rtm->rtm_table;
	alen = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*rtm));
	for (rta = RTM_RTA(rtm); RTA_OK(rta, alen); rta = RTA_NEXT(rta, alen)) {
		size_t plen = RTA_PAYLOAD(rta);

		if (rta->rta_type == RTA_TABLE && plen == 4)
			memcpy(&table, RTA_DATA(rta), 4);
		else if (rta->rta_type == RTA_DST && plen == want) {
			memcpy(r.addr, RTA_DATA(rta), want);
			have_dst = true;
		} else if (rta->rta_type == RTA_OIF && plen == 4)
			memcpy(&r.oif, RTA_DATA(rta), 4);
	}
	if (table != RT_TABLE_LOCAL)
		return 0;
	if (!have_dst && rtm->rtm_dst_len)
		return -EBADMSG;
	r.family = rtm->rtm_family;
	r.prefixlen = rtm->rtm_dst_len;
	r.type = rtm->rtm_type;
	*ret = r;
	return 1;
}

static bool same_prefix(const struct hostaddr_route *a, const struct hostaddr_route *b)
{
	return a->family == b->family && a->prefixlen == b->prefixlen &&
	       !memcmp(a->addr, b->addr, sizeof(a->addr));
}

static bool same_route(const struct hostaddr_route *a, const struct hostaddr_route *b)
{
	return same_prefix(a, b) && a->type == b->type && a->oif == b->oif;
}

/* The flags of a prefix: every route of @routes for it, or'd. */
static __u32 flags_of(const struct hostaddr_route *routes, size_t n,
		      const struct hostaddr_route *p)
{
	__u32 flags = 0;

	for (size_t i = 0; i < n; i++)
		if (same_prefix(&routes[i], p))
			flags |= hostaddr_flag(routes[i].type);
	return flags;
}

/* Write (or, with no flags, delete) the map entry of @p's prefix. */
static int map_sync(const struct hostaddr *h, const struct hostaddr_route *p,
		    __u32 flags)
{
	struct egret_lpm_key6 k6 = { .prefixlen = EGRET_LPM_ATTEMPT_BITS + p->prefixlen };
	struct egret_lpm_key4 k4 = { .prefixlen = EGRET_LPM_ATTEMPT_BITS + p->prefixlen,
				     .addr = p->addr[0] };
	int fd = p->family == AF_INET ? h->map4 : h->map6;
	const void *key = p->family == AF_INET ? (const void *)&k4 : (const void *)&k6;

	egret_lpm_attempt(k4.attempt, h->attempt);
	egret_lpm_attempt(k6.attempt, h->attempt);
	memcpy(k6.addr, p->addr, sizeof(k6.addr));
	if (flags)
		return bpf_map_update_elem(fd, key, &flags, BPF_ANY) < 0 ? -errno : 0;
	if (bpf_map_delete_elem(fd, key) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

static int apply(struct hostaddr *h, int type, const struct hostaddr_route *r)
{
	size_t i;

	for (i = 0; i < h->nroutes && !same_route(&h->routes[i], r); i++)
		;
	if (type == RTM_NEWROUTE && i == h->nroutes) {
		if (h->nroutes == HOSTADDR_MAX_ROUTES)
			return -ENOSPC;
		h->routes[h->nroutes++] = *r;
	} else if (type == RTM_DELROUTE && i < h->nroutes) {
		h->routes[i] = h->routes[--h->nroutes];
	}
	return map_sync(h, r, flags_of(h->routes, h->nroutes, r));
}

/*
 * Each route message in @buf: a dump's (into @into) or notifications. One
 * message that cannot be used never costs the ones after it (a DELROUTE
 * further on must still be applied); the first error is returned.
 * *@intr: the kernel says the dump was interrupted by a change.
 */
static int read_messages(struct hostaddr *h, const void *buf, size_t len,
			 struct hostaddr_route *into, size_t *ninto, bool *done,
			 bool *intr)
{
	const struct nlmsghdr *nh;
	struct hostaddr_route r;
	int first = 0, r2;

	for (nh = buf; NLMSG_OK(nh, len); nh = NLMSG_NEXT(nh, len)) {
		if (nh->nlmsg_flags & NLM_F_DUMP_INTR)
			*intr = true;
		if (nh->nlmsg_type == NLMSG_DONE) {
			*done = true;
			break;
		}
		if (nh->nlmsg_type == NLMSG_ERROR) {
			first = first ? first : -EIO;
			continue;
		}
		r2 = hostaddr_parse_route(nh, nh->nlmsg_len, &r);
		if (r2 <= 0) {
			first = first ? first : r2;
			continue;
		}
		if (into) {
			if (*ninto == HOSTADDR_MAX_ROUTES)
				return -ENOSPC;
			into[(*ninto)++] = r;
		} else if ((r2 = apply(h, nh->nlmsg_type, &r)) < 0) {
			first = first ? first : r2;
		}
	}
	return first;
}

/* The local table now, both families, on a socket of its own. */
static int dump(struct hostaddr *h, struct hostaddr_route *into, size_t *ninto)
{
	static uint8_t buf[NL_BUF];
	_cleanup_close_ int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	int families[] = { AF_INET, AF_INET6 };

	if (fd < 0)
		return -errno;
	*ninto = 0;
	for (size_t f = 0; f < ARRAY_SIZE(families); f++) {
		struct {
			struct nlmsghdr nh;
			struct rtmsg rtm;
		} req = {
			.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETROUTE,
				.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 1 },
			.rtm = { .rtm_family = (unsigned char)families[f],
				 .rtm_table = RT_TABLE_LOCAL },
		};
		bool done = false, intr = false;
		int r;

		if (send(fd, &req, sizeof(req), 0) < 0)
			return -errno;
		while (!done) {
			ssize_t n = recv(fd, buf, sizeof(buf), 0);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return n < 0 ? -errno : -EIO;
			r = read_messages(h, buf, (size_t)n, into, ninto, &done, &intr);
			if (r < 0)
				return r;
		}
		if (intr)
			return -EAGAIN;	/* the table changed meanwhile: again */
	}
	return 0;
}

/*
 * Replace what the maps hold with a fresh dump: every prefix of the new
 * table written first, then those that are gone removed, so an address
 * that stays never disappears from the maps on the way.
 */
static int resync(struct hostaddr *h)
{
	__attribute__((cleanup(routes_free))) struct hostaddr_route *fresh =
		routes_alloc();
	size_t n = 0;
	int r;

	if (!fresh)
		return -ENOMEM;
	for (int tries = 0; (r = dump(h, fresh, &n)) == -EAGAIN && tries < 5; tries++)
		;
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		if ((r = map_sync(h, &fresh[i], flags_of(fresh, n, &fresh[i]))) < 0)
			return r;
	for (size_t i = 0; i < h->nroutes; i++)
		if (!flags_of(fresh, n, &h->routes[i]) &&
		    (r = map_sync(h, &h->routes[i], 0)) < 0)
			return r;
	memcpy(h->routes, fresh, n * sizeof(*fresh));
	h->nroutes = n;
	return 0;
}

static void on_notify(struct loop_source *src, uint32_t events)
{
	struct hostaddr *h = container_of(src, struct hostaddr, src);
	static uint8_t buf[NL_BUF];
	bool done = false, intr = false;
	int r = 0, r2;

	(void)events;
	for (int i = 0; i < 64; i++) {
		struct sockaddr_nl from = {};
		socklen_t fromlen = sizeof(from);
		ssize_t n = recvfrom(src->fd, buf, sizeof(buf), MSG_DONTWAIT,
				     (struct sockaddr *)&from, &fromlen);

		if (n < 0 && errno == ENOBUFS) {
			/* Notifications were lost: ask again. */
			h->resyncs++;
			r2 = resync(h);
			r = r ? r : r2;
			continue;
		}
		if (n <= 0)
			break;
		if (from.nl_pid != 0)
			continue;	/* only the kernel tells us about routes */
		r2 = read_messages(h, buf, (size_t)n, NULL, NULL, &done, &intr);
		r = r ? r : r2;
	}
	if (r < 0)
		log_warn("warning: host addresses: %s; the BPF host maps may be out of date (new addresses of this host are refused as sources, and are not special destinations until they are in)",
			 strerror(-r));
}

/* The first @bits bits of @a and @b agree. */
static bool prefix_match(const uint8_t *a, const uint8_t *b, unsigned int bits)
{
	unsigned int whole = bits / 8, rest = bits % 8;

	if (memcmp(a, b, whole))
		return false;
	return !rest || !((a[whole] ^ b[whole]) & (uint8_t)(0xff << (8 - rest)));
}

bool hostaddr_has(const struct hostaddr *h, int family, const void *addr)
{
	for (size_t i = 0; i < h->nroutes; i++) {
		const struct hostaddr_route *r = &h->routes[i];

		if (r->family == family && hostaddr_flag(r->type) &&
		    prefix_match((const uint8_t *)r->addr, addr, r->prefixlen))
			return true;
	}
	return false;
}

int hostaddr_open(struct hostaddr *h, int map4, int map6, __u64 attempt)
{
	struct sockaddr_nl sa = {
		.nl_family = AF_NETLINK,
		.nl_groups = RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE,
	};
	int rcvbuf = 1 << 20;

	*h = (struct hostaddr){ .map4 = map4, .map6 = map6, .attempt = attempt,
				.src = { .fd = -1 } };
	h->routes = routes_alloc();
	if (!h->routes)
		return -ENOMEM;
	/* Subscribed before the dump: nothing between them is missed. */
	h->src.fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
			   NETLINK_ROUTE);
	if (h->src.fd < 0)
		return -errno;
	setsockopt(h->src.fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(h->src.fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	h->src.fn = on_notify;
	return resync(h);
}

int hostaddr_start(struct hostaddr *h, struct loop *loop)
{
	h->loop = loop;
	return loop_watch(loop, &h->src, EPOLLIN);
}

void hostaddr_close(struct hostaddr *h)
{
	if (h->loop && h->src.added)
		loop_unwatch(h->loop, &h->src);
	if (h->src.fd >= 0)
		close(h->src.fd);
	routes_free(&h->routes);
	*h = (struct hostaddr){ .src = { .fd = -1 } };
}
