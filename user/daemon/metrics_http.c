// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * daemon/metrics_http.c - egretd's metrics endpoint (daemon/metrics_http.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon/metrics.h"
#include "daemon/metrics_http.h"
#include "lib/expo.h"
#include "lib/loop.h"
#include "lib/trust.h"
#include "lib/util.h"

/* The unix socket: 0600 root's, or 0660 root:GROUP. */
static int open_unix(const struct daemon_metrics_config *cfg)
{
	return trusted_socket_listen(cfg->socket, SOCK_STREAM | SOCK_NONBLOCK,
				     cfg->group_set ? cfg->group : 0,
				     cfg->group_set ? 0660 : 0600, METRICS_CONNS_MAX);
}

static int open_tcp(const struct daemon_metrics_config *cfg)
{
	int family = cfg->addr.sa.sa_family, one = 1, fd, r = 0;
	socklen_t len = family == AF_INET ? sizeof(cfg->addr.in) : sizeof(cfg->addr.in6);

	fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    (family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0) ||
	    bind(fd, &cfg->addr.sa, len) < 0 || listen(fd, METRICS_CONNS_MAX) < 0)
		r = -errno;
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int metrics_http_open(struct metrics_http *h, const struct daemon_metrics_config *cfg,
		      const char **ret_step)
{
	int fd;

	*h = (struct metrics_http){ .listen_fd = { -1, -1 } };
	if (cfg->socket[0]) {
		fd = open_unix(cfg);
		if (fd < 0) {
			*ret_step = "metrics.socket";
			return fd;
		}
		h->listen_fd[0] = fd;
	}
	if (cfg->listen[0]) {
		fd = open_tcp(cfg);
		if (fd < 0) {
			*ret_step = "metrics.listen";
			metrics_http_close(h);
			return fd;
		}
		h->listen_fd[1] = fd;
	}
	return 0;
}

static void conn_drop(struct metrics_http *h, unsigned int i)
{
	close(h->conn[i].fd);
	free(h->conn[i].out);
	h->conn[i] = h->conn[--h->nconn];
}

void metrics_http_close(struct metrics_http *h)
{
	for (int i = 0; i < 2; i++)
		if (h->listen_fd[i] >= 0)
			close(TAKE_FD(h->listen_fd[i]));
	while (h->nconn)
		conn_drop(h, h->nconn - 1);
}

unsigned int metrics_http_poll_set(const struct metrics_http *h, struct pollfd *p)
{
	unsigned int np = 0;

	for (int i = 0; i < 2; i++)
		if (h->listen_fd[i] >= 0)
			p[np++] = (struct pollfd){ .fd = h->listen_fd[i], .events = POLLIN };
	for (unsigned int i = 0; i < h->nconn; i++)
		p[np++] = (struct pollfd){ .fd = h->conn[i].fd,
					   .events = h->conn[i].out ? POLLOUT : POLLIN };
	return np;
}

int metrics_http_timeout_ms(const struct metrics_http *h)
{
	uint64_t now = mono_us() / 1000, first = UINT64_MAX;

	for (unsigned int i = 0; i < h->nconn; i++)
		if (h->conn[i].until_ms < first)
			first = h->conn[i].until_ms;
	if (first == UINT64_MAX)
		return -1;
	return first <= now ? 0 : (int)(first - now);
}

/* What a request head asks for: its status line's code and text. */
static const char *status_of(const char *req, bool *ret_head)
{
	bool head = !strncmp(req, "HEAD ", 5), get = !strncmp(req, "GET ", 4);
	const char *target = req + (head ? 5 : 4);

	*ret_head = head;
	if (!get && !head)
		return "405 Method Not Allowed";
	if (strncmp(target, "/metrics", 8) || !strchr(" ?", target[8]))
		return "404 Not Found";
	return "200 OK";
}

/* The response to the request head in @c: the exposition for a GET of
 * /metrics (its headers alone for a HEAD), else the status in words. */
static void respond(struct metrics_conn *c, struct metrics *m, unsigned int running)
{
	bool head, ok;
	const char *status = status_of(c->req, &head);
	char err[64];
	struct expo e;
	const char *body = err;
	size_t len;
	int n;

	ok = status[0] == '2';
	expo_init(&e, METRICS_BODY_MAX);
	if (ok)
		metrics_render(m, running, &e);
	snprintf(err, sizeof(err), "%s\n", status);
	if (ok)
		body = e.buf ? e.buf : "";
	len = ok ? e.len : strlen(err);
	n = asprintf(&c->out, "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
		     "Connection: close\r\n\r\n%s", status,
		     ok ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain; charset=utf-8",
		     len, status[2] == '5' ? "Allow: GET, HEAD\r\n" : "", head ? "" : body);
	c->outlen = n < 0 ? 0 : (size_t)n;
	if (n < 0)
		c->out = NULL;
	expo_free(&e);
}

/* Read what came; once the head is whole (or too long), the response. */
static bool conn_read(struct metrics_conn *c, struct metrics *m, unsigned int running)
{
	ssize_t n = recv(c->fd, c->req + c->got, sizeof(c->req) - 1 - c->got, MSG_DONTWAIT);

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		return false;
	if (n < 0)
		return true;
	c->got += (size_t)n;
	c->req[c->got] = '\0';
	if (strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n"))
		respond(c, m, running);
	else if (c->got == sizeof(c->req) - 1)
		c->outlen = (size_t)asprintf(&c->out, "HTTP/1.1 431 Request Header Fields Too Large\r\n"
					     "Content-Length: 0\r\nConnection: close\r\n\r\n");
	return c->got < sizeof(c->req) - 1 || c->out;
}

/* Write what is left: false once it is all sent (or cannot be). */
static bool conn_write(struct metrics_conn *c)
{
	ssize_t n = send(c->fd, c->out + c->sent, c->outlen - c->sent,
			 MSG_DONTWAIT | MSG_NOSIGNAL);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	c->sent += (size_t)n;
	return c->sent < c->outlen;
}

static void accept_all(struct metrics_http *h, int lfd)
{
	int fd;

	while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		if (h->nconn == METRICS_CONNS_MAX) {
			close(fd);	/* a scraper is one connection at a time */
			continue;
		}
		h->conn[h->nconn++] = (struct metrics_conn){ .fd = fd,
			.until_ms = mono_us() / 1000 + METRICS_TIMEOUT_MS };
	}
}

void metrics_http_serve(struct metrics_http *h, const struct pollfd *p, unsigned int np,
			struct metrics *m, unsigned int running)
{
	uint64_t now = mono_us() / 1000;

	for (unsigned int k = 0; k < np; k++) {
		unsigned int i;

		if (!p[k].revents)
			continue;
		if (p[k].fd == h->listen_fd[0] || p[k].fd == h->listen_fd[1]) {
			accept_all(h, p[k].fd);
			continue;
		}
		for (i = 0; i < h->nconn && h->conn[i].fd != p[k].fd; i++)
			;
		if (i == h->nconn)
			continue;
		if (!(h->conn[i].out ? conn_write(&h->conn[i]) :
		      conn_read(&h->conn[i], m, running)) ||
		    (h->conn[i].out && h->conn[i].sent == h->conn[i].outlen))
			conn_drop(h, i);
	}
	for (unsigned int i = 0; i < h->nconn;)
		if (now >= h->conn[i].until_ms)
			conn_drop(h, i);
		else
			i++;
}
