// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "egret.h"
#include "enforce/shared.h"
#include "enforce/tasks.h"
#include "lib/util.h"

int tasks_uid_runs(uid_t uid)
{
	_cleanup_close_ int prog = -1, link = -1, iter = -1;
	struct egret_task_ids ids[256];
	int found = 0;
	ssize_t n;

	prog = shared_tasks_prog();
	if (prog < 0)
		return prog;
	link = bpf_link_create(prog, 0, BPF_TRACE_ITER, NULL);
	if (link < 0)
		return -errno;
	iter = bpf_iter_create(link);
	if (iter < 0)
		return -errno;
	/* Read to the end, whatever is found: a walk cut short says nothing
	 * about the tasks after it. */
	while ((n = read(iter, ids, sizeof(ids))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			/* EAGAIN: the kernel restarted the walk after a
			 * change it could not step over: not an answer. */
			return -errno;
		}
		if (n % (ssize_t)sizeof(ids[0]))
			return -EPROTO;
		for (size_t i = 0; i < (size_t)n / sizeof(ids[0]); i++)
			found = found || ids[i].uid == uid || ids[i].euid == uid ||
				ids[i].suid == uid || ids[i].fsuid == uid;
	}
	return found;
}
