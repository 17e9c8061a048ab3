/* connbench.c - per-connect cost: N x (socket, SO_LINGER 0, connect, close)
 * to ADDR:PORT, timed in the client. SO_LINGER 0 makes close send RST, so no
 * TIME_WAIT piles up and the ephemeral ports never run out.
 * Usage: connbench ADDR PORT N [sni NAME | http NAME]
 * With sni: each connection writes a TLS ClientHello naming NAME before
 * it closes (what SNI pinning judges), and waits until the kernel has
 * sent it (SIOCOUTQ empty), so the first record's judgement is timed.
 * With http: a plain-HTTP GET with Host: NAME instead (Host pinning).
 * Prints: "connect_us <mean microseconds per connect+close> n <N> errors 0".
 * Exits 1 on the first failed connect (a benchmark of failures is no
 * benchmark). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/sockios.h>
#include <sys/ioctl.h>

#include "../helpers/target.h"
#include "../helpers/tls_build.h"

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct target t;
	long i, n;
	double t0, t1;

	static unsigned char hello[HELLO_MAX], hs[HELLO_MAX];
	struct buf hb = { .p = hello, .cap = sizeof(hello) }, hsb = { .p = hs, .cap = sizeof(hs) };

	if ((argc != 4 && !(argc == 6 && (!strcmp(argv[4], "sni") ||
					  !strcmp(argv[4], "http")))) ||
	    parse_target(argv[1], argv[2], &t) < 0) {
		fprintf(stderr, "usage: connbench ADDR PORT N [sni NAME | http NAME]\n");
		return 2;
	}
	if (argc == 6 && !strcmp(argv[4], "http")) {
		int k = snprintf((char *)hello, sizeof(hello),
				 "GET / HTTP/1.1\r\nHost: %s\r\nUser-Agent: connbench\r\n\r\n",
				 argv[5]);

		if (k <= 0 || (size_t)k >= sizeof(hello))
			return 2;
		hb.len = (size_t)k;
	} else if (argc == 6) {
		struct hello_opts ho = { .records = 1, .pad = -1, .sni = argv[5] };

		build_client_hello(&hsb, &ho);
		build_records(&hb, &hsb, 1);
		if (hsb.err || hb.err)
			return 2;
	}
	n = atol(argv[3]);
	if (n < 1 || n > 10000000)
		return 2;
	t0 = now_us();
	for (i = 0; i < n; i++) {
		int fd = socket(t.family, SOCK_STREAM, 0);
		if (fd < 0 ||
		    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) ||
		    connect(fd, (void *)&t.ss, t.len)) {
			fprintf(stderr, "connbench: connect %ld: %s\n", i, strerror(errno));
			return 1;
		}
		if (hb.len) {
			int queued = 1;

			if (write(fd, hb.p, hb.len) != (ssize_t)hb.len) {
				fprintf(stderr, "connbench: write %ld: %s\n", i, strerror(errno));
				return 1;
			}
			while (ioctl(fd, SIOCOUTQNSD, &queued) == 0 && queued > 0)
				;
		}
		close(fd);
	}
	t1 = now_us();
	printf("connect_us %.3f n %ld errors 0\n", (t1 - t0) / n, n);
	return 0;
}
