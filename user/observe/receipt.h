/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * observe/receipt.h - an attempt's signed egress receipt (docs/RECEIPTS.md):
 * what egret saw it do, as two JSON lines - the receipt, canonical (one
 * writer, fixed key order, no white space, integers only), then its
 * Ed25519 signature over RECEIPT_DOMAIN and the first line's bytes.
 */
#ifndef EGRET_OBSERVE_RECEIPT_H
#define EGRET_OBSERVE_RECEIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include "lib/sign.h"

#define RECEIPT_DOMAIN		"egret-receipt-v1"
#define RECEIPT_MAX		(4 << 20)	/* bytes of a receipt file read back */

struct events;

/* What the receipt says besides the events' figures. */
struct receipt_facts {
	const char *attempt, *repo;	/* repo NULL: none */
	const char *version;		/* egret's */
	/* SHA-256 of the effective policy (approvals in) as `egret check
	 * --json` shows it, hex. */
	const char *policy_sha256;
	time_t started, ended;
	bool daemon;			/* an attempt of egretd's */
	uid_t caller;			/* egretd's caller */
	bool readopted;			/* a re-adopting egretd finished it */
	int status;			/* what egret exits with */
	bool timed_out;			/* --timeout ended it */
};

/*
 * The receipt of the attempt whose drained events are @ev, signed with
 * @key, into *@ret (malloc'd, *@len bytes, both lines with their
 * newlines). 0 or -errno.
 */
int receipt_make(struct events *ev, const struct receipt_facts *f,
		 const struct sign_key *key, char **ret, size_t *len);

/*
 * Check the receipt @text (@len bytes): its form, and its signature by
 * @pub_text ("ed25519:...", NULL: the key it names). The key it names
 * into @signer (SIGN_PUB_TEXT_MAX), the first line's length into
 * *@body_len. 0, -EBADMSG (not a receipt), -EKEYREJECTED (signed by
 * another key), -EPERM (the signature does not verify).
 */
int receipt_check(const char *text, size_t len, const char *pub_text, char *signer,
		  size_t *body_len);

#endif
