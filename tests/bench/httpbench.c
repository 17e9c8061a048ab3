/* httpbench.c - short HTTP requests, a new connection each: C connections
 * kept in flight (epoll, non-blocking), each one connect, a GET with
 * Host: NAME, the whole answer read (httpd.c's fixed 200), then close with
 * SO_LINGER 0 (RST: no TIME_WAIT on either side), and the next begins.
 * Timed in the client, from the first connect to the last close.
 * Usage: httpbench [-p PROCS] [-x] ADDR PORT C N NAME
 * -p: PROCS processes share C and N (default 1), so that the client can
 * use every CPU. -x: the GET goes to the HTTP proxy that $HTTP_PROXY
 * names (proxy_env.h; ADDR PORT are not used) and names http://NAME/,
 * the absolute form a proxy takes.
 * Prints: "rps <requests/s> p50_us <median request time> p99_us <...>
 *          cpu_ms_per_1k <the machine's busy CPU per 1000 requests> n <N>"
 * CPU is the whole machine's (/proc/stat: client, server, kernel and
 * every BPF program alike), so run it on an otherwise quiet machine.
 * Exits 1 on the first failed request (a benchmark of failures is no
 * benchmark). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../helpers/target.h"
#include "proxy_env.h"

#define C_MAX	1024

struct req {
	int fd;
	int sent;
	size_t got;
	double t0;
};

static struct target t;
static char request[1024];
static size_t request_len;
static const char answer_tail[] = "\r\n\r\nok";

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* The machine's busy time so far, in USER_HZ ticks (all but idle and iowait). */
static long long cpu_busy(void)
{
	long long v[10] = { 0 }, busy = 0;
	FILE *f = fopen("/proc/stat", "r");
	int i;

	if (!f || fscanf(f, "cpu %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld",
			 &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8],
			 &v[9]) < 8) {
		fprintf(stderr, "httpbench: /proc/stat unreadable\n");
		exit(1);
	}
	fclose(f);
	for (i = 0; i < 8; i++)
		if (i != 3 && i != 4)
			busy += v[i];
	return busy;
}

static int req_start(int ep, struct req *r)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct epoll_event ev = { .events = EPOLLOUT, .data.ptr = r };

	r->fd = socket(t.family, SOCK_STREAM | SOCK_NONBLOCK, 0);
	r->sent = 0;
	r->got = 0;
	r->t0 = now_us();
	if (r->fd < 0 || setsockopt(r->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)))
		return -1;
	if (connect(r->fd, (void *)&t.ss, t.len) && errno != EINPROGRESS)
		return -1;
	return epoll_ctl(ep, EPOLL_CTL_ADD, r->fd, &ev);
}

/* 1: the answer is whole; 0: more to come; -1: failed. */
static int req_step(int ep, struct req *r, uint32_t events)
{
	char buf[512];
	ssize_t n;

	if (events & (EPOLLERR | EPOLLHUP) && !(events & EPOLLIN)) {
		int err = 0;
		socklen_t len = sizeof(err);

		getsockopt(r->fd, SOL_SOCKET, SO_ERROR, &err, &len);
		errno = err;
		return -1;
	}
	if (!r->sent) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = r };

		if (write(r->fd, request, request_len) != (ssize_t)request_len)
			return -1;
		r->sent = 1;
		return epoll_ctl(ep, EPOLL_CTL_MOD, r->fd, &ev) ? -1 : 0;
	}
	n = read(r->fd, buf, sizeof(buf));
	if (n < 0 && errno == EAGAIN)
		return 0;
	if (n <= 0)
		return -1;
	r->got += (size_t)n;
	/* httpd's answer is one fixed text ending in "ok". */
	return n >= 2 && !memcmp(buf + n - 2, "ok", 2) &&
	       r->got >= sizeof(answer_tail) - 1 ? 1 : 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One process's share: @n requests, @c in flight, their times into @lat.
 * 0, or 1 on the first failure (said on stderr). */
static int run(long c, long n, double *lat)
{
	struct epoll_event evs[64];
	static struct req reqs[C_MAX];
	long started = 0, done = 0, i;
	int ep = epoll_create1(0), k;

	if (ep < 0)
		return 1;
	for (i = 0; i < c; i++, started++)
		if (req_start(ep, &reqs[i]) < 0) {
			fprintf(stderr, "httpbench: connect: %s\n", strerror(errno));
			return 1;
		}
	while (done < n) {
		int m = epoll_wait(ep, evs, 64, 10000);

		if (m <= 0) {
			fprintf(stderr, "httpbench: no progress for 10 s (%ld done)\n", done);
			return 1;
		}
		for (k = 0; k < m; k++) {
			struct req *r = evs[k].data.ptr;
			int s;

			errno = 0;
			s = req_step(ep, r, evs[k].events);
			if (s < 0) {
				fprintf(stderr, "httpbench: request %ld failed: %s\n", done,
					errno ? strerror(errno) : "closed early");
				return 1;
			}
			if (!s)
				continue;
			close(r->fd);
			lat[done++] = now_us() - r->t0;
			if (started < n) {
				started++;
				if (req_start(ep, r) < 0) {
					fprintf(stderr, "httpbench: connect: %s\n", strerror(errno));
					return 1;
				}
			}
		}
	}
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: httpbench [-p PROCS] [-x] ADDR PORT C N NAME\n");
	return 2;
}

int main(int argc, char **argv)
{
	long c, n, p, procs = 1, failed = 0;
	long long cpu0, cpu1;
	double *lat, t0, t1;
	char auth[800] = "";
	int proxy = 0, k, st;

	while ((k = getopt(argc, argv, "p:x")) != -1) {
		if (k == 'p')
			procs = atol(optarg);
		else if (k == 'x')
			proxy = 1;
		else
			return usage();
	}
	argc -= optind;
	argv += optind;
	if (argc != 5 || procs < 1 || procs > 64 ||
	    (proxy ? proxy_from_env(&t, auth, sizeof(auth)) :
		     parse_target(argv[0], argv[1], &t)) < 0 ||
	    (c = atol(argv[2])) < procs || c > C_MAX * procs || (n = atol(argv[3])) < c ||
	    n > 100000000)
		return usage();
	k = snprintf(request, sizeof(request),
		     "GET %s%s/ HTTP/1.1\r\nHost: %s\r\n%sUser-Agent: httpbench\r\nAccept: */*\r\n\r\n",
		     proxy ? "http://" : "", proxy ? argv[4] : "", argv[4], auth);
	if (k <= 0 || (size_t)k >= sizeof(request))
		return 2;
	request_len = (size_t)k;
	/* Shared, so that each process's times come back to the first. */
	lat = mmap(NULL, (size_t)n * sizeof(*lat), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (lat == MAP_FAILED)
		return 1;
	if (proxy)
		proxy_wait(&t);
	cpu0 = cpu_busy();
	t0 = now_us();
	for (p = 0; p < procs; p++) {
		long first = n * p / procs, last = n * (p + 1) / procs;
		long pc = c * (p + 1) / procs - c * p / procs;
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0)
			_exit(run(pc, last - first, lat + first));
	}
	while (wait(&st) > 0)
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			failed++;
	t1 = now_us();
	cpu1 = cpu_busy();
	if (failed)
		return 1;
	qsort(lat, (size_t)n, sizeof(*lat), cmp_double);
	printf("rps %.1f p50_us %.1f p99_us %.1f cpu_ms_per_1k %.2f n %ld\n",
	       n / ((t1 - t0) / 1e6), lat[n / 2], lat[n * 99 / 100],
	       (double)(cpu1 - cpu0) * 1000.0 / sysconf(_SC_CLK_TCK) / n * 1000.0, n);
	return 0;
}
