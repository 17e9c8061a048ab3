// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dns/upstream_check.c - which upstream cannot be reached at all, said at
 * start: no route to it, or (loopback) nothing listening. Its own sockets,
 * no c-ares.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "dns/upstream_impl.h"
#include "dns/wire.h"
#include "lib/log.h"

#define CHECK_WAIT_MS	50

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
