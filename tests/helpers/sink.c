// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sink - the test world's listener: records everything that reached it.
 *
 *   sink LOGFILE SPEC...      SPEC = tcp:ADDR:PORT | udp:ADDR:PORT,
 *                             IPv6 as tcp:[ADDR]:PORT (bound IPV6_V6ONLY)
 *
 * Appends one line per TCP connection (written when the peer closes, before
 * we close our end, so a client that waits for EOF knows its line is on
 * disk) and one per UDP datagram:
 *
 *   tcp 203.0.113.10:80 from 192.0.2.2 bytes=5 data=hello
 *   udp [2001:db8:2::10]:9999 from 2001:db8:1::2 bytes=3 data=abc
 *
 * data= is the payload with bytes outside [!-~] shown as '.', cut at
 * DATA_MAX. A TCP connection whose first bytes are one whole TLS record
 * holding a ClientHello gets tls=NAME (the server_name it asked for, or
 * tls=- for none), and data= is what followed that record:
 *
 *   tcp 203.0.113.11:443 from 192.0.2.2 bytes=250 tls=registry.npmjs.org data=tok
 *
 * Likewise one whose first bytes are a whole HTTP request head gets
 * http=HOST (its Host), and data= is what followed the head (probe's
 * PROBE_HTTP sends the token as the body):
 *
 *   tcp 203.0.113.10:80 from 192.0.2.2 bytes=80 http=github.com data=tok
 *
 * On a TCP connection whose bytes read as HTTP/1 requests, each request
 * head is logged the moment it is whole, as a lenient server would act on
 * it (LF or CRLF line ends, any case, the first Host, a Content-Length
 * body stepped over; reading stops at anything else):
 *
 *   http 203.0.113.11:80 from 192.0.2.2 request=GET./x.HTTP/1.1 host=a.test
 *
 * Host pinning's tests take these as what a server received, whatever
 * became of the connection after (a refused one is aborted and never
 * closes). Each line is one write() to an O_APPEND fd: no buffering to
 * flush. The first line, "ready pid=N", is written once every socket is
 * bound. Runs until killed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../include/egret_tls.h"

#define MAX_FDS		1024
#define DATA_MAX	1000	/* a few pipelined HTTP requests, whole */
#define NAME_MAX_LEN	64	/* "[ipv6]:port" fits */

enum kind { K_NONE, K_TCP_LISTEN, K_UDP, K_TCP_CONN };

/* Per-fd state, indexed by fd. */
struct slot {
	enum kind kind;
	char local[NAME_MAX_LEN];	/* the SPEC address we listen on */
	char peer[NAME_MAX_LEN];
	char data[DATA_MAX + 1];
	size_t len;			/* bytes kept in data */
	size_t total;			/* bytes received */
	unsigned char *raw;		/* TCP: the first RAW_MAX bytes as sent */
	size_t http_off;		/* the next request head in raw */
	int http_done;			/* not (or no longer) HTTP */
};

#define RAW_MAX		(EGRET_HELLO_MAX + DATA_MAX)

static struct slot slots[MAX_FDS];
static int log_fd = -1, ep = -1;

static void die(const char *what)
{
	fprintf(stderr, "sink: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void keep(struct slot *s, const char *buf, size_t n)
{
	if (s->raw && s->total < RAW_MAX)
		memcpy(s->raw + s->total, buf, n < RAW_MAX - s->total ? n : RAW_MAX - s->total);
	for (size_t i = 0; i < n; i++) {
		if (s->len < DATA_MAX)
			s->data[s->len++] = buf[i] > ' ' && buf[i] <= '~' ? buf[i] : '.';
	}
	s->data[s->len] = '\0';
	s->total += n;
}

/* The name a whole first TLS record asks for (egret's own reader:
 * include/egret_tls.h), into @name; false if the bytes are no such record.
 * @data: what came after it, shown as data= is. */
static int tls_first(const struct slot *s, char *name, char *data)
{
	static unsigned char buf[EGRET_HELLO_MAX];
	struct egret_hello h = {};
	size_t after, i, n = s->total < RAW_MAX ? s->total : RAW_MAX;
	int need;

	if (!s->raw || n == 0)
		return 0;
	memcpy(buf, s->raw, n < sizeof(buf) ? n : sizeof(buf));
	need = egret_hello_need(buf, (__u32)(n < sizeof(buf) ? n : sizeof(buf)));
	if (need <= 0 || (size_t)need > n || egret_hello_begin(&h, buf, (__u32)need) < 0)
		return 0;
	for (i = 0; i < EGRET_HELLO_EXTS && egret_hello_ext(&h, buf); i++)
		;
	strcpy(name, "-");
	if (egret_hello_sni(&h, buf) == 0) {
		for (i = 0; i < h.name_len; i++)
			if (egret_hello_name_byte(&h, buf, (__u32)i, name) < 0)
				break;
		name[i < h.name_len ? 0 : h.name_len] = '\0';
		if (i < h.name_len)
			strcpy(name, "?");
	}
	after = n - (size_t)need;
	for (i = 0; i < after && i < DATA_MAX; i++) {
		unsigned char c = s->raw[(size_t)need + i];

		data[i] = c > ' ' && c <= '~' ? (char)c : '.';
	}
	data[i] = '\0';
	return 1;
}

/* A copy of @n bytes of @p for a log line: [!-~] kept, others '.'. */
static void printable(char *out, size_t cap, const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n && i + 1 < cap; i++)
		out[i] = p[i] > ' ' && p[i] <= '~' ? (char)p[i] : '.';
	out[i] = '\0';
}

/* The first request's Host, when the connection's first bytes are one
 * whole HTTP request head, into @host, and what followed it (its body,
 * shown as data= is) into @data; false otherwise. */
static bool http_first(const struct slot *s, char *host, size_t host_len, char *data)
{
	size_t have = s->total < RAW_MAX ? s->total : RAW_MAX, end = 0, i;
	const unsigned char *p = s->raw;

	if (!p || !have || p[0] < 'A' || p[0] > 'Z')
		return false;
	for (i = 0; i + 3 < have; i++)
		if (!memcmp(p + i, "\r\n\r\n", 4)) {
			end = i + 4;
			break;
		}
	if (!end)
		return false;
	snprintf(host, host_len, "-");
	for (i = 0; i < end; i++) {
		size_t e = i, v;

		while (e < end && p[e] != '\n')
			e++;
		if (e - i > 5 && !strncasecmp((const char *)p + i, "host:", 5)) {
			for (v = i + 5; v < e && p[v] == ' '; v++)
				;
			printable(host, host_len, p + v, e > v && p[e - 1] == '\r' ? e - 1 - v : e - v);
			break;
		}
		i = e;
	}
	printable(data, DATA_MAX + 1, p + end, have - end);
	return true;
}

static void log_line(const char *proto, const struct slot *s)
{
	char line[DATA_MAX + 512], name[EGRET_SNI_MAX + 3], data[DATA_MAX + 1];
	int n;

	if (tls_first(s, name, data))
		n = snprintf(line, sizeof(line), "%s %s from %s bytes=%zu tls=%s data=%s\n",
			     proto, s->local, s->peer, s->total, name, data);
	else if (s->kind == K_TCP_CONN && http_first(s, name, sizeof(name), data))
		n = snprintf(line, sizeof(line), "%s %s from %s bytes=%zu http=%s data=%s\n",
			     proto, s->local, s->peer, s->total, name, data);
	else
		n = snprintf(line, sizeof(line), "%s %s from %s bytes=%zu data=%s\n",
			     proto, s->local, s->peer, s->total, s->data);

	if (write(log_fd, line, (size_t)n) != n)
		die("write log");
}


/* Each request head now whole in raw, logged as an "http" line. */
static void http_heads(struct slot *s)
{
	size_t have = s->total < RAW_MAX ? s->total : RAW_MAX;

	while (!s->http_done && s->http_off < have) {
		const unsigned char *p = s->raw + s->http_off;
		size_t n = have - s->http_off, i, end = 0, line_end, body = 0;
		char line[DATA_MAX + 512], req[DATA_MAX + 1], host[300] = "-";

		if (!(p[0] >= 'A' && p[0] <= 'Z') && p[0] != '\r' && p[0] != '\n') {
			s->http_done = 1;
			return;
		}
		for (i = 0; i + 1 < n; i++) {
			if (p[i] == '\n' && p[i + 1] == '\n') {
				end = i + 2;
				break;
			}
			if (i + 3 < n && !memcmp(p + i, "\r\n\r\n", 4)) {
				end = i + 4;
				break;
			}
		}
		if (!end)
			return;		/* not whole yet */
		for (line_end = 0; line_end < end && p[line_end] != '\n'; line_end++)
			;
		printable(req, sizeof(req), p, line_end && p[line_end - 1] == '\r' ?
			  line_end - 1 : line_end);
		for (i = line_end + 1; i < end; ) {
			size_t e = i, v;

			while (e < end && p[e] != '\n')
				e++;
			if (e - i > 5 && !strncasecmp((const char *)p + i, "host:", 5) &&
			    !strcmp(host, "-")) {
				for (v = i + 5; v < e && (p[v] == ' ' || p[v] == '\t'); v++)
					;
				printable(host, sizeof(host), p + v,
					  e > v && p[e - 1] == '\r' ? e - 1 - v : e - v);
			}
			if (e - i > 15 && !strncasecmp((const char *)p + i, "content-length:", 15))
				body = strtoul((const char *)p + i + 15, NULL, 10);
			if (e - i > 18 && !strncasecmp((const char *)p + i, "transfer-encoding:", 18))
				s->http_done = 1;
			i = e + 1;
		}
		n = (size_t)snprintf(line, sizeof(line), "http %s from %s request=%s host=%s\n",
				     s->local, s->peer, req, host);
		if (write(log_fd, line, n) != (ssize_t)n)
			die("write log");
		s->http_off += end + body;
	}
}

static void peer_name(const struct sockaddr_storage *ss, char *out)
{
	const void *a = ss->ss_family == AF_INET ?
		(const void *)&((const struct sockaddr_in *)ss)->sin_addr :
		(const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr;

	if (!inet_ntop(ss->ss_family, a, out, NAME_MAX_LEN))
		strcpy(out, "?");
}

static void watch(int fd, enum kind kind, const char *local)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (fd >= MAX_FDS) {
		fprintf(stderr, "sink: fd %d over limit, dropped\n", fd);
		close(fd);
		return;
	}
	free(slots[fd].raw);
	memset(&slots[fd], 0, sizeof(slots[fd]));
	slots[fd].kind = kind;
	snprintf(slots[fd].local, NAME_MAX_LEN, "%s", local);
	if (kind == K_TCP_CONN && !(slots[fd].raw = malloc(RAW_MAX)))
		die("malloc");
	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		die("epoll_ctl");
}

/* Parse "tcp:ADDR:PORT" / "udp:[ADDR6]:PORT", bind, listen, watch. */
static void open_spec(const char *spec)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	char addr[NAME_MAX_LEN], local[NAME_MAX_LEN];
	const char *rest = spec + 4, *colon;
	int tcp, fd, one = 1;
	socklen_t len;
	long port;

	if (!strncmp(spec, "tcp:", 4))
		tcp = 1;
	else if (!strncmp(spec, "udp:", 4))
		tcp = 0;
	else
		goto bad;
	colon = strrchr(rest, ':');
	if (!colon || colon == rest || (size_t)(colon - rest) >= sizeof(addr))
		goto bad;
	port = strtol(colon + 1, NULL, 10);
	if (port <= 0 || port > 65535)
		goto bad;
	if (rest[0] == '[') {	/* [v6]:port */
		if (colon[-1] != ']')
			goto bad;
		snprintf(addr, sizeof(addr), "%.*s", (int)(colon - rest - 2), rest + 1);
	} else {
		snprintf(addr, sizeof(addr), "%.*s", (int)(colon - rest), rest);
	}
	snprintf(local, sizeof(local), "%.*s", (int)(sizeof(local) - 1), rest);

	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((unsigned short)port);
		len = sizeof(*sin);
	} else if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((unsigned short)port);
		len = sizeof(*sin6);
	} else {
		goto bad;
	}

	fd = socket(ss.ss_family, (tcp ? SOCK_STREAM : SOCK_DGRAM) |
		    SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* Without V6ONLY a v6 socket would also take v4 traffic for the same
	 * port and blur which listener got what. */
	if (ss.ss_family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0)
		die("IPV6_V6ONLY");
	if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
		fprintf(stderr, "sink: bind %s: %s\n", spec, strerror(errno));
		exit(1);
	}
	if (tcp && listen(fd, 64) < 0)
		die("listen");
	watch(fd, tcp ? K_TCP_LISTEN : K_UDP, local);
	return;
bad:
	fprintf(stderr, "sink: bad spec '%s' (want tcp:ADDR:PORT, udp:[ADDR6]:PORT)\n",
		spec);
	exit(2);
}

static void on_listen(int lfd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int fd;

	while ((fd = accept4(lfd, (struct sockaddr *)&ss, &len,
			     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		watch(fd, K_TCP_CONN, slots[lfd].local);
		if (fd < MAX_FDS)
			peer_name(&ss, slots[fd].peer);
		len = sizeof(ss);
	}
}

static void on_udp(int fd)
{
	struct sockaddr_storage ss;
	struct slot *s = &slots[fd];
	char buf[2048];
	socklen_t len = sizeof(ss);
	ssize_t n;

	while ((n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&ss,
			     &len)) >= 0) {
		s->len = s->total = 0;
		s->data[0] = '\0';
		peer_name(&ss, s->peer);
		keep(s, buf, (size_t)n);
		log_line("udp", s);
		len = sizeof(ss);
	}
}

/* Read until EOF (or reset), then log the connection and close it. */
static void on_conn(int fd)
{
	struct slot *s = &slots[fd];
	char buf[2048];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		keep(s, buf, (size_t)n);
		http_heads(s);
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	log_line("tcp", s);
	s->kind = K_NONE;
	free(s->raw);
	s->raw = NULL;
	close(fd);	/* also drops it from the epoll set */
}

int main(int argc, char **argv)
{
	struct epoll_event evs[64];
	char ready[64];
	int n;

	if (argc < 3) {
		fprintf(stderr, "usage: sink LOGFILE tcp:ADDR:PORT|udp:[ADDR6]:PORT...\n");
		return 2;
	}
	log_fd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log_fd < 0)
		die(argv[1]);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		die("epoll_create1");
	for (int i = 2; i < argc; i++)
		open_spec(argv[i]);
	n = snprintf(ready, sizeof(ready), "ready pid=%d\n", (int)getpid());
	if (write(log_fd, ready, (size_t)n) != n)
		die("write log");

	for (;;) {
		n = epoll_wait(ep, evs, 64, -1);
		if (n < 0 && errno != EINTR)
			die("epoll_wait");
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			switch (slots[fd].kind) {
			case K_TCP_LISTEN:
				on_listen(fd);
				break;
			case K_UDP:
				on_udp(fd);
				break;
			case K_TCP_CONN:
				on_conn(fd);
				break;
			case K_NONE:
				break;
			}
		}
	}
}
