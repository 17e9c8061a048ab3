// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * redteam - the attacker's toolbox for egret's red-team suite
 * (tests/redteam/run.sh). Each mode is one attempt at a bypass (or a piece
 * of the test world that watches for one), reported in one line:
 *
 *   "ok[ DETAIL]"        it worked
 *   "err ENAME STAGE"    it failed with errno ENAME at STAGE (socket,
 *                        setsockopt, sendto, connect, ...)
 *
 * Exit 0 on ok, 1 on err, 2 on usage. Details for humans go to stderr.
 * Every wait is bounded (TIMEOUT_S unless the mode takes SECONDS).
 *
 * Sockets of other kinds:
 *   socket FAMILY TYPE [PROTO]       create one (names: inet inet6 unix
 *                                    netlink packet vsock alg ... or numbers;
 *                                    stream dgram raw rdm seqpacket; icmp
 *                                    icmpv6 udplite sctp mptcp raw or numbers)
 *   families                         try every family x type with protocol 0,
 *                                    print the ones that could be created
 *   ping ADDR TOKEN                  ICMP(v6) "ping" socket, echo with TOKEN
 *   raw ADDR PORT TOKEN              SOCK_RAW IPPROTO_UDP, a UDP datagram
 *   udplite ADDR PORT TOKEN          UDP-Lite sendto
 *   sctp ADDR PORT TOKEN             SCTP connect + send
 *   mptcp ADDR PORT TOKEN            MPTCP connect, send, half-close, wait EOF
 *   packet IFNAME TOKEN              AF_PACKET: an IPv4/UDP frame to
 *                                    203.0.113.11:9999 broadcast on IFNAME
 *   packet-fd FD IFNAME TOKEN        the same frame through an AF_PACKET
 *                                    socket we were handed as fd FD
 *   with-socket FD FAMILY TYPE PROTO CMD [ARG...]
 *                                    (the caller's side) create a socket,
 *                                    put it on fd FD (inherited), exec CMD
 * UDP paths:
 *   sendto ADDR PORT TOKEN           plain sendto() (probe uses sendmsg)
 *   sendmmsg CADDR CPORT CMSG ADDR PORT TOKEN [ADDR PORT TOKEN]...
 *                                    one sendmmsg() call: connect to CADDR
 *                                    first unless "-"; CMSG 1 adds a TTL /
 *                                    hop-limit cmsg to every message; ADDR
 *                                    "-" means no msg_name. "ok N" = N sent
 *   bcast ADDR PORT TOKEN            SO_BROADCAST, sendto
 * Source routes and routing headers:
 *   ipopts udp|tcp ADDR PORT HOP TOKEN
 *                                    setsockopt(IP_OPTIONS, loose source
 *                                    route via HOP), then send to ADDR: the
 *                                    packet's IP destination becomes HOP
 *   ipopts-cmsg ADDR PORT HOP TOKEN  the same route as an IP_RETOPTS cmsg
 *                                    (HOP "rr": a record-route option instead,
 *                                    which needs no CAP_NET_RAW)
 *   rthdr ADDR6 PORT HOP6 TOKEN      setsockopt(IPV6_RTHDR, segment routing
 *                                    header via HOP6), sendto ADDR6
 *   rthdr-cmsg ADDR6 PORT HOP6 TOKEN an IPV6_RTHDR cmsg (type 2, via HOP6)
 *   sockopt NAME                     one more refused option, harmless value:
 *                                    v6-2292rthdr, v6-2292pktoptions,
 *                                    v4-ipoptions-rr, v6sock-ipoptions
 * Forged sources and multicast:
 *   forge HOW SRC DST PORT TOKEN     a packet to DST:PORT with source SRC, not
 *                                    the host's (IP(V6)_FREEBIND, bind or a
 *                                    PKTINFO cmsg; see do_forge)
 *   mcast HOW IFNAME GROUP [SOURCE]  join GROUP (and SOURCE) on IFNAME by HOW
 *                                    (see do_mcast), hold 1.5 s: the kernel's
 *                                    membership reports carry them
 * Terminals:
 *   tiocsti FD|tty|pts TEXT          push TEXT and a newline into a
 *                                    terminal's input queue (TIOCSTI): fd FD,
 *                                    /dev/tty, or the first /dev/pts/N that
 *                                    takes it ("ok /dev/pts/N")
 *   tioclinux FD                     ioctl(FD, TIOCLINUX), a harmless query
 * System calls:
 *   io_uring                         io_uring_setup()
 *   unshare-user | clone-user        CLONE_NEWUSER by unshare() / clone()
 *   clone3 user|plain                raw clone3(), with or without NEWUSER
 *   int80-unshare                    unshare(CLONE_NEWUSER) via the i386 ABI
 *                                    ("noabi": the kernel has none)
 *   x32-unshare                      the same via the x32 ABI
 *   setns FD                         setns(FD, 0)
 *   pidfd-getfd PID FD               pidfd_open(PID) + pidfd_getfd (PID 0: self)
 *   ptrace PID                       PTRACE_SEIZE (0: a child of our own)
 *   bpf-objget PATH                  bpf(BPF_OBJ_GET, PATH)
 *   bpf-next-id                      bpf(BPF_LINK_GET_NEXT_ID)
 * Files:
 *   open PATH | write PATH DATA | mkdir PATH | unlink PATH | rmdir PATH
 *   umount PATH | fds (list fds above 2) | fd-write FD TOKEN
 *   exchange A B SECONDS             swap names A and B atomically
 *                                    (RENAME_EXCHANGE), again and again, for
 *                                    SECONDS: a path that is one thing, then
 *                                    the other, never neither
 *   setid CALL PATH                  make PATH set-id with CALL: chmod fchmod
 *                                    fchmodat fchmodat2 (mode 06755 on an
 *                                    existing file), open openat creat mknod
 *                                    mknodat (create it 06755), mkdir mkdirat
 *                                    (02755), openat2 (create, 06755); "ok
 *                                    MODE" = the mode PATH has afterwards
 *   acl-user PATH UID                (root) POSIX ACL on PATH: owner, group
 *                                    and user UID may read and write, others
 *                                    nothing (the mode's group bits show the
 *                                    ACL mask, its other bits stay 0)
 * Services and clients (both sides of the listener tests, the echo world):
 *   serve-tcp ADDR PORT SECONDS TOKEN READYFILE
 *                                    listen; answer "TOKEN@peer" to each
 *                                    client; "ok accepted=N" after SECONDS
 *                                    (ADDR auto4|auto6: listen() without a
 *                                    bind; PORT 0: the kernel picks it;
 *                                    READYFILE then holds the port)
 *   serve-udp ADDR PORT SECONDS TOKEN READYFILE
 *                                    answer each datagram with "TOKEN@peer";
 *                                    "ok peers=PEER:ok|ENAME,..."
 *   ask-tcp [-s SRC [-p SPORT]] ADDR PORT TOKEN
 *                                    send TOKEN, half-close, "ok REPLY"
 *   ask-udp [-s SRC [-p SPORT]] [-c] [-m] ADDR PORT TOKEN
 *                                    send TOKEN (-c connected, -m with a
 *                                    cmsg), "ok REPLY" or err ETIMEDOUT
 *   echo READYFILE ADDR PORT         TCP+UDP echo server (until killed)
 *   unix PATH TOKEN                  AF_UNIX stream connect, send TOKEN
 *                                    (PATH "@NAME": an abstract name)
 *   unix-dgram PATH TOKEN            one AF_UNIX datagram to PATH
 *   unix-sink READYFILE LOG PATH...  listen on PATHs (mode 0666; "@NAME"
 *                                    abstract; "dgram:PATH" a datagram
 *                                    socket), log data
 *   capture LOG IFNAME               log every packet arriving on IFNAME
 *                                    (AF_PACKET, incoming only), one line:
 *                                    "pkt v4 S:P > D:P proto=N opts=0|1
 *                                    len=N [tcpflags=0xNN] [dns=...]
 *                                    data=PRINTABLE" (v6:
 *                                    "rh=0|1"; dns=: a query's header flags,
 *                                    type, class, counts and OPT, see
 *                                    dns_fields)
 * DNS beyond the name:
 *   dns-smuggle SERVER NAME TOKEN KIND
 *                                    one UDP query for NAME (type A) to
 *                                    SERVER:53 that carries TOKEN outside
 *                                    the name - KIND: edns (an EDNS0 option),
 *                                    additional (a TXT record in the
 *                                    additional section), answer (a TXT
 *                                    record in the answer section),
 *                                    trailing (bytes after the question),
 *                                    plain (none: the control); or in the
 *                                    query's own fields: qtype=N, flags=N
 *                                    (header bytes 2-3), edns-size=N,
 *                                    edns-do. "ok RCODE"
 * Expiry:
 *   expiry NAME PORT UPORT TOKEN WAIT
 *                                    resolve NAME (IPv4), open TCP to PORT
 *                                    and connected UDP to UPORT, send, sleep
 *                                    WAIT s, send again on both, then try new
 *                                    ones. One "KEY ok|err ENAME" line each
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "target.h"
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/io_uring.h>

#define TIMEOUT_S 5
#define BUF_MAX 2048
#define ADDR_LEN 64

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#ifndef IPPROTO_UDPLITE
#define IPPROTO_UDPLITE 136
#endif
#ifndef IPV6_2292RTHDR
#define IPV6_2292RTHDR 5
#endif
#ifndef IPV6_2292PKTOPTIONS
#define IPV6_2292PKTOPTIONS 6
#endif
#ifndef IPV6_RTHDR
#define IPV6_RTHDR 57
#endif
#ifndef IP_RETOPTS
#define IP_RETOPTS 7
#endif

static int usage(void)
{
	fprintf(stderr, "usage: see the comment at the top of tests/helpers/redteam.c\n");
	printf("usage\n");
	return 2;
}

static const char *ename(int err)
{
	static char buf[32];
	const char *n = strerrorname_np(err);

	if (n)
		return n;
	snprintf(buf, sizeof(buf), "errno%d", err);
	return buf;
}

static int fail(const char *stage, int err)
{
	fprintf(stderr, "redteam: %s: %s\n", stage, strerror(err));
	printf("err %s %s\n", ename(err), stage);
	return 1;
}

static int ok(const char *detail)
{
	if (detail && *detail)
		printf("ok %s\n", detail);
	else
		printf("ok\n");
	return 0;
}

static void format_sockaddr(const struct sockaddr_storage *ss, char *out, size_t outlen)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;

		inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a));
		snprintf(out, outlen, "%s", a);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

		inet_ntop(AF_INET6, &sin6->sin6_addr, a, sizeof(a));
		snprintf(out, outlen, "%s", a);
	} else {
		snprintf(out, outlen, "family%d", ss->ss_family);
	}
}

static void set_timeouts(int fd, int seconds)
{
	struct timeval tv = { .tv_sec = seconds };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* Send, half-close, read until EOF: "ok" means the peer read it all. */
static int stream_exchange(int fd, const char *payload, char *reply, size_t rlen)
{
	size_t got = 0;
	ssize_t n;
	char buf[512];

	if (payload && *payload && send(fd, payload, strlen(payload), MSG_NOSIGNAL) < 0)
		return -errno;
	if (shutdown(fd, SHUT_WR) < 0)
		return -errno;
	for (;;) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n == 0)
			break;
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (reply && got + 1 < rlen) {
			size_t k = (size_t)n < rlen - 1 - got ? (size_t)n : rlen - 1 - got;

			memcpy(reply + got, buf, k);
			got += k;
		}
	}
	if (reply)
		reply[got] = '\0';
	return 0;
}

static void printable(char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!(s[i] > ' ' && s[i] <= '~'))
			s[i] = '.';
}

/* ---- names ---------------------------------------------------------------- */

struct name_val { const char *name; int val; };

static const struct name_val families[] = {
	{ "unix", 1 }, { "inet", 2 }, { "ax25", 3 }, { "ipx", 4 },
	{ "appletalk", 5 }, { "netrom", 6 }, { "bridge", 7 }, { "atmpvc", 8 },
	{ "x25", 9 }, { "inet6", 10 }, { "rose", 11 }, { "decnet", 12 },
	{ "netbeui", 13 }, { "security", 14 }, { "key", 15 }, { "netlink", 16 },
	{ "packet", 17 }, { "ash", 18 }, { "econet", 19 }, { "atmsvc", 20 },
	{ "rds", 21 }, { "sna", 22 }, { "irda", 23 }, { "pppox", 24 },
	{ "wanpipe", 25 }, { "llc", 26 }, { "ib", 27 }, { "mpls", 28 },
	{ "can", 29 }, { "tipc", 30 }, { "bluetooth", 31 }, { "iucv", 32 },
	{ "rxrpc", 33 }, { "isdn", 34 }, { "phonet", 35 }, { "ieee802154", 36 },
	{ "caif", 37 }, { "alg", 38 }, { "nfc", 39 }, { "vsock", 40 },
	{ "kcm", 41 }, { "qipcrtr", 42 }, { "smc", 43 }, { "xdp", 44 },
	{ "mctp", 45 }, { NULL, 0 },
};

static const struct name_val types[] = {
	{ "stream", SOCK_STREAM }, { "dgram", SOCK_DGRAM }, { "raw", SOCK_RAW },
	{ "rdm", SOCK_RDM }, { "seqpacket", SOCK_SEQPACKET },
	{ "packet", SOCK_PACKET }, { NULL, 0 },
};

static const struct name_val protos[] = {
	{ "icmp", IPPROTO_ICMP }, { "tcp", IPPROTO_TCP }, { "udp", IPPROTO_UDP },
	{ "icmpv6", IPPROTO_ICMPV6 }, { "sctp", IPPROTO_SCTP },
	{ "udplite", IPPROTO_UDPLITE }, { "raw", IPPROTO_RAW },
	{ "mptcp", IPPROTO_MPTCP }, { NULL, 0 },
};

static int lookup(const struct name_val *t, const char *s, int *out)
{
	char *end;
	long v;

	for (; t->name; t++) {
		if (!strcmp(t->name, s)) {
			*out = t->val;
			return 0;
		}
	}
	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || *end || end == s)
		return -1;
	*out = (int)v;
	return 0;
}

static const char *name_of(const struct name_val *t, int v)
{
	static char buf[4][16];
	static int slot;

	for (; t->name; t++)
		if (t->val == v)
			return t->name;
	slot = (slot + 1) % 4;
	snprintf(buf[slot], sizeof(buf[slot]), "%d", v);
	return buf[slot];
}

/* ---- other kinds of sockets ------------------------------------------------ */

static int do_socket(int argc, char **argv)
{
	int fam, type, proto = 0, fd;

	if (argc < 4 || argc > 5 || lookup(families, argv[2], &fam) < 0 ||
	    lookup(types, argv[3], &type) < 0 ||
	    (argc == 5 && lookup(protos, argv[4], &proto) < 0))
		return usage();
	fd = socket(fam, type | SOCK_CLOEXEC, proto);
	if (fd < 0)
		return fail("socket", errno);
	close(fd);
	return ok(NULL);
}

static int do_families(void)
{
	static const int ts[] = { SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, SOCK_RDM,
				  SOCK_SEQPACKET, SOCK_PACKET };
	char out[4096] = "";
	size_t used = 0;
	int fam, fd;

	for (fam = 1; fam < 46; fam++) {
		for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
			fd = socket(fam, ts[i] | SOCK_CLOEXEC, 0);
			if (fd < 0) {
				if (errno != EAFNOSUPPORT && errno != EINVAL &&
				    errno != ESOCKTNOSUPPORT && errno != EPROTONOSUPPORT &&
				    errno != EPROTOTYPE)
					fprintf(stderr, "redteam: %s/%s: %s\n",
						name_of(families, fam),
						name_of(types, ts[i]), ename(errno));
				continue;
			}
			close(fd);
			used += (size_t)snprintf(out + used, sizeof(out) - used, " %s/%s",
						 name_of(families, fam), name_of(types, ts[i]));
		}
	}
	printf("ok%s\n", out);
	return 0;
}

static int do_ping(const char *addr, const char *token)
{
	struct target t;
	unsigned char pkt[256];
	size_t n = strlen(token);
	int fd;

	if (parse_target(addr, "0", &t) < 0 || n > sizeof(pkt) - 8)
		return usage();
	fd = socket(t.family, SOCK_DGRAM | SOCK_CLOEXEC,
		    t.family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6);
	if (fd < 0)
		return fail("socket", errno);
	memset(pkt, 0, 8);
	pkt[0] = t.family == AF_INET ? 8 : 128;	/* echo request */
	pkt[7] = 1;				/* sequence 1 */
	memcpy(pkt + 8, token, n);
	if (sendto(fd, pkt, 8 + n, 0, (struct sockaddr *)&t.ss, t.len) < 0)
		return fail("sendto", errno);
	close(fd);
	return ok(NULL);
}

static uint16_t csum16(const void *data, size_t len, uint32_t sum)
{
	const unsigned char *p = data;

	for (; len > 1; p += 2, len -= 2)
		sum += (uint32_t)(p[0] << 8 | p[1]);
	if (len)
		sum += (uint32_t)(p[0] << 8);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static int do_raw(const char *addr, const char *port, const char *token)
{
	struct target t;
	unsigned char pkt[512];
	size_t n = strlen(token);
	long p;
	int fd, off = 6;

	if (parse_target(addr, port, &t) < 0 || parse_port(port, &p) < 0 ||
	    n > sizeof(pkt) - 8)
		return usage();
	fd = socket(t.family, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_UDP);
	if (fd < 0)
		return fail("socket", errno);
	if (t.family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_CHECKSUM, &off, sizeof(off));
	memset(pkt, 0, 8);
	pkt[0] = 0x10; pkt[1] = 0x92;		/* source port 4242 */
	pkt[2] = (unsigned char)(p >> 8); pkt[3] = (unsigned char)p;
	pkt[4] = (unsigned char)((8 + n) >> 8); pkt[5] = (unsigned char)(8 + n);
	memcpy(pkt + 8, token, n);
	((struct sockaddr_in *)&t.ss)->sin_port = 0;	/* raw: the protocol, not a port */
	if (sendto(fd, pkt, 8 + n, 0, (struct sockaddr *)&t.ss, t.len) < 0)
		return fail("sendto", errno);
	close(fd);
	return ok(NULL);
}

static int do_dgram_proto(const char *addr, const char *port, const char *token, int proto)
{
	struct target t;
	int fd;

	if (parse_target(addr, port, &t) < 0)
		return usage();
	fd = socket(t.family, SOCK_DGRAM | SOCK_CLOEXEC, proto);
	if (fd < 0)
		return fail("socket", errno);
	if (sendto(fd, token, strlen(token), 0, (struct sockaddr *)&t.ss, t.len) < 0)
		return fail("sendto", errno);
	close(fd);
	return ok(NULL);
}

static int do_stream_proto(const char *addr, const char *port, const char *token, int proto)
{
	struct target t;
	int fd, r;

	if (parse_target(addr, port, &t) < 0)
		return usage();
	fd = socket(t.family, SOCK_STREAM | SOCK_CLOEXEC, proto);
	if (fd < 0)
		return fail("socket", errno);
	set_timeouts(fd, TIMEOUT_S);
	r = connect_bounded(fd, (struct sockaddr *)&t.ss, t.len, TIMEOUT_S);
	if (r < 0)
		return fail("connect", -r);
	r = stream_exchange(fd, token, NULL, 0);
	if (r < 0)
		return fail("exchange", -r);
	close(fd);
	return ok(NULL);
}

/* An IPv4/UDP packet to 203.0.113.11:9999 carrying TOKEN, as a link-layer
 * broadcast: what a packet socket could put on the wire. */
static int do_packet(int fd, const char *ifname, const char *token)
{
	struct sockaddr_ll sll = { 0 };
	unsigned char pkt[512];
	size_t n = strlen(token), len = 20 + 8 + n;
	uint16_t c;

	if (len > sizeof(pkt))
		return usage();
	if (fd < 0)
		fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(ETH_P_IP));
	if (fd < 0)
		return fail("socket", errno);
	memset(pkt, 0, 28);
	pkt[0] = 0x45; pkt[2] = (unsigned char)(len >> 8); pkt[3] = (unsigned char)len;
	pkt[8] = 64; pkt[9] = IPPROTO_UDP;
	inet_pton(AF_INET, "192.0.2.2", pkt + 12);
	inet_pton(AF_INET, "203.0.113.11", pkt + 16);
	c = csum16(pkt, 20, 0);
	pkt[10] = (unsigned char)(c >> 8); pkt[11] = (unsigned char)c;
	pkt[20] = 0x10; pkt[21] = 0x92; pkt[22] = 0x27; pkt[23] = 0x0f;	/* 4242 -> 9999 */
	pkt[24] = (unsigned char)((8 + n) >> 8); pkt[25] = (unsigned char)(8 + n);
	memcpy(pkt + 28, token, n);
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_IP);
	sll.sll_ifindex = (int)if_nametoindex(ifname);
	sll.sll_halen = 6;
	memset(sll.sll_addr, 0xff, 6);
	if (sendto(fd, pkt, len, 0, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		return fail("sendto", errno);
	close(fd);
	return ok(NULL);
}

/* The caller's side of an inherited socket: fd FD, then exec CMD. A packet
 * socket gets protocol ETH_P_ALL unless PROTO says otherwise. */
static int do_with_socket(char **argv)
{
	int want = atoi(argv[2]), fam, type, proto = 0, fd;

	if (lookup(families, argv[3], &fam) < 0 || lookup(types, argv[4], &type) < 0 ||
	    lookup(protos, argv[5], &proto) < 0)
		return usage();
	if (fam == AF_PACKET && proto == 0)
		proto = htons(ETH_P_ALL);
	fd = socket(fam, type, proto);
	if (fd < 0)
		return fail("socket", errno);
	if (fd != want && (dup2(fd, want) < 0 || close(fd) < 0))
		return fail("dup2", errno);
	execvp(argv[6], argv + 6);
	return fail("exec", errno);
}

/* ---- UDP paths ------------------------------------------------------------ */

static int do_sendto(const char *addr, const char *port, const char *token, int bcast)
{
	struct target t;
	int fd, one = 1;

	if (parse_target(addr, port, &t) < 0)
		return usage();
	fd = socket(t.family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail("socket", errno);
	if (bcast && setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one)) < 0)
		return fail("setsockopt", errno);
	if (sendto(fd, token, strlen(token), 0, (struct sockaddr *)&t.ss, t.len) < 0)
		return fail("sendto", errno);
	close(fd);
	return ok(NULL);
}

#define MMSG_MAX 8

static int do_sendmmsg(int argc, char **argv)
{
	static struct target tg[MMSG_MAX];
	static char cbuf[MMSG_MAX][CMSG_SPACE(sizeof(int))];
	struct mmsghdr mm[MMSG_MAX];
	struct iovec iov[MMSG_MAX];
	struct target conn;
	int n = (argc - 5) / 3, cmsg, fd, r, family = 0, v6;
	char detail[16];

	if (argc < 8 || (argc - 5) % 3 || n > MMSG_MAX)
		return usage();
	cmsg = !strcmp(argv[4], "1");
	if (strcmp(argv[2], "-")) {
		if (parse_target(argv[2], argv[3], &conn) < 0)
			return usage();
		family = conn.family;
	}
	memset(mm, 0, sizeof(mm));
	for (int i = 0; i < n; i++) {
		char **a = argv + 5 + 3 * i;

		if (strcmp(a[0], "-")) {
			if (parse_target(a[0], a[1], &tg[i]) < 0)
				return usage();
			if (!family)
				family = tg[i].family;
			mm[i].msg_hdr.msg_name = &tg[i].ss;
			mm[i].msg_hdr.msg_namelen = tg[i].len;
		}
		iov[i].iov_base = a[2];
		iov[i].iov_len = strlen(a[2]);
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	if (!family)
		return usage();
	v6 = family == AF_INET6 && !(strcmp(argv[2], "-") ? conn.mapped : tg[0].mapped);
	if (cmsg)
		for (int i = 0; i < n; i++)
			fill_ttl_cmsg(v6, &mm[i].msg_hdr, cbuf[i], sizeof(cbuf[i]));
	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail("socket", errno);
	if (strcmp(argv[2], "-") &&
	    connect(fd, (struct sockaddr *)&conn.ss, conn.len) < 0)
		return fail("connect", errno);
	r = sendmmsg(fd, mm, (unsigned int)n, 0);
	if (r < 0)
		return fail("sendmmsg", errno);
	close(fd);
	snprintf(detail, sizeof(detail), "%d", r);
	return ok(detail);
}

/* ---- source routes and routing headers ------------------------------------ */

/* NOP + loose source route through @hop (8 bytes, a multiple of 4); or,
 * for HOP "rr", a record-route option with one slot (no CAP_NET_RAW needed,
 * no change of destination: it only shows options reach the wire). */
static int ip_option(unsigned char opt[8], const char *hop)
{
	struct in_addr h;

	memset(opt, 0, 8);
	if (!strcmp(hop, "rr")) {
		opt[0] = 7;		/* IPOPT_RR */
		opt[1] = 7;		/* length: 3 + one slot */
		opt[2] = 4;		/* pointer */
		return 0;
	}
	if (inet_pton(AF_INET, hop, &h) != 1)
		return -1;
	opt[0] = 1;		/* IPOPT_NOP */
	opt[1] = 0x83;		/* IPOPT_LSRR */
	opt[2] = 7;		/* length: 3 + one address */
	opt[3] = 4;		/* pointer */
	memcpy(opt + 4, &h, 4);
	return 0;
}

static int do_ipopts(const char *proto, const char *addr, const char *port,
		     const char *hop, const char *token)
{
	unsigned char opt[8];
	struct target t;
	int tcp = !strcmp(proto, "tcp"), fd, r;

	if ((!tcp && strcmp(proto, "udp")) || parse_target(addr, port, &t) < 0 ||
	    ip_option(opt, hop) < 0 || (t.family == AF_INET6 && !t.mapped))
		return usage();
	fd = socket(t.family, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail("socket", errno);
	set_timeouts(fd, TIMEOUT_S);
	if (setsockopt(fd, IPPROTO_IP, IP_OPTIONS, opt, sizeof(opt)) < 0)
		return fail("setsockopt", errno);
	if (!tcp) {
		if (sendto(fd, token, strlen(token), 0, (struct sockaddr *)&t.ss, t.len) < 0)
			return fail("sendto", errno);
	} else {
		r = connect_bounded(fd, (struct sockaddr *)&t.ss, t.len, TIMEOUT_S);
		if (r < 0)
			return fail("connect", -r);
		r = stream_exchange(fd, token, NULL, 0);
		if (r < 0)
			return fail("exchange", -r);
	}
	close(fd);
	return ok(NULL);
}

static int do_ipopts_cmsg(const char *addr, const char *port, const char *hop,
			  const char *token)
{
	char cbuf[CMSG_SPACE(8)];
	struct iovec iov = { .iov_base = (void *)token, .iov_len = strlen(token) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	unsigned char opt[8];
	struct target t;
	int fd;

	if (parse_target(addr, port, &t) < 0 || ip_option(opt, hop) < 0 ||
	    (t.family == AF_INET6 && !t.mapped))
		return usage();
	memset(cbuf, 0, sizeof(cbuf));
	msg.msg_name = &t.ss;
	msg.msg_namelen = t.len;
	msg.msg_control = cbuf;
	msg.msg_controllen = CMSG_SPACE(sizeof(opt));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = IPPROTO_IP;
	cm->cmsg_type = IP_RETOPTS;
	cm->cmsg_len = CMSG_LEN(sizeof(opt));
	memcpy(CMSG_DATA(cm), opt, sizeof(opt));
	fd = socket(t.family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail("socket", errno);
	if (sendmsg(fd, &msg, 0) < 0)
		return fail("sendmsg", errno);
	close(fd);
	return ok(NULL);
}

/* A segment routing header (type 4) with two segments: the final
 * destination (segments[0], the kernel writes it) and @hop, where the
 * packet goes first (segments_left 1). */
static void srh(unsigned char rh[40], const struct in6_addr *dst, const struct in6_addr *hop)
{
	memset(rh, 0, 40);
	rh[1] = 4;	/* hdrlen: (40 / 8) - 1 */
	rh[2] = 4;	/* type 4: segment routing */
	rh[3] = 1;	/* segments_left */
	rh[4] = 1;	/* first_segment (last entry) */
	memcpy(rh + 8, dst, 16);
	memcpy(rh + 24, hop, 16);
}

static int do_rthdr(const char *addr, const char *port, const char *hop,
		    const char *token, int as_cmsg)
{
	struct iovec iov = { .iov_base = (void *)token, .iov_len = strlen(token) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	char cbuf[CMSG_SPACE(24)];
	unsigned char rh[40], rh2[24];
	struct cmsghdr *cm;
	struct in6_addr h;
	struct target t;
	int fd;

	if (parse_target(addr, port, &t) < 0 || t.family != AF_INET6 || t.mapped ||
	    inet_pton(AF_INET6, hop, &h) != 1)
		return usage();
	fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail("socket", errno);
	msg.msg_name = &t.ss;
	msg.msg_namelen = t.len;
	if (!as_cmsg) {
		srh(rh, &((struct sockaddr_in6 *)&t.ss)->sin6_addr, &h);
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_RTHDR, rh, sizeof(rh)) < 0)
			return fail("setsockopt", errno);
	} else {
		/* Type 2 (Mobile IPv6), the only type a cmsg may carry. */
		memset(rh2, 0, sizeof(rh2));
		rh2[1] = 2;	/* hdrlen */
		rh2[2] = 2;	/* type 2 */
		rh2[3] = 1;	/* segments_left */
		memcpy(rh2 + 8, &h, 16);
		memset(cbuf, 0, sizeof(cbuf));
		msg.msg_control = cbuf;
		msg.msg_controllen = CMSG_SPACE(sizeof(rh2));
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = IPPROTO_IPV6;
		cm->cmsg_type = IPV6_RTHDR;
		cm->cmsg_len = CMSG_LEN(sizeof(rh2));
		memcpy(CMSG_DATA(cm), rh2, sizeof(rh2));
	}
	if (sendmsg(fd, &msg, 0) < 0)
		return fail("sendmsg", errno);
	close(fd);
	return ok(NULL);
}

static int do_sockopt(const char *name)
{
	unsigned char rr[8] = { 7, 7, 4, 0, 0, 0, 0, 0 };	/* record route, 1 slot */
	int fd, one = 1, r;

	if (!strcmp(name, "v6-2292rthdr") || !strcmp(name, "v6-2292pktoptions") ||
	    !strcmp(name, "v6sock-ipoptions"))
		fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	else if (!strcmp(name, "v4-ipoptions-rr"))
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	else
		return usage();
	if (fd < 0)
		return fail("socket", errno);
	if (!strcmp(name, "v6-2292rthdr"))
		r = setsockopt(fd, IPPROTO_IPV6, IPV6_2292RTHDR, &one, sizeof(one));
	else if (!strcmp(name, "v6-2292pktoptions"))
		r = setsockopt(fd, IPPROTO_IPV6, IPV6_2292PKTOPTIONS, NULL, 0);
	else
		r = setsockopt(fd, IPPROTO_IP, IP_OPTIONS, rr, sizeof(rr));
	if (r < 0)
		return fail("setsockopt", errno);
	close(fd);
	return ok(NULL);
}

/* ---- forged sources ------------------------------------------------------- */

#ifndef IPV6_FREEBIND
#define IPV6_FREEBIND 78
#endif
#ifndef IPV6_TRANSPARENT
#define IPV6_TRANSPARENT 75
#endif

/*
 * forge HOW SRC DST PORT TOKEN: a packet to DST:PORT whose source is SRC,
 * an address that is not this host's. HOW: udp6-freebind (IPV6_FREEBIND,
 * bind SRC, sendto), udp6-ipfreebind (IP_FREEBIND on the IPv6 socket),
 * tcp6-freebind (bind SRC, connect: the SYN carries it), udp6-pktinfo
 * (IPV6_FREEBIND, then SRC in an IPV6_PKTINFO cmsg), udp6-transparent
 * (IPV6_TRANSPARENT, which wants CAP_NET_ADMIN), udp4-freebind,
 * tcp4-freebind, udp4-pktinfo (ipi_spec_dst); with "-nonlocal" in place of
 * the option (udp6-nonlocal, udp6-pktinfo-nonlocal...) no option is set:
 * what net.ipv*.ip_nonlocal_bind=1 allows. "ok" once the system call that
 * sends (or starts the connect) succeeded.
 */
static int do_forge(const char *how, const char *src, const char *dst,
		    const char *port, const char *token)
{
	struct target s, d;
	int v6 = strstr(how, "6-") != NULL, tcp = !strncmp(how, "tcp", 3);
	int one = 1, fd, r;

	if (parse_target(src, "0", &s) < 0 || parse_target(dst, port, &d) < 0 ||
	    s.family != d.family || (s.family == AF_INET6) != v6)
		return usage();
	fd = socket(d.family, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail("socket", errno);
	set_timeouts(fd, 2);
	if (strstr(how, "-nonlocal"))
		r = 0;		/* net.ipv*.ip_nonlocal_bind=1 needs no option */
	else if (strstr(how, "-ipfreebind"))
		r = setsockopt(fd, SOL_IP, IP_FREEBIND, &one, sizeof(one));
	else if (strstr(how, "-transparent"))
		r = setsockopt(fd, SOL_IPV6, IPV6_TRANSPARENT, &one, sizeof(one));
	else if (v6)
		r = setsockopt(fd, SOL_IPV6, IPV6_FREEBIND, &one, sizeof(one));
	else
		r = setsockopt(fd, SOL_IP, IP_FREEBIND, &one, sizeof(one));
	if (r < 0)
		return fail("setsockopt", errno);
	if (strstr(how, "pktinfo")) {
		char cbuf[CMSG_SPACE(sizeof(struct in6_pktinfo))] = { 0 };
		struct iovec iov = { (void *)token, strlen(token) };
		struct msghdr mh = {
			.msg_name = &d.ss, .msg_namelen = d.len,
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
		};
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

		if (v6) {
			struct in6_pktinfo pi = {
				.ipi6_addr = ((struct sockaddr_in6 *)&s.ss)->sin6_addr,
			};

			cm->cmsg_level = SOL_IPV6;
			cm->cmsg_type = IPV6_PKTINFO;
			cm->cmsg_len = CMSG_LEN(sizeof(pi));
			memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
		} else {
			struct in_pktinfo pi = {
				.ipi_spec_dst = ((struct sockaddr_in *)&s.ss)->sin_addr,
			};

			cm->cmsg_level = SOL_IP;
			cm->cmsg_type = IP_PKTINFO;
			cm->cmsg_len = CMSG_LEN(sizeof(pi));
			memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
			mh.msg_controllen = CMSG_SPACE(sizeof(pi));
		}
		if (sendmsg(fd, &mh, 0) < 0)
			return fail("sendmsg", errno);
		return ok(NULL);
	}
	if (bind(fd, (struct sockaddr *)&s.ss, s.len) < 0)
		return fail("bind", errno);
	if (tcp) {
		fcntl(fd, F_SETFL, O_NONBLOCK);
		if (connect(fd, (struct sockaddr *)&d.ss, d.len) < 0 &&
		    errno != EINPROGRESS)
			return fail("connect", errno);
		usleep(300 * 1000);	/* the SYN and a retransmit or two */
		return ok(NULL);
	}
	if (sendto(fd, token, strlen(token), 0, (struct sockaddr *)&d.ss, d.len) < 0)
		return fail("sendto", errno);
	return ok(NULL);
}

/* ---- multicast membership ------------------------------------------------ */

#ifndef MCAST_MSFILTER
#define MCAST_MSFILTER 48
#endif

/* An IPv4 or IPv6 group or source into @ss; the family, or -1. */
static int mcast_addr(const char *text, struct sockaddr_storage *ss)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, text, &a4->sin_addr) == 1)
		return a4->sin_family = AF_INET;
	if (inet_pton(AF_INET6, text, &a6->sin6_addr) == 1)
		return a6->sin6_family = AF_INET6;
	return -1;
}

/*
 * mcast HOW IFNAME GROUP [SOURCE]: join GROUP on IFNAME and hold 1.5 s,
 * while the kernel sends its membership reports (IGMPv3/MLDv2), which
 * carry GROUP (and SOURCE) whoever asked. HOW: ip-add (IP_ADD_MEMBERSHIP;
 * ip-add-big: in an 8 KiB buffer, past what a setsockopt program sees),
 * ip-add-source (IP_ADD_SOURCE_MEMBERSHIP), ipv6-join (IPV6_JOIN_GROUP),
 * join (MCAST_JOIN_GROUP, either family), join-source
 * (MCAST_JOIN_SOURCE_GROUP), block-source (join, then MCAST_BLOCK_SOURCE),
 * msfilter (MCAST_MSFILTER: include SOURCE). "ok" or where it failed.
 */
static int do_mcast(const char *how, const char *ifname, const char *group,
		    const char *source)
{
	struct group_source_req gsr = { 0 };
	struct group_req gr = { 0 };
	int family, level, fd, r;
	unsigned int ifindex = if_nametoindex(ifname);

	family = mcast_addr(group, &gr.gr_group);
	if (!ifindex || family < 0 ||
	    (source && mcast_addr(source, &gsr.gsr_source) != family))
		return usage();
	level = family == AF_INET ? SOL_IP : SOL_IPV6;
	gr.gr_interface = ifindex;
	gsr.gsr_interface = ifindex;
	gsr.gsr_group = gr.gr_group;
	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail("socket", errno);
	if (!strcmp(how, "ip-add") || !strcmp(how, "ip-add-big")) {
		/* -big: the same join in an 8 KiB buffer, more than the page
		 * a cgroup/setsockopt program is shown. */
		static char big[8192];
		struct ip_mreqn m = { .imr_ifindex = (int)ifindex };

		m.imr_multiaddr = ((struct sockaddr_in *)&gr.gr_group)->sin_addr;
		memcpy(big, &m, sizeof(m));
		r = how[6] ? setsockopt(fd, SOL_IP, IP_ADD_MEMBERSHIP, big, sizeof(big)) :
			     setsockopt(fd, SOL_IP, IP_ADD_MEMBERSHIP, &m, sizeof(m));
	} else if (!strcmp(how, "ip-add-source") && source) {
		struct ip_mreq_source m = { 0 };
		struct ifreq ifr = { 0 };

		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
		if (ioctl(fd, SIOCGIFADDR, &ifr) < 0)
			return fail("SIOCGIFADDR", errno);
		m.imr_multiaddr = ((struct sockaddr_in *)&gr.gr_group)->sin_addr;
		m.imr_sourceaddr = ((struct sockaddr_in *)&gsr.gsr_source)->sin_addr;
		m.imr_interface = ((struct sockaddr_in *)&ifr.ifr_addr)->sin_addr;
		r = setsockopt(fd, SOL_IP, IP_ADD_SOURCE_MEMBERSHIP, &m, sizeof(m));
	} else if (!strcmp(how, "ipv6-join")) {
		struct ipv6_mreq m = { .ipv6mr_interface = ifindex };

		m.ipv6mr_multiaddr = ((struct sockaddr_in6 *)&gr.gr_group)->sin6_addr;
		r = setsockopt(fd, SOL_IPV6, IPV6_JOIN_GROUP, &m, sizeof(m));
	} else if (!strcmp(how, "join")) {
		r = setsockopt(fd, level, MCAST_JOIN_GROUP, &gr, sizeof(gr));
	} else if (!strcmp(how, "join-source") && source) {
		r = setsockopt(fd, level, MCAST_JOIN_SOURCE_GROUP, &gsr, sizeof(gsr));
	} else if (!strcmp(how, "block-source") && source) {
		r = setsockopt(fd, level, MCAST_JOIN_GROUP, &gr, sizeof(gr));
		if (r < 0)
			return fail("setsockopt(join)", errno);
		r = setsockopt(fd, level, MCAST_BLOCK_SOURCE, &gsr, sizeof(gsr));
	} else if (!strcmp(how, "msfilter") && source) {
		char buf[sizeof(struct group_filter) + sizeof(struct sockaddr_storage)] = { 0 };
		struct group_filter *gf = (struct group_filter *)buf;

		gf->gf_interface = ifindex;
		gf->gf_group = gr.gr_group;
		gf->gf_fmode = MCAST_INCLUDE;
		gf->gf_numsrc = 1;
		gf->gf_slist[0] = gsr.gsr_source;
		r = setsockopt(fd, level, MCAST_MSFILTER, buf, sizeof(buf));
	} else {
		return usage();
	}
	if (r < 0)
		return fail("setsockopt", errno);
	usleep(1500 * 1000);
	return ok(NULL);
}

/* ---- terminals ------------------------------------------------------------ */

/* Push @text and a newline into @fd's input queue, byte by byte, as if
 * typed: what a shell reading that terminal runs next. */
static int sti(int fd, const char *text)
{
	char nl = '\n';

	for (const char *c = text; *c; c++)
		if (ioctl(fd, TIOCSTI, c) < 0)
			return -errno;
	return ioctl(fd, TIOCSTI, &nl) < 0 ? -errno : 0;
}

/* tiocsti FD|tty|pts TEXT: FD, /dev/tty, or every /dev/pts/N we can open. */
static int do_tiocsti(const char *where, const char *text)
{
	char path[64];
	int fd, r, opened = 0;

	if (!strcmp(where, "tty") || isdigit((unsigned char)where[0])) {
		fd = where[0] == 't' ? open("/dev/tty", O_RDWR | O_NOCTTY) : atoi(where);
		if (fd < 0)
			return fail("open", errno);
		r = sti(fd, text);
		return r < 0 ? fail("ioctl", -r) : ok(NULL);
	}
	/* Every terminal of the host it can open, COMMAND's own included. */
	for (int n = 0; n < 256; n++) {
		snprintf(path, sizeof(path), "/dev/pts/%d", n);
		fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK);
		if (fd < 0)
			continue;
		opened++;
		r = sti(fd, text);
		close(fd);
		if (r == 0) {
			snprintf(path, sizeof(path), "/dev/pts/%d", n);
			return ok(path);
		}
	}
	return opened ? fail("ioctl", EPERM) : fail("open", EACCES);
}

static int do_tioclinux(const char *fds)
{
	char sub = 7;	/* TIOCL_GETMOUSEREPORTING: a harmless query */

	if (ioctl(atoi(fds), TIOCLINUX, &sub) < 0)
		return fail("ioctl", errno);
	return ok(NULL);
}

/* ---- system calls --------------------------------------------------------- */

static int do_io_uring(void)
{
	struct io_uring_params p;
	long fd;

	memset(&p, 0, sizeof(p));
	fd = syscall(SYS_io_uring_setup, 4, &p);
	if (fd < 0)
		return fail("io_uring_setup", errno);
	close((int)fd);
	return ok(NULL);
}

static int reap_child(long pid)
{
	int status;

	if (waitpid((pid_t)pid, &status, __WALL) < 0)
		return fail("waitpid", errno);
	return ok(NULL);
}

static int do_userns(const char *how, const char *arg)
{
	long r;

	if (!strcmp(how, "unshare-user")) {
		if (syscall(SYS_unshare, CLONE_NEWUSER) < 0)
			return fail("unshare", errno);
		return ok(NULL);
	}
	if (!strcmp(how, "clone-user")) {
		r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
		if (r < 0)
			return fail("clone", errno);
		if (r == 0)
			syscall(SYS_exit, 0);
		return reap_child(r);
	}
	if (!strcmp(how, "clone3")) {
		/* struct clone_args, CLONE_ARGS_SIZE_VER0 (64 bytes). */
		uint64_t args[8] = { 0 };

		if (!arg || (strcmp(arg, "user") && strcmp(arg, "plain")))
			return usage();
		args[0] = !strcmp(arg, "user") ? CLONE_NEWUSER : 0;	/* flags */
		args[4] = SIGCHLD;					/* exit_signal */
		r = syscall(SYS_clone3, args, sizeof(args));
		if (r < 0)
			return fail("clone3", errno);
		if (r == 0)
			syscall(SYS_exit, 0);
		return reap_child(r);
	}
	if (!strcmp(how, "int80-unshare")) {
#ifdef __x86_64__
		/* A kernel without the i386 ABI (IA32_EMULATION off, or
		 * ia32_emulation=0) faults on int $0x80: asked in a child,
		 * so that the fault is an answer ("noabi"), not our death. */
		int ws;
		pid_t pid = fork();

		if (pid < 0)
			return fail("fork", errno);
		if (pid == 0) {
			__asm__ volatile("int $0x80"
					 : "=a"(r)
					 : "a"(310L), "b"((long)CLONE_NEWUSER)
					 : "memory", "r8", "r9", "r10", "r11");
			_exit(r < 0 && -r < 256 ? (int)-r : r < 0 ? 255 : 0);
		}
		if (waitpid(pid, &ws, 0) < 0)
			return fail("waitpid", errno);
		if (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGSEGV) {
			printf("noabi\n");
			return 1;
		}
		if (!WIFEXITED(ws))
			return fail("unshare(int80)", EINTR);
		if (WEXITSTATUS(ws))
			return fail("unshare(int80)", WEXITSTATUS(ws));
		return ok(NULL);
#else
		return fail("unshare(int80)", ENOSYS);
#endif
	}
	if (!strcmp(how, "x32-unshare")) {
#ifdef __x86_64__
		if (syscall(0x40000000L | SYS_unshare, CLONE_NEWUSER) < 0)
			return fail("unshare(x32)", errno);
		return ok(NULL);
#else
		return fail("unshare(x32)", ENOSYS);
#endif
	}
	return usage();
}

static int do_pidfd_getfd(const char *pids, const char *fds)
{
	long pid = atol(pids), pidfd, fd;

	if (pid == 0)
		pid = getpid();
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return fail("pidfd_open", errno);
	fd = syscall(SYS_pidfd_getfd, pidfd, atol(fds), 0);
	if (fd < 0)
		return fail("pidfd_getfd", errno);
	return ok(NULL);
}

static int do_ptrace(const char *pids)
{
	long pid = atol(pids);
	pid_t child = 0;

	if (pid == 0) {		/* control: a child of our own */
		child = fork();
		if (child < 0)
			return fail("fork", errno);
		if (child == 0) {
			sleep(TIMEOUT_S);
			_exit(0);
		}
		pid = child;
	}
	if (ptrace(PTRACE_SEIZE, (pid_t)pid, 0, 0) < 0) {
		int e = errno;

		if (child)
			kill(child, SIGKILL);
		return fail("ptrace", e);
	}
	if (child) {
		kill(child, SIGKILL);
		waitpid(child, NULL, __WALL);
	}
	/* Exiting detaches any tracee. */
	return ok(NULL);
}

static int do_bpf(const char *what, const char *path)
{
	union bpf_attr attr;
	long r;

	memset(&attr, 0, sizeof(attr));
	if (!strcmp(what, "bpf-objget")) {
		attr.pathname = (uint64_t)(uintptr_t)path;
		r = syscall(SYS_bpf, BPF_OBJ_GET, &attr, sizeof(attr));
	} else {
		r = syscall(SYS_bpf, BPF_LINK_GET_NEXT_ID, &attr, sizeof(attr));
	}
	if (r < 0)
		return fail("bpf", errno);
	return ok(NULL);
}

/* ---- files ---------------------------------------------------------------- */

static int do_file(const char *op, const char *path, const char *data)
{
	int fd;

	if (!strcmp(op, "open")) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return fail("open", errno);
		close(fd);
		return ok(NULL);
	}
	if (!strcmp(op, "write")) {
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return fail("open", errno);
		if (write(fd, data, strlen(data)) < 0)
			return fail("write", errno);
		close(fd);
		return ok(NULL);
	}
	if (!strcmp(op, "mkdir"))
		return mkdir(path, 0755) < 0 ? fail("mkdir", errno) : ok(NULL);
	if (!strcmp(op, "unlink"))
		return unlink(path) < 0 ? fail("unlink", errno) : ok(NULL);
	if (!strcmp(op, "rmdir"))
		return rmdir(path) < 0 ? fail("rmdir", errno) : ok(NULL);
	if (!strcmp(op, "umount"))
		return umount2(path, MNT_DETACH) < 0 ? fail("umount", errno) : ok(NULL);
	return usage();
}

/* A path component swapped while someone walks it (the view's set-up). */
static int do_exchange(const char *a, const char *b, const char *seconds)
{
	time_t end = time(NULL) + atoi(seconds);
	unsigned long n = 0;

	while (time(NULL) < end)
		for (int i = 0; i < 1000; i++, n++)
			if (renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) < 0)
				return fail("renameat2", errno);
	fprintf(stderr, "exchange: %lu swaps\n", n);
	return ok(NULL);
}

#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452	/* Linux 6.6; the same number on every arch */
#endif
#ifndef __NR_openat2
#define __NR_openat2 437
#endif

/* One raw syscall per CALL (libc might pick another), asking for set-id. */
static long setid_call(const char *call, const char *path)
{
	const mode_t m = 06755;
	const int cr = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC;
	long r = -1;
	int fd;

	if (!strcmp(call, "chmod"))
		return syscall(SYS_chmod, path, m);
	if (!strcmp(call, "fchmodat"))
		return syscall(SYS_fchmodat, AT_FDCWD, path, m);
	if (!strcmp(call, "fchmodat2"))
		return syscall(__NR_fchmodat2, AT_FDCWD, path, m, 0);
	if (!strcmp(call, "fchmod")) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		r = syscall(SYS_fchmod, fd, m);
		close(fd);
		return r;
	}
	if (!strcmp(call, "mkdir"))
		return syscall(SYS_mkdir, path, 02755);
	if (!strcmp(call, "mkdirat"))
		return syscall(SYS_mkdirat, AT_FDCWD, path, 02755);
	if (!strcmp(call, "mknod"))
		return syscall(SYS_mknod, path, S_IFREG | m, 0);
	if (!strcmp(call, "mknodat"))
		return syscall(SYS_mknodat, AT_FDCWD, path, S_IFREG | m, 0);
	if (!strcmp(call, "open"))
		r = syscall(SYS_open, path, cr, m);
	else if (!strcmp(call, "openat"))
		r = syscall(SYS_openat, AT_FDCWD, path, cr, m);
	else if (!strcmp(call, "creat"))
		r = syscall(SYS_creat, path, m);
	else if (!strcmp(call, "openat2")) {
		/* struct open_how: flags, mode, resolve (u64 each) */
		uint64_t how[3] = { (uint64_t)cr, m, 0 };

		r = syscall(__NR_openat2, AT_FDCWD, path, how, sizeof(how));
	} else {
		errno = EINVAL;
		return -1;
	}
	if (r >= 0)
		close((int)r);
	return r < 0 ? -1 : 0;
}

static int do_setid(const char *call, const char *path)
{
	struct stat st;
	char mode[16];

	if (setid_call(call, path) < 0)
		return fail(call, errno);
	if (stat(path, &st) < 0)
		return fail("stat", errno);
	snprintf(mode, sizeof(mode), "%04o", (unsigned int)(st.st_mode & 07777));
	return ok(mode);
}

static void put_acl_entry(unsigned char *p, uint16_t tag, uint16_t perm, uint32_t id)
{
	p[0] = (unsigned char)tag; p[1] = (unsigned char)(tag >> 8);
	p[2] = (unsigned char)perm; p[3] = (unsigned char)(perm >> 8);
	p[4] = (unsigned char)id; p[5] = (unsigned char)(id >> 8);
	p[6] = (unsigned char)(id >> 16); p[7] = (unsigned char)(id >> 24);
}

/* system.posix_acl_access: version 2, then {tag, perm, id} entries sorted
 * by tag: USER_OBJ, USER, GROUP_OBJ, MASK, OTHER. */
static int do_acl_user(const char *path, const char *uid)
{
	unsigned char acl[4 + 5 * 8] = { 2, 0, 0, 0 };

	put_acl_entry(acl + 4, 0x01, 6, 0xffffffff);
	put_acl_entry(acl + 12, 0x02, 6, (uint32_t)atol(uid));
	put_acl_entry(acl + 20, 0x04, 6, 0xffffffff);
	put_acl_entry(acl + 28, 0x10, 6, 0xffffffff);
	put_acl_entry(acl + 36, 0x20, 0, 0xffffffff);
	if (setxattr(path, "system.posix_acl_access", acl, sizeof(acl), 0) < 0)
		return fail("setxattr", errno);
	return ok(NULL);
}

static int do_fds(void)
{
	char out[1024] = "", path[64], target[256];
	size_t used = 0;
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	ssize_t n;
	int fd;

	if (!d)
		return fail("opendir", errno);
	while ((de = readdir(d))) {
		fd = atoi(de->d_name);
		if (de->d_name[0] == '.' || fd <= 2 || fd == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		fprintf(stderr, "redteam: fd %d -> %s\n", fd, target);
		used += (size_t)snprintf(out + used, sizeof(out) - used, " %d", fd);
		if (used >= sizeof(out) - 8)
			break;
	}
	closedir(d);
	printf("ok%s\n", used ? out : " none");
	return 0;
}

static int do_fd_write(const char *fds, const char *token)
{
	if (write(atoi(fds), token, strlen(token)) < 0)
		return fail("write", errno);
	return ok(NULL);
}

/* ---- services and clients ------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int bound_socket(const struct target *t, int type)
{
	int fd = socket(t->family, type | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (t->family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&t->ss, t->len) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* @path holds the decimal @port (then it exists: the readiness signal). */
static int write_file(const char *path, unsigned int port)
{
	char tmp[PATH_MAX], text[16];
	int fd, n = snprintf(text, sizeof(text), "%u\n", port);

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, text, (size_t)n) != n || close(fd) < 0)
		return -1;
	return rename(tmp, path);
}

static int do_serve(int tcp, const char *addr, const char *port, const char *secs,
		    const char *token, const char *ready)
{
	char reply[128], peer[ADDR_LEN], out[1024] = "", buf[512];
	struct sockaddr_storage ss;
	socklen_t sl;
	struct target t;
	double deadline = now_s() + atof(secs), left;
	size_t used = 0;
	int fd, c, accepted = 0;
	ssize_t n;

	if (tcp && (!strcmp(addr, "auto4") || !strcmp(addr, "auto6"))) {
		/* listen() on a socket never bound: the kernel picks the port
		 * (and the wildcard address) itself, no bind() involved. */
		fd = socket(addr[4] == '4' ? AF_INET : AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || listen(fd, 16) < 0)
			return fail("listen", errno);
		sl = sizeof(ss);
		if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
			return fail("getsockname", errno);
		if (write_file(ready, ntohs(((struct sockaddr_in *)&ss)->sin_port)) < 0)
			return fail("ready", errno);
	} else {
		if (parse_target(addr, port, &t) < 0)
			return usage();
		fd = bound_socket(&t, tcp ? SOCK_STREAM : SOCK_DGRAM);
		if (fd < 0)
			return fail("bind", -fd);
		if (tcp && listen(fd, 16) < 0)
			return fail("listen", errno);
		sl = sizeof(ss);
		/* Port 0: the kernel's choice, which READYFILE then holds. */
		if (!strcmp(port, "0") &&
		    (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0 ||
		     write_file(ready, ntohs(((struct sockaddr_in *)&ss)->sin_port)) < 0))
			return fail("ready", errno);
		if (strcmp(port, "0") && touch(ready) < 0)
			return fail("ready", errno);
	}
	while ((left = deadline - now_s()) > 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (poll(&pfd, 1, (int)(left * 1000) + 1) <= 0)
			continue;
		sl = sizeof(ss);
		if (tcp) {
			c = accept4(fd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
			if (c < 0)
				continue;
			accepted++;
			format_sockaddr(&ss, peer, sizeof(peer));
			snprintf(reply, sizeof(reply), "%s@%s", token, peer);
			set_timeouts(c, 2);
			send(c, reply, strlen(reply), MSG_NOSIGNAL);
			shutdown(c, SHUT_WR);
			while (recv(c, buf, sizeof(buf), 0) > 0)
				;
			close(c);
		} else {
			n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&ss, &sl);
			if (n < 0)
				continue;
			format_sockaddr(&ss, peer, sizeof(peer));
			snprintf(reply, sizeof(reply), "%s@%s", token, peer);
			if (sendto(fd, reply, strlen(reply), 0, (struct sockaddr *)&ss, sl) < 0)
				used += (size_t)snprintf(out + used, sizeof(out) - used, "%s%s:%s",
							 used ? "," : "", peer, ename(errno));
			else
				used += (size_t)snprintf(out + used, sizeof(out) - used, "%s%s:ok",
							 used ? "," : "", peer);
			if (used >= sizeof(out) - 80)
				break;
		}
	}
	if (tcp)
		printf("ok accepted=%d\n", accepted);
	else
		printf("ok peers=%s\n", used ? out : "none");
	return 0;
}

/* ask-tcp / ask-udp: [-s SRC [-p SPORT]] [-c] [-m] ADDR PORT TOKEN */
static int do_ask(int tcp, int argc, char **argv)
{
	char reply[512] = "", cbuf[CMSG_SPACE(sizeof(int))], detail[600];
	struct iovec iov;
	struct msghdr msg = { 0 };
	struct target t, src;
	const char *srcaddr = NULL, *srcport = "0";
	int i = 2, connected = 0, cmsg = 0, fd, r;
	ssize_t n;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-s") && i + 1 < argc)
			srcaddr = argv[++i];
		else if (!strcmp(argv[i], "-p") && i + 1 < argc)
			srcport = argv[++i];
		else if (!strcmp(argv[i], "-c"))
			connected = 1;
		else if (!strcmp(argv[i], "-m"))
			cmsg = connected = 1;
		else
			return usage();
	}
	if (argc - i != 3 || parse_target(argv[i], argv[i + 1], &t) < 0 ||
	    (srcaddr && (parse_target(srcaddr, srcport, &src) < 0 || src.family != t.family)))
		return usage();
	fd = socket(t.family, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail("socket", errno);
	set_timeouts(fd, 3);
	if (srcaddr && bind(fd, (struct sockaddr *)&src.ss, src.len) < 0)
		return fail("bind", errno);
	if (tcp) {
		r = connect_bounded(fd, (struct sockaddr *)&t.ss, t.len, 4);
		if (r < 0)
			return fail("connect", -r);
		r = stream_exchange(fd, argv[i + 2], reply, sizeof(reply));
		if (r < 0)
			return fail("exchange", -r);
	} else {
		iov.iov_base = argv[i + 2];
		iov.iov_len = strlen(argv[i + 2]);
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		if (connected) {
			if (connect(fd, (struct sockaddr *)&t.ss, t.len) < 0)
				return fail("connect", errno);
		} else {
			msg.msg_name = &t.ss;
			msg.msg_namelen = t.len;
		}
		if (cmsg)
			fill_ttl_cmsg(t.family == AF_INET6 && !t.mapped, &msg, cbuf, sizeof(cbuf));
		if (sendmsg(fd, &msg, 0) < 0)
			return fail("sendmsg", errno);
		n = recv(fd, reply, sizeof(reply) - 1, 0);
		if (n < 0)
			return fail("recv", errno == EAGAIN ? ETIMEDOUT : errno);
		reply[n] = '\0';
	}
	close(fd);
	printable(reply, strlen(reply));
	snprintf(detail, sizeof(detail), "%s", reply);
	return ok(detail);
}

static int do_echo(const char *ready, const char *addr, const char *port)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	struct target t;
	char buf[BUF_MAX];
	int lfd, ufd, c;
	ssize_t n;
	size_t got;

	if (parse_target(addr, port, &t) < 0)
		return usage();
	lfd = bound_socket(&t, SOCK_STREAM);
	if (lfd < 0)
		return fail("bind tcp", -lfd);
	ufd = bound_socket(&t, SOCK_DGRAM);
	if (ufd < 0)
		return fail("bind udp", -ufd);
	if (listen(lfd, 16) < 0)
		return fail("listen", errno);
	if (touch(ready) < 0)
		return fail("ready", errno);
	for (;;) {
		struct pollfd pfd[2] = { { .fd = lfd, .events = POLLIN },
					 { .fd = ufd, .events = POLLIN } };

		if (poll(pfd, 2, -1) < 0)
			continue;
		if (pfd[1].revents & POLLIN) {
			sl = sizeof(ss);
			n = recvfrom(ufd, buf, sizeof(buf), 0, (struct sockaddr *)&ss, &sl);
			if (n >= 0)
				sendto(ufd, buf, (size_t)n, 0, (struct sockaddr *)&ss, sl);
		}
		if (pfd[0].revents & POLLIN) {
			c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			if (c < 0)
				continue;
			set_timeouts(c, 2);
			got = 0;
			while (got < sizeof(buf) &&
			       (n = recv(c, buf + got, sizeof(buf) - got, 0)) > 0)
				got += (size_t)n;
			send(c, buf, got, MSG_NOSIGNAL);
			close(c);
		}
	}
}

/* PATH, or "@NAME" for an abstract name (no file, no owner, no mode). */
static int unix_addr(const char *path, struct sockaddr_un *sun, socklen_t *len)
{
	size_t n = strlen(path);

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (n >= sizeof(sun->sun_path))
		return -1;
	memcpy(sun->sun_path, path, n);
	if (path[0] == '@')
		sun->sun_path[0] = '\0';
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
			   (path[0] == '@' ? 0 : 1));
	return 0;
}

/* unix PATH TOKEN (stream) / unix-dgram PATH TOKEN (one datagram). */
static int do_unix(const char *path, const char *token, int type)
{
	struct sockaddr_un sun;
	socklen_t sl;
	int fd, r;

	if (unix_addr(path, &sun, &sl) < 0)
		return usage();
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail("socket", errno);
	set_timeouts(fd, 2);
	if (type == SOCK_DGRAM) {
		if (sendto(fd, token, strlen(token), 0, (struct sockaddr *)&sun, sl) < 0)
			return fail("sendto", errno);
		return ok(NULL);
	}
	if (connect(fd, (struct sockaddr *)&sun, sl) < 0)
		return fail("connect", errno);
	r = stream_exchange(fd, token, NULL, 0);
	if (r < 0)
		return fail("exchange", -r);
	close(fd);
	return ok(NULL);
}

#define UNIX_SINK_MAX 16

static int do_unix_sink(int argc, char **argv)
{
	struct pollfd pfd[UNIX_SINK_MAX];
	char buf[BUF_MAX], line[BUF_MAX + 256];
	int n = argc - 4, log, c, len;
	size_t got;
	ssize_t r;

	if (n < 1 || n > UNIX_SINK_MAX)
		return usage();
	log = open(argv[3], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log < 0)
		return fail("open log", errno);
	for (int i = 0; i < n; i++) {
		const char *path = argv[4 + i];
		int dgram = !strncmp(path, "dgram:", 6);
		struct sockaddr_un sun;
		socklen_t sl;

		if (dgram)
			path += 6;
		if (unix_addr(path, &sun, &sl) < 0)
			return usage();
		pfd[i].fd = socket(AF_UNIX, (dgram ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0);
		pfd[i].events = POLLIN;
		if (pfd[i].fd < 0)
			return fail("socket", errno);
		if (bind(pfd[i].fd, (struct sockaddr *)&sun, sl) < 0)
			return fail("bind", errno);
		if (path[0] != '@' && chmod(path, 0666) < 0)
			return fail("chmod", errno);
		if (!dgram && listen(pfd[i].fd, 16) < 0)
			return fail("listen", errno);
	}
	if (touch(argv[2]) < 0)
		return fail("ready", errno);
	for (;;) {
		if (poll(pfd, (nfds_t)n, -1) < 0)
			continue;
		for (int i = 0; i < n; i++) {
			if (!(pfd[i].revents & POLLIN))
				continue;
			if (!strncmp(argv[4 + i], "dgram:", 6)) {
				r = recv(pfd[i].fd, buf, 200, 0);
				got = r > 0 ? (size_t)r : 0;
				printable(buf, got);
				len = snprintf(line, sizeof(line), "unix %s data=%.*s\n",
					       argv[4 + i], (int)got, buf);
				if (write(log, line, (size_t)len) != len)
					return fail("write log", errno);
				continue;
			}
			c = accept4(pfd[i].fd, NULL, NULL, SOCK_CLOEXEC);
			if (c < 0)
				continue;
			set_timeouts(c, 2);
			got = 0;
			while (got < 200 && (r = recv(c, buf + got, 200 - got, 0)) > 0)
				got += (size_t)r;
			printable(buf, got);
			len = snprintf(line, sizeof(line), "unix %s data=%.*s\n",
				       argv[4 + i], (int)got, buf);
			if (write(log, line, (size_t)len) != len)
				return fail("write log", errno);
			close(c);
		}
	}
}

/*
 * What a DNS query at the world carries besides its name, for the capture
 * line: "dns=flags:0100,qtype:1,qclass:1,counts:1/0/0/1,opt:1232/00000000 "
 * (opt: payload size / the TTL word holding the DO bit; "-" without OPT).
 * @l4 is the UDP or TCP header; a TCP segment counts only when it starts a
 * message (length prefix). "" when the bytes are no query.
 */
static int dns_fields(char *out, size_t outlen, const unsigned char *l4,
		      size_t l4len, unsigned int proto)
{
	size_t hl = proto == IPPROTO_UDP ? 8 : 0, pos, end;
	const unsigned char *m;
	unsigned int counts[4], i;
	char opt[32] = "-";

	if (proto == IPPROTO_TCP) {
		if (l4len < 20)
			return 0;
		hl = (size_t)(l4[12] >> 4) * 4 + 2;	/* and the length */
	}
	if (l4len < hl + 12)
		return 0;
	m = l4 + hl;
	end = l4len - hl;
	for (i = 0; i < 4; i++)
		counts[i] = (unsigned int)(m[4 + 2 * i] << 8 | m[5 + 2 * i]);
	pos = 12;
	while (pos < end && m[pos] && m[pos] < 64)
		pos += (size_t)m[pos] + 1;
	if (pos + 5 > end || m[pos])
		return 0;
	pos += 5;
	/* The OPT record, if it is the first additional record of a plain
	 * query (no answer or authority records): root name, type 41. */
	if (counts[1] == 0 && counts[2] == 0 && counts[3] && pos + 11 <= end &&
	    m[pos] == 0 && m[pos + 1] == 0 && m[pos + 2] == 41)
		snprintf(opt, sizeof(opt), "%u/%02x%02x%02x%02x",
			 (unsigned int)(m[pos + 3] << 8 | m[pos + 4]),
			 m[pos + 5], m[pos + 6], m[pos + 7], m[pos + 8]);
	return snprintf(out, outlen,
			"dns=flags:%02x%02x,qtype:%u,qclass:%u,counts:%u/%u/%u/%u,opt:%s ",
			m[2], m[3], (unsigned int)(m[pos - 4] << 8 | m[pos - 3]),
			(unsigned int)(m[pos - 2] << 8 | m[pos - 1]),
			counts[0], counts[1], counts[2], counts[3], opt);
}

static int do_capture(const char *logpath, const char *ifname)
{
	struct sockaddr_ll sll = { 0 };
	unsigned char pkt[65536];
	char line[3 * 65536 / 2 + 256], src[ADDR_LEN], dst[ADDR_LEN];
	int fd, log, rcvbuf = 8 << 20, len;
	socklen_t sl;
	ssize_t n;

	log = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log < 0)
		return fail("open log", errno);
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (fd < 0)
		return fail("socket", errno);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)if_nametoindex(ifname);
	if (!sll.sll_ifindex)
		return fail("if_nametoindex", errno);
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		return fail("bind", errno);
	len = snprintf(line, sizeof(line), "ready pid=%d\n", (int)getpid());
	if (write(log, line, (size_t)len) != len)
		return fail("write log", errno);
	for (;;) {
		unsigned char *l3;
		unsigned int proto = 0, sport = 0, dport = 0, flag = 0, ethertype;
		const char *fam = "other";
		size_t l3len, hl = 0, used;

		sl = sizeof(sll);
		n = recvfrom(fd, pkt, sizeof(pkt), 0, (struct sockaddr *)&sll, &sl);
		if (n < 14 || sll.sll_pkttype == PACKET_OUTGOING)
			continue;
		ethertype = (unsigned int)(pkt[12] << 8 | pkt[13]);
		l3 = pkt + 14;
		l3len = (size_t)n - 14;
		src[0] = dst[0] = '\0';
		if (ethertype == ETH_P_IP && l3len >= 20) {
			fam = "v4";
			hl = (size_t)(l3[0] & 0xf) * 4;
			flag = hl > 20;
			proto = l3[9];
			inet_ntop(AF_INET, l3 + 12, src, sizeof(src));
			inet_ntop(AF_INET, l3 + 16, dst, sizeof(dst));
		} else if (ethertype == ETH_P_IPV6 && l3len >= 40) {
			fam = "v6";
			hl = 40;
			proto = l3[6];
			flag = proto == 43;
			inet_ntop(AF_INET6, l3 + 8, src, sizeof(src));
			inet_ntop(AF_INET6, l3 + 24, dst, sizeof(dst));
		}
		if ((proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_UDPLITE) &&
		    hl && l3len >= hl + 4) {
			sport = (unsigned int)(l3[hl] << 8 | l3[hl + 1]);
			dport = (unsigned int)(l3[hl + 2] << 8 | l3[hl + 3]);
		}
		len = snprintf(line, sizeof(line),
			       "pkt %s %s:%u > %s:%u proto=%u %s=%u len=%zu ",
			       fam, src, sport, dst, dport, proto,
			       !strcmp(fam, "v6") ? "rh" : "opts", flag, l3len);
		if (proto == IPPROTO_TCP && hl && l3len >= hl + 14)
			len += snprintf(line + len, sizeof(line) - (size_t)len,
					"tcpflags=0x%02x ", l3[hl + 13]);
		if (dport == 53 && hl && (proto == IPPROTO_UDP || proto == IPPROTO_TCP))
			len += dns_fields(line + len, sizeof(line) - (size_t)len,
					  l3 + hl, l3len - hl, proto);
		len += snprintf(line + len, sizeof(line) - (size_t)len, "data=");
		used = (size_t)len;
		for (size_t i = 0; i < l3len && used < sizeof(line) - 2; i++)
			line[used++] = l3[i] > ' ' && l3[i] <= '~' ? (char)l3[i] : '.';
		line[used++] = '\n';
		if (write(log, line, used) != (ssize_t)used)
			return fail("write log", errno);
	}
}

/* ---- DNS beyond the name ------------------------------------------------- */

static size_t put_name(unsigned char *p, const char *name)
{
	size_t n = 0, l;
	const char *dot;

	while (*name) {
		dot = strchr(name, '.');
		l = dot ? (size_t)(dot - name) : strlen(name);
		p[n++] = (unsigned char)l;
		memcpy(p + n, name, l);
		n += l;
		name += l;
		if (*name == '.')
			name++;
	}
	p[n++] = 0;
	return n;
}

/* A TXT record owned by the root name, carrying @tok. */
static size_t put_txt(unsigned char *p, const char *tok, size_t tl)
{
	unsigned char rr[11] = { 0, 0, 16, 0, 1, 0, 0, 0, 0 };

	rr[9] = (unsigned char)((tl + 1) >> 8);
	rr[10] = (unsigned char)(tl + 1);
	memcpy(p, rr, sizeof(rr));
	p[11] = (unsigned char)tl;
	memcpy(p + 12, tok, tl);
	return 12 + tl;
}

static int do_dns_smuggle(const char *server, const char *name, const char *tok,
			  const char *kind)
{
	static const char *rcodes[] = { "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN",
					"NOTIMP", "REFUSED" };
	unsigned char q[1024] = { 0x52, 0x17, 0x01, 0, 0, 1 }, a[4096];
	size_t tl = strlen(tok), n = 12;
	struct target t;
	char detail[32];
	ssize_t r;
	int fd;

	if (parse_target(server, "53", &t) < 0 || tl > 200 || strlen(name) > 200)
		return usage();
	n += put_name(q + n, name);
	q[n++] = 0; q[n++] = 1;		/* A */
	q[n++] = 0; q[n++] = 1;		/* IN */
	if (!strncmp(kind, "qtype=", 6)) {
		long v = strtol(kind + 6, NULL, 0);

		q[n - 4] = (unsigned char)(v >> 8);
		q[n - 3] = (unsigned char)v;
	} else if (!strncmp(kind, "flags=", 6)) {
		long v = strtol(kind + 6, NULL, 0);	/* header bytes 2-3 */

		q[2] = (unsigned char)(v >> 8);
		q[3] = (unsigned char)v;
	} else if (!strncmp(kind, "edns-size=", 10) || !strcmp(kind, "edns-do")) {
		long v = kind[5] == 's' ? strtol(kind + 10, NULL, 0) : 1232;
		unsigned char opt[11] = { 0, 0, 41, 0, 0, 0, 0, 0, 0, 0, 0 };

		q[11] = 1;
		opt[3] = (unsigned char)(v >> 8);
		opt[4] = (unsigned char)v;
		if (kind[5] == 'd')
			opt[7] = 0x80;	/* DO */
		memcpy(q + n, opt, sizeof(opt));
		n += sizeof(opt);
	} else if (!strcmp(kind, "edns")) {
		unsigned char opt[11] = { 0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0 };

		q[11] = 1;		/* ARCOUNT */
		opt[9] = (unsigned char)((tl + 4) >> 8);
		opt[10] = (unsigned char)(tl + 4);
		memcpy(q + n, opt, sizeof(opt));
		n += sizeof(opt);
		q[n++] = 0xfd; q[n++] = 0xe9;	/* option 65001 (local use) */
		q[n++] = (unsigned char)(tl >> 8);
		q[n++] = (unsigned char)tl;
		memcpy(q + n, tok, tl);
		n += tl;
	} else if (!strcmp(kind, "additional")) {
		q[11] = 1;
		n += put_txt(q + n, tok, tl);
	} else if (!strcmp(kind, "answer")) {
		q[7] = 1;		/* ANCOUNT */
		n += put_txt(q + n, tok, tl);
	} else if (!strcmp(kind, "trailing")) {
		memcpy(q + n, tok, tl);
		n += tl;
	} else if (strcmp(kind, "plain")) {
		return usage();
	}
	fd = socket(t.family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail("socket", errno);
	set_timeouts(fd, 3);
	if (sendto(fd, q, n, 0, (struct sockaddr *)&t.ss, t.len) < 0)
		return fail("sendto", errno);
	r = recv(fd, a, sizeof(a), 0);
	if (r < 0)
		return fail("recv", errno == EAGAIN ? ETIMEDOUT : errno);
	if (r < 12 || a[0] != q[0] || a[1] != q[1])
		return fail("answer", EBADMSG);
	if ((a[3] & 0x0f) < 6)
		snprintf(detail, sizeof(detail), "%s", rcodes[a[3] & 0x0f]);
	else
		snprintf(detail, sizeof(detail), "RCODE%d", a[3] & 0x0f);
	return ok(detail);
}

/* ---- expiry --------------------------------------------------------------- */

static void report(const char *key, int err)
{
	if (err)
		printf("%s err %s\n", key, ename(err));
	else
		printf("%s ok\n", key);
}

/* What the TCP side of "expiry" sends: TOKEN-WHAT, or on port 80 (Host
 * pinning's) a request naming @name with it as the target, each a whole
 * request so a kept-alive connection can carry the next. */
static void expiry_tcp_msg(char *msg, size_t len, const char *name, const char *port,
			   const char *token, const char *what)
{
	if (!strcmp(port, "80"))
		snprintf(msg, len, "POST /%s-%s HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\n\r\n",
			 token, what, name);
	else
		snprintf(msg, len, "%s-%s", token, what);
}

static int do_expiry(const char *name, const char *port, const char *uport,
		     const char *token, const char *wait)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;
	struct sockaddr_in tcpa, udpa;
	char msg[256], cbuf[CMSG_SPACE(sizeof(int))], where[ADDR_LEN];
	struct iovec iov;
	struct msghdr mh = { 0 };
	int tfd, ufd, nfd, e, r;
	long up;

	if (parse_port(uport, &up) < 0)
		return usage();
	e = getaddrinfo(name, port, &hints, &res);
	if (e) {
		printf("resolve err %s\n", gai_strerror(e));
		return 1;
	}
	memcpy(&tcpa, res->ai_addr, sizeof(tcpa));
	freeaddrinfo(res);
	udpa = tcpa;
	udpa.sin_port = htons((unsigned short)up);
	format_sockaddr((struct sockaddr_storage *)&tcpa, where, sizeof(where));
	printf("resolve ok %s\n", where);

	tfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ufd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (tfd < 0 || ufd < 0)
		return fail("socket", errno);
	set_timeouts(tfd, TIMEOUT_S);
	r = connect_bounded(tfd, (struct sockaddr *)&tcpa, sizeof(tcpa), TIMEOUT_S);
	if (r < 0) {
		report("connect", -r);
		return 1;
	}
	expiry_tcp_msg(msg, sizeof(msg), name, port, token, "a");
	report("before-tcp", send(tfd, msg, strlen(msg), MSG_NOSIGNAL) < 0 ? errno : 0);
	if (connect(ufd, (struct sockaddr *)&udpa, sizeof(udpa)) < 0) {
		report("connect-udp", errno);
		return 1;
	}
	snprintf(msg, sizeof(msg), "%s-u1", token);
	report("before-udp", send(ufd, msg, strlen(msg), 0) < 0 ? errno : 0);
	fflush(stdout);

	sleep((unsigned int)atoi(wait));

	expiry_tcp_msg(msg, sizeof(msg), name, port, token, "b");
	r = send(tfd, msg, strlen(msg), MSG_NOSIGNAL) < 0 ? -errno : 0;
	if (!r)
		r = stream_exchange(tfd, NULL, NULL, 0);
	report("established-tcp", -r);
	snprintf(msg, sizeof(msg), "%s-u2", token);
	report("connected-udp", send(ufd, msg, strlen(msg), 0) < 0 ? errno : 0);
	snprintf(msg, sizeof(msg), "%s-u3", token);
	iov.iov_base = msg;
	iov.iov_len = strlen(msg);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	fill_ttl_cmsg(0, &mh, cbuf, sizeof(cbuf));
	report("connected-udp-cmsg", sendmsg(ufd, &mh, 0) < 0 ? errno : 0);

	nfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (nfd < 0)
		return fail("socket", errno);
	set_timeouts(nfd, TIMEOUT_S);
	expiry_tcp_msg(msg, sizeof(msg), name, port, token, "c");
	r = connect_bounded(nfd, (struct sockaddr *)&tcpa, sizeof(tcpa), TIMEOUT_S);
	if (!r)
		r = stream_exchange(nfd, msg, NULL, 0);
	report("new-tcp", -r);
	close(nfd);
	nfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(msg, sizeof(msg), "%s-u4", token);
	report("new-udp", sendto(nfd, msg, strlen(msg), 0, (struct sockaddr *)&udpa,
				 sizeof(udpa)) < 0 ? errno : 0);
	return 0;
}

int main(int argc, char **argv)
{
	const char *m;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		return usage();
	m = argv[1];
#define IS(s, n) (!strcmp(m, (s)) && argc == (n))
	if (!strcmp(m, "socket"))
		return do_socket(argc, argv);
	if (IS("families", 2))
		return do_families();
	if (IS("ping", 4))
		return do_ping(argv[2], argv[3]);
	if (IS("raw", 5))
		return do_raw(argv[2], argv[3], argv[4]);
	if (IS("udplite", 5))
		return do_dgram_proto(argv[2], argv[3], argv[4], IPPROTO_UDPLITE);
	if (IS("sctp", 5))
		return do_stream_proto(argv[2], argv[3], argv[4], IPPROTO_SCTP);
	if (IS("mptcp", 5))
		return do_stream_proto(argv[2], argv[3], argv[4], IPPROTO_MPTCP);
	if (IS("packet", 4))
		return do_packet(-1, argv[2], argv[3]);
	if (IS("packet-fd", 5))
		return do_packet(atoi(argv[2]), argv[3], argv[4]);
	if (!strcmp(m, "with-socket") && argc >= 7)
		return do_with_socket(argv);
	if (IS("sendto", 5))
		return do_sendto(argv[2], argv[3], argv[4], 0);
	if (IS("bcast", 5))
		return do_sendto(argv[2], argv[3], argv[4], 1);
	if (!strcmp(m, "sendmmsg"))
		return do_sendmmsg(argc, argv);
	if (IS("ipopts", 7))
		return do_ipopts(argv[2], argv[3], argv[4], argv[5], argv[6]);
	if (IS("ipopts-cmsg", 6))
		return do_ipopts_cmsg(argv[2], argv[3], argv[4], argv[5]);
	if (IS("rthdr", 6))
		return do_rthdr(argv[2], argv[3], argv[4], argv[5], 0);
	if (IS("rthdr-cmsg", 6))
		return do_rthdr(argv[2], argv[3], argv[4], argv[5], 1);
	if (IS("sockopt", 3))
		return do_sockopt(argv[2]);
	if (IS("forge", 7))
		return do_forge(argv[2], argv[3], argv[4], argv[5], argv[6]);
	if (IS("mcast", 5) || IS("mcast", 6))
		return do_mcast(argv[2], argv[3], argv[4], argc == 6 ? argv[5] : NULL);
	if (IS("tiocsti", 4))
		return do_tiocsti(argv[2], argv[3]);
	if (IS("tioclinux", 3))
		return do_tioclinux(argv[2]);
	if (IS("io_uring", 2))
		return do_io_uring();
	if (IS("unshare-user", 2) || IS("clone-user", 2) || IS("int80-unshare", 2) ||
	    IS("x32-unshare", 2) || IS("clone3", 3))
		return do_userns(m, argc == 3 ? argv[2] : NULL);
	if (IS("setns", 3)) {
		if (syscall(SYS_setns, atoi(argv[2]), 0) < 0)
			return fail("setns", errno);
		return ok(NULL);
	}
	if (IS("pidfd-getfd", 4))
		return do_pidfd_getfd(argv[2], argv[3]);
	if (IS("ptrace", 3))
		return do_ptrace(argv[2]);
	if (IS("bpf-objget", 3) || IS("bpf-next-id", 2))
		return do_bpf(m, argc == 3 ? argv[2] : NULL);
	if (IS("open", 3) || IS("mkdir", 3) || IS("unlink", 3) || IS("rmdir", 3) ||
	    IS("umount", 3) || IS("write", 4))
		return do_file(m, argv[2], argc == 4 ? argv[3] : NULL);
	if (IS("setid", 4))
		return do_setid(argv[2], argv[3]);
	if (IS("acl-user", 4))
		return do_acl_user(argv[2], argv[3]);
	if (IS("fds", 2))
		return do_fds();
	if (IS("fd-write", 4))
		return do_fd_write(argv[2], argv[3]);
	if (IS("serve-tcp", 7) || IS("serve-udp", 7))
		return do_serve(!strcmp(m, "serve-tcp"), argv[2], argv[3], argv[4],
				argv[5], argv[6]);
	if (!strcmp(m, "ask-tcp") || !strcmp(m, "ask-udp"))
		return do_ask(!strcmp(m, "ask-tcp"), argc, argv);
	if (IS("echo", 5))
		return do_echo(argv[2], argv[3], argv[4]);
	if (IS("unix", 4))
		return do_unix(argv[2], argv[3], SOCK_STREAM);
	if (IS("unix-dgram", 4))
		return do_unix(argv[2], argv[3], SOCK_DGRAM);
	if (!strcmp(m, "unix-sink"))
		return do_unix_sink(argc, argv);
	if (IS("capture", 4))
		return do_capture(argv[2], argv[3]);
	if (IS("dns-smuggle", 6))
		return do_dns_smuggle(argv[2], argv[3], argv[4], argv[5]);
	if (IS("expiry", 7))
		return do_expiry(argv[2], argv[3], argv[4], argv[5], argv[6]);
	if (IS("exchange", 5))
		return do_exchange(argv[2], argv[3], argv[4]);
#undef IS
	return usage();
}
