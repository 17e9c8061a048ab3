// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "dns/proxy_impl.h"

#define BIND_TRIES		16

void listen_on_udp(struct loop_source *src, uint32_t events)
{
	struct dns_proxy *p = container_of(src, struct proxy_source, src)->p;
	static uint8_t buf[DNS_MAX_MSG];
	int i;

	(void)events;
	/* Bounded batch: TCP clients and the upstreams get their turn. */
	for (i = 0; i < 64; i++) {
		struct query tmpl = { .udp_fd = src->fd,
				      .fromlen = sizeof(tmpl.from) };
		ssize_t n = recvfrom(src->fd, buf, sizeof(buf), MSG_DONTWAIT,
				     (struct sockaddr *)&tmpl.from,
				     &tmpl.fromlen);

		if (n < 0)
			break;
		proxy_handle_query(p, buf, (size_t)n, &tmpl);
	}
}

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

void listen_close(struct dns_proxy *p)
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
int listen_bind(struct dns_proxy *p)
{
	uint16_t port, got;
	int r = -EADDRINUSE;

	/* A port asked for (an attempt re-adopted: its programs send DNS
	 * there) is tried once: taken, it is an error. */
	for (int tries = 0; tries < (p->cfg.port ? 1 : BIND_TRIES) && r == -EADDRINUSE;
	     tries++) {
		listen_close(p);
		r = listen_on(AF_INET, SOCK_DGRAM, p->cfg.port, &p->udp4.src.fd, &port);
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

