// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "dns/proxy_impl.h"

#define TCP_MAX_QUEUED		(256 * 1024)

int tcp_flush(struct tcp_conn *c)
{
	while (c->out_head) {
		struct outbuf *b = c->out_head;
		ssize_t n = send(c->src.fd, b->data + b->off, b->len - b->off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n < 0)
			return -errno;
		b->off += (size_t)n;
		c->queued -= (size_t)n;
		if (b->off < b->len)
			break;
		c->out_head = b->next;
		if (!c->out_head)
			c->out_tail = NULL;
		free(b);
	}
	if (c->eof && !c->out_head && c->refs == 0)
		return -ECONNRESET;	/* all answered: done */
	return loop_watch(c->p->loop, &c->src,
			  (c->eof ? 0 : EPOLLIN) | (c->out_head ? EPOLLOUT : 0));
}

void tcp_send(struct tcp_conn *c, const uint8_t *msg, size_t len)
{
	struct outbuf *b;

	if (c->dead)
		return;
	if (c->queued + len + 2 > TCP_MAX_QUEUED) {
		tcp_close(c);		/* a client that never reads */
		return;
	}
	b = malloc(sizeof(*b) + len + 2);
	if (!b) {
		tcp_close(c);
		return;
	}
	b->next = NULL;
	b->len = len + 2;
	b->off = 0;
	b->data[0] = (uint8_t)(len >> 8);
	b->data[1] = (uint8_t)len;
	memcpy(b->data + 2, msg, len);
	if (c->out_tail)
		c->out_tail->next = b;
	else
		c->out_head = b;
	c->out_tail = b;
	c->queued += b->len;
}

static void conn_release(struct loop_source *src)
{
	struct tcp_conn *c = container_of(src, struct tcp_conn, src);

	while (c->out_head) {
		struct outbuf *b = c->out_head;

		c->out_head = b->next;
		free(b);
	}
	free(c);
}

/* Close the socket now; free once no query upstream refers to it. */
void tcp_close(struct tcp_conn *c)
{
	struct tcp_conn **pp;

	if (c->dead)
		return;
	c->dead = true;
	loop_unwatch(c->p->loop, &c->src);
	close(c->src.fd);
	for (pp = &c->p->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	c->p->nconns--;
	if (c->refs == 0)
		loop_release(c->p->loop, &c->src);
}

static void on_conn(struct loop_source *src, uint32_t events)
{
	struct tcp_conn *c = container_of(src, struct tcp_conn, src);

	if (events & (EPOLLERR | EPOLLHUP) && !(events & EPOLLIN)) {
		tcp_close(c);
		return;
	}
	if (events & EPOLLOUT && tcp_flush(c) < 0) {
		tcp_close(c);
		return;
	}
	if (!(events & EPOLLIN) || c->eof)
		return;
	for (;;) {
		size_t need = c->inlen < 2 ? 2 :
			      2 + ((size_t)c->in[0] << 8 | c->in[1]);
		ssize_t n;

		if (c->inlen >= 2 && c->inlen == need) {
			struct query tmpl = { .udp_fd = -1, .conn = c };

			c->inlen = 0;
			c->p->handle_query(c->p, c->in + 2, need - 2, &tmpl);
			if (c->dead)
				return;
			continue;
		}
		n = recv(src->fd, c->in + c->inlen, need - c->inlen,
			 MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n <= 0) {
			/* Sent all it will: answer what is pending, then close. */
			c->eof = true;
			if (n < 0 || c->refs == 0 || tcp_flush(c) < 0)
				tcp_close(c);
			return;
		}
		c->inlen += (size_t)n;
	}
}

void tcp_on_accept(struct loop_source *src, uint32_t events)
{
	struct dns_proxy *p = container_of(src, struct proxy_source, src)->p;
	struct tcp_conn *c;
	int fd;

	(void)events;
	while ((fd = accept4(src->fd, NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		if (p->nconns >= DNS_MAX_TCP_CONNS ||
		    !(c = calloc(1, sizeof(*c)))) {
			close(fd);
			continue;
		}
		c->p = p;
		c->src.fd = fd;
		c->src.fn = on_conn;
		c->src.release = conn_release;
		if (loop_watch(p->loop, &c->src, EPOLLIN) < 0) {
			close(fd);
			free(c);
			continue;
		}
		c->next = p->conns;
		p->conns = c;
		p->nconns++;
	}
}

