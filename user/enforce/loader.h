/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * enforce/loader.h - egret's BPF programs and maps, and one attempt's use
 * of them.
 *
 * The programs and most maps are a set, loaded and verified once and
 * shared by every attempt (enforce/shared.h finds or makes it); each map
 * key begins with the attempt's key, its cgroup's id (bpf/lib/attempt.h).
 * An attempt adds a ring buffer and repeat counts of its own, pins every
 * map it uses in its own directory (so egret status, bpftool and a
 * re-adopting egretd find them there), attaches the programs to its cgroup
 * by bpf_link and writes its settings into the attachment's cgroup storage.
 *
 * Everything is held as plain fds. loader.c holds the tables and the
 * attempt's steps, objects.c the loading of the set, slots.c the slots.
 */
#ifndef EGRET_LOADER_H
#define EGRET_LOADER_H

#include <stdbool.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include "enforce/allow.h"
#include "enforce/dests.h"

struct loader_opts {
	__u32 max_entries;	/* exact entries per family: the attempt's quota */
	__u32 max_cidrs;	/* prefixes per family */
	__u16 dns_port;		/* the DNS proxy's port, host order */
	bool dns_ip6_loopback;	/* proxy on ::1; else ::ffff:127.0.0.1 */
	bool log_allowed;	/* events for allowed decisions too */
	bool audit;		/* log would-be denials, deny nothing */
	int deny_errno;		/* refused connect/sendmsg: 0 = EPERM
				 * (loader_can_set_errno) */
	__u16 pin_ports[EGRET_PIN_PORTS];	/* SNI pinning's TCP ports; 0: unused */
	__u16 http_ports[EGRET_PIN_PORTS];	/* Host pinning's (plain HTTP) */
};


/* The main object's 15 programs - 14 attached to each attempt's cgroup,
 * and egret_tls, attached once to the set's sockhash (LOADER_PIN_SOCKS) -
 * then the unix object's 2 (absent, -1, where this kernel has no cgroup
 * unix hooks), then the task iterator (bpf/tasks.bpf.c; absent where the
 * kernel cannot load it), attached to nothing. */
#define LOADER_NPROGS		18
#define LOADER_NMAIN_PROGS	15
#define LOADER_TLS		14
#define LOADER_UNIX_CONNECT	15
#define LOADER_UNIX_SENDMSG	16
#define LOADER_TASKS		17

/* Is program @i attached to each attempt's cgroup (not egret_tls)? */
static inline bool loader_prog_per_cgroup(int i)
{
	return i != LOADER_TLS && i != LOADER_TASKS;
}

enum loader_map {
	/* The set's: keyed by attempt, or per socket, or per attachment. */
	LOADER_ALLOW4, LOADER_ALLOW6, LOADER_CIDR4, LOADER_CIDR6, LOADER_NAMES,
	LOADER_HOST4, LOADER_HOST6,	/* the host's addresses (hostaddr.h) */
	LOADER_UNIX_ALLOW,		/* abstract names (unix_filter.h) */
	LOADER_CONN, LOADER_DNS_ORIG,	/* socket storage */
	LOADER_ATTEMPT, LOADER_COUNTERS,	/* cgroup storage */
	LOADER_RINGS, LOADER_REPEAT_OF,	/* slot -> the two below */
	LOADER_SLOTS,			/* slot -> the attempt holding it */
	LOADER_PINS,			/* (address, name) pairs (bpf/lib/pin.h) */
	LOADER_PIN_SOCK,		/* socket storage of pinned connections */
	LOADER_PIN_SOCKS,		/* their sockhash, egret_tls attached */
	LOADER_TLS_COUNTS,		/* slot -> TLS verdicts */
	LOADER_HTTP_SOCK,		/* socket storage of HTTP-pinned connections */
	LOADER_DEST_COUNTS,		/* bytes per destination (bpf/lib/account.h) */
	LOADER_ACCT_SOCK,		/* socket storage: a connection's account */
	LOADER_DEST_TALLY,		/* per CPU: the same destinations' counts */
	LOADER_ADDR_DEST,		/* peer address -> its bare connections' destination */
	LOADER_PIN_BUFS,		/* per CPU: buffers for a first record's judgement */
	LOADER_PIN_BUF_SOCK,		/* socket storage: the same, when those are taken */
	LOADER_NSHARED,
	/* The attempt's slot's: its own while it holds the slot. */
	LOADER_EVENTS = LOADER_NSHARED,	/* the ring buffer */
	LOADER_REPEATS,			/* the repeat counts (events.h) */
	LOADER_NMAPS,
};

struct loader_prog_def {
	const char *name;
	enum bpf_attach_type type;
};

/* Every program, and every map by pin name. */
extern const struct loader_prog_def loader_progs[LOADER_NPROGS];
extern const char *const loader_map_names[LOADER_NMAPS];

struct loader {
	int progs[LOADER_NPROGS];
	int maps[LOADER_NMAPS];
	int links[LOADER_NPROGS];
	int nlinks;
	__u64 key;		/* the attempt's key: its cgroup's id */
	__u32 slot;		/* its ring buffer and repeat counts; 0: none */
	struct allow_quota quota;
	struct dests dests;	/* its destinations' ids (dests.h) */
	bool loaded_now;	/* the set was loaded (verified) by us */
	int set_lock;		/* its users' lock (shared.h), or -1 */
};

/* Every fd -1: loader_destroy() is then safe whatever happened. */
void loader_init(struct loader *ld);

/* Load the objects now, the unix one where the kernel can: a set with
 * no attempt yet. For shared.c. @with_tasks: the task iterator too, for a
 * set that is pinned for the attempts after (its load parses the
 * kernel's BTF, tens of ms; one attempt's uid check reads /proc in 1-2). */
int loader_load_set(struct loader *ld, bool with_tasks, const char **ret_step);

/* 1 when this kernel lets egret choose the errno of a refused connect()
 * or sendmsg() (bpf_set_retval, Linux 5.18), 0 when only EPERM; negative
 * errno when the probe itself could not load. */
int loader_can_set_errno(void);

/* The id of the cgroup behind @cgroup_fd: an attempt's key. */
int loader_cgroup_key(int cgroup_fd, __u64 *ret);

/*
 * Begin the attempt of cgroup @cgroup_fd: a slot (a ring buffer and
 * repeat counts, emptied of its last holder's), and every map pinned in
 * @pin_dir (an existing private directory) - before any entry is
 * written, so whoever removes the attempt finds every map that may hold
 * its entries there.
 */
int loader_attempt_begin(struct loader *ld, int cgroup_fd, const char *pin_dir,
			 const struct loader_opts *opts, const char **ret_step);

/* Attach the programs (the unix ones too when @with_unix) to @cgroup_fd
 * with bpf_link, pinning each link in @pin_dir. */
int loader_attach_pin(struct loader *ld, int cgroup_fd, const char *pin_dir,
		      bool with_unix, const char **ret_step);

/* Write the attempt's settings into its cgroup storage: after the attach
 * (which makes the storage), before anything runs in the cgroup. */
int loader_configure(struct loader *ld, const struct loader_opts *opts,
		     const char **ret_step);

/* The maps an attempt pinned in @pin_dir, for egret status and for an
 * egretd that re-adopts it (the programs stay attached by their pinned
 * links, and are not opened); @key is the attempt's. 0 or -errno. */
int loader_open_pins(struct loader *ld, const char *pin_dir, __u64 key);

/* Remove every entry of the attempt from the set's maps and give its slot
 * back. @no_sockets: its cgroup is empty and made no inet socket, so BPF
 * wrote none of its entries (egret_addr_dest is made at a SYN): that map
 * is not walked. 0 or the first -errno. */
int loader_forget(struct loader *ld, bool no_sockets);

/* Make slots 1..@n that are not made yet (egretd, before its callers:
 * making one waits for an RCU grace period). 0 or -errno. */
int loader_make_slots(struct loader *ld, __u32 n);

/* The allow maps' fds, for allow_write_static() and the DNS path. */
struct allow_maps loader_allow_maps(struct loader *ld);

/* The attempt's ring buffer, counters (cgroup storage) and repeat counts. */
int loader_events_fd(const struct loader *ld);
int loader_counters_fd(const struct loader *ld);
int loader_repeats_fd(const struct loader *ld);

/* Close links, programs and maps. Pins are the caller's (flat_dir_remove). */
void loader_destroy(struct loader *ld);

/* A fingerprint of the embedded BPF objects: a set of another build is
 * never used. 16 hex digits. */
void loader_object_tag(char *buf, size_t len);

#endif
