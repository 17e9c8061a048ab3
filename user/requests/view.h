/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * requests/view.h - the request store, locked and read whole: what
 * `egret requests list`, `approve` and `deny` work on.
 */
#ifndef EGRET_REQUESTS_VIEW_H
#define EGRET_REQUESTS_VIEW_H

#include <stddef.h>

#include "requests/store.h"

struct store_view {
	struct request_store st;
	struct request_file *files;
	size_t n;
};

/* Lock the store in @dir and read every repository's requests (or
 * @repo's). Logs its one line on failure. */
int view_load(struct store_view *v, const char *dir, const char *repo);
void view_free(struct store_view *v);

#endif
