/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * loader.h - load egret's BPF object, attach it to one cgroup by bpf_link,
 * and pin links and maps under the attempt's pin directory.
 */
#ifndef EGRET_LOADER_H
#define EGRET_LOADER_H

#include <stdbool.h>
#include <linux/types.h>
#include "allow.h"

struct egret_bpf;
struct bpf_link;

struct loader_opts {
	__u32 max_entries;	/* each exact map */
	__u32 max_cidrs;	/* each trie */
	__u16 dns_port;		/* the DNS proxy's port, host order */
	bool dns_ip6_loopback;	/* proxy on ::1; else ::ffff:127.0.0.1 */
	bool log_allowed;	/* events for allowed decisions too */
	bool audit;		/* log would-be denials, deny nothing */
};

#define LOADER_MAX_LINKS 16

struct loader {
	struct egret_bpf *skel;
	struct bpf_link *links[LOADER_MAX_LINKS];
	int nlinks;
	/* Set when a step fails: which, for the caller's one error line. */
	const char *failed_step;
};

/* Open and load the object, sized by @opts. */
int loader_load(struct loader *ld, const struct loader_opts *opts);

/* The allow maps' fds, for allow_write_static() and the DNS path. */
struct allow_maps loader_allow_maps(const struct loader *ld);

/* The event ring buffer and the per-CPU counters. */
int loader_events_fd(const struct loader *ld);
int loader_counters_fd(const struct loader *ld);

/* Attach every program to @cgroup_fd with bpf_link, pinning each link and
 * every map under @pin_dir (an existing, private directory). */
int loader_attach_pin(struct loader *ld, int cgroup_fd, const char *pin_dir);

/* Close links and the object. Pins are the caller's (flat_dir_remove). */
void loader_destroy(struct loader *ld);

#endif
