/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * observe/dns_words.h - a DNS decision's why (dns/decision.h) as the event
 * log names it ("not-allowed": docs/EVENTS.md) and as the summary and the
 * denial feed say it to people; "unknown" beyond the table.
 */
#ifndef EGRET_OBSERVE_DNS_WORDS_H
#define EGRET_OBSERVE_DNS_WORDS_H

#include "dns/decision.h"

const char *dns_why_name(enum dns_why why);
const char *dns_why_text(enum dns_why why);

#endif
