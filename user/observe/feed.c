// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * observe/feed.c - the denial feed (observe/feed.h): what was refused, why
 * in words, and what would help, a JSON line each.
 */
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/vocab.h"
#include "observe/dns_words.h"
#include "observe/feed.h"

/* What would help, by the reason's kind: the agent cannot widen its own
 * policy, and retrying changes nothing. */
static const char *hint_of(unsigned int reason)
{
	switch (reason) {
	case EGRET_REASON_NO_ENTRY:
	case EGRET_REASON_PORT:
	case EGRET_REASON_SPECIAL:
		return "not in this attempt's policy ($EGRET_LIMITS): retrying will not help; "
		       "say which host and port you need and why";
	case EGRET_REASON_EXPIRED:
		return "resolve the name again before connecting";
	case EGRET_REASON_SNI:
	case EGRET_REASON_HOST:
	case EGRET_REASON_NO_SNI:
	case EGRET_REASON_NOT_TLS:
	case EGRET_REASON_NOT_HTTP:
	case EGRET_REASON_ECH:
	case EGRET_REASON_QUIC:
		return "connect by an allowed name, and name it in TLS (SNI) or HTTP (Host)";
	case EGRET_REASON_BUDGET:
		return "this destination's upload budget is spent: no more uploads to it in this attempt";
	default:
		return "refused whatever the policy says ($EGRET_LIMITS)";
	}
}

/* The line, unless the feed is full: the last line that fits says so. */
static void feed_write(struct feed *f, struct jsonl *l)
{
	static const char full[] = "{\"v\":1,\"kind\":\"feed-full\",\"note\":"
		"\"no more refusals are written to this file; they are still refused\"}\n";

	if (f->full || f->log.fd < 0) {
		f->dropped++;
		return;
	}
	/* jsonl_end() adds "}\n": the line takes at most off + 2 bytes. */
	if (f->bytes + l->off + 2 + sizeof(full) > FEED_MAX_BYTES) {
		f->full = true;
		f->dropped++;
		if (write(f->log.fd, full, sizeof(full) - 1) < 0)
			f->log.write_errors++;
		return;
	}
	f->bytes += l->off + 2;
	jsonl_end(&f->log, l);
}

void feed_bpf(struct feed *f, const struct egret_event *e, const char *name, uint64_t count)
{
	char buf[1024], a[INET6_ADDRSTRLEN] = "";
	struct jsonl l = { .buf = buf, .len = sizeof(buf) };
	const char *proto = egret_proto_name(e->proto);

	if (f->log.fd < 0)
		return;
	if (e->family == 4 || e->family == 6)
		inet_ntop(e->family == 4 ? AF_INET : AF_INET6, e->addr, a, sizeof(a));
	jsonl_start(&l, &f->log, e->time_ns);
	jsonl_put(&l, ",\"kind\":\"%s\",\"verdict\":\"%s\",\"address\":",
		  egret_hook_name(e->hook), egret_verdict_name(e->verdict));
	jsonl_str_or_null(&l, a);
	jsonl_put(&l, ",\"port\":%u,\"proto\":", (unsigned int)e->port);
	jsonl_str_or_null(&l, proto);
	jsonl_put(&l, ",\"name\":");
	jsonl_str_or_null(&l, name);
	jsonl_put(&l, ",\"reason\":\"%s\",\"why\":", egret_reason_name(e->reason));
	jsonl_str(&l, egret_reason_text(e->reason));
	jsonl_put(&l, ",\"hint\":");
	jsonl_str(&l, hint_of(e->reason));
	jsonl_put(&l, ",\"count\":%llu", (unsigned long long)(count ? count : 1));
	feed_write(f, &l);
}

void feed_dns(struct feed *f, const struct dns_decision *d)
{
	char buf[1024];
	struct jsonl l = { .buf = buf, .len = sizeof(buf) };
	bool failed = d->verdict == DNS_VERDICT_SERVFAIL;

	if (f->log.fd < 0 || (d->verdict != DNS_VERDICT_DENY &&
			      d->verdict != DNS_VERDICT_WOULD_DENY && !failed))
		return;
	jsonl_start(&l, &f->log, jsonl_boot_ns());
	jsonl_put(&l, ",\"kind\":\"dns\",\"verdict\":\"%s\",\"name\":",
		  failed ? "failed" : d->verdict == DNS_VERDICT_WOULD_DENY ? "would-deny" : "deny");
	jsonl_str(&l, d->name);
	jsonl_put(&l, ",\"type\":%u,\"answer\":\"%s\",\"reason\":\"%s\",\"why\":",
		  d->qtype, failed ? "SERVFAIL" : "NXDOMAIN", dns_why_name(d->why));
	jsonl_str(&l, dns_why_text(d->why));
	jsonl_put(&l, ",\"hint\":");
	jsonl_str(&l, failed ? "the name is allowed; its resolver failed: try again later" :
		       "not in this attempt's policy ($EGRET_LIMITS): retrying will not help; "
		       "say which host you need and why");
	jsonl_put(&l, ",\"count\":1");
	feed_write(f, &l);
}

void feed_close(struct feed *f)
{
	if (f->log.fd < 0)
		return;
	if (f->dropped || f->log.write_errors)
		log_warn("attempt %s: the denial feed missed %llu refusals (%s); egret's log and summary have them",
			 f->log.attempt, (unsigned long long)(f->dropped + f->log.write_errors),
			 f->full ? "its 1 MiB was full" : "writes failed");
	close(f->log.fd);
	f->log.fd = -1;
}
