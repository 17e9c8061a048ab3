// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd/run.c - `egret run`: as root, the attempt itself
 * (attempt/command.h); otherwise a client of egretd, which runs it
 * (cmd/client.h).
 */
#include <unistd.h>

#include "attempt/command.h"
#include "cmd/client.h"
#include "cmd/run.h"

int cmd_run(int argc, char **argv)
{
	const char *socket = client_socket(argc, argv);

	if (socket)
		return client_run(socket, argc, argv);
	return attempt_command(argc, argv, NULL);
}
