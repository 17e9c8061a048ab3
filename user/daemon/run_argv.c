// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attempt/run_options.h"
#include "daemon/run_argv.h"
#include "lib/util.h"

size_t daemon_run_argv_max(void)
{
	/* "run"; a word for each row egretd writes or a field carries
	 * (--allow's row once more than it needs: it has its items); the
	 * repeated fields' items; "--"; COMMAND's words. */
	return 1 + run_options_count(RUN_VIA_EGRETD) + run_options_count(RUN_VIA_FIELD) +
	       WIRE_ALLOW_MAX + WIRE_OPTION_MAX + 1 + WIRE_ARGV_MAX;
}

/*
 * "--NAME", or "--NAME=VALUE" from @fmt, for the row NAME, which must say
 * @via (egretd's own, or a field's): what egretd writes is what the table
 * counts, spelled as the table spells it.
 */
static int put(struct strv *argv, unsigned int via, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int put(struct strv *argv, unsigned int via, const char *name, const char *fmt, ...)
{
	const struct run_option_row *row = run_option_find(name, strlen(name));
	_cleanup_free_ char *value = NULL;
	va_list ap;
	int r;

	if (!row || !(row->via & via) || !row->metavar != !fmt)
		return strv_fail(argv, -EINVAL);
	if (!fmt)
		return strv_addf(argv, "--%s", name);
	va_start(ap, fmt);
	r = vasprintf(&value, fmt, ap);
	va_end(ap);
	if (r < 0) {
		value = NULL;
		return strv_fail(argv, -ENOMEM);
	}
	return strv_addf(argv, "--%s=%s", name, value);
}

int daemon_run_argv(struct strv *argv, const struct wire_run *run,
		    const struct run_argv_from *from)
{
	const struct daemon_peer *peer = from->peer;
	const struct daemon_caller *k = from->caller;

	strv_add(argv, "run");
	/* The caller's start directory as the attempt's own, and nothing
	 * else of the attempt's anywhere it could write (launch/view.h). */
	put(argv, RUN_VIA_EGRETD, "view", NULL);
	put(argv, RUN_VIA_EGRETD, "user", "%u", (unsigned int)from->uid);
	if (run->repo)
		put(argv, RUN_VIA_FIELD, "repo", "%s", run->repo);
	put(argv, RUN_VIA_FIELD, "chdir", "%s", run->cwd);
	put(argv, RUN_VIA_EGRETD, "view-owner", "%u:%u", (unsigned int)peer->uid,
	    (unsigned int)peer->gid);
	if (k->cache)
		put(argv, RUN_VIA_EGRETD, "view-cache", "%s", k->cache);
	if (k->home)
		put(argv, RUN_VIA_EGRETD, "home-from", "%s", k->home);
	/* The caller's ceiling: egret run keeps the smallest of its
	 * --upload-limit words, so a request's own only lowers it. */
	if (k->upload_limit)
		put(argv, RUN_VIA_EGRETD, "upload-limit", "%llu",
		    (unsigned long long)k->upload_limit);
	/* A child of the caller's own cgroup, as the kernel names it. */
	put(argv, RUN_VIA_EGRETD, "cgroup-parent", "%s%s", from->cgroup_mount,
	    strcmp(peer->cgroup, "/") ? peer->cgroup : "");
	put(argv, RUN_VIA_EGRETD, "state-dir", "%s", from->state_dir);
	if (run->audit)
		put(argv, RUN_VIA_FIELD, "audit", NULL);
	if (run->pty)
		put(argv, RUN_VIA_FIELD, "pty", NULL);
	for (size_t i = 0; i < run->nallow; i++)
		put(argv, RUN_VIA_FIELD, "allow", "%s", run->allow[i]);
	/* Only what the table passes on (wire_option_valid()): one word
	 * each, "--NAME=VALUE", for egret run to judge as its own. */
	for (size_t i = 0; i < run->noption; i++)
		strv_addf(argv, "--%s", run->option[i]);
	strv_add(argv, "--");
	for (size_t i = 0; i < run->argc; i++)
		strv_add(argv, run->argv[i]);
	return argv->error;
}
