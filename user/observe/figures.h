/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * observe/figures.h - what an attempt counted, in fixed arrays over bounded
 * vocabularies, for egretd's metrics (docs/EGRETD.md, "Metrics"): its
 * refusals by reason and protocol, its DNS answers, refusals and
 * failures, the events it lost, and, once it ended, its bytes by catalog
 * category and how many destinations hit their upload budget.
 *
 * Every figure is a count since the attempt's supervision began, so a
 * newer copy replaces an older one; every member is a uint64_t, so two
 * are added member by member (figures_add). Nothing here is touched on
 * the connect path: the events (observe/events.h) count what the ring
 * buffer and the DNS proxy already told them.
 */
#ifndef EGRET_OBSERVE_FIGURES_H
#define EGRET_OBSERVE_FIGURES_H

#include <stddef.h>
#include <stdint.h>

#include "egret.h"
#include "dns/decision.h"

/* A refusal's protocol: the socket's, or the hook that judged what it
 * carried (tls, http), or unix; DNS refusals are counted apart. */
enum fig_proto {
	FIG_TCP = 0, FIG_UDP, FIG_MPTCP, FIG_ICMP, FIG_ICMPV6, FIG_TLS, FIG_HTTP,
	FIG_UNIX, FIG_OTHER, FIG_PROTO_MAX,
};

/* What became of a DNS question. */
enum fig_dns { FIG_DNS_ANSWERED = 0, FIG_DNS_DENIED, FIG_DNS_FAILED, FIG_DNS_MAX };

/* A destination's catalog category (policy/catalog.h), or none of them:
 * a repository's extra host, an --allow, a static rule. */
enum fig_category {
	FIG_CAT_OS = 0, FIG_CAT_FORGE, FIG_CAT_ECOSYSTEM, FIG_CAT_AGENT, FIG_CAT_OTHER,
	FIG_CAT_MAX,
};

struct figures {
	uint64_t refused[EGRET_REASON_MAX][FIG_PROTO_MAX];
	uint64_t dns_refused[DNS_WHY_MAX];	/* NXDOMAIN by egret, by why */
	uint64_t dns[FIG_DNS_MAX];
	uint64_t lost;				/* events the ring buffer dropped */
	uint64_t budget_hits;			/* destinations past their budget */
	uint64_t sent[FIG_CAT_MAX], received[FIG_CAT_MAX];
};

_Static_assert(sizeof(struct figures) % sizeof(uint64_t) == 0, "figures are uint64_t alone");

/* Their label values: "tcp", "answered", "ecosystems". */
const char *fig_proto_name(unsigned int p);
const char *fig_dns_name(unsigned int d);
const char *fig_category_name(unsigned int c);

/* The protocol of a refusal by @hook of a socket of IP protocol @proto. */
enum fig_proto fig_proto_of(unsigned int hook, unsigned int proto);

/* @to += @from, member by member. */
void figures_add(struct figures *to, const struct figures *from);

#endif
