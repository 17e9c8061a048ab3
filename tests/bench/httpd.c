/* httpd.c - the far side of httpbench: a one-thread epoll HTTP server that
 * answers every request head with a fixed 200 (Content-Length: 2) and
 * waits for the client to close (httpbench closes with RST, so neither
 * side keeps TIME_WAIT). As cheap per request as a server can be, so that
 * what a variant adds is not hidden behind the server's own work.
 * Usage: httpd ADDR PORT [PROCS]   (prints "ready" once listening)
 * PROCS processes (default 1) share the listener, so that the server can
 * use every CPU. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../helpers/target.h"

#define MAX_EVENTS	64
#define HEAD_MAX	4096

static const char answer[] =
	"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok";

struct conn {
	int fd;
	size_t len;
	int answered;
	char head[HEAD_MAX];
};

static void conn_end(int ep, struct conn *c)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c);
}

static void conn_read(int ep, struct conn *c)
{
	for (;;) {
		ssize_t n = read(c->fd, c->head + c->len, sizeof(c->head) - 1 - c->len);

		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0 || c->len + (size_t)n >= sizeof(c->head) - 1) {
			conn_end(ep, c);	/* closed, reset, or a head too long */
			return;
		}
		c->len += (size_t)n;
		c->head[c->len] = '\0';
		if (!c->answered && strstr(c->head, "\r\n\r\n")) {
			c->answered = 1;
			if (write(c->fd, answer, sizeof(answer) - 1) != sizeof(answer) - 1) {
				conn_end(ep, c);
				return;
			}
			c->len = 0;	/* anything more is read and dropped */
		}
	}
}

int main(int argc, char **argv)
{
	struct epoll_event ev, evs[MAX_EVENTS];
	struct target t;
	int one = 1, lfd, ep, i, n, procs = argc == 4 ? atoi(argv[3]) : 1;

	if ((argc != 3 && argc != 4) || parse_target(argv[1], argv[2], &t) < 0 ||
	    procs < 1 || procs > 64) {
		fprintf(stderr, "usage: httpd ADDR PORT [PROCS]\n");
		return 2;
	}
	lfd = socket(t.family, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (void *)&t.ss, t.len) || listen(lfd, 4096)) {
		perror("httpd: listen");
		return 1;
	}
	for (i = 1; i < procs; i++)
		if (fork() == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);	/* ends with the first */
			break;
		}
	ep = epoll_create1(0);
	ev.events = EPOLLIN | EPOLLEXCLUSIVE;
	ev.data.ptr = NULL;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev)) {
		perror("httpd: epoll");
		return 1;
	}
	if (i == procs) {	/* the first process, once all are forked */
		printf("ready\n");
		fflush(stdout);
	}
	for (;;) {
		n = epoll_wait(ep, evs, MAX_EVENTS, -1);
		for (i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;
			int fd;

			if (c) {
				conn_read(ep, c);
				continue;
			}
			while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
				c = calloc(1, sizeof(*c));
				if (!c) {
					close(fd);
					continue;
				}
				c->fd = fd;
				ev.events = EPOLLIN;
				ev.data.ptr = c;
				if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
					close(fd);
					free(c);
				}
			}
		}
	}
}
