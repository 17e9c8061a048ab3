/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * daemon/reply.h - what egretd says on a caller's connection (docs/WIRE.md),
 * and how it ends it.
 */
#ifndef EGRET_DAEMON_REPLY_H
#define EGRET_DAEMON_REPLY_H

#include <stdint.h>

#include "attempt/supervise.h"
#include "daemon/wire.h"

/* One message, an EXIT, or the end of a connection (its answer read by
 * the caller first, within a second), for a connection's process and a re-adopter. */
int daemon_send_msg(int conn, struct wire_msg *m);
int daemon_send_exit(int conn, int status);

/* SIGNAL @sig to the caller: egretd sends only SIGTSTP, "COMMAND stopped
 * at its terminal's suspend key" (docs/WIRE.md). */
int daemon_send_signal(int conn, int sig);
void daemon_linger_close(int conn);

/* @src, the caller's connection, is readable: a SIGNAL goes to COMMAND
 * (@ctl->child_pidfd); the caller gone ends the attempt. */
void daemon_client_event(struct attempt_control *ctl, struct loop_source *src,
			 uint32_t events);

/* Refuse connection @conn with the one line @text (an ERROR, then EXIT
 * 125) and close it; EXIT_SETUP. */
int daemon_refuse(int conn, const char *text);

/* The same with a format; the line is cut to what the wire carries and
 * logged as egretd's too. */
int daemon_refusef(int conn, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
