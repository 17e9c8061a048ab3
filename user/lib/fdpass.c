// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/fdpass.h"

union fds_cmsg {
	char buf[CMSG_SPACE(FDS_MAX * sizeof(int))];
	struct cmsghdr align;
};

int fds_send(int sock, const int *fds, int n)
{
	union fds_cmsg u = {};
	char one = 'f';
	struct iovec iov = { .iov_base = &one, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf, .msg_controllen = CMSG_SPACE(n * sizeof(int)) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	if (n < 1 || n > FDS_MAX)
		return -EINVAL;
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

int fds_recv(int sock, int *fds, int max)
{
	union fds_cmsg u;
	char one;
	struct iovec iov = { .iov_base = &one, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	int n = 0, fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -EPIPE;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (n < max && n < FDS_MAX)
				fds[n] = fd;
			else
				close(fd);
			n++;
		}
	}
	if (n == 0 || n > max || (msg.msg_flags & MSG_CTRUNC)) {
		for (int i = 0; i < n && i < max; i++)
			close(fds[i]);
		return -EPROTO;
	}
	return n;
}

int fd_send(int sock, int fd)
{
	return fds_send(sock, &fd, 1);
}

int fd_recv(int sock)
{
	int fd, n = fds_recv(sock, &fd, 1);

	return n < 0 ? n : fd;
}
