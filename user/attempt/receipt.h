/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attempt/receipt.h - the attempt's signed egress receipt, when one was
 * asked for (--receipt; through egretd the caller's file): made once
 * COMMAND ended and its events are drained, signed with the host's key,
 * handed over and kept in the state directory (docs/RECEIPTS.md).
 */
#ifndef EGRET_ATTEMPT_RECEIPT_H
#define EGRET_ATTEMPT_RECEIPT_H

#include <stdbool.h>

#define RECEIPTS_KEEP		1000	/* receipts kept in the state directory */
#define RECEIPTS_KEEP_DAYS	30	/* ... for at most this long */
#define RECEIPT_KEY_NAME	"receipt.key"

struct attempt;
struct run_opts;

/* Write @a's receipt for exit status @status, if asked: 0, or -errno after
 * one line (COMMAND's status stands either way). */
int attempt_receipt(struct attempt *a, const struct run_opts *o, int status, bool readopted);

/* The receipt key's path for @o (--receipt-key, else the state
 * directory's) into @buf. */
int receipt_key_path(const char *key_opt, const char *state_dir, char *buf, size_t len);

#endif
