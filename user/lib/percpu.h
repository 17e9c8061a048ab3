/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* lib/percpu.h - an attempt's counters, read from user space. */
#ifndef EGRET_PERCPU_H
#define EGRET_PERCPU_H

#include <stdint.h>

/* Counter @index (EGRET_COUNTER()) of attempt @key: the per-CPU cgroup
 * storage egret_counters (@fd), summed over CPUs, into @ret: 0, or a
 * negative errno when it cannot be read. */
int percpu_counter_read(int fd, uint64_t key, uint32_t index, uint64_t *ret);

/* The same, for what only reports it: 0 when unreadable. */
uint64_t percpu_counter(int fd, uint64_t key, uint32_t index);

#endif
