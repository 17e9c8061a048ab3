// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd/client.c - egretd's client on its connection (cmd/client.h): the
 * request sent with our stdin, stdout and stderr beside it, our signals
 * forwarded, egretd's messages until EXIT, and the connection made again
 * (ATTACH) if egretd goes away mid-attempt. The request itself is made
 * from the command line by client_args.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cmd/client.h"
#include "cmd/client_impl.h"
#include "daemon/config.h"
#include "daemon/wire.h"
#include "lib/exit.h"
#include "lib/log.h"
#include "lib/paths.h"
#include "lib/util.h"

static int connect_to(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

/* The request, with our stdin, stdout and stderr beside it; a RUN's
 * receipt file (--receipt, @receipt_fd >= 0) fourth. */
static int send_request(int fd, const uint8_t *buf, size_t len, int receipt_fd)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} u = {};
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	/* A receipt file (--receipt) goes as the fourth. */
	size_t nfds = receipt_fd >= 0 ? 4 : 3;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf, .msg_controllen = CMSG_SPACE(nfds * sizeof(int)) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	const int fds[4] = { 0, 1, 2, receipt_fd };

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
	memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	return sendmsg(fd, &msg, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -errno;
}

static int send_signal(int fd, int sig)
{
	static struct wire_msg m;
	uint8_t buf[64];
	char err[128];
	int n;

	m.type = WIRE_SIGNAL;
	m.signal.signo = (uint32_t)sig;
	n = wire_encode(&m, buf, sizeof(buf), err, sizeof(err));
	if (n < 0)
		return n;
	return send(fd, buf, (size_t)n, MSG_NOSIGNAL) == n ? 0 : -errno;
}

/* How long a client whose egretd went away mid-attempt tries to reach
 * the one that re-adopts it (systemd restarts egretd within seconds). */
#define REATTACH_S	WIRE_REATTACH_S

/* The connection to egretd dropped after STARTED: connect again and ask
 * for attempt @id (ATTACH). The new fd, or -errno. */
static int reattach(const char *socket, const char *id)
{
	static struct wire_msg m;
	uint8_t buf[WIRE_HEADER_LEN + WIRE_FIELD_HEADER_LEN + EGRET_ID_MAX + 8];
	char err[128];
	int n, fd = -ETIMEDOUT;

	m.type = WIRE_ATTACH;
	m.attach.id = (char *)id;
	n = wire_encode(&m, buf, sizeof(buf), err, sizeof(err));
	if (n < 0)
		return n;
	log_warn("egretd went away during attempt %s: reconnecting (for up to %d s)",
		 id, REATTACH_S);
	for (int i = 0; i < REATTACH_S * 5; i++) {
		fd = connect_to(socket);
		/* Our stdio again: COMMAND's pty, if it has one, is relayed
		 * to our terminal as before. */
		if (fd >= 0 && send_request(fd, buf, (size_t)n, -1) == 0)
			return fd;
		if (fd >= 0)
			close(fd);
		poll(NULL, 0, 200);
	}
	return fd < 0 ? fd : -ETIMEDOUT;
}

/*
 * COMMAND stopped at its pty's suspend key (egretd's SIGTSTP): as a job
 * in the foreground of our terminal we stop too, so that the shell has
 * the terminal back, and continued (fg) we continue COMMAND. Not such a
 * job (a miner's pipes, a script), nobody could continue us: COMMAND
 * goes on at once.
 */
static void suspend_as_job(int fd)
{
	_cleanup_close_ int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (tty >= 0 && tcgetpgrp(tty) == getpgrp())
		raise(SIGTSTP);		/* its default action: stopped here */
	send_signal(fd, SIGCONT);
}

/* Until EXIT: egretd's messages, and our signals forwarded; a connection
 * lost after STARTED is made again (ATTACH). */
static int wait_exit(const char *socket, int fd, int sigfd)
{
	_cleanup_free_ struct wire_msg *m = malloc(sizeof(*m));
	_cleanup_free_ uint8_t *buf = malloc(WIRE_MAX);
	struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
			       { .fd = sigfd, .events = POLLIN } };
	char err[256], id[EGRET_ID_MAX + 1] = "";
	_cleanup_close_ int again = -1;

	if (!m || !buf)
		return log_error_errno(-ENOMEM, "egretd's answer");
	for (;;) {
		struct signalfd_siginfo si;
		ssize_t n;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return log_error_errno(-errno, "wait for egretd");
		if ((p[1].revents & POLLIN) &&
		    read(sigfd, &si, sizeof(si)) == sizeof(si))
			send_signal(p[0].fd, (int)si.ssi_signo);
		if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = recv(p[0].fd, buf, WIRE_MAX, 0);
		if (n <= 0 && id[0]) {
			if (again >= 0)
				close(again);
			again = reattach(socket, id);
			if (again < 0) {
				log_error_errno(again, "reach egretd again for attempt %s", id);
				return -EPIPE;
			}
			p[0].fd = again;
			continue;
		}
		if (n <= 0) {
			log_error("egretd closed the connection before the attempt ended");
			return -EPIPE;
		}
		if (wire_decode(buf, (size_t)n, m, err, sizeof(err)) < 0) {
			log_error("egretd's answer: %s", err);
			return -EBADMSG;
		}
		if (m->type == WIRE_ERROR)
			log_error("%s", m->error.text);
		else if (m->type == WIRE_SIGNAL && m->signal.signo == SIGTSTP)
			suspend_as_job(p[0].fd);
		else if (m->type == WIRE_STARTED)
			snprintf(id, sizeof(id), "%s", m->started.id);
		else if (m->type == WIRE_EXIT)
			return (int)m->exit.status;
	}
}

/* The refusal egretd queued for us, if any, printed: true if there was. */
static bool said_why(int fd, struct wire_msg *m, uint8_t *buf)
{
	char err[256];
	ssize_t n;

	while ((n = recv(fd, buf, WIRE_MAX, MSG_DONTWAIT)) > 0)
		if (wire_decode(buf, (size_t)n, m, err, sizeof(err)) == 0 &&
		    m->type == WIRE_ERROR) {
			log_error("%s", m->error.text);
			return true;
		}
	return false;
}

/* @m encoded (in @buf) and sent to egretd at @socket with our stdio
 * beside it: the connection, or -1 after one line. */
static int request_send(const char *socket, struct wire_msg *m, uint8_t *buf, const char *what)
{
	_cleanup_close_ int fd = -1;
	char err[256];
	int n, r;

	n = wire_encode(m, buf, WIRE_MAX, err, sizeof(err));
	if (n < 0) {
		log_error("the request for egretd: %s", err);
		return -1;
	}
	fd = connect_to(socket);
	if (fd < 0) {
		log_error_errno(fd, "connect to egretd at %s (is it running? without root, egret %s goes through egretd)",
				socket, what);
		return -1;
	}
	r = send_request(fd, buf, (size_t)n,
			 m->type == WIRE_RUN && m->run.receipt ? client_receipt_fd : -1);
	if (r < 0) {
		/* Refused before it read our request (egretd answers a flood
		 * from its accept loop): its answer is queued for us. */
		if (said_why(fd, m, buf))
			return -1;
		if (r == -EPIPE || r == -ECONNRESET)
			log_error("egretd closed the connection before it read the request (it stopped, or is restarting)%s",
				  m->type == WIRE_RUN ? "; COMMAND did not start" : "");
		else
			log_error_errno(r, "send the request to egretd");
		return -1;
	}
	return TAKE_FD(fd);
}

/*
 * A request's message is 82 KiB, most of it slots and arena a request
 * never fills: a calloc() cleared (and so faulted in) all of it, 20-odd
 * page faults before connect() in every caller (issue 42). Once per
 * process, static: zero pages until written.
 */
static struct wire_msg request;

int client_run(const char *socket, int argc, char **argv)
{
	_cleanup_(client_passed_free) int options = 0;
	struct wire_msg *m = &request;
	_cleanup_free_ uint8_t *buf = malloc(WIRE_MAX);
	_cleanup_close_ int fd = -1, sigfd = -1;
	char cwd[PATH_MAX];
	sigset_t mask;
	int r;

	if (!buf)
		return EXIT_SETUP;
	if (client_request_from_args(socket, argc, argv, m, cwd, sizeof(cwd)) < 0)
		return EXIT_SETUP;
	/* Signals for COMMAND: taken here and sent on, as egret run does. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	/* A terminal's: COMMAND's pty follows its size, and a job continued
	 * (fg) continues COMMAND. */
	sigaddset(&mask, SIGWINCH);
	sigaddset(&mask, SIGCONT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0) {
		log_error_errno(-errno, "signalfd");
		return EXIT_SETUP;
	}
	fd = request_send(socket, m, buf, "run");
	if (fd < 0)
		return EXIT_SETUP;
	r = wait_exit(socket, fd, sigfd);
	return r < 0 ? EXIT_SETUP : r;
}

int client_status(const char *socket, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "via", required_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct wire_msg *m = &request;	/* as client_run()'s */
	_cleanup_free_ uint8_t *buf = malloc(WIRE_MAX);
	_cleanup_close_ int fd = -1;
	int c, r;

	if (!buf)
		return EXIT_SETUP;
	m->type = WIRE_STATUS;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+jh", opts, NULL)) != -1) {
		if (c == 'j') {
			m->status.json = true;
		} else if (c == 'V' && !strcmp(optarg, socket)) {
			continue;
		} else if (c == 'h') {
			printf("Usage: egret status [--json] [--via SOCKET] [ID]\n\n"
			       "Your own live attempts, as egretd (at SOCKET, else $EGRET_SOCKET,\n"
			       "else " DAEMON_SOCKET_DEFAULT ") shows them.\n");
			return 0;
		} else {
			log_error("%s: not an option of egret status through egretd (--json, --via SOCKET, ID)",
				  argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		if (!attempt_id_valid(argv[optind]) || optind + 1 < argc) {
			log_error("status: '%s' is not an attempt id", argv[optind]);
			return 2;
		}
		m->status.id = argv[optind];
	}
	fd = request_send(socket, m, buf, "status");
	if (fd < 0)
		return EXIT_SETUP;
	r = wait_exit(socket, fd, -1);
	return r < 0 ? EXIT_SETUP : r;
}
