// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd/status.c - `egret status [ID] [--json]`: as root, every live
 * attempt on this host (attempt/show.h); without root, the caller's own
 * attempts, which egretd shows (cmd/client.h).
 */
#include <getopt.h>
#include <stdio.h>

#include "attempt/show.h"
#include "cmd/client.h"
#include "cmd/status.h"
#include "lib/log.h"
#include "lib/paths.h"

int cmd_status(int argc, char **argv)
{
	static const struct option options[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "via", required_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *socket = client_socket(argc, argv);
	struct show_filter f = {};
	int c;

	if (socket)
		return client_status(socket, argc, argv);
	optind = 0;
	while ((c = getopt_long(argc, argv, "jh", options, NULL)) != -1) {
		if (c == 'j') {
			f.json = true;
		} else if (c == 'h') {
			printf("Usage: egret status [ID] [--json] [--via SOCKET]\n\n"
			       "Live attempts: id, cgroup, processes, repo, start, per-hook\n"
			       "counters, each allow entry with ports, lifetime and name, and\n"
			       "each destination's bytes sent and received so far. As root,\n"
			       "every attempt on this host; without root (or with --via),\n"
			       "the caller's own attempts, as egretd shows them.\n");
			return 0;
		} else {
			return 2;
		}
	}
	if (optind < argc)
		f.only = argv[optind];
	if (f.only && !attempt_id_valid(f.only)) {
		log_error("status: '%s' is not an attempt id", f.only);
		return 2;
	}
	return attempt_show(&f);
}
