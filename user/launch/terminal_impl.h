/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * launch/terminal_impl.h - what launch/terminal.c (the pty, its ends and
 * modes) gives launch/relay.c (the relay in the loop). Nothing else
 * includes this.
 */
#ifndef EGRET_TERMINAL_IMPL_H
#define EGRET_TERMINAL_IMPL_H

struct terminal;

/* The relay's ends: what is read into the pty (@in_fd), where its output
 * goes (@out_fd), each our own non-blocking copy when it can be one. */
void terminal_in_from(struct terminal *t, int in_fd);
void terminal_out_to(struct terminal *t, int out_fd);

/* egret's terminal raw while the relay reads it, or while all of
 * COMMAND's output comes through the pty (see terminal.c). */
void terminal_make_raw(struct terminal *t);

#endif
