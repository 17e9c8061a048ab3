/* dnsbench.c - DNS over UDP: throughput and latency with distinct names.
 * Usage: dnsbench SERVER PORT PREFIX SUFFIX COUNT WINDOW
 * Asks type A for PREFIX<i>.SUFFIX, i = 0..COUNT-1 (distinct names, so no
 * cache or in-flight coalescing can help), keeping WINDOW queries in flight.
 * A query unanswered after 2 s counts as lost. IPv4 server only.
 * Prints "qps <q/s> p50_us <> p99_us <> answered <n> lost <n> nxdomain <n>". */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int build(unsigned char *q, unsigned id, const char *name)
{
	int n = 12, i = 0;
	memset(q, 0, 12);
	q[0] = id >> 8; q[1] = id & 0xff; q[2] = 0x01; q[5] = 1;
	while (name[i]) {
		int l = strcspn(name + i, ".");
		q[n++] = l;
		memcpy(q + n, name + i, l);
		n += l; i += l;
		if (name[i] == '.')
			i++;
	}
	q[n++] = 0;
	q[n++] = 0; q[n++] = 1; q[n++] = 0; q[n++] = 1;
	return n;
}

int main(int argc, char **argv)
{
	struct sockaddr_in s = { .sin_family = AF_INET };
	long count, window, sent = 0, done = 0, lost = 0, nx = 0, ans = 0;
	double *sent_at, *lat, t0, t1;
	unsigned char q[512], r[4096];
	char name[256];
	int fd;

	if (argc != 7)
		return 2;
	s.sin_port = htons(atoi(argv[2]));
	count = atol(argv[5]);
	window = atol(argv[6]);
	if (inet_pton(AF_INET, argv[1], &s.sin_addr) != 1 || count < 1 ||
	    count > 65536 || window < 1 || window > 1024)
		return 2;
	sent_at = calloc(count, sizeof(double));
	lat = calloc(count, sizeof(double));
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, (void *)&s, sizeof(s))) {
		perror("dnsbench");
		return 1;
	}
	t0 = now_us();
	while (done < count) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		while (sent < count && sent - done < window) {
			int n;
			snprintf(name, sizeof(name), "%s%ld.%s", argv[3], sent, argv[4]);
			n = build(q, sent, name);
			sent_at[sent] = now_us();
			if (send(fd, q, n, 0) != n) {
				perror("dnsbench send");
				return 1;
			}
			sent++;
		}
		if (poll(&p, 1, 2000) <= 0) {
			/* nothing for 2 s: everything in flight is lost */
			lost += sent - done;
			for (long i = 0; i < sent; i++)
				if (sent_at[i] > 0)
					sent_at[i] = -1;
			done = sent;
			continue;
		}
		ssize_t n = recv(fd, r, sizeof(r), 0);
		if (n < 12)
			continue;
		unsigned id = r[0] << 8 | r[1];
		if (id >= (unsigned)sent || sent_at[id] <= 0)
			continue;
		lat[ans++] = now_us() - sent_at[id];
		sent_at[id] = 0;
		if ((r[3] & 0x0f) == 3)
			nx++;
		done++;
	}
	t1 = now_us();
	qsort(lat, ans, sizeof(double), cmp);
	printf("qps %.0f p50_us %.0f p99_us %.0f answered %ld lost %ld nxdomain %ld\n",
	       ans / ((t1 - t0) / 1e6), ans ? lat[ans / 2] : 0,
	       ans ? lat[(long)(ans * 0.99)] : 0, ans, lost, nx);
	return 0;
}
