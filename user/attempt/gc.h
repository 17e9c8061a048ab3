/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* attempt/gc.h - remove what attempts whose egret died left behind. */
#ifndef EGRET_GC_H
#define EGRET_GC_H

#include <stdbool.h>

/*
 * How long an egretd's attempt that nobody serves is left for its egretd
 * to come back and re-adopt it, from the first gc that found it so with
 * that egretd not running. Longer than any restart (systemd's take
 * seconds; a crash loop's back-off, minutes at most).
 */
#define GC_UNSERVED_GRACE_S	300

enum gc_daemon {
	GC_DAEMON_NONE,		/* egretd's attempts are never touched */
	GC_DAEMON_GONE,		/* removed once their egretd is gone for good */
	GC_DAEMON_NOW,		/* removed whenever their egretd is not running */
};

struct gc_opts {
	enum gc_daemon daemon;
	/* Only attempts whose cgroup lies under this directory (a test
	 * suite's own, a container's), or NULL: every one. */
	const char *under;
};

/*
 * For every record in EGRET_RUN_DIR whose lock is free (its egret is gone):
 * kill the attempt's processes, remove its cgroup, its pins (detaching the
 * programs) and the record. Live attempts are never touched.
 *
 * egretd's (a record with daemon=1) are its to re-adopt (daemon/adopt.h)
 * while it runs, or restarts: with GC_DAEMON_GONE one goes only when its
 * egretd (attempt/instance.h) has not been running for GC_UNSERVED_GRACE_S,
 * as two gc runs see it (the first marks the record); with GC_DAEMON_NOW,
 * as soon as its egretd is not running. Returns the number of attempts
 * removed, or a negative errno if some could not be.
 */
int gc_stale_attempts(const struct gc_opts *o);

/*
 * Remove what writers that died left half-written (lib/atomic_file.h) in
 * egretd's directories: EGRET_UID_LOCK_DIR, EGRETD_ATTEMPT_DIR (what they
 * left in EGRET_RUN_DIR, gc_stale_attempts removes). Files being written
 * are left alone. egretd at its start and scans; egret gc.
 */
void gc_hidden_files(void);

/* What the attempt's own egret knows, which spares the teardown work. */
struct teardown_known {
	/* Its entries are out of the set's maps already: it forgot them
	 * through the map fds it holds (loader_forget), not reopened pins. */
	bool forgotten;
	/* Its cgroup is empty and its socket hook let no inet socket be
	 * made there (teardown_count_sockets): no socket to destroy, and no
	 * entry BPF makes at a SYN to forget. */
	bool no_sockets;
	/* Its counters (egret_counters, its key): once its cgroup is empty,
	 * a socket hook that let no inet socket be made spares the host-wide
	 * socket dumps, each a walk of the kernel's whole TCP table. -1:
	 * unknown, dump. */
	int counters_fd;
	uint64_t counters_key;
};

/* Tear down one attempt: its entries in the set's maps, its cgroup
 * (killing what is inside), its sockets, then its pins. The order
 * matters: programs stay attached until nothing is left to police.
 * @known: what needs no doing; NULL from anyone but the attempt's own
 * egret. */
int attempt_teardown(const char *cgroup, const char *pins, const struct teardown_known *known);

/* Empty @cgroup (killing what is inside) and read @known's counters: once
 * it is empty nothing makes a socket in it any more; did its socket hook
 * ever let one be made? Sets known->no_sockets (unsure: false). */
void teardown_count_sockets(const char *cgroup, struct teardown_known *known);

#endif
