/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * enforce/loader.h - egret's BPF programs and maps for one attempt: loaded
 * now (or taken from a spare, enforce/programs.h chooses), configured,
 * attached to the attempt's cgroup by bpf_link and pinned.
 *
 * Everything is held as plain fds, whichever way it was loaded.
 */
#ifndef EGRET_LOADER_H
#define EGRET_LOADER_H

#include <stdbool.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include "enforce/allow.h"

struct loader_opts {
	__u32 max_entries;	/* each exact map */
	__u32 max_cidrs;	/* each trie */
	__u16 dns_port;		/* the DNS proxy's port, host order */
	bool dns_ip6_loopback;	/* proxy on ::1; else ::ffff:127.0.0.1 */
	bool log_allowed;	/* events for allowed decisions too */
	bool audit;		/* log would-be denials, deny nothing */
	bool no_spare;		/* load now even if a spare is ready */
	int deny_errno;		/* refused connect/sendmsg: 0 = EPERM (loader_can_set_errno) */
};

#define LOADER_NPROGS	14

enum loader_map {
	LOADER_ALLOW4, LOADER_ALLOW6, LOADER_CIDR4, LOADER_CIDR6, LOADER_NAMES,
	LOADER_EVENTS, LOADER_COUNTERS, LOADER_DNS_ORIG, LOADER_CONN,
	LOADER_HOST4, LOADER_HOST6,	/* the host's addresses (hostaddr.h) */
	LOADER_REPEATS,		/* denials counted, not queued (events.h) */
	LOADER_BSS,		/* the programs' settings (proxy port, flags) */
	LOADER_NMAPS,
};

struct loader_prog_def {
	const char *name;
	enum bpf_attach_type type;
};

/* Every program of the object, and every map, by name (pin names). */
extern const struct loader_prog_def loader_progs[LOADER_NPROGS];
extern const char *const loader_map_names[LOADER_NMAPS];

struct loader {
	int progs[LOADER_NPROGS];
	int maps[LOADER_NMAPS];
	int links[LOADER_NPROGS];
	int nlinks;
	bool from_spare;	/* loaded in advance by another egret */
};

/* Every fd -1: loader_destroy() is then safe whatever happened. */
void loader_init(struct loader *ld);

/* Write the settings of @opts into the programs' .bss: before any attach. */
int loader_configure(struct loader *ld, const struct loader_opts *opts,
		     const char **ret_step);

/*
 * Load the object now, sized by @max_entries/@max_cidrs, with no settings
 * (nothing counts as DNS until loader_configure()). For spare.c and
 * programs.c.
 */
int loader_load_fresh(struct loader *ld, __u32 max_entries, __u32 max_cidrs,
		      const char **ret_step);

/* 1 when this kernel lets egret choose the errno of a refused connect()
 * or sendmsg() (bpf_set_retval, Linux 5.18), 0 when only EPERM; negative
 * errno when the probe itself could not load. */
int loader_can_set_errno(void);

/* The allow maps' fds, for allow_write_static() and the DNS path. */
struct allow_maps loader_allow_maps(const struct loader *ld);

/* The event ring buffer, the per-CPU counters, the repeat counts. */
int loader_events_fd(const struct loader *ld);
int loader_counters_fd(const struct loader *ld);
int loader_repeats_fd(const struct loader *ld);

/* Attach every program to @cgroup_fd with bpf_link, pinning each link and
 * every map under @pin_dir (an existing, private directory). */
int loader_attach_pin(struct loader *ld, int cgroup_fd, const char *pin_dir,
		      const char **ret_step);

/* Close links, programs and maps. Pins are the caller's (flat_dir_remove). */
/*
 * The maps an attempt pinned in @pin_dir (loader_attach_pin), for an
 * egretd that re-adopts it: the programs stay attached by their pinned
 * links, and are not opened. 0 or -errno.
 */
int loader_open_pins(struct loader *ld, const char *pin_dir);

void loader_destroy(struct loader *ld);

/* A fingerprint of the embedded BPF object: spares of another build are
 * never taken. 16 hex digits. */
void loader_object_tag(char *buf, size_t len);

#endif
