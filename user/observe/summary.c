// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * observe/summary.c - the exit summary (the attempt's counters, the
 * denials the events kept, the destinations' bytes) and the log's
 * per-destination records.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "dns/decision.h"
#include "enforce/dests.h"
#include "lib/percpu.h"
#include "lib/vocab.h"
#include "policy/catalog.h"
#include "observe/dns_words.h"
#include "observe/figures.h"
#include "observe/events.h"
#include "observe/jsonl.h"
#include "observe/summary.h"

#define SUMMARY_LINES	10	/* of each list: denials, destinations, names */

/* A counter of the attempt: TLS verdicts come from the slot's array,
 * the rest from the per-CPU cgroup storage. */
uint64_t summary_counter(const struct events *ev, uint32_t index)
{
	struct egret_tls_count tls = {};
	uint64_t n = percpu_counter(ev->counters_fd, ev->counters_key, index);

	if (ev->tls_counts_fd < 0 ||
	    ((index < EGRET_COUNTER(EGRET_HOOK_TLS, 0) ||
	      index >= EGRET_COUNTER(EGRET_HOOK_TLS + 1, 0)) &&
	     index != EGRET_COUNTER_DROPPED) ||
	    bpf_map_lookup_elem(ev->tls_counts_fd, &ev->slot, &tls) < 0)
		return n;
	if (index == EGRET_COUNTER_DROPPED)
		return n + tls.lost;
	return tls.n[(index - EGRET_COUNTER(EGRET_HOOK_TLS, 0)) % EGRET_VERDICT_MAX];
}

static int by_name_count(const void *a, const void *b)
{
	const struct denied_name *x = a, *y = b;
	bool xq = x->why == DNS_WHY_QUIET, yq = y->why == DNS_WHY_QUIET;

	/* What needs attention first; an agent's quiet noise last. */
	if (xq != yq)
		return xq ? 1 : -1;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : strcmp(x->name, y->name);
}

static int by_count(const void *a, const void *b)
{
	const struct denied_dest *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

/* ---- destinations ------------------------------------------------- */

/* One destination's figures, as text: "sent 84 KiB, received 31 MiB, 212
 * connections" and its budget. */
static void dest_line(FILE *out, const struct dest_figures *f, bool audit)
{
	char sent[32], recv[32], budget[32];

	dests_size_text(f->c.sent, sent, sizeof(sent));
	dests_size_text(f->c.received, recv, sizeof(recv));
	fprintf(out, "egret:   %s: sent %s, received %s, %llu connection%s", f->c.name,
		sent, recv, (unsigned long long)f->c.conns, f->c.conns == 1 ? "" : "s");
	if (f->c.budget) {
		dests_size_text(f->c.budget, budget, sizeof(budget));
		fprintf(out, " (upload budget %s%s)", budget,
			f->c.over ? audit ? ", would be exceeded" : ", exceeded: sends refused" : "");
	}
	fprintf(out, "\n");
}

/* The attempt's destinations as they ended, read from the shared map
 * once for the log's records and the summary (a walk of every attempt's
 * entries). NULL when none could be read. */
const struct dest_figures *summary_dests(struct events *ev, size_t *n)
{
	if (!ev->dests_read && dests_read(ev->dests_fd, ev->tally_fd, ev->counters_key,
					  &ev->dests, &ev->ndests) == 0)
		ev->dests_read = true;
	*n = ev->ndests;
	return ev->dests;
}

/* The top destinations by bytes sent, then received. */
static void summary_destinations(struct events *ev, FILE *out)
{
	size_t n, shown = 0;
	const struct dest_figures *all = summary_dests(ev, &n);

	for (size_t i = 0; i < n && shown < SUMMARY_LINES; i++) {
		if (!all[i].c.sent && !all[i].c.received && !all[i].c.conns && !all[i].c.over)
			continue;
		dest_line(out, &all[i], ev->audit);
		shown++;
	}
	if (n > shown && shown == SUMMARY_LINES)
		fprintf(out, "egret:   ... and more destinations (the log has each)\n");
}

void summary_log_destinations(struct events *ev)
{
	const struct dest_figures *all;
	char line[1024];
	struct jsonl l = { .buf = line, .len = sizeof(line) };
	uint64_t now;
	size_t n;

	if (ev->log.fd < 0)
		return;
	all = summary_dests(ev, &n);
	now = jsonl_boot_ns();
	for (size_t i = 0; i < n; i++) {
		const struct egret_dest_count *c = &all[i].c;

		jsonl_start(&l, &ev->log, now);
		jsonl_put(&l, ",\"kind\":\"destination\",\"name\":");
		jsonl_str(&l, c->name);
		jsonl_put(&l, ",\"sent\":%llu,\"received\":%llu,\"connections\":%llu,\"budget\":",
			  (unsigned long long)c->sent, (unsigned long long)c->received,
			  (unsigned long long)c->conns);
		jsonl_put(&l, c->budget ? "%llu" : "null", (unsigned long long)c->budget);
		jsonl_put(&l, ",\"over_budget\":%s", c->over ? "true" : "false");
		jsonl_end(&ev->log, &l);
	}
}

/* ---- the summary -------------------------------------------------- */

/* Its first line: the verdicts of connections, datagrams, DNS and every
 * other hook; then what was lost, if anything. */
static void summary_totals(const struct events *ev, FILE *out)
{
	uint64_t allowed = 0, denied = 0, would = 0, dropped;
	const char *deny_word = ev->audit ? "would be denied" : "denied";

	for (int h = EGRET_HOOK_CONNECT; h <= EGRET_HOOK_SENDMSG; h++) {
		allowed += summary_counter(ev, EGRET_COUNTER(h, EGRET_VERDICT_ALLOW));
		denied += summary_counter(ev, EGRET_COUNTER(h, EGRET_VERDICT_DENY));
		would += summary_counter(ev, EGRET_COUNTER(h, EGRET_VERDICT_WOULD_DENY));
	}
	dropped = summary_counter(ev, EGRET_COUNTER_DROPPED);
	fprintf(out, "egret: attempt %s: connections/datagrams %llu allowed, %llu %s; "
		"DNS %llu answered, %llu %s, ",
		ev->log.attempt, (unsigned long long)allowed,
		(unsigned long long)(ev->audit ? would : denied), deny_word,
		(unsigned long long)ev->dns_answered,
		(unsigned long long)(ev->audit ? ev->dns_would_deny : ev->dns_denied),
		ev->audit ? "would be denied" : "names denied");
	if (ev->dns_quiet)
		fprintf(out, "%llu quiet, ", (unsigned long long)ev->dns_quiet);
	fprintf(out, "%llu failed", (unsigned long long)ev->dns_failed);
	for (int h = EGRET_HOOK_SOCKET; h < EGRET_HOOK_MAX; h++) {
		uint64_t n = summary_counter(ev, EGRET_COUNTER(h, ev->audit ?
					EGRET_VERDICT_WOULD_DENY : EGRET_VERDICT_DENY));

		if (n)
			fprintf(out, "; %llu %s %s", (unsigned long long)n,
				egret_hook_name(h), deny_word);
	}
	fprintf(out, "\n");
	if (dropped || ev->log.write_errors)
		fprintf(out, "egret:   %llu events lost (ring buffer and repeat counts full), %llu log writes failed\n",
			(unsigned long long)dropped,
			(unsigned long long)ev->log.write_errors);
}

/* One denied destination: the name a TLS or HTTP denial asked, else the
 * name that taught its address, if any. */
static void denial_line(FILE *out, const struct denied_dest *d, const char *deny_word)
{
	const char *proto = egret_proto_name(d->proto);
	char a[INET6_ADDRSTRLEN], dest[INET6_ADDRSTRLEN + 24];

	inet_ntop(d->family == 4 ? AF_INET : AF_INET6, d->addr, a, sizeof(a));
	snprintf(dest, sizeof(dest), d->family == 6 ? "[%s]:%u/%s" :
		 "%s:%u/%s", a, d->port, proto ? proto : "?");
	if (d->named)
		fprintf(out, "egret:   %s %6llu x %s to %s at %s: %s\n", deny_word,
			(unsigned long long)d->count,
			d->named == EGRET_HOOK_TLS ? "TLS" : "HTTP",
			d->name[0] ? d->name : "(no name)",
			dest, egret_reason_text(d->reason));
	else if (d->name[0])
		fprintf(out, "egret:   %s %6llu x %s (%s): %s\n", deny_word,
			(unsigned long long)d->count, d->name, dest,
			egret_reason_text(d->reason));
	else
		fprintf(out, "egret:   %s %6llu x %s (no name): %s\n",
			deny_word, (unsigned long long)d->count, dest,
			egret_reason_text(d->reason));
}

/* The destinations denied most. */
static void summary_denials(struct events *ev, FILE *out)
{
	const char *deny_word = ev->audit ? "would be denied" : "denied";

	qsort(ev->top, ev->ntop, sizeof(ev->top[0]), by_count);
	for (size_t i = 0; i < ev->ntop && i < SUMMARY_LINES; i++)
		denial_line(out, &ev->top[i], deny_word);
	if (ev->ntop > SUMMARY_LINES || ev->top_overflow)
		fprintf(out, "egret:   ... and %zu more destinations\n",
			ev->ntop > SUMMARY_LINES ? ev->ntop - SUMMARY_LINES : 0);
}

/* The names, with why: what the user needs to widen the policy or fix
 * the resolver (an index allowed, its files host not). */
static void summary_names(struct events *ev, FILE *out)
{
	qsort(ev->names_out, ev->nnames_out, sizeof(ev->names_out[0]), by_name_count);
	for (size_t i = 0; i < ev->nnames_out && i < SUMMARY_LINES; i++) {
		const struct denied_name *d = &ev->names_out[i];

		fprintf(out, "egret:   %s %6llu x %s: %s\n",
			d->failed ? "DNS failed " : d->why == DNS_WHY_QUIET ? "quiet      " :
			ev->audit ? "name would be denied" : "name denied",
			(unsigned long long)d->count, d->name,
			dns_why_text(d->why));
	}
	if (ev->nnames_out > SUMMARY_LINES || ev->names_overflow)
		fprintf(out, "egret:   ... and %zu more names\n",
			ev->nnames_out > SUMMARY_LINES ? ev->nnames_out - SUMMARY_LINES : 0);
}

/* ---- egretd's metrics -------------------------------------------- */

/* A destination's catalog category: its name's section, when it is one
 * of a catalog entry's hosts. */
static enum fig_category category_of(const struct catalog *cat, const char *name)
{
	static const enum fig_category of[CATALOG_NSECTIONS] = {
		[CATALOG_OS] = FIG_CAT_OS, [CATALOG_FORGE] = FIG_CAT_FORGE,
		[CATALOG_ECOSYSTEM] = FIG_CAT_ECOSYSTEM, [CATALOG_AGENT] = FIG_CAT_AGENT,
	};
	int s = cat ? catalog_section_of(cat, name) : -ENOENT;

	return s >= 0 && s < CATALOG_NSECTIONS ? of[s] : FIG_CAT_OTHER;
}

void summary_figures(struct events *ev, const struct catalog *cat, bool final,
		     struct figures *ret)
{
	const struct dest_figures *all;
	size_t n;

	*ret = ev->fig;
	ret->lost = summary_counter(ev, EGRET_COUNTER_DROPPED);
	if (!final)
		return;
	all = summary_dests(ev, &n);
	for (size_t i = 0; i < n; i++) {
		enum fig_category c = category_of(cat, all[i].c.name);

		ret->sent[c] += all[i].c.sent;
		ret->received[c] += all[i].c.received;
		ret->budget_hits += all[i].c.over != 0;
	}
}

void summary_print(struct events *ev, FILE *out)
{
	summary_totals(ev, out);
	summary_denials(ev, out);
	summary_destinations(ev, out);
	summary_names(ev, out);
}
