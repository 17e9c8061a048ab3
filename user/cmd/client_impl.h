/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cmd/client_impl.h - what client.c (the connection to egretd) and
 * client_args.c (the request, from egret run's command line) share.
 */
#ifndef EGRET_CMD_CLIENT_IMPL_H
#define EGRET_CMD_CLIENT_IMPL_H

#include <stddef.h>

#include "daemon/wire.h"

/*
 * `egret run`'s @argv as a RUN request for egretd at @socket, into @m;
 * its directory (--chdir's, from the current one) in @cwd, which @m
 * points to. 0, or -errno after one line.
 */
int client_request_from_args(const char *socket, int argc, char **argv,
			     struct wire_msg *m, char *cwd, size_t cwdlen);

/* The words the request's options point to, freed: a cleanup for a
 * variable that lives as long as the request
 * (_cleanup_(client_passed_free) int options). */
void client_passed_free(int *unused);

/* --receipt's file, opened with the caller's rights, to pass beside stdio
 * (-1: none). */
extern int client_receipt_fd;

#endif
