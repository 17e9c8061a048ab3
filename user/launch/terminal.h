/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * launch/terminal.h - COMMAND never holds the terminal egret was started from.
 *
 * A process that shares a terminal with the operator's shell can push a
 * command line into its input queue (TIOCSTI), which the shell runs, as
 * root and outside every cgroup, once egret exits (CVE-2017-5226 is this
 * for bubblewrap). So COMMAND always starts in a session of its own with
 * no controlling terminal, and when egret's stdin, stdout or stderr is a
 * terminal (or with --pty) COMMAND gets a pseudo-terminal of its own
 * instead: its controlling terminal, relayed by egret to the real one,
 * as `su --pty` and `systemd-run --pty` do. The seccomp filter refuses
 * TIOCSTI and TIOCLINUX as a second wall.
 */
#ifndef EGRET_TERMINAL_H
#define EGRET_TERMINAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <termios.h>

#include "lib/loop.h"

#define TERMINAL_BUF	4096

struct terminal {
	bool pty;			/* COMMAND has a pseudo-terminal of its own */
	int master;			/* egret's end, non-blocking; -1 */
	int slave;			/* COMMAND's end, until it has it; -1 */
	int child_fds[3];		/* what COMMAND gets as fds 0, 1, 2 */
	int tty;			/* egret's terminal, raw while relayed; -1 */
	int ctty;			/* egret's controlling terminal (job control); -1 */
	int in;				/* relayed into the pty: egret's stdin; -1 */
	int out;			/* the pty's output goes here; -1 */
	bool in_pollable, in_owned, in_sock, in_eof;
	bool out_pollable, out_owned, out_sock;
	bool master_hup;		/* nobody holds COMMAND's end any more */
	bool raw;			/* @tty is in raw mode now */
	bool held;			/* relaying nothing (terminal_hold) */
	bool in_tty;			/* @in is a terminal (keys, raw) */
	int given[3];			/* the caller's fds terminal_attach took */
	bool own_output;		/* all of COMMAND's output goes via the pty */
	struct termios saved;		/* @tty as we found it */
	uint8_t to_pty[TERMINAL_BUF];
	size_t to_pty_len;
	uint8_t to_out[TERMINAL_BUF];
	size_t to_out_len, to_out_off;
	struct loop *loop;
	struct loop_source master_src, in_src, out_src;
	pid_t leader;			/* COMMAND, leader of its session */
	/* Called after the suspend key stopped COMMAND's own group, when
	 * nobody is told by SIGCHLD (egretd: COMMAND is its keeper's child,
	 * and the caller's client is the job to stop). NULL: nobody. */
	void (*suspended)(void *ctx);
	void *suspended_ctx;
};

/* Every fd -1: terminal_close() is then safe whatever happened. */
void terminal_init(struct terminal *t);

/*
 * Before COMMAND is spawned: decide whether it gets a pty (@force, or one
 * of fds 0-2 is a terminal), and if so open it, owned by @uid (-1: keep),
 * set up like egret's terminal and sized as @size if not NULL, else as
 * egret's terminal, else 80x24. Returns 0 or -errno.
 */
struct winsize;
int terminal_open(struct terminal *t, bool force, uid_t uid, const struct winsize *size);

/*
 * In the child, between clone and exec (async-signal-safe): a session of
 * its own, and, with a pty, the pty on COMMAND's terminal fds and as its
 * controlling terminal. Returns 0 or -errno.
 */
int terminal_child_setup(const struct terminal *t);

/* COMMAND (@leader) runs: drop egret's copy of its end, make egret's
 * terminal raw, relay in @loop. */
int terminal_start(struct terminal *t, struct loop *loop, pid_t leader);

/* SIGWINCH: the pty takes egret's terminal's size (the kernel then tells
 * COMMAND's foreground process group). */
void terminal_resize(struct terminal *t);

/* The process group a terminal signal goes to: the pty's foreground
 * group, or COMMAND's own. */
pid_t terminal_signal_group(const struct terminal *t);

/*
 * Stop that group, as Ctrl-Z would. The kernel discards a terminal's
 * SIGTSTP for a process group with no parent in its session ("orphaned"),
 * which COMMAND's own group always is: it leads its session and its parent
 * is egret. Such a group gets SIGSTOP; any other (a job of a shell inside)
 * SIGTSTP, which its shell expects.
 */
void terminal_stop_group(const struct terminal *t);

/* Is egret in the foreground of a controlling terminal, so that job
 * control (Ctrl-Z, fg) applies to it? */
bool terminal_job_control(const struct terminal *t);

/* Around egret stopping itself: give the terminal back as it was, then
 * take it again (raw, and the size it may have got meanwhile). */
void terminal_suspend(struct terminal *t);

/* Relay nothing while @hold (COMMAND stopped and its caller's shell has
 * the terminal: egretd's process would read the keys typed there), then
 * again. */
void terminal_hold(struct terminal *t, bool hold);

/* A re-adopted attempt's: COMMAND's pty by its @master (taken), relaying
 * nothing until a caller is back (terminal_attach). */
void terminal_adopt(struct terminal *t, int master);

/* The caller back, its stdin, stdout and stderr @fds (taken, even on
 * failure): relayed to and from the pty as at the start. 0, or -EBUSY if
 * there is no pty or a caller is back already. */
int terminal_attach(struct terminal *t, int fds[3]);
void terminal_resume(struct terminal *t);

/* COMMAND exited: pass on what it left in the pty, then leave the loop. */
void terminal_drain(struct terminal *t);

/* Restore egret's terminal and close everything. */
void terminal_close(struct terminal *t);

#endif
