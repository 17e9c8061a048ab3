/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * observe/jsonl.h - one line of the event log (docs/EVENTS.md): built in a
 * bounded buffer, written in one write(), so that a crash never leaves
 * half a line behind. What observe/events.c and observe/summary.c share.
 */
#ifndef EGRET_OBSERVE_JSONL_H
#define EGRET_OBSERVE_JSONL_H

#include <stddef.h>
#include <stdint.h>

#define EVENTS_SCHEMA		1	/* "v" of every line */

/* Where the lines go, and what every line says first. */
struct jsonl_log {
	int fd;				/* --log FILE, or -1 */
	const char *attempt;		/* id, in every line */
	int64_t boot_to_real_ns;	/* CLOCK_REALTIME - CLOCK_BOOTTIME */
	uint64_t write_errors;		/* lines not written whole */
};

/* A line under construction in @buf (@len bytes, one kept for the line
 * end). An append that does not fit is cut short, and the line with it. */
struct jsonl {
	char *buf;
	size_t len, off;
};

/* Now, on CLOCK_BOOTTIME (the clock of BPF's event times); what to add
 * to such an instant for CLOCK_REALTIME (taken once, at the start). */
uint64_t jsonl_boot_ns(void);
int64_t jsonl_boot_to_real_ns(void);

/* Every line's start: {"v":...,"time":...,"attempt":... for the
 * CLOCK_BOOTTIME instant @boot_ns. */
void jsonl_start(struct jsonl *l, const struct jsonl_log *log, uint64_t boot_ns);

void jsonl_put(struct jsonl *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* @s as a JSON string (lib/json.h); jsonl_str_or_null: null for NULL
 * or "". */
void jsonl_str(struct jsonl *l, const char *s);
void jsonl_str_or_null(struct jsonl *l, const char *s);

/* Close the line and write it to @log (a failed write is counted). */
void jsonl_end(struct jsonl_log *log, struct jsonl *l);

#endif
