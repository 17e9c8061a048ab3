// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/percpu.h"
#include "lib/util.h"

uint64_t percpu_sum(int fd, const void *key, size_t value_size, size_t off)
{
	/* The kernel hands each CPU's copy 8-byte aligned. */
	size_t size = (value_size + 7) & ~(size_t)7;
	int ncpu = libbpf_num_possible_cpus();
	_cleanup_free_ unsigned char *vals = NULL;
	uint64_t sum = 0, n;

	if (fd < 0 || ncpu <= 0 || off + sizeof(n) > value_size)
		return 0;
	vals = calloc((size_t)ncpu, size);
	if (!vals || bpf_map_lookup_elem(fd, key, vals) < 0)
		return 0;
	for (int c = 0; c < ncpu; c++) {
		memcpy(&n, vals + (size_t)c * size + off, sizeof(n));
		sum += n;
	}
	return sum;
}
