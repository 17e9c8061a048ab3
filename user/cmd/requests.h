/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cmd/requests.h - `egret requests`: list, approve and deny requests, and
 * what its two files share: the locked store read whole.
 */
#ifndef EGRET_REQUESTS_CMD_H
#define EGRET_REQUESTS_CMD_H

#include <stdbool.h>
#include <stdint.h>

#include "requests/store.h"

int cmd_requests(int argc, char **argv);

/* The store, locked, with every repository's requests (or one's). */
struct store_view {
	struct request_store st;
	struct request_file *files;
	size_t n;
};

int view_load(struct store_view *v, const char *dir, const char *repo);
void view_free(struct store_view *v);

/* "2026-11-30T08:31:02Z" */
void iso_utc(int64_t t, char *buf, size_t len);

/* Printable ASCII only (process names come from the sandbox). */
void safe_text(const char *in, char *out, size_t len);

/* `egret requests list`. */
int requests_list(const char *dir, const char *repo, bool all, bool json);

#endif
