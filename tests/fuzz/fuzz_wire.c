// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_wire.c - libFuzzer target for the egret run <-> egretd messages
 * (user/daemon/wire.c). egretd decodes them as root from unprivileged
 * callers. The input is one message; whatever decodes must be within the
 * limits and must encode back to the very same bytes: a message has one
 * spelling, so no two byte strings mean the same request. A RUN also
 * goes through what egretd writes of it (check_argv()).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/run_argv.h"
#include "daemon/wire.h"
#include "lib/strv.h"

/* Each string points into the message's arena, ends there, holds no NUL. */
static void check_str(const struct wire_msg *m, const char *s, size_t max)
{
	if (!s || s < m->arena || s >= m->arena + sizeof(m->arena))
		abort();
	if (strnlen(s, (size_t)(m->arena + sizeof(m->arena) - s)) > max)
		abort();
}

static void check_run(const struct wire_msg *m)
{
	const struct wire_run *r = &m->run;

	if (r->argc < 1 || r->argc > WIRE_ARGV_MAX || r->argv[r->argc] ||
	    r->envc > WIRE_ENV_MAX || r->env[r->envc] || r->nallow > WIRE_ALLOW_MAX)
		abort();
	for (size_t i = 0; i < r->argc; i++)
		check_str(m, r->argv[i], WIRE_ARG_LEN_MAX);
	for (size_t i = 0; i < r->envc; i++)
		check_str(m, r->env[i], WIRE_ENV_LEN_MAX);
	for (size_t i = 0; i < r->nallow; i++)
		check_str(m, r->allow[i], WIRE_ALLOW_LEN_MAX);
	check_str(m, r->cwd, WIRE_CWD_MAX);
	if (r->repo)
		check_str(m, r->repo, WIRE_REPO_MAX);
	if (r->noption > WIRE_OPTION_MAX)
		abort();
	for (size_t i = 0; i < r->noption; i++) {
		check_str(m, r->option[i], WIRE_OPTION_LEN_MAX);
		if (!wire_option_valid(r->option[i], strlen(r->option[i])))
			abort();
	}
}

/*
 * What egretd writes for the RUN, for a caller whose entry has every key
 * that adds a word (allow, audit, cache, upload_limit): all of it, within
 * the capacity the wire's limits and egret run's table give; an overrun
 * is ASan's to see (issue 39: one slot too few for the largest request,
 * corpus/wire/run_largest).
 */
static void check_argv(const struct wire_run *r)
{
	static const struct daemon_caller k = { .uid = 1000, .allow = true, .audit = true,
						.cache = "/home/c/.cache", .upload_limit = 1 << 20 };
	static struct daemon_peer peer = { .uid = 1000, .gid = 1000, .cgroup = "/user.slice" };
	const struct run_argv_from from = { .uid = 70001, .peer = &peer, .caller = &k,
					    .cgroup_mount = "/sys/fs/cgroup",
					    .state_dir = "/var/lib/egret" };
	struct strv argv;

	if (strv_init(&argv, daemon_run_argv_max()) < 0)
		return;
	if (daemon_run_argv(&argv, r, &from) < 0 && argv.error != -ENOMEM)
		abort();
	if (argv.n > argv.cap || argv.v[argv.n])
		abort();
	strv_free(&argv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct wire_msg m;
	static uint8_t out[WIRE_MAX];
	char err[256];
	int n;

	if (wire_decode(data, size, &m, err, sizeof(err)) < 0) {
		if (m.type != WIRE_NONE)
			abort();
		return 0;
	}
	switch (m.type) {
	case WIRE_RUN:
		check_run(&m);
		check_argv(&m.run);
		break;
	case WIRE_ATTACH:
		check_str(&m, m.attach.id, WIRE_ID_MAX);
		break;
	case WIRE_STARTED:
		check_str(&m, m.started.id, WIRE_ID_MAX);
		break;
	case WIRE_SIGNAL:
		if (m.signal.signo < 1 || m.signal.signo > WIRE_SIGNO_MAX)
			abort();
		break;
	case WIRE_EXIT:
		if (m.exit.status > WIRE_STATUS_MAX)
			abort();
		break;
	case WIRE_ERROR:
		check_str(&m, m.error.text, WIRE_TEXT_MAX);
		break;
	case WIRE_STATUS:
		if (m.status.id)
			check_str(&m, m.status.id, WIRE_ID_MAX);
		break;
	default:
		abort();
	}
	n = wire_encode(&m, out, sizeof(out), err, sizeof(err));
	if (n < 0 || (size_t)n != size || memcmp(out, data, size))
		abort();
	return 0;
}
