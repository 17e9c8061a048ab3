// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <sys/mman.h>

#include "lib/pages.h"

void *pages_zeroed(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void pages_free(void *p, size_t size)
{
	if (p)
		munmap(p, size);
}
