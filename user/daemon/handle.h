/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * daemon/handle.h - one connection to egretd, in a process of its own:
 * who the caller is (the kernel's word), whether the configuration lets it
 * ask for this, then the attempt, run as `egret run` runs it as root, with
 * COMMAND's stdin, stdout and stderr the caller's own.
 */
#ifndef EGRET_DAEMON_HANDLE_H
#define EGRET_DAEMON_HANDLE_H

#include "daemon/config.h"

/* Serve connection @conn; the status this process exits with (the
 * attempt's, or EXIT_SETUP). The caller hears the same in an EXIT. */
int daemon_handle(const struct daemon_config *cfg, int conn);

/* Refuse connection @conn with the one line @text (an ERROR, then EXIT
 * 125) and close it; EXIT_SETUP. */
int daemon_refuse(int conn, const char *text);

#endif
