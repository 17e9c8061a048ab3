// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * daemon/reply.c - what egretd says on a caller's connection, and how it
 * ends it: for a connection's process (handle.c) and a re-adopter
 * (adopt.c) alike.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daemon/reply.h"
#include "lib/exit.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/text.h"

/* How long a caller has to hang up after the answer: a connection held
 * open must not hold an attempt's slot. */
#define LINGER_MS		1000

int daemon_send_msg(int conn, struct wire_msg *m)
{
	uint8_t buf[WIRE_HEADER_LEN + WIRE_FIELD_HEADER_LEN + WIRE_TEXT_MAX];
	char err[128];
	int n = wire_encode(m, buf, sizeof(buf), err, sizeof(err));

	if (n < 0)
		return n;
	return send(conn, buf, (size_t)n, MSG_NOSIGNAL) == n ? 0 : -errno;
}

int daemon_send_exit(int conn, int status)
{
	static struct wire_msg m;

	m.type = WIRE_EXIT;
	m.exit.status = (uint32_t)status;
	return daemon_send_msg(conn, &m);
}

/*
 * Wait for the caller to hang up before closing: a unix socket closed
 * with the caller's request still unread resets the connection, and the
 * caller would read ECONNRESET instead of the answer queued for it.
 * Bounded in all: a caller that never hangs up, or keeps sending, costs
 * LINGER_MS at most.
 */
void daemon_linger_close(int conn)
{
	uint64_t end = mono_us() / 1000 + LINGER_MS, now;
	char sink[512];

	shutdown(conn, SHUT_WR);
	while ((now = mono_us() / 1000) < end) {
		struct pollfd p = { .fd = conn, .events = POLLIN };

		if (poll(&p, 1, (int)(end - now)) <= 0 ||
		    recv(conn, sink, sizeof(sink), MSG_DONTWAIT) <= 0)
			break;
	}
	close(conn);
}

/* One line for the caller (as egret run would print it) and for our log;
 * then EXIT_SETUP. Bytes the wire does not carry become '?'. */
int daemon_refusef(int conn, const char *fmt, ...)
{
	static struct wire_msg m;
	char raw[WIRE_TEXT_MAX + 1], text[WIRE_TEXT_MAX + 1];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	safe_text(raw, text, sizeof(text));
	log_warn("refused: %s", text);
	m.type = WIRE_ERROR;
	m.error.text = text;
	daemon_send_msg(conn, &m);
	daemon_send_exit(conn, EXIT_SETUP);
	daemon_linger_close(conn);
	return EXIT_SETUP;
}

int daemon_refuse(int conn, const char *text)
{
	return daemon_refusef(conn, "%s", text);
}

/* The signals a caller may send on: those egret run itself forwards,
 * and its terminal's (a resize, a continued job). Others (SIGSTOP above
 * all) could leave the attempt stopped for good. */
static bool signal_forwarded(uint32_t sig)
{
	return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT ||
	       sig == SIGWINCH || sig == SIGCONT;
}

int daemon_send_signal(int conn, int sig)
{
	static struct wire_msg m;

	m.type = WIRE_SIGNAL;
	m.signal.signo = (uint32_t)sig;
	return daemon_send_msg(conn, &m);
}

void daemon_client_event(struct attempt_control *ctl, struct loop_source *src,
			 uint32_t events)
{
	static struct wire_msg m;
	uint8_t buf[64];	/* a SIGNAL is 20 bytes; anything longer is not one */
	char err[128];
	ssize_t n = recv(src->fd, buf, sizeof(buf), MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0 || (events & (EPOLLHUP | EPOLLERR))) {
		log_info("the caller went away: ending the attempt");
		syscall(SYS_pidfd_send_signal, ctl->child_pidfd, SIGKILL, NULL, 0);
		loop_unwatch(ctl->loop, src);
		return;
	}
	if (wire_decode(buf, (size_t)n, &m, err, sizeof(err)) == 0 &&
	    m.type == WIRE_SIGNAL && signal_forwarded(m.signal.signo))
		attempt_control_signal(ctl, (int)m.signal.signo);
	else
		log_warn("the caller sent something other than a SIGNAL egret run forwards: ignored");
}

