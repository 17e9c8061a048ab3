// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * launch/relay.c - the relay between the caller's fds and COMMAND's pty
 * (terminal.h), in the loop: the caller's keys into the pty, its output
 * out, never more than TERMINAL_BUF buffered either way; held while
 * COMMAND is stopped, drained when it ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "launch/terminal.h"
#include "launch/terminal_impl.h"
#include "lib/util.h"

static void watch(struct terminal *t, struct loop_source *src, uint32_t events)
{
	if (events)
		loop_watch(t->loop, src, events);
	else if (src->added)
		loop_unwatch(t->loop, src);
}

/* Reading stops while the other side cannot take more: nothing is
 * buffered beyond TERMINAL_BUF in either direction. */
static void rewatch(struct terminal *t)
{
	bool pump = t->in >= 0 && !t->in_pollable && !t->in_eof;

	if (t->held) {
		watch(t, &t->master_src, 0);
		if (t->in >= 0 && t->in_pollable)
			watch(t, &t->in_src, 0);
		if (t->out >= 0 && t->out_pollable)
			watch(t, &t->out_src, 0);
		return;
	}
	watch(t, &t->master_src, t->master_hup ? 0 :
	      (t->to_out_len ? 0 : EPOLLIN) |
	      (t->to_pty_len || pump ? EPOLLOUT : 0));
	if (t->in >= 0 && t->in_pollable)
		watch(t, &t->in_src, t->in_eof || t->to_pty_len ? 0 : EPOLLIN);
	if (t->out >= 0 && t->out_pollable)
		watch(t, &t->out_src, t->to_out_len ? EPOLLOUT : 0);
}

static void flush_out(struct terminal *t)
{
	while (t->to_out_off < t->to_out_len) {
		const void *p = t->to_out + t->to_out_off;
		size_t len = t->to_out_len - t->to_out_off;
		ssize_t n = t->out_sock ? send(t->out, p, len, MSG_DONTWAIT | MSG_NOSIGNAL) :
					  write(t->out, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0)
			break;		/* gone: COMMAND's output is dropped */
		t->to_out_off += (size_t)n;
	}
	t->to_out_len = t->to_out_off = 0;
}

static void flush_pty(struct terminal *t)
{
	ssize_t n;

	if (!t->to_pty_len)
		return;
	n = write(t->master, t->to_pty, t->to_pty_len);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		t->to_pty_len = 0;	/* no reader: nothing to deliver to */
		return;
	}
	memmove(t->to_pty, t->to_pty + n, t->to_pty_len - (size_t)n);
	t->to_pty_len -= (size_t)n;
}

/* The input ended: in canonical mode COMMAND sees end-of-file as if
 * Ctrl-D were typed (script(1) does the same). */
static void input_ended(struct terminal *t)
{
	struct termios tio;

	t->in_eof = true;
	if (tcgetattr(t->master, &tio) == 0 && (tio.c_lflag & ICANON) &&
	    t->to_pty_len < sizeof(t->to_pty))
		t->to_pty[t->to_pty_len++] = tio.c_cc[VEOF];
}

/* The suspend key typed while COMMAND's own group is in the foreground
 * of its pty: the kernel would drop the signal (terminal_stop_group). */
static void check_suspend_key(struct terminal *t, const uint8_t *p, size_t n)
{
	struct termios tio;

	if (tcgetattr(t->master, &tio) < 0 || !(tio.c_lflag & ISIG) ||
	    tio.c_cc[VSUSP] == _POSIX_VDISABLE || !memchr(p, tio.c_cc[VSUSP], n))
		return;
	if (tcgetpgrp(t->master) != t->leader)
		return;
	terminal_stop_group(t);
	if (t->suspended)
		t->suspended(t->suspended_ctx);
}

static void read_input(struct terminal *t)
{
	uint8_t *p = t->to_pty + t->to_pty_len;
	size_t room = sizeof(t->to_pty) - t->to_pty_len;
	ssize_t n = t->in_sock ? recv(t->in, p, room, MSG_DONTWAIT) :
				 read(t->in, p, room);

	if (n < 0 && errno == EAGAIN)
		return;		/* someone else's read took it: wait again */
	if (n > 0) {
		t->to_pty_len += (size_t)n;
		check_suspend_key(t, p, (size_t)n);
	} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
		input_ended(t);
	}
}

static void on_master(struct loop_source *src, uint32_t events)
{
	struct terminal *t = container_of(src, struct terminal, master_src);

	if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !t->to_out_len) {
		ssize_t n = read(t->master, t->to_out, sizeof(t->to_out));

		if (n > 0) {
			t->to_out_len = (size_t)n;
			flush_out(t);
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			t->master_hup = true;	/* EIO: no one holds the pty */
		}
	}
	if (events & EPOLLOUT) {
		/* Input that cannot be polled (a file, /dev/null): read as
		 * fast as the pty takes it. */
		if (t->in >= 0 && !t->in_pollable && !t->in_eof && !t->to_pty_len)
			read_input(t);
		flush_pty(t);
	}
	rewatch(t);
}

static void on_input(struct loop_source *src, uint32_t events)
{
	struct terminal *t = container_of(src, struct terminal, in_src);

	(void)events;
	read_input(t);
	flush_pty(t);
	rewatch(t);
}

static void on_output(struct loop_source *src, uint32_t events)
{
	struct terminal *t = container_of(src, struct terminal, out_src);

	(void)events;
	flush_out(t);
	rewatch(t);
}

int terminal_start(struct terminal *t, struct loop *loop, pid_t leader)
{
	t->loop = loop;
	t->leader = leader;
	if (!t->pty)
		return 0;
	if (t->slave >= 0) {
		close(t->slave);
		t->slave = -1;
	}
	t->master_src = (struct loop_source){ .fd = t->master, .fn = on_master };
	t->in_src = (struct loop_source){ .fd = t->in, .fn = on_input };
	t->out_src = (struct loop_source){ .fd = t->out, .fn = on_output };
	terminal_make_raw(t);
	rewatch(t);
	return t->held || t->master_src.added ? 0 : -EIO;
}

int terminal_attach(struct terminal *t, int fds[3])
{
	bool is_tty[3];

	if (!t->pty || t->given[0] >= 0) {
		/* No pty to relay, or a caller's already: only the first
		 * one back is the terminal's (a second is refused anyway). */
		for (int i = 0; i < 3; i++)
			close(TAKE_FD(fds[i]));
		return -EBUSY;
	}
	for (int i = 0; i < 3; i++) {
		t->given[i] = TAKE_FD(fds[i]);
		is_tty[i] = isatty(t->given[i]);
	}
	t->tty = is_tty[1] ? t->given[1] : is_tty[2] ? t->given[2] : is_tty[0] ? t->given[0] : -1;
	if (t->tty >= 0 && tcgetattr(t->tty, &t->saved) < 0)
		t->tty = -1;
	t->in_tty = is_tty[0];
	terminal_in_from(t, t->given[0]);
	terminal_out_to(t, t->given[1]);
	t->own_output = is_tty[1] && is_tty[2];
	t->in_src = (struct loop_source){ .fd = t->in, .fn = on_input };
	t->out_src = (struct loop_source){ .fd = t->out, .fn = on_output };
	t->held = false;
	terminal_make_raw(t);
	terminal_resize(t);
	if (t->loop)
		rewatch(t);
	return 0;
}

void terminal_hold(struct terminal *t, bool hold)
{
	t->held = hold;
	if (t->pty && t->loop)
		rewatch(t);
}

void terminal_drain(struct terminal *t)
{
	if (!t->pty)
		return;
	flush_pty(t);
	for (int i = 0; i < 256 && !t->master_hup; i++) {
		ssize_t n;

		if (t->to_out_len) {
			/* Blocking now: COMMAND is gone, the loop with it. */
			if (t->out_owned)
				fcntl(t->out, F_SETFL, 0);
			flush_out(t);
		}
		n = read(t->master, t->to_out, sizeof(t->to_out));
		if (n <= 0)
			break;
		t->to_out_len = (size_t)n;
	}
	if (t->to_out_len)
		flush_out(t);
	if (t->loop) {
		watch(t, &t->master_src, 0);
		watch(t, &t->in_src, 0);
		watch(t, &t->out_src, 0);
	}
	t->loop = NULL;
}
