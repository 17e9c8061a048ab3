// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * observe/receipt.c - the receipt's text (observe/receipt.h): made from
 * the figures the exit summary prints, and checked again.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dns/decision.h"
#include "egret.h"
#include "enforce/dests.h"
#include "lib/json.h"
#include "lib/text.h"
#include "lib/vocab.h"
#include "observe/dns_words.h"
#include "observe/events.h"
#include "observe/receipt.h"
#include "observe/summary.h"

#define SIG_LINE	"{\"signature\":{\"alg\":\"ed25519\",\"key\":\"%s\",\"value\":\"%s\"}}\n"

static void str_or_null(FILE *f, const char *s)
{
	if (s)
		json_fputs(f, s);
	else
		fputs("null", f);
}

static void put_time(FILE *f, const char *key, time_t t)
{
	char iso[32];

	iso_utc((int64_t)t, iso, sizeof(iso));
	fprintf(f, ",\"%s\":\"%s\",\"%s_unix\":%lld", key, iso, key, (long long)t);
}

static void put_destinations(FILE *f, struct events *ev, uint64_t *over)
{
	size_t n = 0;
	const struct dest_figures *all = summary_dests(ev, &n);
	bool first = true;

	fputs(",\"destinations\":[", f);
	for (size_t i = 0; all && i < n; i++) {
		const struct egret_dest_count *c = &all[i].c;

		if (!c->sent && !c->received && !c->conns && !c->over)
			continue;
		fprintf(f, "%s{\"name\":", first ? "" : ",");
		json_fputs(f, c->name);
		fprintf(f, ",\"sent\":%llu,\"received\":%llu,\"connections\":%llu,\"budget\":",
			(unsigned long long)c->sent, (unsigned long long)c->received,
			(unsigned long long)c->conns);
		fprintf(f, c->budget ? "%llu" : "null", (unsigned long long)c->budget);
		fprintf(f, ",\"over_budget\":%s}", c->over ? "true" : "false");
		*over += c->over != 0;
		first = false;
	}
	fprintf(f, "],\"destinations_read\":%s", all || !n ? "true" : "false");
}

static void put_refused(FILE *f, const struct events *ev)
{
	char a[INET6_ADDRSTRLEN];
	const char *deny = ev->audit ? "would-deny" : "deny";

	fprintf(f, ",\"verdict\":\"%s\",\"refusals\":{", deny);
	for (unsigned int h = 0, first = 1; h < EGRET_HOOK_MAX; h++) {
		uint64_t n = summary_counter(ev, EGRET_COUNTER(h, ev->audit ?
				EGRET_VERDICT_WOULD_DENY : EGRET_VERDICT_DENY));

		if (!n || !egret_hook_name(h))
			continue;
		fprintf(f, "%s\"%s\":%llu", first ? "" : ",", egret_hook_name(h),
			(unsigned long long)n);
		first = 0;
	}
	fputs("},\"refused\":[", f);
	for (size_t i = 0; i < ev->ntop; i++) {
		const struct denied_dest *d = &ev->top[i];
		const char *proto = egret_proto_name(d->proto);

		inet_ntop(d->family == 4 ? AF_INET : AF_INET6, d->addr, a, sizeof(a));
		fprintf(f, "%s{\"address\":\"%s\",\"port\":%u,\"proto\":", i ? "," : "", a, d->port);
		str_or_null(f, proto);
		fprintf(f, ",\"reason\":\"%s\",\"name\":", egret_reason_name(d->reason));
		str_or_null(f, d->name[0] ? d->name : NULL);
		fprintf(f, ",\"count\":%llu}", (unsigned long long)d->count);
	}
	fprintf(f, "],\"refused_not_listed\":%llu,\"names_refused\":[",
		(unsigned long long)ev->top_overflow);
	for (size_t i = 0; i < ev->nnames_out; i++) {
		const struct denied_name *d = &ev->names_out[i];

		fprintf(f, "%s{\"name\":", i ? "," : "");
		json_fputs(f, d->name);
		fprintf(f, ",\"answer\":\"%s\",\"why\":\"%s\",\"count\":%llu}",
			d->failed ? "SERVFAIL" : "NXDOMAIN", dns_why_name((enum dns_why)d->why),
			(unsigned long long)d->count);
	}
	fprintf(f, "],\"names_not_listed\":%llu", (unsigned long long)ev->names_overflow);
}

/* The first line: canonical JSON, keys in this order. */
static int body(FILE *f, struct events *ev, const struct receipt_facts *fa)
{
	uint64_t over = 0, lost = summary_counter(ev, EGRET_COUNTER_DROPPED);
	char node[256] = "";

	gethostname(node, sizeof(node) - 1);
	fputs("{\"egret_receipt\":1,\"attempt\":", f);
	json_fputs(f, fa->attempt);
	fputs(",\"repo\":", f);
	str_or_null(f, fa->repo);
	fputs(",\"node\":", f);
	json_fputs(f, node);
	fputs(",\"egret\":", f);
	json_fputs(f, fa->version);
	fprintf(f, ",\"policy_sha256\":\"%s\"", fa->policy_sha256);
	fprintf(f, ",\"via\":\"%s\",\"caller_uid\":", fa->daemon ? "egretd" : "egret");
	fprintf(f, fa->daemon ? "%u" : "null", (unsigned int)fa->caller);
	fprintf(f, ",\"readopted\":%s", fa->readopted ? "true" : "false");
	put_time(f, "started", fa->started);
	put_time(f, "ended", fa->ended);
	fprintf(f, ",\"exit\":{\"status\":%d,\"signal\":", fa->status);
	fprintf(f, fa->status > 128 && fa->status < 128 + 65 ? "%d" : "null", fa->status - 128);
	fprintf(f, ",\"timed_out\":%s}", fa->timed_out ? "true" : "false");
	put_destinations(f, ev, &over);
	put_refused(f, ev);
	fprintf(f, ",\"dns\":{\"answered\":%llu,\"denied\":%llu,\"would_deny\":%llu,\"quiet\":%llu,\"failed\":%llu}",
		(unsigned long long)ev->dns_answered, (unsigned long long)ev->dns_denied,
		(unsigned long long)ev->dns_would_deny, (unsigned long long)ev->dns_quiet,
		(unsigned long long)ev->dns_failed);
	fprintf(f, ",\"budget_hits\":%llu,\"lost\":{\"events\":%llu,\"log_write_errors\":%llu}",
		(unsigned long long)over, (unsigned long long)lost,
		(unsigned long long)ev->log.write_errors);
	fprintf(f, ",\"complete\":%s}", !lost && !fa->readopted ? "true" : "false");
	return ferror(f) ? -EIO : 0;
}

int receipt_make(struct events *ev, const struct receipt_facts *f,
		 const struct sign_key *key, char **ret, size_t *len)
{
	char sig[SIGN_SIG_TEXT_MAX], *text = NULL;
	size_t n = 0, blen;
	FILE *out = open_memstream(&text, &n);
	int r;

	if (!out)
		return -errno;
	r = body(out, ev, f);
	fflush(out);
	blen = n;
	if (r == 0)
		r = sign_detached(key, RECEIPT_DOMAIN, text, blen, sig, sizeof(sig));
	if (r == 0)
		fprintf(out, "\n" SIG_LINE, key->pub_text, sig);
	if (fclose(out) != 0 && r == 0)
		r = -EIO;
	if (r < 0) {
		free(text);
		return r;
	}
	*ret = text;
	*len = n;
	return 0;
}

int receipt_check(const char *text, size_t len, const char *pub_text, char *signer,
		  size_t *body_len)
{
	char key[SIGN_PUB_TEXT_MAX], sig[SIGN_SIG_TEXT_MAX], again[256];
	const char *nl = memchr(text, '\n', len), *line2;
	size_t l2;
	int r;

	if (!nl || len < 2 || text[len - 1] != '\n' || strncmp(text, "{\"egret_receipt\":1,", 19))
		return -EBADMSG;
	line2 = nl + 1;
	l2 = len - (size_t)(line2 - text);
	if (l2 >= sizeof(again) || memchr(line2, '\n', l2 - 1) ||
	    sscanf(line2, "{\"signature\":{\"alg\":\"ed25519\",\"key\":\"%63[^\"]\",\"value\":\"%95[^\"]\"}}",
		   key, sig) != 2)
		return -EBADMSG;
	/* One way to write it: what was read, written again, is the line. */
	snprintf(again, sizeof(again), SIG_LINE, key, sig);
	if (strlen(again) != l2 || memcmp(again, line2, l2))
		return -EBADMSG;
	snprintf(signer, SIGN_PUB_TEXT_MAX, "%s", key);
	*body_len = (size_t)(nl - text);
	if (pub_text && strcmp(pub_text, key))
		return -EKEYREJECTED;
	r = sign_verify(key, RECEIPT_DOMAIN, text, *body_len, sig);
	return r == -EBADMSG ? -EPERM : r == -EINVAL ? -EBADMSG : r;
}
