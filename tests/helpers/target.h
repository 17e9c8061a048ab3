/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * target.h - "ADDR PORT" on the command line into a socket address, shared
 * by the test helpers (probe, redteam). ADDR is IPv4, IPv6, or
 * ::ffff:a.b.c.d (kept as IPv6, to be sent from an AF_INET6 socket).
 */
#ifndef EGRET_TEST_TARGET_H
#define EGRET_TEST_TARGET_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

struct target {
	struct sockaddr_storage ss;
	socklen_t len;
	int family;	/* socket family: AF_INET6 for ::ffff: too */
	int mapped;	/* ::ffff:a.b.c.d on an AF_INET6 socket */
};

/* A decimal port 0-65535. 0, or -1 for anything else. */
static inline int parse_port(const char *s, long *out)
{
	char *end;
	long p;

	errno = 0;
	p = strtol(s, &end, 10);
	if (errno || *end || end == s || p < 0 || p > 65535)
		return -1;
	*out = p;
	return 0;
}

static inline int parse_target(const char *addr, const char *port,
			       struct target *t)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&t->ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&t->ss;
	long p;

	if (parse_port(port, &p) < 0)
		return -1;
	memset(t, 0, sizeof(*t));
	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((unsigned short)p);
		t->len = sizeof(*sin);
		t->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((unsigned short)p);
		t->len = sizeof(*sin6);
		t->family = AF_INET6;
		t->mapped = IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr);
		return 0;
	}
	return -1;
}

/* A cmsg the kernel accepts (TTL, or IPv6 hop limit, 64): any cmsg at all
 * turns off the connected fast path, which is what makes the sendmsg hook
 * run. A v4-mapped peer goes through udp_sendmsg(), which parses SOL_IP
 * cmsgs: @v6 only for a real IPv6 peer. */
static inline void fill_ttl_cmsg(int v6, struct msghdr *msg, char *cbuf,
				 size_t clen)
{
	struct cmsghdr *cm;
	int val = 64;

	memset(cbuf, 0, clen);
	msg->msg_control = cbuf;
	msg->msg_controllen = CMSG_SPACE(sizeof(int));
	cm = CMSG_FIRSTHDR(msg);
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	cm->cmsg_level = v6 ? IPPROTO_IPV6 : IPPROTO_IP;
	cm->cmsg_type = v6 ? IPV6_HOPLIMIT : IP_TTL;
	memcpy(CMSG_DATA(cm), &val, sizeof(val));
}

/* connect() with a deadline: non-blocking, then poll for completion. The
 * cgroup hook's verdict (EPERM) comes back from connect() itself.
 * Returns 0 or -errno (-ETIMEDOUT when the peer never answered). */
static inline int connect_bounded(int fd, const struct sockaddr *sa,
				  socklen_t len, int seconds)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	int flags = fcntl(fd, F_GETFL), err = 0;
	socklen_t elen = sizeof(err);

	fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	if (connect(fd, sa, len) < 0) {
		if (errno != EINPROGRESS)
			return -errno;
		if (poll(&pfd, 1, seconds * 1000) == 0)
			return -ETIMEDOUT;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
			return -errno;
		if (err)
			return -err;
	}
	fcntl(fd, F_SETFL, flags);
	return 0;
}

#endif
