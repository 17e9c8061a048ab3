// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * launch/terminal.c - COMMAND's terminal: whether it gets a pty, the pty
 * and the ends the relay uses (the relay itself: launch/relay.c), the
 * modes of egret's terminal, job control, the session's signals.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launch/terminal.h"
#include "launch/terminal_impl.h"
#include "lib/log.h"

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
void terminal_in_from(struct terminal *t, int in_fd)
{
	bool owned;

	t->in = reopen_nonblocking(in_fd, O_RDONLY, &owned);
	t->in_sock = is_socket(t->in);
	/* A terminal or pipe we could not reopen is still pollable: read
	 * only when epoll says so, never blocking the loop. */
	t->in_pollable = owned || t->in_sock || is_pollable(t->in);
	t->in_owned = owned;
}

void terminal_out_to(struct terminal *t, int out_fd)
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
		terminal_in_from(t, 0);
	/* Forced: the pty's output is stdout, as script(1) does; else the
	 * terminal, wherever it is. */
	terminal_out_to(t, force ? 1 : t->tty);
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

/*
 * Input raw (every key, Ctrl-C included, goes to COMMAND's pty, whose line
 * discipline turns it into signals) when we read the terminal; otherwise
 * cooked, so that Ctrl-C still reaches egret, which passes it on. Output
 * processing goes off only when all of COMMAND's output comes through its
 * pty, which did the line ends already (a TUI's bare line feeds must stay
 * bare); if some goes elsewhere (`| less`), other writers share the
 * terminal and keep their line ends.
 */
void terminal_make_raw(struct terminal *t)
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

void terminal_adopt(struct terminal *t, int master)
{
	t->master = master;
	t->pty = true;
	t->held = true;		/* until a caller is back (terminal_attach) */
	fcntl(master, F_SETFL, O_NONBLOCK);
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
		terminal_make_raw(t);
	terminal_resize(t);
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
