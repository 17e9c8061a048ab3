/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * daemon/metrics_http.h - egretd's metrics endpoint (docs/EGRETD.md,
 * "Metrics"): `GET /metrics` over HTTP/1.1 on a unix socket and/or a TCP
 * address, served from the accept loop without blocking it.
 *
 * One request a connection, then the response and the close. Bounded:
 * METRICS_CONNS_MAX connections at once (more are closed as they come),
 * a request head of METRICS_REQUEST_MAX bytes, METRICS_TIMEOUT_MS for the
 * whole exchange, a body of METRICS_BODY_MAX. Only GET and HEAD of
 * /metrics are answered 200.
 */
#ifndef EGRET_DAEMON_METRICS_HTTP_H
#define EGRET_DAEMON_METRICS_HTTP_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/config.h"

#define METRICS_CONNS_MAX	16
#define METRICS_REQUEST_MAX	4096
#define METRICS_TIMEOUT_MS	5000
#define METRICS_BODY_MAX	(4u << 20)
#define METRICS_POLL_MAX	(2 + METRICS_CONNS_MAX)

struct metrics;

struct metrics_conn {
	int fd;
	uint64_t until_ms;
	size_t got;
	char req[METRICS_REQUEST_MAX];
	char *out;		/* the response once the request is read, or NULL */
	size_t outlen, sent;
};

struct metrics_http {
	int listen_fd[2];	/* the unix socket's, the TCP address's; -1: none */
	struct metrics_conn conn[METRICS_CONNS_MAX];
	unsigned int nconn;
};

/* The listeners @cfg asks for (none: 0 with none open). 0, or -errno
 * with what failed in *@ret_step. */
int metrics_http_open(struct metrics_http *h, const struct daemon_metrics_config *cfg,
		      const char **ret_step);

/* Every fd closed (also in a forked child), every response freed. */
void metrics_http_close(struct metrics_http *h);

/* The fds to poll, into @p (METRICS_POLL_MAX at most): their count. */
unsigned int metrics_http_poll_set(const struct metrics_http *h, struct pollfd *p);

/* The ms until the next connection's time is up, or -1. */
int metrics_http_timeout_ms(const struct metrics_http *h);

/* What @p (polled, @np of them) says, answered from @m with @running
 * attempts now; connections past their time closed. */
void metrics_http_serve(struct metrics_http *h, const struct pollfd *p, unsigned int np,
			struct metrics *m, unsigned int running);

#endif
