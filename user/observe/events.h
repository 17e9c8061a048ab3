/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * observe/events.h - the attempt's decisions: BPF's ring buffer and the DNS
 * proxy's own, written as JSON lines (docs/EVENTS.md) and kept for the
 * exit summary (observe/summary.h).
 */
#ifndef EGRET_EVENTS_H
#define EGRET_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "egret.h"
#include "lib/loop.h"
#include "lib/names.h"
#include "observe/figures.h"
#include "observe/jsonl.h"
#include "observe/repeats.h"

#define EVENTS_TOP		64	/* distinct denied destinations kept */
#define EVENTS_REPEATS_MS	1000	/* how often BPF's repeat counts are read */

struct dns_decision;
struct names;
struct ring_buffer;
struct dest_figures;

#define EVENTS_SNIS	32

struct denied_dest {
	uint8_t family;
	uint8_t proto;
	uint8_t reason;			/* enum egret_reason */
	uint8_t addr[16];
	uint16_t port;
	uint64_t count;
	char name[DNS_NAME_MAX + 1];	/* "" = no name seen */
	__u8 named;			/* a TLS or HTTP denial (its hook): @name is
				 * the name it asked, not the address's */
};

/* A denied or failed name, for the summary. */
struct denied_name {
	char name[DNS_NAME_MAX + 1];
	uint8_t why;			/* enum dns_why */
	bool failed;			/* SERVFAIL, not a denial */
	uint64_t count;
};

struct events {
	struct jsonl_log log;		/* --log FILE (.fd -1: none) */
	bool audit;
	int counters_fd;		/* per-CPU cgroup storage */
	uint64_t counters_key;		/* the attempt's cgroup id */
	int tls_counts_fd;		/* egret_tls_counts, by @slot; -1: none */
	uint32_t slot;
	/* The names of recent TLS denials, by what their repeats are
	 * counted under: a repeat line names what its first asked. */
	struct events_sni {
		struct egret_repeat_key key;
		char sni[EGRET_SNI_MAX + 4];
	} snis[EVENTS_SNIS];
	unsigned int nsnis;
	const struct names *names;	/* learned address -> name */
	/* Each denial BPF reported, @count times (repeats come counted),
	 * with the name that taught its address (NULL: none): the attempt
	 * hands it to the request log. */
	void (*on_denial)(void *ctx, const struct egret_event *e, const char *name,
			  uint64_t count);
	void *denial_ctx;
	/* A connection passed its destination's upload budget: the socket
	 * with @cookie is to be ended (same @denial_ctx). */
	void (*on_over)(void *ctx, uint64_t cookie);
	/* egret_dest_counts and egret_dest_tally, and the attempt's key, for
	 * the summary and the log's per-destination records; -1: none. */
	int dests_fd;
	int tally_fd;
	struct dest_figures *dests;	/* read once, at the end */
	size_t ndests;
	bool dests_read;
	struct ring_buffer *rb;
	struct loop_source src;
	struct repeats repeats;
	struct loop_source repeats_timer;	/* timerfd */
	bool repeats_failed;			/* warned once */
	struct loop *loop;		/* ended when enforcement failed */
	/* For the summary. */
	uint64_t dns_answered, dns_denied, dns_would_deny, dns_failed;
	uint64_t dns_quiet;		/* an agent's known noise, refused */
	struct denied_dest top[EVENTS_TOP];
	size_t ntop;
	uint64_t top_overflow;		/* denials of destinations not kept */
	struct denied_name names_out[EVENTS_TOP];
	size_t nnames_out;
	uint64_t names_overflow;
	/* For egretd's metrics: refusals by reason and protocol, DNS by
	 * result (the rest is filled at the end: events_figures()). */
	struct figures fig;
};

/* Open --log (O_APPEND, 0600; NULL: no log) into @ev, which must be zeroed
 * memory (attempt_init(), attempt_new()). -errno on failure. */
int events_open(struct events *ev, const char *log_path, const char *attempt,
		bool audit);

/* Read the ring buffer and the repeat counts from @loop; @names
 * attributes addresses. */
int events_start(struct events *ev, struct loop *loop, int ringbuf_fd,
		 int counters_fd, uint64_t counters_key, int repeats_fd,
		 const struct names *names);

/* Drain what is left (call after COMMAND exited, before the summary). */
void events_drain(struct events *ev);

/* Where the TLS verdicts of the attempt's slot are counted (egret_tls_counts, bpf/lib/pin_map.h). */
void events_set_tls(struct events *ev, int tls_counts_fd, uint32_t slot);

/* One of the DNS proxy's decisions: counted, kept for the summary,
 * logged. */
void events_dns(struct events *ev, const struct dns_decision *d);

/* (What the attempt came to, from what is kept here: observe/summary.h.) */

void events_close(struct events *ev);

#endif
