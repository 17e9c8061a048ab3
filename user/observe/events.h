/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * observe/events.h - the attempt's decisions: BPF's ring buffer and the DNS
 * proxy's own, written as JSON lines (docs/EVENTS.md) and summed up for the
 * exit summary.
 */
#ifndef EGRET_EVENTS_H
#define EGRET_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dns/names.h"
#include "dns/wire.h"
#include "egret.h"
#include "lib/loop.h"
#include "requests/log.h"

#define EVENTS_SCHEMA		1
#define EVENTS_TOP		64	/* distinct denied destinations kept */

struct ring_buffer;

struct denied_dest {
	uint8_t family;
	uint8_t proto;
	uint8_t reason;			/* enum egret_reason */
	uint8_t addr[16];
	uint16_t port;
	uint64_t count;
	char name[DNS_NAME_MAX + 1];	/* "" = no name seen */
};

/* Why a question got no upstream answer (events' "reason", the summary). */
enum dns_why {
	DNS_WHY_NONE = 0,
	DNS_WHY_NOT_ALLOWED,		/* no host rule: NXDOMAIN */
	DNS_WHY_CLASS,			/* a class other than IN: NXDOMAIN */
	DNS_WHY_TIMEOUT,		/* the upstream resolver did not answer */
	DNS_WHY_UPSTREAM,		/* it failed otherwise (refused, unreachable) */
	DNS_WHY_MALFORMED,		/* its answer did not parse */
	DNS_WHY_TOO_MANY,		/* more addresses than egret learns */
	DNS_WHY_MAP_FULL,		/* the allow map is full */
	DNS_WHY_BUSY,			/* too many questions upstream at once */
	DNS_WHY_MAX,
};

/* A denied or failed name, for the summary. */
struct denied_name {
	char name[DNS_NAME_MAX + 1];
	uint8_t why;			/* enum dns_why */
	bool failed;			/* SERVFAIL, not a denial */
	uint64_t count;
};

struct events {
	const char *attempt;		/* id, in every line */
	int log_fd;			/* --log FILE, or -1 */
	bool audit;
	int counters_fd;
	const struct names *names;	/* learned address -> name */
	struct request_log *requests;	/* denials become requests, or NULL */
	struct ring_buffer *rb;
	struct loop_source src;
	struct loop *loop;		/* ended when enforcement failed */
	int64_t boot_to_real_ns;	/* CLOCK_REALTIME - CLOCK_BOOTTIME */
	/* For the summary. */
	uint64_t dns_answered, dns_denied, dns_would_deny, dns_failed;
	uint64_t write_errors;
	struct denied_dest top[EVENTS_TOP];
	size_t ntop;
	uint64_t top_overflow;		/* denials of destinations not kept */
	struct denied_name names_out[EVENTS_TOP];
	size_t nnames_out;
	uint64_t names_overflow;
};

/* Open --log (O_APPEND, 0600; NULL: no log). -errno on failure. */
int events_open(struct events *ev, const char *log_path, const char *attempt,
		bool audit);

/* Read the ring buffer from @loop; @names attributes addresses. */
int events_start(struct events *ev, struct loop *loop, int ringbuf_fd,
		 int counters_fd, const struct names *names);

/* Drain what is left (call after COMMAND exited, before the summary). */
void events_drain(struct events *ev);

/* A DNS decision. @verdict: "allow", "deny", "would-deny", "servfail";
 * @why for the last three. */
void events_dns(struct events *ev, const char *name, unsigned int qtype,
		const char *verdict, enum dns_why why,
		const struct dns_addr *addrs, int naddrs, uint32_t ttl);

/* The refused lookup of @name came from @client (for its request). */
void events_dns_client(struct events *ev, const char *name,
		       const struct sockaddr *client, bool tcp);

/* Exit summary (stderr), from the counters and the denials seen. */
void events_summary(struct events *ev, FILE *out);

void events_close(struct events *ev);

#endif
