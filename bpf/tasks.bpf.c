// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tasks.bpf.c - every live task's ids, for the check that no process
 * outside an attempt runs as its uid (user/attempt/preflight.h).
 *
 * Reading /proc/PID/status of every process costs three system calls and
 * the kernel's formatting of ~50 lines each: 1-2 ms on a quiet host, and
 * an egretd starting 100 attempts reads more processes with each one. A
 * task iterator hands over the same ids of every task (threads included:
 * each has credentials of its own) in a few reads. It takes no parameter,
 * so concurrent readers never share state: egret filters what it reads.
 * A separate object, loaded into the set where the kernel can: the task
 * iterator needs kernel BTF, which the main object avoids.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "egret.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("iter/task")
int egret_tasks(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	const struct cred *cred;
	struct egret_task_ids ids;

	/* The end of the walk, and the dead: a zombie runs nothing. */
	if (!task || BPF_CORE_READ(task, exit_state))
		return 0;
	/* The objective credentials, as /proc/PID/status, kill() and ptrace
	 * see them: task->cred is what the task acts with, which the kernel
	 * swaps for a while in some calls (overlayfs acts as its mounter). */
	cred = BPF_CORE_READ(task, real_cred);
	ids.tgid = (__u32)BPF_CORE_READ(task, tgid);
	ids.pid = (__u32)BPF_CORE_READ(task, pid);
	ids.uid = BPF_CORE_READ(cred, uid.val);
	ids.euid = BPF_CORE_READ(cred, euid.val);
	ids.suid = BPF_CORE_READ(cred, suid.val);
	ids.fsuid = BPF_CORE_READ(cred, fsuid.val);
	bpf_seq_write(ctx->meta->seq, &ids, sizeof(ids));
	return 0;
}
