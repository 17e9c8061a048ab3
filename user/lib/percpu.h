/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* lib/percpu.h - reading a per-CPU BPF map value from user space. */
#ifndef EGRET_PERCPU_H
#define EGRET_PERCPU_H

#include <stddef.h>
#include <stdint.h>

/* The __u64 at @off of the value at @key of the per-CPU map @fd (values of
 * @value_size bytes), summed over CPUs; 0 when it cannot be read. */
uint64_t percpu_sum(int fd, const void *key, size_t value_size, size_t off);

#endif
