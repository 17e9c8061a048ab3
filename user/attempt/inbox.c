// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attempt/inbox.c - the attempt's request socket (attempt/inbox.h). One
 * message per connection, one answer, then it is closed: nothing the
 * agent sends is kept but the request it names and its reason.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "attempt/cgroup.h"
#include "attempt/inbox.h"
#include "lib/log.h"
#include "lib/paths.h"
#include "lib/text.h"
#include "lib/util.h"
#include "requests/ask.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD	77	/* Linux 6.5 */
#endif

#define REFILL_US	(60ULL * 1000 * 1000 / ASK_PER_MINUTE)

void request_inbox_init(struct request_inbox *in)
{
	*in = (struct request_inbox){ .listen = { .fd = -1 } };
	for (unsigned int i = 0; i < INBOX_CONNS; i++)
		in->conns[i].src.fd = -1;
}

static void on_listen(struct loop_source *src, uint32_t events);
static void on_conn(struct loop_source *src, uint32_t events);

int request_inbox_open(struct request_inbox *in, const char *dir, struct request_log *log,
		       uint64_t cgroup_id)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = -1;

	if (path_fmt(in->path, sizeof(in->path), "%s/%s", dir, INBOX_SOCKET) < 0 ||
	    strlen(in->path) >= sizeof(sa.sun_path)) {
		in->path[0] = '\0';
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, in->path, strlen(in->path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	/* A dead egret's socket (the directory is root's: nothing else). */
	if ((unlink(in->path) < 0 && errno != ENOENT) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(in->path, 0666) < 0 || listen(fd, INBOX_CONNS) < 0)
		goto fail;
	in->listen = (struct loop_source){ .fd = TAKE_FD(fd), .fn = on_listen };
	in->log = log;
	in->cgroup_id = cgroup_id;
	in->tokens = ASK_PER_MINUTE;
	return 0;
fail:
	in->path[0] = '\0';
	return -errno;
}

int request_inbox_start(struct request_inbox *in, struct loop *loop)
{
	if (in->listen.fd < 0)
		return 0;
	in->loop = loop;
	return loop_watch(loop, &in->listen, EPOLLIN);
}

static void conn_close(struct request_inbox *in, struct inbox_conn *c)
{
	if (c->src.fd < 0)
		return;
	if (in->loop)
		loop_unwatch(in->loop, &c->src);
	close(c->src.fd);
	c->src.fd = -1;
}

static void answer(int fd, const char *text)
{
	ssize_t w __attribute__((unused)) =
		send(fd, text, strlen(text), MSG_DONTWAIT | MSG_NOSIGNAL);
}

/*
 * Is the process at the far end of @fd one of the attempt's? The kernel
 * says, by the pidfd it took at connect(): the process cannot be swapped
 * for another with its pid. Its tgid and name, for the request.
 */
static int peer_check(const struct request_inbox *in, int fd, struct inbox_conn *c)
{
	_cleanup_close_ int pidfd = -1;
	_cleanup_fclose_ FILE *f = NULL;
	socklen_t len = sizeof(pidfd);
	char path[64];
	uint64_t id;
	pid_t tgid;
	int r;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) < 0)
		return -errno;
	r = cgroup_id_of_pidfd(pidfd, &id, &tgid);
	if (r < 0)
		return r;
	if (id != in->cgroup_id)
		return -EPERM;
	c->pid = (uint32_t)tgid;
	c->comm[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)tgid);
	f = fopen(path, "re");
	if (f && fgets(path, sizeof(path), f)) {
		path[strcspn(path, "\n")] = '\0';
		safe_text(path, c->comm, sizeof(c->comm));	/* the command's to name */
	}
	/* The name read by pid is its only while it lives. */
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0)
		c->comm[0] = '\0';
	return 0;
}

static void on_listen(struct loop_source *src, uint32_t events)
{
	struct request_inbox *in = container_of(src, struct request_inbox, listen);
	struct inbox_conn probe;
	int fd;

	(void)events;
	while ((fd = accept4(src->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct inbox_conn *c;

		/* Answered once its message is read: a socket closed on an
		 * unread message resets its peer, which would lose the answer. */
		probe = (struct inbox_conn){ .src = { .fd = -1 } };
		probe.peer = peer_check(in, fd, &probe);
		/* A connection that never sends loses its place to the next. */
		c = &in->conns[in->evict];
		in->evict = (in->evict + 1) % INBOX_CONNS;
		conn_close(in, c);
		*c = probe;
		c->in = in;
		c->src = (struct loop_source){ .fd = fd, .fn = on_conn };
		if (loop_watch(in->loop, &c->src, EPOLLIN) < 0) {
			close(fd);
			c->src.fd = -1;
		}
	}
}

/* A token for one message: ASK_PER_MINUTE at once, then one every
 * REFILL_US; ASK_PER_ATTEMPT in all. */
static bool rate_take(struct request_inbox *in)
{
	uint64_t now = mono_us();

	if (in->taken >= ASK_PER_ATTEMPT)
		return false;
	if (in->tokens >= ASK_PER_MINUTE)
		in->refill_us = now + REFILL_US;
	while (in->tokens < ASK_PER_MINUTE && now >= in->refill_us) {
		in->tokens++;
		in->refill_us += REFILL_US;
	}
	if (!in->tokens)
		return false;
	in->tokens--;
	in->taken++;
	return true;
}

static void take(struct request_inbox *in, struct inbox_conn *c, const char *msg, ssize_t n)
{
	char err[200], text[ASK_ANSWER_MAX];
	struct ask a;
	int r;

	if (c->peer < 0) {
		in->n.peer++;
		answer(c->src.fd, "refused: not a process of this attempt\n");
		return;
	}
	if (!rate_take(in)) {
		in->n.rate++;
		snprintf(text, sizeof(text),
			 "refused: rate: at most %d requests a minute and %d per attempt; this one is counted, not filed\n",
			 ASK_PER_MINUTE, ASK_PER_ATTEMPT);
		answer(c->src.fd, text);
		return;
	}
	if (n > ASK_MSG_MAX || ask_parse(msg, (size_t)n, &a, err, sizeof(err)) < 0) {
		in->n.bad++;
		snprintf(text, sizeof(text), "refused: %s\n",
			 n > ASK_MSG_MAX ? "the request is over 512 bytes" : err);
		answer(c->src.fd, text);
		return;
	}
	r = request_log_ask(in->log, &a, c->pid, c->comm);
	if (r < 0) {
		in->n.full++;
		answer(c->src.fd, "refused: this attempt holds as many requests as it may\n");
		return;
	}
	in->n.filed++;
	answer(c->src.fd, "pending: the operator reviews it; it stays refused unless they approve it, which takes effect at once, in this attempt too\n");
	log_info("request: %s[%u] asked for %s (%u port%s): filed, pending", c->comm, c->pid,
		 a.target, a.nports, a.nports == 1 ? "" : "s");
}

static void on_conn(struct loop_source *src, uint32_t events)
{
	struct inbox_conn *c = container_of(src, struct inbox_conn, src);
	struct request_inbox *in = c->in;
	char msg[ASK_MSG_MAX + 1];
	ssize_t n;

	(void)events;
	n = recv(src->fd, msg, sizeof(msg), MSG_DONTWAIT | MSG_TRUNC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0)
		take(in, c, msg, n);
	conn_close(in, c);
}

void request_inbox_detach(struct request_inbox *in)
{
	for (unsigned int i = 0; i < INBOX_CONNS; i++)
		conn_close(in, &in->conns[i]);
	if (in->loop && in->listen.fd >= 0)
		loop_unwatch(in->loop, &in->listen);
	in->loop = NULL;
}

void request_inbox_close(struct request_inbox *in, const char *attempt)
{
	const struct inbox_counts *n = &in->n;

	request_inbox_detach(in);
	if (in->listen.fd >= 0)
		close(in->listen.fd);
	in->listen.fd = -1;
	if (in->path[0])
		unlink(in->path);
	in->path[0] = '\0';
	if (n->rate || n->peer || n->bad || n->full)
		log_warn("attempt %s: in-band requests: %llu filed; refused %llu over the rate, %llu from outside the attempt, %llu malformed, %llu over the attempt's requests",
			 attempt, (unsigned long long)n->filed, (unsigned long long)n->rate,
			 (unsigned long long)n->peer, (unsigned long long)n->bad,
			 (unsigned long long)n->full);
	else if (n->filed)
		log_info("attempt %s: in-band requests: %llu filed", attempt,
			 (unsigned long long)n->filed);
}
