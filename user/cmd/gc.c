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

static void gc_usage(FILE *out)
{
	fprintf(out,
		"Usage: egret gc [-v] [--programs] [--unserved] [--under CGROUP_DIR]\n\n"
		"Kill the processes of attempts whose egret is gone and remove\n"
		"their cgroups, pins, records and entries. Live attempts are left\n"
		"alone. egretd's attempts are its to re-adopt: one goes only once\n"
		"its egretd has not run for %d s (the first gc that finds it so\n"
		"marks it, a later one removes it).\n\n"
		"  --programs    also remove the pinned program sets nobody uses\n"
		"                (an attempt or an egretd holds the one it uses)\n"
		"  --unserved    egretd's attempts go as soon as their egretd is\n"
		"                not running (an egretd taken out of service)\n"
		"  --under DIR   only attempts whose cgroup lies under DIR\n",
		GC_UNSERVED_GRACE_S);
}

int cmd_gc(int argc, char **argv)
{
	enum { OPT_PROGRAMS = 256, OPT_UNSERVED, OPT_UNDER };
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "programs", no_argument, NULL, OPT_PROGRAMS },
		{ "unserved", no_argument, NULL, OPT_UNSERVED },
		{ "under", required_argument, NULL, OPT_UNDER },
		{}
	};
	struct gc_opts o = { .daemon = GC_DAEMON_GONE };
	bool programs = false;
	int c, r;

	while ((c = getopt_long(argc, argv, "+hv", options, NULL)) != -1) {
		switch (c) {
		case 'h':
			gc_usage(stdout);
			return 0;
		case OPT_PROGRAMS:
			programs = true;
			break;
		case OPT_UNSERVED:
			o.daemon = GC_DAEMON_NOW;
			break;
		case OPT_UNDER:
			if (optarg[0] != '/') {
				log_error("gc: --under %s: give the cgroup directory's absolute path", optarg);
				return EXIT_USAGE;
			}
			o.under = optarg;
			break;
		case 'v':
			log_set_level(LOG_INFO);
			break;
		default:
			gc_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		log_error("gc: unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	r = gc_stale_attempts(&o);
	if (r < 0) {
		log_error("gc: some stale attempts could not be removed (see above)");
		return EXIT_TROUBLE;
	}
	printf("removed %d stale attempt%s\n", r, r == 1 ? "" : "s");
	if (programs) {
		char keep[PATH_MAX];

		cgroup_keep_path(keep, sizeof(keep));
		r = shared_gc(keep[0] ? keep : NULL);
		if (r < 0) {
			log_error_errno(r, "gc: remove the program sets in %s", SHARED_ROOT);
			return EXIT_TROUBLE;
		}
		printf("removed %d program set%s\n", r, r == 1 ? "" : "s");
	}
	return 0;
}
