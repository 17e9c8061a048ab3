/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * enforce/programs.h - an attempt's BPF programs: a spare set loaded and
 * verified in advance (enforce/spare.h) when one is ready, else the object
 * loaded now (enforce/loader.h); then configured. Above both, so neither
 * needs the other's way of getting programs.
 */
#ifndef EGRET_PROGRAMS_H
#define EGRET_PROGRAMS_H

#include "enforce/loader.h"

/* Take a spare sized like @opts (unless opts->no_spare), or load now; then
 * write the settings of @opts. Sets ld->from_spare; on failure *@ret_step
 * says which step (as every setup step of egret: a static text). */
int programs_get(struct loader *ld, const struct loader_opts *opts,
		 const char **ret_step);

#endif
