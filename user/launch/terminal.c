// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launch/terminal.h"
#include "lib/log.h"
#include "lib/util.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER	_IO('T', 0x41)
#endif

void terminal_init(struct terminal *t)
{
	memset(t, 0, sizeof(*t));
	t->master = t->slave = t->tty = t->ctty = t->in = t->out = -1;
	for (int i = 0; i < 3; i++) {
		t->child_fds[i] = i;
		t->given[i] = -1;
	}
}

/*
 * Our own open file description of a terminal or pipe we were given, so
 * that O_NONBLOCK is ours alone (the shell shares the original). Sockets
 * (a unix socket: others are refused) take MSG_DONTWAIT instead; files
 * and /dev/null are used as they are, blocking: they are never slow.
 * Returns the fd to use.
 */
static int reopen_nonblocking(int fd, int mode, bool *owned)
{
	int flags = fcntl(fd, F_GETFL), acc = flags & O_ACCMODE, r;
	char path[32];
	struct stat st;

	*owned = false;
	if (fstat(fd, &st) < 0 || !(S_ISFIFO(st.st_mode) || isatty(fd)))
		return fd;
	/* Never more than the description had: the reopen is a fresh open,
	 * with our rights (root's, in egretd), not the caller's. An O_PATH
	 * fd had none; one open for reading only is not reopened to write. */
	if (flags < 0 || (flags & O_PATH) ||
	    (acc != O_RDWR && acc != (mode & O_ACCMODE)))
		return fd;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = open(path, mode | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (r < 0)
		return fd;
	*owned = true;
	return r;
}

static bool is_socket(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

static bool is_pollable(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || isatty(fd));
}

/* The relay's ends: what is read into the pty (@in_fd), where its output
 * goes (@out_fd), each our own non-blocking copy when it can be one. */
static void relay_in(struct terminal *t, int in_fd)
{
	bool owned;

	t->in = reopen_nonblocking(in_fd, O_RDONLY, &owned);
	t->in_sock = is_socket(t->in);
	/* A terminal or pipe we could not reopen is still pollable: read
	 * only when epoll says so, never blocking the loop. */
	t->in_pollable = owned || t->in_sock || is_pollable(t->in);
	t->in_owned = owned;
}

static void relay_out(struct terminal *t, int out_fd)
{
	t->out = reopen_nonblocking(out_fd, O_WRONLY, &t->out_owned);
	t->out_sock = is_socket(t->out);
	t->out_pollable = t->out_owned || t->out_sock;
}

int terminal_open(struct terminal *t, bool force, uid_t uid, const struct winsize *size)
{
	struct winsize ws = { .ws_row = 24, .ws_col = 80 };
	bool is_tty[3], any = false;
	int i;

	/* Job control needs to know our controlling terminal, if any,
	 * even when none of fds 0-2 is it. */
	t->ctty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	for (i = 0; i < 3; i++) {
		is_tty[i] = isatty(i);
		any = any || is_tty[i];
	}
	if (!force && !any)
		return 0;

	t->tty = is_tty[1] ? 1 : is_tty[2] ? 2 : is_tty[0] ? 0 : -1;
	t->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (t->master < 0 || unlockpt(t->master) < 0)
		return -errno;
	/* The peer by the master's own fd, not by a path in /dev/pts. */
	t->slave = ioctl(t->master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (t->slave < 0)
		return -errno;
	/* COMMAND's user may reopen its own terminal by name (ttyname()),
	 * as on a login; the group stays devpts' tty group. */
	if (uid != (uid_t)-1 &&
	    (fchown(t->slave, uid, (gid_t)-1) < 0 || fchmod(t->slave, 0620) < 0))
		return -errno;
	if (t->tty >= 0) {
		if (tcgetattr(t->tty, &t->saved) < 0 ||
		    tcsetattr(t->slave, TCSANOW, &t->saved) < 0)
			return -errno;
		if (ioctl(t->tty, TIOCGWINSZ, &ws) < 0 || !ws.ws_row || !ws.ws_col)
			ws = (struct winsize){ .ws_row = 24, .ws_col = 80 };
	}
	if (size)
		ws = *size;
	if (ioctl(t->slave, TIOCSWINSZ, &ws) < 0)
		return -errno;
	for (i = 0; i < 3; i++)
		if (force || is_tty[i])
			t->child_fds[i] = t->slave;
	t->own_output = force || (is_tty[1] && is_tty[2]);
	t->in_tty = is_tty[0];
	if (force || is_tty[0])
		relay_in(t, 0);
	/* Forced: the pty's output is stdout, as script(1) does; else the
	 * terminal, wherever it is. */
	relay_out(t, force ? 1 : t->tty);
	if (fcntl(t->master, F_SETFL, O_NONBLOCK) < 0)
		return -errno;
	t->pty = true;
	return 0;
}

int terminal_child_setup(const struct terminal *t)
{
	if (setsid() < 0)
		return -errno;
	if (!t || !t->pty)
		return 0;
	for (int i = 0; i < 3; i++)
		if (t->child_fds[i] != i && dup2(t->child_fds[i], i) < 0)
			return -errno;
	if (ioctl(t->slave, TIOCSCTTY, 0) < 0)
		return -errno;
	return 0;
}

/* ---- the relay ---------------------------------------------------- */

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

/*
 * Input raw (every key, Ctrl-C included, goes to COMMAND's pty, whose line
 * discipline turns it into signals) when we read the terminal; otherwise
 * cooked, so that Ctrl-C still reaches egret, which passes it on. Output
 * processing goes off only when all of COMMAND's output comes through its
 * pty, which did the line ends already (a TUI's bare line feeds must stay
 * bare); if some goes elsewhere (`| less`), other writers share the
 * terminal and keep their line ends.
 */
static void make_raw(struct terminal *t)
{
	struct termios raw = t->saved;
	bool reading = t->in >= 0 && t->in_tty;

	if (t->tty < 0 || t->raw || (!reading && !t->own_output))
		return;
	if (reading)
		cfmakeraw(&raw);
	raw.c_oflag = t->own_output ? t->saved.c_oflag & ~(tcflag_t)OPOST :
				      t->saved.c_oflag;
	if (tcsetattr(t->tty, TCSADRAIN, &raw) < 0) {
		log_warn("warning: cannot set the terminal to raw mode: %s", strerror(errno));
		return;
	}
	t->raw = true;
	log_set_crlf(isatty(2) && !(raw.c_oflag & OPOST));
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
	make_raw(t);
	rewatch(t);
	return t->held || t->master_src.added ? 0 : -EIO;
}

void terminal_adopt(struct terminal *t, int master)
{
	t->master = master;
	t->pty = true;
	t->held = true;		/* until a caller is back (terminal_attach) */
	fcntl(master, F_SETFL, O_NONBLOCK);
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
	relay_in(t, t->given[0]);
	relay_out(t, t->given[1]);
	t->own_output = is_tty[1] && is_tty[2];
	t->in_src = (struct loop_source){ .fd = t->in, .fn = on_input };
	t->out_src = (struct loop_source){ .fd = t->out, .fn = on_output };
	t->held = false;
	make_raw(t);
	terminal_resize(t);
	if (t->loop)
		rewatch(t);
	return 0;
}

void terminal_resize(struct terminal *t)
{
	struct winsize ws;

	if (t->pty && t->tty >= 0 && ioctl(t->tty, TIOCGWINSZ, &ws) == 0 &&
	    ws.ws_row && ws.ws_col)
		ioctl(t->master, TIOCSWINSZ, &ws);
}

pid_t terminal_signal_group(const struct terminal *t)
{
	pid_t pg = t->pty ? tcgetpgrp(t->master) : -1;

	/* The pty keeps the number of a foreground group that has died,
	 * and COMMAND could cycle pids until an outside group takes it:
	 * only a group that leads into COMMAND's session is signalled
	 * (COMMAND's own always is: it is our unreaped child). */
	if (pg <= 0 || pg == t->leader || getsid(pg) != t->leader)
		return t->leader;
	return pg;
}

void terminal_stop_group(const struct terminal *t)
{
	pid_t pg = terminal_signal_group(t);

	kill(-pg, pg == t->leader ? SIGSTOP : SIGTSTP);
}

bool terminal_job_control(const struct terminal *t)
{
	return t->ctty >= 0 && tcgetpgrp(t->ctty) == getpgrp();
}

void terminal_hold(struct terminal *t, bool hold)
{
	t->held = hold;
	if (t->pty && t->loop)
		rewatch(t);
}

void terminal_suspend(struct terminal *t)
{
	if (!t->raw)
		return;
	tcsetattr(t->tty, TCSADRAIN, &t->saved);
	t->raw = false;
	log_set_crlf(false);
}

void terminal_resume(struct terminal *t)
{
	if (!t->pty || t->raw || t->tty < 0)
		return;
	/* The shell may have changed the terminal meanwhile: that is
	 * what we give back next time. */
	if (tcgetattr(t->tty, &t->saved) == 0)
		make_raw(t);
	terminal_resize(t);
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

void terminal_close(struct terminal *t)
{
	terminal_suspend(t);
	if (t->master >= 0)
		close(t->master);
	if (t->slave >= 0)
		close(t->slave);
	if (t->ctty >= 0)
		close(t->ctty);
	if (t->in_owned)
		close(t->in);
	if (t->out_owned && t->out > 2)
		close(t->out);
	for (int i = 0; i < 3; i++)
		if (t->given[i] >= 0)
			close(t->given[i]);
	terminal_init(t);
}
