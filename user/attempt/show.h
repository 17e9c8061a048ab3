/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attempt/show.h - the live attempts as `egret status` prints them.
 */
#ifndef EGRET_ATTEMPT_SHOW_H
#define EGRET_ATTEMPT_SHOW_H

#include <stdbool.h>
#include <sys/types.h>

struct show_filter {
	const char *only;	/* one attempt's id, or NULL: all */
	bool json;		/* docs/EVENTS.md's status JSON, else text */
	/* egretd for its caller: only that caller's attempts of this
	 * egretd (attempt/instance.h), never another's. */
	bool by_caller;
	uid_t caller;
	const char *instance;
};

/* To stdout: 0, or 1 if @f->only names no attempt shown (or the records
 * cannot be read). */
int attempt_show(const struct show_filter *f);

#endif
