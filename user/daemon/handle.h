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

/* Serve connection @conn for egretd @instance; the status this process
 * exits with (the attempt's, or EXIT_SETUP). The caller hears the same
 * in an EXIT. A valid RUN asks the accept loop for an attempt's slot on
 * @slot_fd (refused at a limit); an ATTACH goes to the attempt's
 * re-adopter. */
int daemon_handle(const struct daemon_config *cfg, const char *instance, int conn,
		  int slot_fd);

#endif
