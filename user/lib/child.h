/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lib/child.h - short-lived children that share our memory.
 *
 * egret asks the kernel questions as another user ("can uid U search this
 * directory?") and makes namespaces from children. A fork() copies the
 * page tables of egret's whole address space and leaves the parent with
 * copy-on-write faults after: about 1 ms a fork on the VMs egret runs on,
 * three of them on every start through egretd. A child made with
 * CLONE_VM shares our memory and runs on a stack of its own instead
 * (posix_spawn's way): about 30 us.
 *
 * The price is discipline in the child: it shares our heap and our libc
 * state, so it calls only async-signal-safe functions, never malloc, and
 * changes its ids with child_become() (raw system calls; libc's wrappers
 * would try to change the ids of the parent's threads too). Its
 * credentials, namespaces and fd table are its own (no CLONE_FS, no
 * CLONE_FILES).
 *
 * A child that changes its ids changes the "dumpable" mode of the memory
 * it shares with us to fs.suid_dumpable. At 1 that memory, egret's own,
 * would be open to the uid the child became (/proc/PID/mem, while the
 * child lives, and through the fd after): such children go through
 * child_run_as(), which forks unless the host's setting is 0 or 2.
 */
#ifndef EGRET_CHILD_H
#define EGRET_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/sched.h>

/* @fn(@arg) in a child sharing our memory, while we wait (CLONE_VFORK):
 * what @fn returned (0..255: its exit status), or -errno when the child
 * could not be made or was killed (-ECHILD). */
int child_run(int (*fn)(void *), void *arg);

/* child_run() for a @fn that calls child_become(): in a forked child
 * where sharing our memory would make it reachable to that uid
 * (fs.suid_dumpable 1, or unreadable). */
int child_run_as(int (*fn)(void *), void *arg);

/* Does a change of ids in a child leave the memory it shares with us to
 * root alone (fs.suid_dumpable 0 or 2)? */
bool child_ids_change_keeps_memory_ours(void);

/* A stack of @size bytes for a child, its lowest page a guard (an
 * overflow faults): mapped, only what is touched is ever backed. NULL
 * when it cannot be mapped. */
void *child_stack_new(size_t size);

/* clone3(@args) with CLONE_VM | CLONE_VFORK added, the child on @stack
 * (@size bytes, ours until we resume): it runs @fn(@arg), which execs or
 * _exits and never returns. We resume once it has exec'd or exited. The
 * child's pid or -errno; -ENOSYS where built for another architecture
 * than x86-64 (the call is made in assembly: the child has no frame to
 * return to). Our signals are the caller's to block around it. */
pid_t child_clone3_vfork(struct clone_args *args, void *stack, size_t size,
			 void (*fn)(void *), void *arg);

/* A child sharing our memory, born with @flags (CLONE_NEWUSER, say),
 * running @fn(@arg) while we go on: its pid, or -errno. The child may
 * touch nothing of ours but what @arg points to; child_reap() waits for
 * it and frees its stack. */
struct child {
	pid_t pid;
	void *stack;
	size_t stack_size;
};
int child_start(struct child *c, int flags, int (*fn)(void *), void *arg);
int child_reap(struct child *c);

/* In a child: drop to @uid/@gid with @groups (none when @ngroups is 0),
 * by raw system calls. 0 or -errno. */
int child_become(uid_t uid, gid_t gid, size_t ngroups, const gid_t *groups);

#endif
