// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd/gc.c - `egret gc`: what attempts whose egret died left behind. */
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "attempt/cgroup.h"
#include "attempt/gc.h"
#include "cmd/gc.h"
#include "enforce/shared.h"
#include "lib/exit.h"
#include "lib/log.h"

int cmd_gc(int argc, char **argv)
{
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "programs", no_argument, NULL, 's' },
		{}
	};
	bool programs = false;
	int c, r;

	while ((c = getopt_long(argc, argv, "+hv", options, NULL)) != -1) {
		switch (c) {
		case 'h':
			printf("Usage: egret gc [-v] [--programs]\n\n"
			       "Kill the processes of attempts whose egret is gone and remove\n"
			       "their cgroups, pins, records and entries. Live attempts are left\n"
			       "alone. Pinned program sets of other builds go too; --programs:\n"
			       "this build's as well (the next attempt loads it again; running\n"
			       "attempts keep theirs).\n");
			return 0;
		case 's':
			programs = true;
			break;
		case 'v':
			log_set_level(LOG_INFO);
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		log_error("gc: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	r = gc_stale_attempts(true);
	if (r < 0) {
		log_error("gc: some stale attempts could not be removed (see above)");
		return EXIT_TROUBLE;
	}
	printf("removed %d stale attempt%s\n", r, r == 1 ? "" : "s");
	if (programs) {
		char keep[PATH_MAX];

		cgroup_keep_path(keep, sizeof(keep));
		r = shared_gc(true, keep[0] ? keep : NULL);
		if (r < 0) {
			log_error_errno(r, "gc: remove the program sets in %s", SHARED_ROOT);
			return EXIT_TROUBLE;
		}
		printf("removed %d program set%s\n", r, r == 1 ? "" : "s");
	}
	return 0;
}
