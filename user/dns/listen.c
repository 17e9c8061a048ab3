// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "dns/proxy_impl.h"

#define BIND_TRIES		16

void listen_flush(struct dns_proxy *p)
{
	struct udp_out *o = p->out;
	unsigned int off = 0;
	int r;

	/* sendmmsg() stops at a datagram that fails: that one is dropped,
	 * as a sendto() of it would be, and the rest still go. */
	while (off < o->n) {
		r = sendmmsg(o->fd, o->msgs + off, o->n - off, MSG_DONTWAIT);
		off += r > 0 ? (unsigned int)r : 1;
	}
	o->n = 0;
}

void listen_send(struct dns_proxy *p, int fd, const struct sockaddr_storage *to,
		 socklen_t tolen, const uint8_t *msg, size_t len)
{
	struct udp_out *o = p->out;
	unsigned int i;

	if (o->n && (o->fd != fd || o->n == DNS_UDP_BATCH))
		listen_flush(p);
	if (len > DNS_UDP_SLOT) {
		listen_flush(p);
		sendto(fd, msg, len, MSG_DONTWAIT, (const struct sockaddr *)to, tolen);
		return;
	}
	i = o->n++;
	o->fd = fd;
	memcpy(o->data[i], msg, len);
	memcpy(&o->to[i], to, tolen);
	o->iov[i] = (struct iovec){ .iov_base = o->data[i], .iov_len = len };
	o->msgs[i].msg_hdr = (struct msghdr){ .msg_name = &o->to[i], .msg_namelen = tolen,
					      .msg_iov = &o->iov[i], .msg_iovlen = 1 };
}

void listen_on_udp(struct loop_source *src, uint32_t events)
{
	struct dns_proxy *p = container_of(src, struct proxy_source, src)->p;
	static uint8_t buf[DNS_UDP_BATCH][DNS_UDP_QUERY_MAX];
	struct sockaddr_storage from[DNS_UDP_BATCH];
	struct mmsghdr msgs[DNS_UDP_BATCH];
	struct iovec iov[DNS_UDP_BATCH];
	int i, n, rounds;

	(void)events;
	/* Bounded: TCP clients and the upstreams get their turn. A short
	 * batch means the socket was empty; what came after wakes us again. */
	for (rounds = 0, n = DNS_UDP_BATCH; rounds < 4 && n == DNS_UDP_BATCH; rounds++) {
		for (i = 0; i < DNS_UDP_BATCH; i++) {
			iov[i] = (struct iovec){ .iov_base = buf[i], .iov_len = sizeof(buf[i]) };
			msgs[i].msg_hdr = (struct msghdr){
				.msg_name = &from[i], .msg_namelen = sizeof(from[i]),
				.msg_iov = &iov[i], .msg_iovlen = 1 };
		}
		n = recvmmsg(src->fd, msgs, DNS_UDP_BATCH, MSG_DONTWAIT, NULL);
		for (i = 0; i < n; i++) {
			struct query tmpl = { .udp_fd = src->fd,
					      .fromlen = msgs[i].msg_hdr.msg_namelen,
					      .oversize = msgs[i].msg_hdr.msg_flags & MSG_TRUNC };

			memcpy(&tmpl.from, &from[i], sizeof(tmpl.from));
			p->handle_query(p, buf[i], msgs[i].msg_len, &tmpl);
		}
	}
	listen_flush(p);
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

/* Is @fd a socket of @family and @type bound to loopback port @port (a
 * listening one, for TCP)? */
static bool listener_of(int fd, int family, int type, uint16_t port)
{
	struct sockaddr_storage ss = {};
	socklen_t len = sizeof(ss);
	int v, listening = 0;
	socklen_t vlen = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &vlen) < 0 || v != family ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &vlen) < 0 || v != type ||
	    (type == SOCK_STREAM &&
	     (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &vlen) < 0 || !listening)) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return false;
	if (family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)&ss;

		return sin->sin_addr.s_addr == htonl(INADDR_LOOPBACK) && ntohs(sin->sin_port) == port;
	}
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)&ss;

	return IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr) && ntohs(sin6->sin6_port) == port;
}

/*
 * The listeners an attempt's keeper held while egretd was down (launch.h),
 * taken over: the port never was free, so nothing else (COMMAND, another
 * attempt's egret binding a port of its own) could take it meanwhile.
 * All four or the two IPv4 ones, each what it should be; else none is
 * kept (-ENOENT), and the caller binds the port anew.
 */
int listen_adopt(struct dns_proxy *p, int *fds)
{
	static const struct { int family, type; } want[DNS_PROXY_LISTENERS] = {
		{ AF_INET, SOCK_DGRAM }, { AF_INET6, SOCK_DGRAM },
		{ AF_INET, SOCK_STREAM }, { AF_INET6, SOCK_STREAM },
	};
	struct proxy_source *to[DNS_PROXY_LISTENERS] = { &p->udp4, &p->udp6, &p->tcp4, &p->tcp6 };
	bool ok = fds[0] >= 0 && fds[2] >= 0 && (fds[1] >= 0) == (fds[3] >= 0);

	for (int i = 0; i < DNS_PROXY_LISTENERS && ok; i++)
		ok = fds[i] < 0 || (listener_of(fds[i], want[i].family, want[i].type, p->cfg.port) &&
				    fcntl(fds[i], F_SETFL, O_NONBLOCK) == 0);
	for (int i = 0; i < DNS_PROXY_LISTENERS; i++) {
		if (ok)
			to[i]->src.fd = fds[i];
		else if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
	if (!ok)
		return -ENOENT;
	p->port = p->cfg.port;
	p->ip6_loopback = p->udp6.src.fd >= 0;
	return 0;
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

