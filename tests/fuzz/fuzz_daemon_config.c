// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_daemon_config.c - libFuzzer target for egretd's configuration
 * (user/daemon/config.c). The file is root's, but egretd parses it as root
 * and every launch is judged by what it says, so the parser must hold for
 * any bytes: whatever parses is within the documented limits, every caller
 * found again by its uid, and everything it allocated is freed (LSan).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "daemon/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct diag d;
	struct daemon_config c;
	int r;

	d = (struct diag){ 0 };
	r = daemon_config_parse((const char *)data, size, "fuzz.yaml", &c, &d);
	if (r == -EINVAL && !d.n)
		__builtin_trap();	/* refused without saying why */
	if (r < 0)
		return 0;
	if (d.n || !c.ncallers || c.ncallers > DAEMON_CALLERS_MAX ||
	    c.uid_first == 0 || c.uid_first > c.uid_last ||
	    c.uid_last - c.uid_first >= DAEMON_UIDS_MAX ||
	    !c.max || c.max > DAEMON_MAX_LIMIT || c.max - 1 > c.uid_last - c.uid_first ||
	    c.socket_path[0] != '/')
		__builtin_trap();
	for (size_t i = 0; i < c.ncallers; i++) {
		const struct daemon_caller *k = &c.callers[i];

		if (!k->max || k->max > c.max || k->nrepos > DAEMON_REPOS_MAX ||
		    (k->uid >= c.uid_first && k->uid <= c.uid_last))
			__builtin_trap();
		if (k->cgroup && !k->cgroup_literal &&
		    daemon_config_caller(&c, k->uid, k->cgroup) != k)
			__builtin_trap();	/* a prefix admits itself */
		if (!k->cgroup && daemon_config_caller(&c, k->uid, "/") != k)
			__builtin_trap();
		for (size_t j = 0; j < k->nrepos; j++)
			if (!daemon_repo_pattern_valid(k->repos[j]))
				__builtin_trap();
	}
	daemon_config_free(&c);
	return 0;
}
