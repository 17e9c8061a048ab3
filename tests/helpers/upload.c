// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * upload - bulk TCP transfers for the upload budget tests (docs/BUDGETS.md),
 * both ends, so that the far side's own byte count is the evidence.
 *
 *   upload serve ADDR PORT LOG [SEND]
 *       listen on ADDR:PORT (a world address); for each connection, read
 *       until EOF or error, counting, and send SEND bytes (default 0)
 *       meanwhile; then append one line to LOG:
 *           from PEER token=TOKEN received=N
 *       TOKEN is the connection's first line (up to 64 bytes before '\n').
 *       Prints "listening" once bound; runs until killed.
 *
 *   upload send HOST PORT TOKEN BYTES [CONNS]
 *       CONNS (default 1) connections at once, to HOST's addresses in turn
 *       (HOST: an address or a name, resolved through the C library, all
 *       its addresses, IPv4 and IPv6); each sends "TOKEN\n", then filler up
 *       to BYTES in all, shuts its side and waits for the server's EOF.
 *       Prints "ok sent=N" (N: bytes send() took, all connections) when
 *       every connection did so, else "err ENAME sent=N failed=K" with the
 *       first error seen; exit 0 only on ok.
 *
 *   upload fetch HOST PORT TOKEN
 *       one connection: send "TOKEN\n", shut its side, read to EOF.
 *       Prints "ok received=N" or "err ENAME received=N".
 *
 * Every wait is bounded: SO_SNDTIMEO/SO_RCVTIMEO of 20 s, alarm(60).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define CONNS_MAX	256
#define CHUNK		(64 * 1024)
#define TIMEOUT_S	20

static int usage(void)
{
	fprintf(stderr, "usage: upload serve ADDR PORT LOG [SEND]\n"
			"       upload send HOST PORT TOKEN BYTES [CONNS]\n"
			"       upload fetch HOST PORT TOKEN\n");
	return 2;
}

static const char *errname(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "E?";
}

static void timeouts(int fd)
{
	struct timeval tv = { .tv_sec = TIMEOUT_S };

	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* ---- server ------------------------------------------------------------ */

static void serve_one(int fd, const char *peer, const char *log, unsigned long long send_n)
{
	static char buf[CHUNK];
	char token[65] = "", line[256];
	unsigned long long got = 0, sent = 0;
	size_t tlen = 0;
	int lfd, done_reading = 0, n;

	timeouts(fd);
	memset(buf, 'x', sizeof(buf));
	/* Interleave: a client that sends while we send must not deadlock. */
	fcntl(fd, F_SETFL, O_NONBLOCK);
	for (;;) {
		fd_set r, w;
		struct timeval tv = { .tv_sec = TIMEOUT_S };

		FD_ZERO(&r);
		FD_ZERO(&w);
		if (!done_reading)
			FD_SET(fd, &r);
		if (sent < send_n)
			FD_SET(fd, &w);
		if (done_reading && sent >= send_n)
			break;
		if (select(fd + 1, &r, &w, NULL, &tv) <= 0)
			break;
		if (FD_ISSET(fd, &r)) {
			ssize_t k = read(fd, buf, sizeof(buf));

			if (k <= 0) {
				done_reading = 1;
			} else {
				for (ssize_t i = 0; i < k && tlen < 64 && !strchr(token, '\n'); i++)
					token[tlen++] = buf[i];
				got += (unsigned long long)k;
			}
		}
		if (FD_ISSET(fd, &w)) {
			unsigned long long left = send_n - sent;
			ssize_t k;

			memset(buf, 'y', sizeof(buf));
			k = write(fd, buf, left < sizeof(buf) ? left : sizeof(buf));
			if (k <= 0)
				sent = send_n;	/* give up sending */
			else
				sent += (unsigned long long)k;
			if (sent >= send_n)
				shutdown(fd, SHUT_WR);
		}
	}
	token[tlen] = '\0';
	if (strchr(token, '\n'))
		*strchr(token, '\n') = '\0';
	n = snprintf(line, sizeof(line), "from %s token=%s received=%llu\n", peer,
		     token[0] ? token : "-", got);
	lfd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0644);
	if (lfd >= 0) {
		if (write(lfd, line, (size_t)n) != n)
			perror("upload: log");
		close(lfd);
	}
	close(fd);
}

static int serve(const char *addr, const char *port, const char *log, unsigned long long send_n)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_PASSIVE,
				  .ai_socktype = SOCK_STREAM }, *ai;
	int one = 1, fd;

	if (getaddrinfo(addr, port, &hints, &ai) != 0)
		return usage();
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 512) < 0) {
		printf("err %s\n", errname(errno));
		return 1;
	}
	signal(SIGCHLD, SIG_IGN);
	printf("listening\n");
	fflush(stdout);
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		char host[INET6_ADDRSTRLEN] = "?";
		int c = accept(fd, (struct sockaddr *)&ss, &len);

		if (c < 0)
			continue;
		getnameinfo((struct sockaddr *)&ss, len, host, sizeof(host), NULL, 0, NI_NUMERICHOST);
		if (fork() == 0) {
			close(fd);
			serve_one(c, host, log, send_n);
			_exit(0);
		}
		close(c);
	}
}

/* ---- clients ----------------------------------------------------------- */

static int connect_to(const struct addrinfo *a)
{
	int fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	timeouts(fd);
	if (connect(fd, a->ai_addr, a->ai_addrlen) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* One upload; writes "ERRNO SENT" to @out. */
static void send_one(const struct addrinfo *a, const char *token, unsigned long long bytes,
		     int out)
{
	static char buf[CHUNK];
	unsigned long long sent = 0;
	char res[64];
	int fd = connect_to(a), err = 0, n;
	size_t tl = strlen(token);

	memset(buf, 'z', sizeof(buf));
	if (fd < 0) {
		err = -fd;
	} else {
		while (sent < bytes) {
			size_t want = bytes - sent < sizeof(buf) ? bytes - sent : sizeof(buf);
			ssize_t k;

			if (sent == 0) {
				memcpy(buf, token, tl < want ? tl : want);
				if (tl < want)
					buf[tl] = '\n';
			}
			k = send(fd, buf, want, MSG_NOSIGNAL);
			if (sent == 0)
				memset(buf, 'z', sizeof(buf));
			if (k < 0) {
				err = errno;
				break;
			}
			sent += (unsigned long long)k;
		}
		if (!err) {
			shutdown(fd, SHUT_WR);
			/* The server's EOF: it read all there was. */
			for (;;) {
				ssize_t k = recv(fd, buf, sizeof(buf), 0);

				if (k == 0)
					break;
				if (k < 0) {
					err = errno;
					break;
				}
			}
		}
		close(fd);
	}
	n = snprintf(res, sizeof(res), "%d %llu\n", err, sent);
	if (write(out, res, (size_t)n) != n)
		_exit(1);
}

static int resolve(const char *host, const char *port, struct addrinfo **ret)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	int r = getaddrinfo(host, port, &hints, ret);

	if (r != 0) {
		printf("err EAI %s\n", gai_strerror(r));
		return -1;
	}
	return 0;
}

static int send_many(const char *host, const char *port, const char *token,
		     unsigned long long bytes, int conns)
{
	struct addrinfo *ai, *a, *addrs[64];
	unsigned long long total = 0;
	int pfd[2], naddrs = 0, failed = 0, first = 0;
	FILE *in;
	char line[64];

	if (resolve(host, port, &ai) < 0)
		return 1;
	for (a = ai; a && naddrs < 64; a = a->ai_next)
		addrs[naddrs++] = a;
	if (pipe(pfd) < 0)
		return 1;
	for (int i = 0; i < conns; i++) {
		if (fork() == 0) {
			close(pfd[0]);
			send_one(addrs[i % naddrs], token, bytes, pfd[1]);
			_exit(0);
		}
	}
	close(pfd[1]);
	in = fdopen(pfd[0], "r");
	while (in && fgets(line, sizeof(line), in)) {
		int err = 0;
		unsigned long long sent = 0;

		if (sscanf(line, "%d %llu", &err, &sent) != 2)
			continue;
		total += sent;
		if (err) {
			failed++;
			if (!first)
				first = err;
		}
	}
	while (wait(NULL) > 0)
		;
	if (failed)
		printf("err %s sent=%llu failed=%d\n", errname(first), total, failed);
	else
		printf("ok sent=%llu\n", total);
	return failed ? 1 : 0;
}

static int fetch(const char *host, const char *port, const char *token)
{
	static char buf[CHUNK];
	unsigned long long got = 0;
	struct addrinfo *ai;
	int fd, err = 0;

	if (resolve(host, port, &ai) < 0)
		return 1;
	fd = connect_to(ai);
	if (fd < 0) {
		printf("err %s received=0\n", errname(-fd));
		return 1;
	}
	snprintf(buf, sizeof(buf), "%s\n", token);
	if (send(fd, buf, strlen(buf), MSG_NOSIGNAL) < 0)
		err = errno;
	shutdown(fd, SHUT_WR);
	while (!err) {
		ssize_t k = recv(fd, buf, sizeof(buf), 0);

		if (k == 0)
			break;
		if (k < 0)
			err = errno;
		else
			got += (unsigned long long)k;
	}
	close(fd);
	if (err)
		printf("err %s received=%llu\n", errname(err), got);
	else
		printf("ok received=%llu\n", got);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 5 && !strcmp(argv[1], "serve"))
		return serve(argv[2], argv[3], argv[4], argc > 5 ? strtoull(argv[5], NULL, 10) : 0);
	alarm(60);
	if ((argc == 6 || argc == 7) && !strcmp(argv[1], "send")) {
		int conns = argc == 7 ? atoi(argv[6]) : 1;

		if (conns < 1 || conns > CONNS_MAX)
			return usage();
		return send_many(argv[2], argv[3], argv[4], strtoull(argv[5], NULL, 10), conns);
	}
	if (argc == 5 && !strcmp(argv[1], "fetch"))
		return fetch(argv[2], argv[3], argv[4]);
	return usage();
}
