/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cmd/client.h - `egret run` without root: a client of egretd, which runs
 * the attempt (docs/EGRETD.md). COMMAND gets this process's stdin, stdout
 * and stderr (the fds themselves, passed to egretd), the signals this
 * process gets are forwarded, and its exit status is COMMAND's.
 */
#ifndef EGRET_CMD_CLIENT_H
#define EGRET_CMD_CLIENT_H

/* The socket (DAEMON_SOCKET_DEFAULT; $EGRET_SOCKET or --via SOCKET name
 * another) to go through, or NULL to run the attempt here (as root,
 * without --via). */
const char *client_socket(int argc, char **argv);

/* The socket whatever our uid: --via, else $EGRET_SOCKET, else
 * DAEMON_SOCKET_DEFAULT (egret-client, which only ever asks egretd). */
const char *client_daemon_socket(int argc, char **argv);

/* `egret run` (@argv[0] "run") through egretd at @socket. */
int client_run(const char *socket, int argc, char **argv);

/*
 * `egret status [--json] [ID]` without root: the caller's own attempts,
 * which egretd at @socket prints to our stdout. The exit status.
 */
int client_status(const char *socket, int argc, char **argv);

#endif
