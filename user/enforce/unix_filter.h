/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * enforce/unix_filter.h - the abstract unix sockets an attempt may reach by name
 * (bpf/unix.bpf.c), where Landlock's all-or-nothing scope cannot say it:
 * when the operator allows some outside ones (--allow-unix @NAME), or the
 * kernel has the cgroup unix hooks (6.7+) but no Landlock scope (< 6.12).
 *
 * Its own small BPF object, loaded with the main one into the set of
 * programs (enforce/objects.c) where the kernel can; an attempt that needs
 * it writes its names into the set's egret_unix_allow under its key and
 * attaches the two programs with the others.
 */
#ifndef EGRET_UNIX_FILTER_H
#define EGRET_UNIX_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#include "egret.h"

/* Does this kernel have cgroup/connect_unix and sendmsg_unix (6.7+)? */
bool unix_filter_supported(void);

/* "@NAME" -> a key; -EINVAL for a path or a name too long. */
int unix_name_parse(const char *text, struct egret_unix_key *ret);

/* Allow @names (at most EGRET_UNIX_ALLOW_MAX) to attempt @attempt, in
 * egret_unix_allow (@fd). 0 or -errno. */
int unix_filter_allow(int fd, __u64 attempt, const struct egret_unix_key *names,
		      size_t n);

#endif
