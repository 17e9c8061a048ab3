// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * probe - one network attempt whose outcome the integration tests can assert.
 *
 *   probe tcp ADDR PORT [PAYLOAD]             connect, send, half-close, wait EOF
 *   probe udp ADDR PORT PAYLOAD               unconnected sendto()
 *   probe udp-connected ADDR PORT PAYLOAD     connect() then send()
 *   probe udp-probe ADDR PORT                 connect() a UDP socket, getsockname,
 *                                             close: sends nothing (address sorting)
 *   probe udp-connected-cmsg ADDR PORT PAYLOAD
 *                 connect() then sendmsg() with no msg_name but a TTL/hop-limit
 *                 cmsg: the kernel then runs the cgroup sendmsg hook with NO
 *                 destination (it sees 0.0.0.0 / ::), a path enforcers get wrong
 *   probe tcp-fastopen ADDR PORT PAYLOAD      sendto(MSG_FASTOPEN): connects
 *                 implicitly, no connect() call
 *   probe udp-unspec ADDR4 PORT PAYLOAD       sendto() a sockaddr_in whose family
 *                 is AF_UNSPEC: udp_sendmsg() takes it as AF_INET
 *   probe udp6-v4addr ADDR4 PORT PAYLOAD      AF_INET6 socket, sendto() a plain
 *                 sockaddr_in: the kernel hands it to the IPv4 path
 *   probe udp-connected-sendto ADDR PORT OTHER OPORT PAYLOAD
 *                 connect() to ADDR, then sendto() OTHER: the explicit address
 *                 must be judged, not a verdict remembered from connect()
 *   probe udp-connected-unspec ADDR4 PORT OTHER4 OPORT PAYLOAD
 *                 connect() to ADDR4, then sendto() OTHER4 in a sockaddr_in
 *                 whose family is AF_UNSPEC: the hook then sees AF_UNSPEC,
 *                 like a send with no address, yet the datagram goes to OTHER4
 *   probe hold SECONDS                        sleep (a process to kill or count)
 *   probe flood ADDR PORT N
 *                 N connect() calls on one TCP socket to ADDR PORT (a denied
 *                 destination: each fails at once, so the socket stays
 *                 unconnected and is reused). Prints "refused K": K calls
 *                 failed with ECONNREFUSED. Exit 0 only if K == N; any other
 *                 outcome (a connection, another errno) is counted on stderr
 *
 * A file-system change, to show what COMMAND may NOT do to a path (the
 * operator's policy file and its directory):
 *   probe fs OP PATH
 *                 OP: append (open O_WRONLY|O_APPEND, write one byte),
 *                 create (O_CREAT|O_EXCL a new file), unlink, rename (PATH to
 *                 PATH.probe), chmod (0666), mkdir (0755)
 *
 * A TCP probe with PROBE_SNI=NAME in its environment sends a TLS ClientHello
 * naming NAME before PAYLOAD, in the same write; tcp-name to port 443 does
 * so with its NAME: egret pins TLS on 443 to the names whose answers held
 * the address (the sink logs tls=NAME and PAYLOAD as data=). Likewise
 * PROBE_HTTP=NAME, and tcp-name to port 80, send PAYLOAD as the body of
 * "POST / HTTP/1.1" with Host: NAME: egret pins plain HTTP on 80 (the sink
 * logs http=NAME and PAYLOAD as data=). PROBE_HTTP may also map
 * addresses to names, "ADDR=NAME,ADDR=NAME...": the name of the address
 * probed, if listed (the suites export the test world's map).
 *
 * By name, through the C library's resolver (getaddrinfo), so the attempt's
 * DNS goes wherever /etc/resolv.conf says - and egret redirects it:
 *   probe tcp-name NAME PORT PAYLOAD [4|6]    resolve NAME, then "tcp" to the
 *                 FIRST address only (no fallback that could hide a denial)
 *   probe resolve-connect NAMEFMT COUNT PORT [4|6]
 *                 COUNT times: resolve a name, then at once sendto() one
 *                 byte on a UDP socket to its first address (the sendmsg
 *                 hook judges it as the call is made; a UDP connect() is
 *                 not judged, it sends nothing). "%d" in NAMEFMT becomes
 *                 0..COUNT-1. "ok" only if all COUNT succeeded; else the
 *                 first failure, with the failure count on stderr
 *   probe connect-all NAME PORT [4|6]
 *                 resolve NAME once, then sendto() one byte to EVERY
 *                 address it gave. Prints "ok N" (N addresses, all
 *                 succeeded), else the first failure, with counts on stderr
 *
 * A raw DNS exchange, to see what a resolver sees:
 *   probe dns HOW SERVER NAME [TYPE]
 *                 one query (TYPE: A (default), AAAA, or a number) to
 *                 SERVER port 53. HOW: udp (sendto), udp-connected,
 *                 udp-unspec (sendto a sockaddr_in of family AF_UNSPEC,
 *                 IPv4 only), tcp, tcp-fastopen (sendto(MSG_FASTOPEN)).
 *                 Prints "ok RCODE an=N[ tc][ from=S][ peer=S]": from= is
 *                 the source recvfrom() reported (UDP), peer= what
 *                 getpeername() says (udp-connected, tcp*). S is
 *                 a.b.c.d:53 or [v6]:53
 *
 * ADDR/SERVER is IPv4, IPv6 or ::ffff:a.b.c.d (the last two use an AF_INET6
 * socket). [4|6] restricts getaddrinfo to one family (default: either).
 *
 * Prints exactly one line on stdout: "ok" (dns, connect-all: "ok ..." as above;
 * flood: "refused K") or
 * "err ENAME" (ENAME from strerrorname_np, e.g. ECONNREFUSED; for a failed lookup
 * the getaddrinfo code, e.g. EAI_NONAME). Exit 0 on ok, 1 on a syscall or
 * lookup error, 2 on usage. Details for humans go to stderr.
 *
 * "ok" for tcp means the peer read our payload and closed: the sink logs a
 * connection before closing it, so once probe prints ok the sink's log line
 * is already written. Every wait is bounded by TIMEOUT_S.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "target.h"
#include "tls_build.h"

#define TIMEOUT_S 5
#define DNS_MSG_MAX 65535
#define NAME_LEN 256	/* a DNS name, with room */
#define ADDR_LEN 64	/* "[v6]:port" */

static int usage(void)
{
	fprintf(stderr,
		"usage: probe tcp ADDR PORT [PAYLOAD]\n"
		"       probe tcp-fastopen ADDR PORT PAYLOAD\n"
		"       probe udp|udp-connected|udp-connected-cmsg ADDR PORT PAYLOAD\n"
		"       probe udp-unspec|udp6-v4addr ADDR4 PORT PAYLOAD\n"
		"       probe udp-connected-sendto ADDR PORT OTHER OPORT PAYLOAD\n"
		"       probe udp-connected-unspec ADDR4 PORT OTHER4 OPORT PAYLOAD\n"
		"       probe hold SECONDS\n"
		"       probe flood ADDR PORT N\n"
		"       probe fs append|create|unlink|rename|chmod|mkdir PATH\n"
		"       probe tcp-name NAME PORT PAYLOAD [4|6]\n"
		"       probe resolve-connect NAMEFMT COUNT PORT [4|6]\n"
		"       probe connect-all NAME PORT [4|6]\n"
		"       probe dns udp|udp-connected|udp-oversize|udp-unspec|tcp|tcp-fastopen SERVER NAME\n"
		"                 [A|AAAA|NUMBER]\n");
	printf("usage\n");
	return 2;
}

/* Report a failed syscall: one "err ENAME" line, exit status 1. */
static int fail(const char *what, int err)
{
	const char *name = strerrorname_np(err);

	fprintf(stderr, "probe: %s: %s\n", what, strerror(err));
	if (name)
		printf("err %s\n", name);
	else
		printf("err errno%d\n", err);
	return 1;
}

static int ok(void)
{
	printf("ok\n");
	return 0;
}

static const char *gai_name(int e)
{
	static char buf[32];

	switch (e) {
	case EAI_NONAME: return "EAI_NONAME";
	case EAI_AGAIN: return "EAI_AGAIN";
	case EAI_FAIL: return "EAI_FAIL";
	case EAI_NODATA: return "EAI_NODATA";
	case EAI_ADDRFAMILY: return "EAI_ADDRFAMILY";
	case EAI_FAMILY: return "EAI_FAMILY";
	case EAI_SERVICE: return "EAI_SERVICE";
	case EAI_MEMORY: return "EAI_MEMORY";
	case EAI_SYSTEM: return "EAI_SYSTEM";
	}
	snprintf(buf, sizeof(buf), "EAI_%d", e);
	return buf;
}

/* Report a failed lookup: "err EAI_...", exit status 1. */
static int fail_gai(const char *name, int e)
{
	fprintf(stderr, "probe: getaddrinfo %s: %s\n", name, gai_strerror(e));
	printf("err %s\n", gai_name(e));
	return 1;
}

/* "a.b.c.d:port" or "[v6]:port". */
static void format_sockaddr(const struct sockaddr_storage *ss, char *out,
			    size_t outlen)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a));
		snprintf(out, outlen, "%s:%u", a, ntohs(sin->sin_port));
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &sin6->sin6_addr, a, sizeof(a));
		snprintf(out, outlen, "[%s]:%u", a, ntohs(sin6->sin6_port));
	} else {
		snprintf(out, outlen, "family%d", ss->ss_family);
	}
}

/* Bound blocking send/recv so a silent peer cannot hang a test. */
static void set_timeouts(int fd)
{
	struct timeval tv = { .tv_sec = TIMEOUT_S };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/*
 * What a TCP probe sends: PAYLOAD, after a ClientHello naming @sni when
 * there is one (PROBE_SNI, or tcp-name's NAME on port 443): egret pins
 * TLS on 443 to the names that taught an address, and refuses what is not
 * TLS there. The sink logs the name (tls=) and the payload after it.
 */
static const char *tcp_bytes(const char *payload, const char *sni,
			     const char *http, size_t *len)
{
	static unsigned char out[HELLO_MAX + 1024];
	static unsigned char hs[HELLO_MAX];
	struct hello_opts ho = { .records = 1, .pad = -1, .sni = sni };
	struct buf b = { .p = out, .cap = sizeof(out) }, h = { .p = hs, .cap = sizeof(hs) };
	int n;

	payload = payload ? payload : "";
	*len = strlen(payload);
	if (http && *http) {
		n = snprintf((char *)out, sizeof(out),
			     "POST / HTTP/1.1\r\nHost: %s\r\nContent-Length: %zu\r\n\r\n%s",
			     http, *len, payload);
		if (n < 0 || (size_t)n >= sizeof(out)) {
			fprintf(stderr, "probe: request for %s too long\n", http);
			exit(2);
		}
		*len = (size_t)n;
		return (const char *)out;
	}
	if (!sni || !*sni)
		return payload;
	build_client_hello(&h, &ho);
	if (!h.err)
		build_records(&b, &h, 1);
	put(&b, payload, strlen(payload));
	if (h.err || b.err) {
		fprintf(stderr, "probe: cannot build a ClientHello for %s\n", sni);
		exit(2);
	}
	*len = b.len;
	return (const char *)out;
}

static unsigned int target_port(const struct target *t)
{
	return ntohs(t->family == AF_INET ? ((const struct sockaddr_in *)&t->ss)->sin_port :
			 ((const struct sockaddr_in6 *)&t->ss)->sin6_port);
}

/*
 * PROBE_HTTP's name for @addr (the address as given): the whole value,
 * or in a map "ADDR=NAME,..." the entry for @addr, into @out; NULL if
 * none applies.
 */
static const char *http_host_for(const char *addr, char *out, size_t outlen)
{
	const char *v = getenv("PROBE_HTTP"), *p, *eq, *end;
	size_t alen = addr ? strlen(addr) : 0;

	if (!v || !*v)
		return NULL;
	if (!strchr(v, '='))
		return v;
	for (p = v; *p; p = *end ? end + 1 : end) {
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		eq = memchr(p, '=', (size_t)(end - p));
		if (eq && (size_t)(eq - p) == alen && !memcmp(p, addr, alen) &&
		    (size_t)(end - eq - 1) < outlen) {
			memcpy(out, eq + 1, (size_t)(end - eq - 1));
			out[end - eq - 1] = '\0';
			return out;
		}
	}
	return NULL;
}

static int do_tcp(const struct target *t, const char *payload, int fastopen,
		  const char *sni, const char *http, const char *addr)
{
	char buf[256], host[256];
	size_t len;
	ssize_t n;
	int fd, r;

	/* PROBE_HTTP applies to port 80 only (Host pinning's port). */
	if (!http && target_port(t) == 80)
		http = http_host_for(addr, host, sizeof(host));
	payload = tcp_bytes(payload, sni ? sni : getenv("PROBE_SNI"), http, &len);

	fd = socket(t->family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail("socket", errno);
	set_timeouts(fd);
	if (fastopen) {
		/* Blocking: returns once connected (SO_SNDTIMEO bounds it). */
		if (sendto(fd, payload, len, MSG_FASTOPEN | MSG_NOSIGNAL,
			   (const struct sockaddr *)&t->ss, t->len) < 0)
			return fail("sendto(MSG_FASTOPEN)", errno);
	} else {
		r = connect_bounded(fd, (const struct sockaddr *)&t->ss, t->len, TIMEOUT_S);
		if (r < 0)
			return fail("connect", -r);
		if (len && send(fd, payload, len, MSG_NOSIGNAL) < 0)
			return fail("send", errno);
	}
	if (shutdown(fd, SHUT_WR) < 0)
		return fail("shutdown", errno);
	/* Wait for the peer's close: proof it consumed (and logged) it all. */
	do
		n = recv(fd, buf, sizeof(buf), 0);
	while (n > 0);
	if (n < 0)
		return fail("recv", errno == EAGAIN ? ETIMEDOUT : errno);
	close(fd);
	return ok();
}

/* @other: for udp-connected-sendto, where sendto() goes after connect(). */
static int do_udp(const struct target *t, const char *mode, const char *payload,
		  const struct target *other)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = (void *)payload, .iov_len = strlen(payload) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct sockaddr_in odd;
	int family = t->family, fd;

	if (!strcmp(mode, "udp6-v4addr"))
		family = AF_INET6;
	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail("socket", errno);
	set_timeouts(fd);
	if (!strcmp(mode, "udp") || !strcmp(mode, "udp6-v4addr")) {
		msg.msg_name = (void *)&t->ss;
		msg.msg_namelen = t->len;
	} else if (!strcmp(mode, "udp-unspec")) {
		memcpy(&odd, &t->ss, sizeof(odd));
		odd.sin_family = AF_UNSPEC;
		msg.msg_name = &odd;
		msg.msg_namelen = sizeof(odd);
	} else {	/* udp-connected* */
		if (connect(fd, (const struct sockaddr *)&t->ss, t->len) < 0)
			return fail("connect", errno);
		if (!strcmp(mode, "udp-connected-cmsg"))
			fill_ttl_cmsg(t->family == AF_INET6 && !t->mapped, &msg, cbuf,
				      sizeof(cbuf));
		if (other && !strcmp(mode, "udp-connected-unspec")) {
			memcpy(&odd, &other->ss, sizeof(odd));
			odd.sin_family = AF_UNSPEC;
			msg.msg_name = &odd;
			msg.msg_namelen = sizeof(odd);
		} else if (other) {
			msg.msg_name = (void *)&other->ss;
			msg.msg_namelen = other->len;
		}
	}
	if (sendmsg(fd, &msg, 0) < 0)
		return fail("sendmsg", errno);
	close(fd);
	return ok();
}

/*
 * A burst of denied decisions for the event path to keep up with: N
 * connect() calls as fast as one loop can make them. Every call must be
 * refused with egret's default errno, ECONNREFUSED; the count is the
 * figure the tests compare with egret's log and counters.
 */
static int do_flood(const struct target *t, long n)
{
	long i, refused = 0, other = 0, connected = 0;
	int fd, first_err = 0;

	fd = socket(t->family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail("socket", errno);
	for (i = 0; i < n; i++) {
		if (connect(fd, (const struct sockaddr *)&t->ss, t->len) == 0) {
			connected++;	/* allowed: stop, a socket connects once */
			break;
		}
		if (errno == ECONNREFUSED) {
			refused++;
		} else {
			if (!other++)
				first_err = errno;
			if (errno == EINPROGRESS || errno == EALREADY ||
			    errno == EISCONN)
				break;	/* the socket is no longer fresh */
		}
	}
	close(fd);
	printf("refused %ld\n", refused);
	if (refused == n)
		return 0;
	fprintf(stderr, "probe: flood: %ld of %ld connect() calls refused (ECONNREFUSED), "
		"%ld connected, %ld other errors (first: %s)\n", refused, n,
		connected, other, first_err ? strerror(first_err) : "none");
	return 1;
}

/* One file-system change; "ok" means it happened. */
static int do_fs(const char *op, const char *path)
{
	char to[4096];
	int fd;

	if (!strcmp(op, "append") || !strcmp(op, "create")) {
		fd = !strcmp(op, "append") ?
			open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY) :
			open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0644);
		if (fd < 0)
			return fail(op, errno);
		if (write(fd, "\n", 1) != 1)
			return fail("write", errno);
		close(fd);
		return ok();
	}
	if (!strcmp(op, "unlink"))
		return unlink(path) < 0 ? fail(op, errno) : ok();
	if (!strcmp(op, "rename")) {
		snprintf(to, sizeof(to), "%s.probe", path);
		return rename(path, to) < 0 ? fail(op, errno) : ok();
	}
	if (!strcmp(op, "chmod"))
		return chmod(path, 0666) < 0 ? fail(op, errno) : ok();
	if (!strcmp(op, "mkdir"))
		return mkdir(path, 0755) < 0 ? fail(op, errno) : ok();
	return usage();
}

/* "4" / "6" / absent -> the getaddrinfo family; -1 on anything else. */
static int parse_family(int argc, char **argv, int i)
{
	if (argc <= i)
		return AF_UNSPEC;
	if (!strcmp(argv[i], "4"))
		return AF_INET;
	if (!strcmp(argv[i], "6"))
		return AF_INET6;
	return -1;
}

/* The first address getaddrinfo gives for NAME, as a target. */
static int resolve_first(const char *name, const char *port, int family,
			 int socktype, struct target *t)
{
	struct addrinfo hints = { .ai_family = family, .ai_socktype = socktype };
	struct addrinfo *res;
	int e;

	e = getaddrinfo(name, port, &hints, &res);
	if (e)
		return e;
	memset(t, 0, sizeof(*t));
	memcpy(&t->ss, res->ai_addr, res->ai_addrlen);
	t->len = res->ai_addrlen;
	t->family = res->ai_family;
	t->mapped = res->ai_family == AF_INET6 &&
		IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)res->ai_addr)->sin6_addr);
	freeaddrinfo(res);
	return 0;
}

static int do_tcp_name(const char *name, const char *port, const char *payload,
		       int family)
{
	struct target t;
	char where[ADDR_LEN];
	int e;

	e = resolve_first(name, port, family, SOCK_STREAM, &t);
	if (e)
		return fail_gai(name, e);
	format_sockaddr(&t.ss, where, sizeof(where));
	fprintf(stderr, "probe: %s is %s\n", name, where);
	return do_tcp(&t, payload, 0, !strcmp(port, "443") ? name : NULL,
		      !strcmp(port, "80") ? name : NULL, NULL);
}

/* Expand the one "%d" in @fmt (no other conversion is honoured). */
static void expand_name(const char *fmt, long i, char *out, size_t outlen)
{
	const char *pct = strstr(fmt, "%d");

	if (!pct)
		snprintf(out, outlen, "%s", fmt);
	else
		snprintf(out, outlen, "%.*s%ld%s", (int)(pct - fmt), fmt, i, pct + 2);
}

/*
 * Resolve, then connect() at once, COUNT times. Each failure is counted;
 * the first is reported. A UDP connect() runs the same cgroup connect hook
 * as TCP but sends nothing, so this needs no listener and is fast.
 */
static int do_resolve_connect(const char *fmt, long count, const char *port,
			      int family)
{
	char name[NAME_LEN], where[ADDR_LEN], first[2 * NAME_LEN] = "";
	const char *first_err = NULL;
	long i, failed = 0;
	struct target t;
	int e, fd, err;

	for (i = 0; i < count; i++) {
		expand_name(fmt, i, name, sizeof(name));
		e = resolve_first(name, port, family, SOCK_DGRAM, &t);
		if (e) {
			if (!failed++) {
				first_err = gai_name(e);
				snprintf(first, sizeof(first), "%s: %s", name,
					 gai_strerror(e));
			}
			continue;
		}
		fd = socket(t.family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return fail("socket", errno);
		if (sendto(fd, "x", 1, 0, (const struct sockaddr *)&t.ss, t.len) < 0 &&
		    !failed++) {
			err = errno;
			first_err = strerrorname_np(err);
			format_sockaddr(&t.ss, where, sizeof(where));
			snprintf(first, sizeof(first), "%s at %s: %s", name,
				 where, strerror(err));
		}
		close(fd);
	}
	if (!failed)
		return ok();
	fprintf(stderr, "probe: %ld of %ld failed; first: %s\n", failed, count,
		first);
	printf("err %s\n", first_err ? first_err : "unknown");
	return 1;
}

/* Every address of one answer must be reachable, not just the first. */
static int do_connect_all(const char *name, const char *port, int family)
{
	struct addrinfo hints = { .ai_family = family, .ai_socktype = SOCK_DGRAM };
	char where[ADDR_LEN], first[NAME_LEN] = "";
	const char *first_err = NULL;
	struct addrinfo *res, *ai;
	long n = 0, failed = 0;
	int e, fd, err;

	e = getaddrinfo(name, port, &hints, &res);
	if (e)
		return fail_gai(name, e);
	for (ai = res; ai; ai = ai->ai_next, n++) {
		fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return fail("socket", errno);
		if (sendto(fd, "x", 1, 0, ai->ai_addr, ai->ai_addrlen) < 0 && !failed++) {
			err = errno;
			first_err = strerrorname_np(err);
			format_sockaddr((struct sockaddr_storage *)ai->ai_addr,
					where, sizeof(where));
			snprintf(first, sizeof(first), "%s: %s", where, strerror(err));
		}
		close(fd);
	}
	freeaddrinfo(res);
	if (!failed) {
		printf("ok %ld\n", n);
		return 0;
	}
	fprintf(stderr, "probe: %s: %ld of %ld addresses failed; first: %s\n",
		name, failed, n, first);
	printf("err %s\n", first_err ? first_err : "unknown");
	return 1;
}

static const char *rcode_name(unsigned int rcode)
{
	static const char *names[] = { "NOERROR", "FORMERR", "SERVFAIL",
				       "NXDOMAIN", "NOTIMP", "REFUSED" };
	static char buf[16];

	if (rcode < sizeof(names) / sizeof(names[0]))
		return names[rcode];
	snprintf(buf, sizeof(buf), "RCODE%u", rcode);
	return buf;
}

/* A standard query, recursion desired: header, QNAME, QTYPE, QCLASS IN. */
static int dns_build_query(const char *name, unsigned int type, uint16_t id,
			   unsigned char *out, size_t outlen)
{
	size_t n = 12, lablen;
	const char *p = name, *dot;

	if (outlen < 12 + strlen(name) + 2 + 4)
		return -1;
	memset(out, 0, 12);
	out[0] = (unsigned char)(id >> 8);
	out[1] = (unsigned char)id;
	out[2] = 0x01;		/* RD */
	out[5] = 1;		/* QDCOUNT */
	while (*p) {
		dot = strchr(p, '.');
		lablen = dot ? (size_t)(dot - p) : strlen(p);
		if (lablen == 0 || lablen > 63)
			return -1;
		out[n++] = (unsigned char)lablen;
		memcpy(out + n, p, lablen);
		n += lablen;
		p += lablen;
		if (*p == '.')
			p++;
	}
	out[n++] = 0;
	out[n++] = (unsigned char)(type >> 8);
	out[n++] = (unsigned char)type;
	out[n++] = 0;
	out[n++] = 1;		/* IN */
	return (int)n;
}

/* Read exactly @len bytes from a stream socket (SO_RCVTIMEO bounds it). */
static int recv_all(int fd, unsigned char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = recv(fd, buf + got, len - got, 0);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		got += (size_t)n;
	}
	return 0;
}

static int do_dns(const char *how, const struct target *t, const char *name,
		  unsigned int type)
{
	/* udp-oversize: the query, then zeros to ODD_SIZE bytes in all. */
	enum { ODD_SIZE = 5000 };
	static unsigned char q[2 + ODD_SIZE], a[2 + DNS_MSG_MAX];
	struct sockaddr_storage from = { 0 }, peer = { 0 };
	socklen_t fromlen = sizeof(from), peerlen = sizeof(peer);
	char sfrom[ADDR_LEN] = "", speer[ADDR_LEN] = "";
	int fastopen = !strcmp(how, "tcp-fastopen");
	int tcp = fastopen || !strcmp(how, "tcp");
	int connected = !strcmp(how, "udp-connected");
	uint16_t id = (uint16_t)(getpid() ^ 0x5a5a);
	struct sockaddr_in odd;
	int qlen, fd, r;
	ssize_t alen;

	qlen = dns_build_query(name, type, id, q + 2, 512);
	if (qlen < 0) {
		fprintf(stderr, "probe: cannot encode '%s'\n", name);
		return usage();
	}
	q[0] = (unsigned char)(qlen >> 8);	/* TCP's length prefix */
	q[1] = (unsigned char)qlen;
	fd = socket(t->family, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail("socket", errno);
	set_timeouts(fd);
	if (fastopen) {
		/* Connects and sends in one call (SO_SNDTIMEO bounds it). */
		if (sendto(fd, q, (size_t)qlen + 2, MSG_FASTOPEN | MSG_NOSIGNAL,
			   (const struct sockaddr *)&t->ss, t->len) < 0)
			return fail("sendto(MSG_FASTOPEN)", errno);
	} else if (tcp) {
		r = connect_bounded(fd, (const struct sockaddr *)&t->ss, t->len, TIMEOUT_S);
		if (r < 0)
			return fail("connect", -r);
		if (send(fd, q, (size_t)qlen + 2, MSG_NOSIGNAL) < 0)
			return fail("send", errno);
	} else if (connected) {
		if (connect(fd, (const struct sockaddr *)&t->ss, t->len) < 0)
			return fail("connect", errno);
		if (send(fd, q + 2, (size_t)qlen, 0) < 0)
			return fail("send", errno);
	} else if (!strcmp(how, "udp-oversize")) {
		memset(q + 2 + qlen, 0, ODD_SIZE - (size_t)qlen);
		if (sendto(fd, q + 2, ODD_SIZE, 0, (const struct sockaddr *)&t->ss, t->len) < 0)
			return fail("sendto", errno);
	} else if (!strcmp(how, "udp-unspec")) {
		memcpy(&odd, &t->ss, sizeof(odd));
		odd.sin_family = AF_UNSPEC;
		if (sendto(fd, q + 2, (size_t)qlen, 0, (struct sockaddr *)&odd,
			   sizeof(odd)) < 0)
			return fail("sendto", errno);
	} else {
		if (sendto(fd, q + 2, (size_t)qlen, 0,
			   (const struct sockaddr *)&t->ss, t->len) < 0)
			return fail("sendto", errno);
	}
	if (tcp || connected) {
		if (getpeername(fd, (struct sockaddr *)&peer, &peerlen) < 0)
			return fail("getpeername", errno);
		format_sockaddr(&peer, speer, sizeof(speer));
	}
	if (tcp) {
		r = recv_all(fd, a, 2);
		if (r == 0)
			r = recv_all(fd, a + 2, (size_t)a[0] << 8 | a[1]);
		if (r < 0)
			return fail("recv", -r);
		alen = (ssize_t)((size_t)a[0] << 8 | a[1]);
		memmove(a, a + 2, (size_t)alen);
	} else {
		alen = recvfrom(fd, a, sizeof(a), 0, (struct sockaddr *)&from,
				&fromlen);
		if (alen < 0)
			return fail("recvfrom", errno == EAGAIN ? ETIMEDOUT : errno);
		format_sockaddr(&from, sfrom, sizeof(sfrom));
	}
	close(fd);
	if (alen < 12 || a[0] != q[2] || a[1] != q[3] || !(a[2] & 0x80)) {
		fprintf(stderr, "probe: not an answer to our query (%zd bytes)\n", alen);
		printf("err EBADMSG\n");
		return 1;
	}
	printf("ok %s an=%u%s%s%s%s%s\n", rcode_name(a[3] & 0x0f),
	       (unsigned int)a[6] << 8 | a[7], a[2] & 0x02 ? " tc" : "",
	       sfrom[0] ? " from=" : "", sfrom, speer[0] ? " peer=" : "", speer);
	return 0;
}

static int parse_qtype(const char *s, unsigned int *ret)
{
	char *end;
	long v;

	if (!strcmp(s, "A"))
		*ret = 1;
	else if (!strcmp(s, "AAAA"))
		*ret = 28;
	else {
		errno = 0;
		v = strtol(s, &end, 10);
		if (errno || *end || end == s || v < 1 || v > 65535)
			return -1;
		*ret = (unsigned int)v;
	}
	return 0;
}

/* What getaddrinfo and Go's resolver do to sort addresses: connect a UDP
 * socket, ask its source address, close it; nothing is sent. */
static int do_udp_probe(const struct target *t)
{
	struct sockaddr_storage src;
	socklen_t sl = sizeof(src);
	int fd = socket(t->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return fail("socket", errno);
	if (connect(fd, (const struct sockaddr *)&t->ss, t->len) < 0)
		return fail("connect", errno);
	if (getsockname(fd, (struct sockaddr *)&src, &sl) < 0)
		return fail("getsockname", errno);
	close(fd);
	return ok();
}

int main(int argc, char **argv)
{
	struct target t, other;
	const char *mode;
	unsigned int qtype = 1;
	int family;
	long count;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return usage();
	mode = argv[1];
	if (!strcmp(mode, "hold")) {
		if (argc != 3)
			return usage();
		sleep((unsigned int)atoi(argv[2]));
		return ok();
	}
	if (!strcmp(mode, "fs")) {
		if (argc != 4)
			return usage();
		return do_fs(argv[2], argv[3]);
	}
	if (!strcmp(mode, "tcp-name") && (argc == 5 || argc == 6)) {
		family = parse_family(argc, argv, 5);
		if (family < 0)
			return usage();
		return do_tcp_name(argv[2], argv[3], argv[4], family);
	}
	if (!strcmp(mode, "resolve-connect") && (argc == 5 || argc == 6)) {
		family = parse_family(argc, argv, 5);
		count = atol(argv[3]);
		if (family < 0 || count < 1 || count > 100000)
			return usage();
		return do_resolve_connect(argv[2], count, argv[4], family);
	}
	if (!strcmp(mode, "connect-all") && (argc == 4 || argc == 5)) {
		family = parse_family(argc, argv, 4);
		if (family < 0)
			return usage();
		return do_connect_all(argv[2], argv[3], family);
	}
	if (!strcmp(mode, "dns") && (argc == 5 || argc == 6)) {
		if ((strcmp(argv[2], "udp") && strcmp(argv[2], "udp-connected") &&
		     strcmp(argv[2], "udp-oversize") &&
		     strcmp(argv[2], "udp-unspec") && strcmp(argv[2], "tcp") &&
		     strcmp(argv[2], "tcp-fastopen")) ||
		    parse_target(argv[3], "53", &t) < 0 ||
		    (!strcmp(argv[2], "udp-unspec") && t.family != AF_INET) ||
		    (argc == 6 && parse_qtype(argv[5], &qtype) < 0))
			return usage();
		return do_dns(argv[2], &t, argv[4], qtype);
	}
	if (argc < 4 || parse_target(argv[2], argv[3], &t) < 0)
		return usage();
	if (!strcmp(mode, "flood") && argc == 5) {
		count = atol(argv[4]);
		if (count < 1 || count > 10000000)
			return usage();
		return do_flood(&t, count);
	}
	if (!strcmp(mode, "udp-probe") && argc == 4)
		return do_udp_probe(&t);
	if (!strcmp(mode, "tcp") && argc <= 5)
		return do_tcp(&t, argc == 5 ? argv[4] : NULL, 0, NULL, NULL, argv[2]);
	if (!strcmp(mode, "tcp-fastopen") && argc == 5)
		return do_tcp(&t, argv[4], 1, NULL, NULL, argv[2]);
	if ((!strcmp(mode, "udp") || !strcmp(mode, "udp-connected") ||
	     !strcmp(mode, "udp-connected-cmsg")) && argc == 5)
		return do_udp(&t, mode, argv[4], NULL);
	if ((!strcmp(mode, "udp-unspec") || !strcmp(mode, "udp6-v4addr")) &&
	    argc == 5 && t.family == AF_INET)
		return do_udp(&t, mode, argv[4], NULL);
	if (!strcmp(mode, "udp-connected-sendto") && argc == 7 &&
	    parse_target(argv[4], argv[5], &other) == 0 && other.family == t.family)
		return do_udp(&t, mode, argv[6], &other);
	if (!strcmp(mode, "udp-connected-unspec") && argc == 7 &&
	    t.family == AF_INET && parse_target(argv[4], argv[5], &other) == 0 &&
	    other.family == AF_INET)
		return do_udp(&t, mode, argv[6], &other);
	return usage();
}
