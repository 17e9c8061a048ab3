// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "dns/socks.h"

#define RX_MSG	4097	/* c-ares 1.18's own read buffer: MAXENDSSZ + 1 */

struct dns_rx {
	int fd;				/* whose datagrams these are; -1: none */
	unsigned int n, next;		/* received, handed out */
	bool drained;			/* the batch came back short */
	struct mmsghdr msgs[DNS_RX_BATCH];
	struct iovec iov[DNS_RX_BATCH];
	struct sockaddr_storage from[DNS_RX_BATCH];
	unsigned char buf[DNS_RX_BATCH][RX_MSG];
};

struct dns_rx *dns_rx_new(void)
{
	struct dns_rx *rx = malloc(sizeof(*rx));

	if (rx) {
		rx->fd = -1;
		rx->n = rx->next = 0;
		rx->drained = false;
	}
	return rx;
}

void dns_rx_free(struct dns_rx *rx)
{
	free(rx);
}

bool dns_rx_pending(const struct dns_rx *rx, int fd)
{
	return rx && rx->fd == fd && rx->next < rx->n;
}

void dns_rx_drop(struct dns_rx *rx)
{
	rx->fd = -1;
	rx->n = rx->next = 0;
}

static ares_socket_t sock_open(int family, int type, int protocol, void *data)
{
	int fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol), one = 1;

	(void)data;
	/* What c-ares does itself when no socket calls are given. */
	if (fd >= 0 && type == SOCK_STREAM)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd < 0 ? ARES_SOCKET_BAD : fd;
}

static int sock_close(ares_socket_t fd, void *data)
{
	struct dns_rx *rx = data;

	/* Its number may come back for another socket. */
	if (rx->fd == fd)
		dns_rx_drop(rx);
	return close(fd);
}

static int sock_connect(ares_socket_t fd, const struct sockaddr *sa, ares_socklen_t len,
			void *data)
{
	(void)data;
	return connect(fd, sa, len);
}

static ares_ssize_t sock_sendv(ares_socket_t fd, const struct iovec *iov, int n, void *data)
{
	(void)data;
	return writev(fd, iov, n);
}

/* One datagram of the batch, as recvfrom() would have given it. */
static ares_ssize_t hand_out(struct dns_rx *rx, void *buf, size_t len,
			     struct sockaddr *from, ares_socklen_t *fromlen)
{
	struct mmsghdr *m = &rx->msgs[rx->next];
	size_t n = m->msg_len < len ? m->msg_len : len;
	socklen_t flen = m->msg_hdr.msg_namelen;

	memcpy(buf, rx->buf[rx->next], n);
	if (flen > *fromlen)
		flen = *fromlen;
	memcpy(from, &rx->from[rx->next], flen);
	*fromlen = m->msg_hdr.msg_namelen;
	rx->next++;
	return (ares_ssize_t)n;
}

static ares_ssize_t sock_recvfrom(ares_socket_t fd, void *buf, size_t len, int flags,
				  struct sockaddr *from, ares_socklen_t *fromlen, void *data)
{
	struct dns_rx *rx = data;
	int i, n;

	/* TCP: c-ares reads a stream, with no address. */
	if (!from || !fromlen)
		return recv(fd, buf, len, flags);
	if (rx->fd == fd && rx->next < rx->n)
		return hand_out(rx, buf, len, from, fromlen);
	if (rx->fd == fd && rx->drained) {
		dns_rx_drop(rx);
		errno = EAGAIN;
		return -1;
	}
	for (i = 0; i < DNS_RX_BATCH; i++) {
		rx->iov[i] = (struct iovec){ .iov_base = rx->buf[i], .iov_len = RX_MSG };
		rx->msgs[i].msg_hdr = (struct msghdr){
			.msg_name = &rx->from[i], .msg_namelen = sizeof(rx->from[i]),
			.msg_iov = &rx->iov[i], .msg_iovlen = 1 };
	}
	dns_rx_drop(rx);
	n = recvmmsg(fd, rx->msgs, DNS_RX_BATCH, flags | MSG_DONTWAIT, NULL);
	if (n <= 0)
		return n;	/* errno as recvfrom() would set it */
	rx->fd = fd;
	rx->n = (unsigned int)n;
	rx->drained = n < DNS_RX_BATCH;
	return hand_out(rx, buf, len, from, fromlen);
}

void dns_socks_use(ares_channel ch, struct dns_rx *rx)
{
	static const struct ares_socket_functions funcs = {
		.asocket = sock_open,
		.aclose = sock_close,
		.aconnect = sock_connect,
		.arecvfrom = sock_recvfrom,
		.asendv = sock_sendv,
	};

	ares_set_socket_functions(ch, &funcs, rx);
}
