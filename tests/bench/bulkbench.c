/* bulkbench.c - one large TCP transfer.
 * bulkbench serve ADDR PORT
 *     accept connections forever; read each to EOF, then close - or, if
 *     it starts with "GET /MIB ", write MIB MiB back and close (a download).
 * bulkbench send ADDR PORT MIB [via PROXY_ADDR PROXY_PORT | via-env | sni NAME]
 *     connect (through an HTTP CONNECT proxy with "via", or the one
 *     $HTTP_PROXY names with "via-env", proxy_env.h; with "sni",
 *     first a TLS ClientHello naming NAME, as SNI pinning wants), write MIB MiB,
 *     shutdown, wait for the server's close; print "mib_s <MiB/s> mib <MIB>
 *     cpu_us <the sender's CPU time>".
 * bulkbench fetch ADDR PORT MIB NAME
 *     connect, send "GET /MIB HTTP/1.1" with Host: NAME (what Host pinning
 *     judges), read to EOF; print "mib_s <MiB/s> mib <MIB> cpu_us <the
 *     receiver's CPU time>" (its ACKs are what the egress programs see).
 * IPv4 only. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../helpers/tls_build.h"
#include "proxy_env.h"

static char buf[1 << 20];

static int sa(const char *a, const char *p, struct sockaddr_in *s)
{
	memset(s, 0, sizeof(*s));
	s->sin_family = AF_INET;
	s->sin_port = htons(atoi(p));
	return inet_pton(AF_INET, a, &s->sin_addr) == 1 ? 0 : -1;
}

/* The figures of one transfer: its throughput and this process's CPU
 * time - its system calls, the TCP stack and the egress programs that
 * run on its behalf. */
static void report(long mib, const struct timespec *t0, const struct timespec *t1)
{
	double sec = (t1->tv_sec - t0->tv_sec) + (t1->tv_nsec - t0->tv_nsec) / 1e9;
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	printf("mib_s %.1f mib %ld cpu_us %ld\n", mib / sec, mib,
	       (long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000L +
	       ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

int main(int argc, char **argv)
{
	struct sockaddr_in s;
	int fd, one = 1;

	if (argc < 4 || sa(argv[2], argv[3], &s))
		return 2;
	if (!strcmp(argv[1], "serve")) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
		    bind(fd, (void *)&s, sizeof(s)) || listen(fd, 64)) {
			perror("bulkbench serve");
			return 1;
		}
		printf("ready\n");
		fflush(stdout);
		for (;;) {
			int c = accept(fd, NULL, NULL);
			ssize_t got;
			long mib;

			if (c < 0)
				continue;
			got = read(c, buf, sizeof(buf));
			if (got > 5 && !memcmp(buf, "GET /", 5) &&
			    (mib = atol(buf + 5)) > 0 && mib <= 65536) {
				memset(buf, 'x', sizeof(buf));
				for (long i = 0; i < mib; i++)
					if (write(c, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
						break;
			} else {
				while (got > 0)
					got = read(c, buf, sizeof(buf));
			}
			close(c);
		}
	}
	if (!strcmp(argv[1], "fetch") && argc == 6) {
		long mib = atol(argv[4]), total = 0;
		struct timespec t0, t1;
		char req[512];
		ssize_t r;
		int n;

		if (mib < 1 || mib > 65536)
			return 2;
		n = snprintf(req, sizeof(req), "GET /%ld HTTP/1.1\r\nHost: %s\r\n\r\n",
			     mib, argv[5]);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(fd, (void *)&s, sizeof(s)) || write(fd, req, n) != n) {
			perror("bulkbench fetch");
			return 1;
		}
		while ((r = read(fd, buf, sizeof(buf))) > 0)
			total += r;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (total != mib << 20) {
			fprintf(stderr, "bulkbench: fetched %ld bytes of %ld\n", total, mib << 20);
			return 1;
		}
		report(mib, &t0, &t1);
		return 0;
	}
	if (!strcmp(argv[1], "send") && argc >= 5) {
		long mib = atol(argv[4]), i;
		struct timespec t0, t1;
		const char *target = NULL;
		char tbuf[128], auth[800] = "";

		if (mib < 1 || mib > 65536)
			return 2;
		if (argc == 8 && !strcmp(argv[5], "via")) {
			snprintf(tbuf, sizeof(tbuf), "%s:%s", argv[2], argv[3]);
			target = tbuf;
			if (sa(argv[6], argv[7], &s))
				return 2;
		} else if (argc == 6 && !strcmp(argv[5], "via-env")) {
			struct target pt;

			snprintf(tbuf, sizeof(tbuf), "%s:%s", argv[2], argv[3]);
			target = tbuf;
			if (proxy_from_env(&pt, auth, sizeof(auth)) || pt.family != AF_INET)
				return 2;
			memcpy(&s, &pt.ss, sizeof(s));
			proxy_wait(&pt);
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(fd, (void *)&s, sizeof(s))) {
			perror("bulkbench connect");
			return 1;
		}
		if (argc == 7 && !strcmp(argv[5], "sni")) {
			static unsigned char hello[HELLO_MAX], hs[HELLO_MAX];
			struct buf hb = { .p = hello, .cap = sizeof(hello) };
			struct buf hsb = { .p = hs, .cap = sizeof(hs) };
			struct hello_opts ho = { .records = 1, .pad = -1, .sni = argv[6] };

			build_client_hello(&hsb, &ho);
			build_records(&hb, &hsb, 1);
			if (hsb.err || hb.err || write(fd, hb.p, hb.len) != (ssize_t)hb.len) {
				perror("bulkbench hello");
				return 1;
			}
		}
		if (target) {
			char req[1024], resp[1024];
			int n = snprintf(req, sizeof(req),
					 "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", target, target,
					 auth);
			size_t got = 0;
			if (write(fd, req, n) != n)
				return 1;
			/* read the response header, byte by byte, to its blank line */
			while (got < sizeof(resp) - 1 && read(fd, resp + got, 1) == 1) {
				got++;
				if (got >= 4 && !memcmp(resp + got - 4, "\r\n\r\n", 4))
					break;
			}
			resp[got] = 0;
			if (strncmp(resp + 9, "200", 3)) {
				fprintf(stderr, "bulkbench: proxy said: %.60s\n", resp);
				return 1;
			}
		}
		for (i = 0; i < mib; i++) {
			size_t off = 0;
			while (off < sizeof(buf)) {
				ssize_t w = write(fd, buf + off, sizeof(buf) - off);
				if (w <= 0) {
					perror("bulkbench write");
					return 1;
				}
				off += w;
			}
		}
		shutdown(fd, SHUT_WR);
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		report(mib, &t0, &t1);
		return 0;
	}
	return 2;
}
