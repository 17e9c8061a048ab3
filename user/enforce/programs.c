// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>

#include "enforce/programs.h"
#include "enforce/spare.h"

int programs_get(struct loader *ld, const struct loader_opts *opts,
		 const char **ret_step)
{
	int r = -ENOENT;

	if (!opts->no_spare)
		r = spare_take(ld, opts->max_entries, opts->max_cidrs);
	ld->from_spare = r == 0;
	if (r < 0)
		r = loader_load_fresh(ld, opts->max_entries, opts->max_cidrs, ret_step);
	if (r < 0)
		return r;
	return loader_configure(ld, opts, ret_step);
}
