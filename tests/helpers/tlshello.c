// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tlshello - one hand-built TLS ClientHello over TCP, so the red-team tests
 * can show that an SNI-pinning enforcer judges the name the client asks
 * for, however the bytes are cut, timed or dressed up.
 *
 *   tlshello [OPTIONS] ADDR PORT SNI
 *
 * ADDR is an IPv4 or IPv6 literal (::ffff:a.b.c.d uses an AF_INET6 socket).
 * SNI is the host_name put in server_name, exactly as given; with --no-sni
 * it is not sent and must be "-".
 *
 * By default: a blocking socket, connect(), the whole ClientHello (every
 * record) in one write(), shutdown(SHUT_WR), then read until EOF.
 *
 * How the bytes go out (--nonblock, --early, --fastopen and
 * --fastopen-connect exclude each other):
 *   --split N            N bytes per write() (1: a byte at a time), with
 *                        TCP_NODELAY and a 2 ms pause between writes
 *   --nonblock           non-blocking connect(), poll for POLLOUT, SO_ERROR,
 *                        then non-blocking writes (poll between partial ones)
 *   --early              non-blocking connect() (EINPROGRESS), then blocking
 *                        again at once and write() while still connecting:
 *                        the kernel waits for the handshake inside write()
 *   --fastopen           no connect(): sendto(MSG_FASTOPEN) with
 *                        TCP_FASTOPEN_NO_COOKIE, so the first bytes (up to
 *                        about one MSS) ride in the very first SYN; needs the
 *                        client bit (1) of net.ipv4.tcp_fastopen, else
 *                        "err EOPNOTSUPP"
 *   --fastopen-connect   TCP_FASTOPEN_CONNECT and TCP_FASTOPEN_NO_COOKIE,
 *                        connect() (which sends nothing), then write()
 *   --v4mapped           ADDR must be IPv4: an AF_INET6 socket connects to
 *                        ::ffff:ADDR
 *   --mptcp              an IPPROTO_MPTCP socket (its subflows are TCP
 *                        sockets of the kernel's, never the caller's)
 *   --sport PORT         bind() this source port first (SO_REUSEADDR)
 *   --oob                the hello's last byte goes alone with MSG_OOB:
 *                        urgent data, which most receivers take out of the
 *                        stream; --data follows it
 *   --no-wait            exit as soon as everything is written, printing
 *                        "sent N": the socket lives on, orphaned, with what
 *                        the kernel has not sent yet
 *   --data TEXT          TEXT after the ClientHello, in the same writes (a
 *                        token the sink logs as data=, after tls=NAME)
 *   --wait-ms MS         bound on every wait (connect, write, the reply);
 *                        default 8000. The two fastopen modes can take
 *                        twice MS when the SYN goes unanswered: the send
 *                        waits, then the check that the handshake is over
 *
 * What the ClientHello holds (TLS 1.3 shaped, TLS 1.2 compatible):
 *   --pq                 key_share X25519MLKEM768 (0x11ec, 1216 bytes) before
 *                        x25519: 1438 bytes with an 11-byte SNI, which fits
 *                        one IPv4 segment at MTU 1500 (MSS 1448 with
 *                        timestamps) but not one IPv6 segment (1428); add
 *                        --pad to push it past either
 *   --sni-last           server_name is the last extension (default: first)
 *   --no-sni             no server_name extension at all
 *   --two-names NAME2    one server_name whose list has two host_names:
 *                        SNI, then NAME2 (RFC 6066 forbids it; OpenSSL
 *                        answers with a decode_error alert)
 *   --ech                an encrypted_client_hello (0xfe0d) of the outer
 *                        type, random contents
 *   --records N          the handshake message cut over N TLS records, as
 *                        TLS allows (no record holds the whole name, if N is
 *                        large enough)
 *   --pad N              a padding extension (21) of N zero bytes
 *
 * Or, for Host pinning's tests, plain bytes in place of the hello:
 *   --http TEXT          send TEXT (escapes \r \n \t \\ \xHH decoded):
 *                        HTTP requests, whole, pipelined or mangled; SNI
 *                        must be "-". --split, --oob and the connect modes
 *                        apply to it as to a hello
 *   --cut N              write the first N bytes, wait 50 ms (TCP_NODELAY:
 *                        they leave as a segment of their own), then the
 *                        rest: a second request on a kept-alive connection,
 *                        a header cut between writes
 *
 * Prints exactly one line on stdout:
 *   "ok sent=N"   all N bytes were written and the peer answered without
 *                 error: EOF, or data and no error until the wait ran out
 *   "err ENAME"   ENAME from strerrorname_np (EPERM, ECONNREFUSED,
 *                 ECONNRESET, ETIMEDOUT, ...) for the call that failed, or
 *                 the socket's SO_ERROR when that names the cause better
 *   "err EWAIT"   (not an errno) no data, no EOF and no error within the
 *                 wait: the bytes went somewhere that never answered
 * Exit 0 on ok, 1 on err, 2 on usage. Details for humans go to stderr, and
 * only on failure.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "target.h"
#include "tls_build.h"

#ifndef TCP_FASTOPEN_CONNECT
#define TCP_FASTOPEN_CONNECT 30
#endif
#ifndef TCP_FASTOPEN_NO_COOKIE
#define TCP_FASTOPEN_NO_COOKIE 34
#endif

#define WAIT_MS_DEFAULT 8000
#define SPLIT_GAP_NS 2000000L	/* 2 ms between --split writes */

enum how {
	HOW_BLOCKING,
	HOW_NONBLOCK,
	HOW_EARLY,
	HOW_FASTOPEN,
	HOW_FASTOPEN_CONNECT,
};

struct opts {
	enum how how;
	long split;	/* bytes per write(); 0: all at once */
	long wait_ms;
	long sport;	/* source port; 0: the kernel's choice */
	int v4mapped;
	int mptcp;
	int no_wait;		/* --no-wait: exit once the bytes are written */
	int oob;		/* --oob: the hello's last byte with MSG_OOB */
	size_t hello_len;	/* the records' bytes, before --data */
	const char *data;	/* --data: sent after the records, same writes */
	const char *http;	/* --http: these bytes (escapes decoded) instead */
	long cut;		/* --cut: first write's bytes; 0: none */
	struct hello_opts hello;
};


static int usage(void)
{
	fprintf(stderr,
		"usage: tlshello [OPTIONS] ADDR PORT SNI\n"
		"  --split N            N bytes per write(), TCP_NODELAY, 2 ms apart\n"
		"  --nonblock           non-blocking connect() and writes\n"
		"  --early              write() while the connect() is in progress\n"
		"  --fastopen           sendto(MSG_FASTOPEN): data in the SYN\n"
		"  --fastopen-connect   TCP_FASTOPEN_CONNECT, connect(), write()\n"
		"  --v4mapped           IPv4 ADDR through an AF_INET6 socket\n"
		"  --mptcp              an IPPROTO_MPTCP socket\n"
		"  --sport PORT         bind() this source port first\n"
		"  --data TEXT          TEXT after the ClientHello, same writes\n"
		"  --no-wait            exit once written: print \"sent N\", no close wait\n"
		"  --oob                the hello's last byte sent with MSG_OOB (urgent)\n"
		"  --wait-ms MS         bound on every wait (default %d)\n"
		"  --pq                 X25519MLKEM768 key share (~1.4 kB hello)\n"
		"  --sni-last           server_name as the last extension\n"
		"  --no-sni             no server_name (SNI must be \"-\")\n"
		"  --two-names NAME2    server_name list: SNI, then NAME2\n"
		"  --ech                an encrypted_client_hello extension\n"
		"  --records N          the handshake cut over N TLS records\n"
		"  --pad N              a padding extension of N zero bytes\n"
		"  --http TEXT          TEXT (\\r \\n \\t \\\\ \\xHH) instead of a hello\n"
		"  --cut N              first N bytes, 50 ms, then the rest\n"
		"Prints \"ok sent=N\", \"err ENAME\" or \"err EWAIT\".\n",
		WAIT_MS_DEFAULT);
	printf("usage\n");
	return 2;
}

/* Report a failed call: one "err ENAME" line, exit status 1. */
static int fail(const char *what, int err)
{
	const char *name = strerrorname_np(err);

	fprintf(stderr, "tlshello: %s: %s\n", what, strerror(err));
	if (name)
		printf("err %s\n", name);
	else
		printf("err errno%d\n", err);
	return 1;
}

/* ---- sending it ---- */

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* The socket's pending error, if it holds one: after a reset, write() says
 * EPIPE and shutdown() ENOTCONN, while SO_ERROR still names the cause. */
static int sock_err(int fd, int err)
{
	int soerr = 0;
	socklen_t len = sizeof(soerr);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0 && soerr)
		return soerr;
	return err;
}

/* A blocking call that ran out of SO_SNDTIMEO reports EINPROGRESS
 * (connect) or EAGAIN (write): to the caller, both are a timeout. */
static int timeout_err(int err)
{
	return err == EINPROGRESS || err == EAGAIN ? ETIMEDOUT : err;
}

static int set_nonblock(int fd, int on)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0)
		return -errno;
	flags = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK;
	return fcntl(fd, F_SETFL, flags) < 0 ? -errno : 0;
}

/* Wait for @events on a non-blocking socket: 0, or -errno (-ETIMEDOUT). */
static int wait_for(int fd, short events, long ms)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int r;

	do
		r = poll(&pfd, 1, (int)ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r ? 0 : -ETIMEDOUT;
}

static int set_int_opt(int fd, int level, int name, int val)
{
	return setsockopt(fd, level, name, &val, sizeof(val)) < 0 ? -errno : 0;
}

/* The socket and every option that must precede the connect; 0 or -errno,
 * with the failing call in *stage. */
static int prepare_socket(int fd, const struct target *t, const struct opts *o,
			  const char **stage)
{
	struct timeval tv = { .tv_sec = o->wait_ms / 1000,
			      .tv_usec = o->wait_ms % 1000 * 1000 };
	struct sockaddr_storage src = { .ss_family = (sa_family_t)t->family };
	int r = 0;

	/* Bound the blocking connect() and write()s: a dropped SYN must not
	 * hang a test for the kernel's two minutes of retries. (The reads
	 * poll, with their own deadline.) */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (o->sport) {
		/* the wildcard address: the port is in the same place in both */
		((struct sockaddr_in *)&src)->sin_port = htons((unsigned short)o->sport);
		*stage = "setsockopt(SO_REUSEADDR)";
		r = set_int_opt(fd, SOL_SOCKET, SO_REUSEADDR, 1);
		if (r < 0)
			return r;
		*stage = "bind";
		if (bind(fd, (struct sockaddr *)&src, t->family == AF_INET6 ?
			 sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in)) < 0)
			return -errno;
	}
	if (o->split || o->cut) {
		/* else Nagle holds the small writes back and sends them as one
		 * segment: the enforcer would never see the pieces */
		*stage = "setsockopt(TCP_NODELAY)";
		r = set_int_opt(fd, IPPROTO_TCP, TCP_NODELAY, 1);
	}
	if (!r && o->how == HOW_FASTOPEN_CONNECT) {
		*stage = "setsockopt(TCP_FASTOPEN_CONNECT)";
		r = set_int_opt(fd, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, 1);
	}
	if (!r && (o->how == HOW_FASTOPEN || o->how == HOW_FASTOPEN_CONNECT)) {
		/* without a cookie from an earlier connection, the kernel would
		 * send a plain SYN and the data only after the handshake */
		*stage = "setsockopt(TCP_FASTOPEN_NO_COOKIE)";
		r = set_int_opt(fd, IPPROTO_TCP, TCP_FASTOPEN_NO_COOKIE, 1);
	}
	return r;
}

/* connect() as the mode says (--fastopen: nothing, sendto() connects);
 * 0 or -errno. */
static int start_connect(int fd, const struct target *t, const struct opts *o)
{
	const struct sockaddr *sa = (const struct sockaddr *)&t->ss;
	int r, err = 0;
	socklen_t elen = sizeof(err);

	switch (o->how) {
	case HOW_FASTOPEN:
		return 0;
	case HOW_BLOCKING:
	case HOW_FASTOPEN_CONNECT:	/* returns at once, the SYN waits */
		return connect(fd, sa, t->len) < 0 ? -timeout_err(errno) : 0;
	case HOW_NONBLOCK:
	case HOW_EARLY:
		break;
	}
	r = set_nonblock(fd, 1);
	if (r < 0)
		return r;
	if (connect(fd, sa, t->len) < 0 && errno != EINPROGRESS)
		return -errno;
	if (o->how == HOW_EARLY)	/* still connecting: write() waits */
		return set_nonblock(fd, 0);
	r = wait_for(fd, POLLOUT, o->wait_ms);
	if (r < 0)
		return r;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
		return -errno;
	return -err;
}

/* One write() (the first of --fastopen: the sendto() that connects),
 * bytes written or -errno. */
static ssize_t write_once(int fd, const struct target *t, const struct opts *o,
			  const unsigned char *p, size_t n, int first,
			  const char **stage)
{
	ssize_t w;

	if (first && o->how == HOW_FASTOPEN) {
		*stage = "sendto(MSG_FASTOPEN)";
		w = sendto(fd, p, n, MSG_FASTOPEN,
			   (const struct sockaddr *)&t->ss, t->len);
	} else {
		*stage = "write";
		w = write(fd, p, n);
	}
	return w < 0 ? -errno : w;
}

/* All @n bytes of one piece, however many calls the kernel takes for it;
 * 0 or -errno. */
static int write_piece(int fd, const struct target *t, const struct opts *o,
		       const unsigned char *p, size_t n, int *first,
		       const char **stage)
{
	size_t done = 0;
	ssize_t w;
	int r;

	while (done < n) {
		w = write_once(fd, t, o, p + done, n - done, *first, stage);
		if (w == -EINTR)
			continue;
		if (w == -EAGAIN && o->how == HOW_NONBLOCK) {
			r = wait_for(fd, POLLOUT, o->wait_ms);
			if (r < 0)
				return r;
			continue;
		}
		if (w < 0)
			return -timeout_err((int)-w);
		*first = 0;
		done += (size_t)w;
	}
	return 0;
}

static void pause_between_writes(void)
{
	struct timespec ts = { .tv_nsec = SPLIT_GAP_NS };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The whole stream, in --split pieces if asked; 0 or -errno. */
static int send_stream(int fd, const struct target *t, const struct opts *o,
		       const unsigned char *p, size_t len, const char **stage)
{
	size_t off = 0, piece = o->split ? (size_t)o->split : len, n;
	struct timespec cut_gap = { .tv_nsec = 50000000L };
	int first = 1, r;

	while (off < len) {
		if (off && o->cut && off == (size_t)o->cut)
			while (nanosleep(&cut_gap, &cut_gap) < 0 && errno == EINTR)
				;
		else if (off)
			pause_between_writes();
		n = len - off < piece ? len - off : piece;
		if (o->cut && off < (size_t)o->cut && off + n > (size_t)o->cut)
			n = (size_t)o->cut - off;
		r = write_piece(fd, t, o, p + off, n, &first, stage);
		if (r < 0)
			return r;
		off += n;
	}
	return 0;
}

/*
 * The handshake must be over before the half-close: a --fastopen sendto(),
 * or any write() that ran out of SO_SNDTIMEO, returns with the bytes
 * queued behind a SYN nobody answered, and shutdown() in SYN_SENT aborts
 * the attempt: the read would then say ECONNRESET, as if a peer had reset
 * it, where the truth is ETIMEDOUT. 0 or -errno.
 */
static int wait_connected(int fd, long ms)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);
	int r, err;

	r = wait_for(fd, POLLOUT, ms);	/* SYN_SENT polls as nothing at all */
	if (r < 0)
		return r;
	err = sock_err(fd, 0);
	if (err)
		return -err;
	return getpeername(fd, (struct sockaddr *)&peer, &len) < 0 ? -errno : 0;
}

/*
 * Read until EOF, an error or the end of the wait. 0: EOF, or data and no
 * error by the deadline (the peer took the hello and answered); 1: nothing
 * at all (EWAIT); -errno.
 */
static int wait_reply(int fd, long wait_ms)
{
	long deadline = now_ms() + wait_ms, left;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	unsigned char buf[4096];
	size_t got = 0;
	ssize_t n;
	int r;

	for (;;) {
		left = deadline - now_ms();
		if (left <= 0)
			return got ? 0 : 1;
		r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0)
			return 0;
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)n;
	}
}

static int run(const struct target *t, const struct opts *o,
	       const unsigned char *p, size_t len)
{
	const char *stage = "socket";
	int fd, r;

	fd = socket(t->family, SOCK_STREAM | SOCK_CLOEXEC, o->mptcp ? IPPROTO_MPTCP : 0);
	if (fd < 0)
		return fail(stage, errno);
	r = prepare_socket(fd, t, o, &stage);
	if (r < 0)
		return fail(stage, -r);
	r = start_connect(fd, t, o);
	if (r < 0)
		return fail("connect", -r);
	r = send_stream(fd, t, o, p, o->oob ? o->hello_len - 1 : len, &stage);
	if (r < 0)
		return fail(stage, sock_err(fd, -r));
	/* The hello's last byte as urgent data (most receivers take it out
	 * of the stream, so the server reads other bytes than were sent in
	 * order), then the rest. */
	if (o->oob) {
		if (send(fd, p + o->hello_len - 1, 1, MSG_OOB | MSG_NOSIGNAL) != 1)
			return fail("send(MSG_OOB)", sock_err(fd, errno));
		if (len > o->hello_len &&
		    send(fd, p + o->hello_len, len - o->hello_len, MSG_NOSIGNAL) < 0)
			return fail("send", sock_err(fd, errno));
	}
	if (o->no_wait) {
		/* Exit with the bytes perhaps still queued: the socket lives
		 * on, orphaned, and goes on sending them. */
		printf("sent %zu\n", len);
		return 0;
	}
	r = wait_connected(fd, o->wait_ms);
	if (r < 0)
		return fail("connection", -r);
	/* the half-close tells the peer the hello is all there is */
	if (shutdown(fd, SHUT_WR) < 0)
		return fail("shutdown", sock_err(fd, errno));
	r = wait_reply(fd, o->wait_ms);
	if (r < 0)
		return fail("read", -r);
	if (r > 0) {
		fprintf(stderr, "tlshello: no answer, EOF or error in %ld ms\n",
			o->wait_ms);
		printf("err EWAIT\n");
		return 1;
	}
	close(fd);
	printf("ok sent=%zu\n", len);
	return 0;
}

/* ---- the command line ---- */

static int parse_num(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* ADDR as ::ffff:ADDR on an AF_INET6 socket. */
static void map_v4(struct target *t)
{
	struct sockaddr_in sin;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&t->ss;

	memcpy(&sin, &t->ss, sizeof(sin));
	memset(&t->ss, 0, sizeof(t->ss));
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = sin.sin_port;
	sin6->sin6_addr.s6_addr[10] = 0xff;
	sin6->sin6_addr.s6_addr[11] = 0xff;
	memcpy(&sin6->sin6_addr.s6_addr[12], &sin.sin_addr, 4);
	t->len = sizeof(*sin6);
	t->family = AF_INET6;
	t->mapped = 1;
}

/* Set the connect mode, once: the four modes exclude each other. */
static int set_how(struct opts *o, enum how how)
{
	if (o->how != HOW_BLOCKING)
		return -1;
	o->how = how;
	return 0;
}

enum {
	OPT_SPLIT = 256, OPT_NONBLOCK, OPT_EARLY, OPT_FASTOPEN,
	OPT_FASTOPEN_CONNECT, OPT_V4MAPPED, OPT_PQ, OPT_SNI_LAST, OPT_NO_SNI,
	OPT_ECH, OPT_RECORDS, OPT_TWO_NAMES, OPT_PAD, OPT_WAIT_MS, OPT_SPORT, OPT_DATA, OPT_NO_WAIT, OPT_OOB,
	OPT_HTTP, OPT_CUT,
	OPT_MPTCP,
};

static const struct option long_opts[] = {
	{ "split", required_argument, NULL, OPT_SPLIT },
	{ "nonblock", no_argument, NULL, OPT_NONBLOCK },
	{ "early", no_argument, NULL, OPT_EARLY },
	{ "fastopen", no_argument, NULL, OPT_FASTOPEN },
	{ "fastopen-connect", no_argument, NULL, OPT_FASTOPEN_CONNECT },
	{ "v4mapped", no_argument, NULL, OPT_V4MAPPED },
	{ "mptcp", no_argument, NULL, OPT_MPTCP },
	{ "pq", no_argument, NULL, OPT_PQ },
	{ "sni-last", no_argument, NULL, OPT_SNI_LAST },
	{ "no-sni", no_argument, NULL, OPT_NO_SNI },
	{ "ech", no_argument, NULL, OPT_ECH },
	{ "records", required_argument, NULL, OPT_RECORDS },
	{ "two-names", required_argument, NULL, OPT_TWO_NAMES },
	{ "pad", required_argument, NULL, OPT_PAD },
	{ "wait-ms", required_argument, NULL, OPT_WAIT_MS },
	{ "sport", required_argument, NULL, OPT_SPORT },
	{ "data", required_argument, NULL, OPT_DATA },
	{ "no-wait", no_argument, NULL, OPT_NO_WAIT },
	{ "oob", no_argument, NULL, OPT_OOB },
	{ "http", required_argument, NULL, OPT_HTTP },
	{ "cut", required_argument, NULL, OPT_CUT },
	{ NULL, 0, NULL, 0 },
};

/* --http's TEXT, escapes decoded, into @out; -1 for a bad escape. */
static int put_unescaped(struct buf *out, const char *s)
{
	unsigned int x;
	char c;

	for (; *s; s++) {
		c = *s;
		if (c == '\\') {
			switch (*++s) {
			case 'r': c = '\r'; break;
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case '\\': c = '\\'; break;
			case 'x':
				if (sscanf(s + 1, "%2x", &x) != 1 || !s[1] || !s[2])
					return -1;
				c = (char)x;
				s += 2;
				break;
			default:
				return -1;
			}
		}
		put(out, &c, 1);
	}
	return 0;
}

/* One option into @o; 0, or -1 for a usage error. */
static int parse_opt(int c, const char *arg, struct opts *o)
{
	switch (c) {
	case OPT_SPLIT:
		return parse_num(arg, 1, HELLO_MAX, &o->split);
	case OPT_NONBLOCK:
		return set_how(o, HOW_NONBLOCK);
	case OPT_EARLY:
		return set_how(o, HOW_EARLY);
	case OPT_FASTOPEN:
		return set_how(o, HOW_FASTOPEN);
	case OPT_FASTOPEN_CONNECT:
		return set_how(o, HOW_FASTOPEN_CONNECT);
	case OPT_V4MAPPED:
		o->v4mapped = 1;
		return 0;
	case OPT_MPTCP:
		o->mptcp = 1;
		return 0;
	case OPT_PQ:
		o->hello.pq = 1;
		return 0;
	case OPT_SNI_LAST:
		o->hello.sni_last = 1;
		return 0;
	case OPT_NO_SNI:
		o->hello.no_sni = 1;
		return 0;
	case OPT_ECH:
		o->hello.ech = 1;
		return 0;
	case OPT_RECORDS:
		return parse_num(arg, 1, HELLO_MAX, &o->hello.records);
	case OPT_TWO_NAMES:
		o->hello.name2 = arg;
		return 0;
	case OPT_PAD:
		return parse_num(arg, 0, HELLO_MAX, &o->hello.pad);
	case OPT_WAIT_MS:
		return parse_num(arg, 1, 3600000, &o->wait_ms);
	case OPT_SPORT:
		return parse_num(arg, 1, 65535, &o->sport);
	case OPT_DATA:
		o->data = arg;
		return 0;
	case OPT_NO_WAIT:
		o->no_wait = 1;
		return 0;
	case OPT_OOB:
		o->oob = 1;
		return 0;
	case OPT_HTTP:
		o->http = arg;
		return 0;
	case OPT_CUT:
		return parse_num(arg, 1, HELLO_MAX, &o->cut);
	}
	return -1;
}

int main(int argc, char **argv)
{
	static unsigned char stream[HELLO_MAX];
	struct buf out = { .p = stream, .cap = HELLO_MAX };
	struct opts o = { .how = HOW_BLOCKING, .wait_ms = WAIT_MS_DEFAULT,
			  .hello = { .records = 1, .pad = -1 } };
	struct target t;
	int c, err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* a reset peer must show as "err ECONNRESET"/EPIPE, not kill us */
	signal(SIGPIPE, SIG_IGN);
	while ((c = getopt_long(argc, argv, "", long_opts, NULL)) != -1)
		if (parse_opt(c, optarg, &o) < 0)
			return usage();
	if (argc - optind != 3 || parse_target(argv[optind], argv[optind + 1], &t) < 0)
		return usage();
	o.hello.sni = argv[optind + 2];
	/* "-" is a placeholder, never a name sent by accident */
	if (o.http) {
		if (strcmp(o.hello.sni, "-"))
			return usage();
	} else if (o.hello.no_sni != !strcmp(o.hello.sni, "-") ||
		   (o.hello.no_sni && o.hello.name2)) {
		return usage();
	}
	if (o.v4mapped) {
		if (t.family != AF_INET)
			return usage();
		map_v4(&t);
	}
	if (o.http)
		err = put_unescaped(&out, o.http) < 0 || out.err ? ENOBUFS : 0;
	else
		err = tls_build_stream(&out, &o.hello);
	if (err == ENOBUFS) {
		fprintf(stderr, "tlshello: the ClientHello does not fit in %d bytes "
			"(or has fewer bytes than --records)\n", HELLO_MAX);
		return usage();
	}
	if (err)
		return fail("getrandom", err);
	o.hello_len = out.len;
	if (o.data)
		put(&out, o.data, strlen(o.data));
	if (out.err)
		return usage();
	return run(&t, &o, out.p, out.len);
}
