/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * observe/summary.h - what an attempt came to, once COMMAND ended and the
 * events are drained: the exit summary, and the log's record of each
 * destination with its bytes and budget (docs/EVENTS.md).
 */
#ifndef EGRET_OBSERVE_SUMMARY_H
#define EGRET_OBSERVE_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct catalog;
struct events;
struct dest_figures;
struct figures;

/* Counter @index of the attempt (EGRET_COUNTER(hook, verdict), or
 * EGRET_COUNTER_DROPPED: events lost), summed over the CPUs. */
uint64_t summary_counter(const struct events *ev, uint32_t index);

/* The attempt's destinations as they ended (read once, then kept), by
 * bytes sent; NULL when none could be read. */
const struct dest_figures *summary_dests(struct events *ev, size_t *n);

/* One JSON line per destination of the attempt, its bytes and budget:
 * call once, after events_drain(). */
void summary_log_destinations(struct events *ev);

/* The exit summary, from the counters and the denials the events kept. */
void summary_print(struct events *ev, FILE *out);

/* What the attempt counted (observe/figures.h), into @ret: its refusals
 * and DNS, the events lost (read now); with @final (after
 * events_drain()) also its bytes by @cat's categories and the
 * destinations past their budget (one read of the shared map). */
void summary_figures(struct events *ev, const struct catalog *cat, bool final,
		     struct figures *ret);

#endif
