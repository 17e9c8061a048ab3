/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * enforce/unix_filter.h - the abstract unix sockets an attempt may reach by name
 * (bpf/unix.bpf.c), where Landlock's all-or-nothing scope cannot say it:
 * when the operator allows some outside ones (--allow-unix @NAME), or the
 * kernel has the cgroup unix hooks (6.7+) but no Landlock scope (< 6.12).
 *
 * Its own small BPF object, loaded fresh when needed: it shares the main
 * object's event ring buffer and counters (map reuse) and is attached and
 * pinned beside its programs, so it outlives egret like them.
 */
#ifndef EGRET_UNIX_FILTER_H
#define EGRET_UNIX_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#include "egret.h"

struct unix_filter {
	int links[2];
	int allow_fd;
	bool attached;
};

struct unix_filter_opts {
	const struct egret_unix_key *names;
	size_t nnames;
	int events_fd, counters_fd, repeats_fd;	/* the main object's */
	bool audit, log_allowed;
	int cgroup_fd;
	const char *pin_dir;
};

/* Does this kernel have cgroup/connect_unix and sendmsg_unix (6.7+)? */
bool unix_filter_supported(void);

/* "@NAME" -> a key; -EINVAL for a path or a name too long. */
int unix_name_parse(const char *text, struct egret_unix_key *ret);

void unix_filter_init(struct unix_filter *f);

/* Load, fill with @o->names, attach to @o->cgroup_fd, pin. 0 or -errno. */
int unix_filter_attach(struct unix_filter *f, const struct unix_filter_opts *o,
		       const char **ret_step);

/* Close our fds (the pins are the attempt's, removed with it). */
void unix_filter_close(struct unix_filter *f);

#endif
