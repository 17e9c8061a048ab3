/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * observe/feed.h - the denial feed: every refusal that concerns COMMAND, as
 * one JSON line for COMMAND to read while it runs ($EGRET_DENIALS,
 * docs/AGENTS.md). egret writes it through an fd it made (attempt/limits.h),
 * never by a path COMMAND could name; at most FEED_MAX_BYTES, then one last
 * line saying so, and the rest only counted. It carries the refusal and
 * nothing of the host or of another attempt.
 */
#ifndef EGRET_OBSERVE_FEED_H
#define EGRET_OBSERVE_FEED_H

#include <stdbool.h>
#include <stdint.h>

#include "dns/decision.h"
#include "egret.h"
#include "observe/jsonl.h"

#define FEED_MAX_BYTES	(1024 * 1024)

struct feed {
	struct jsonl_log log;		/* its fd, -1: none; the attempt's id */
	uint64_t bytes;			/* written so far */
	uint64_t dropped;		/* refusals past FEED_MAX_BYTES, or unwritten */
	bool full;			/* the last line is written */
};

/* A refusal BPF reported (observe/events.h: on_denial): @name the name it
 * asked (TLS, HTTP) or that taught the address, or NULL; @count how many
 * (repeats come as one line with their count). */
void feed_bpf(struct feed *f, const struct egret_event *e, const char *name, uint64_t count);

/* One of the DNS proxy's decisions: a refused or failed name is a line. */
void feed_dns(struct feed *f, const struct dns_decision *d);

/* Close the fd, saying how many refusals only egret's log has; the file
 * stays for COMMAND until the attempt goes. */
void feed_close(struct feed *f);

#endif
