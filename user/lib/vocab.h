/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lib/vocab.h - the words for the ABI's enums (include/egret.h) in logs,
 * summaries and `egret status`: one table each, "unknown" beyond them.
 * docs/EVENTS.md lists them; they are part of the log's schema.
 */
#ifndef EGRET_VOCAB_H
#define EGRET_VOCAB_H

#include <stdbool.h>

#include "egret.h"

const char *egret_hook_name(unsigned int hook);		/* "connect" */
/* Its events carry the name asked for (struct egret_tls_event): TLS, HTTP. */
bool egret_hook_named(unsigned int hook);
const char *egret_verdict_name(unsigned int verdict);	/* "would-deny" */
const char *egret_reason_name(unsigned int reason);	/* "no-entry" */
const char *egret_reason_text(unsigned int reason);	/* for people */

/* "tcp", "udp", "mptcp", "icmp", "icmpv6"; NULL for other numbers. */
const char *egret_proto_name(unsigned int proto);

#endif
