// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "egret.h"
#include "lib/percpu.h"
#include "lib/util.h"

int percpu_counter_read(int fd, uint64_t key, uint32_t index, uint64_t *ret)
{
	/* The kernel hands each CPU's copy 8-byte aligned. */
	size_t size = (sizeof(struct egret_counts) + 7) & ~(size_t)7;
	int ncpu = libbpf_num_possible_cpus();
	_cleanup_free_ unsigned char *vals = NULL;
	__u64 k = key, sum = 0, n;

	if (fd < 0 || index >= EGRET_NCOUNTERS)
		return -EBADF;
	if (ncpu <= 0)
		return ncpu < 0 ? ncpu : -EINVAL;
	vals = calloc((size_t)ncpu, size);
	if (!vals)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &k, vals) < 0)
		return -errno;
	for (int c = 0; c < ncpu; c++) {
		memcpy(&n, vals + (size_t)c * size + index * sizeof(n), sizeof(n));
		sum += n;
	}
	*ret = sum;
	return 0;
}

uint64_t percpu_counter(int fd, uint64_t key, uint32_t index)
{
	uint64_t n = 0;

	return percpu_counter_read(fd, key, index, &n) < 0 ? 0 : n;
}
