// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cmd/requests_list.c - `egret requests list`: pending first by count, text or JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/requests_list.h"
#include "lib/exit.h"
#include "lib/json.h"
#include "lib/text.h"
#include "lib/util.h"
#include "requests/view.h"

struct row {
	const char *repo;
	const struct request *r;
};

static int by_count(const void *a, const void *b)
{
	const struct request *x = ((const struct row *)a)->r;
	const struct request *y = ((const struct row *)b)->r;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->last < y->last ? 1 : x->last > y->last ? -1 : 0;
}

static void print_row_json(const struct row *row, bool first)
{
	const struct request *r = row->r;
	char t[32];

	printf("%s\n  {\"id\":%lu,\"repo\":", first ? "" : ",", r->id);
	json_fputs(stdout, row->repo);
	printf(",\"status\":\"%s\",\"kind\":\"%s\",\"target\":",
	       request_status_name(r->status), r->kind == REQUEST_NAME ? "name" : "address");
	json_fputs(stdout, r->target);
	printf(",\"port\":");
	if (r->port)
		printf("%u", r->port);
	else
		printf("null");
	printf(",\"proto\":");
	json_fputs(stdout, r->proto);
	iso_utc(r->first, t, sizeof(t));
	printf(",\"count\":%llu,\"attempts\":%llu,\"first_seen\":\"%s\"",
	       (unsigned long long)r->count, (unsigned long long)r->nattempts, t);
	iso_utc(r->last, t, sizeof(t));
	printf(",\"last_seen\":\"%s\",\"recent_attempts\":[", t);
	for (unsigned int i = 0; i < r->nrecent; i++) {
		printf("%s", i ? "," : "");
		json_fputs(stdout, r->attempts[i]);
	}
	printf("],\"process\":");
	if (r->pid || r->comm[0]) {
		printf("{\"pid\":%u,\"comm\":", r->pid);
		json_fputs(stdout, r->comm);
		printf("}");
	} else {
		printf("null");
	}
	printf(",\"commands\":[");
	for (unsigned int i = 0; i < r->ncommands; i++) {
		printf("%s", i ? "," : "");
		json_fputs(stdout, r->commands[i]);
	}
	printf("],\"why\":");
	if (r->why[0])
		json_fputs(stdout, r->why);
	else
		printf("null");
	printf(",\"decided_by\":");
	if (r->decided_by[0]) {
		json_fputs(stdout, r->decided_by);
		iso_utc(r->decided_at, t, sizeof(t));
		printf(",\"decided_at\":\"%s\"}", t);
	} else {
		printf("null,\"decided_at\":null}");
	}
}

static void print_row_text(const struct row *row, bool all)
{
	const struct request *r = row->r;
	char target[DNS_NAME_MAX + 32], last[32], comm[REQUEST_COMM_MAX + 1];
	char proc[160] = "-";
	size_t o;

	request_target_text(r, target, sizeof(target));
	iso_utc(r->last, last, sizeof(last));
	safe_text(r->comm, comm, sizeof(comm));
	if (r->pid)
		snprintf(proc, sizeof(proc), "%s[%u]", comm, r->pid);
	/* The other commands that were refused it: "curl[19933] +npm". */
	for (unsigned int i = 0; i < r->ncommands; i++) {
		if (!strcmp(r->commands[i], r->comm))
			continue;
		safe_text(r->commands[i], comm, sizeof(comm));
		o = strlen(proc);
		if (!strcmp(proc, "-"))
			o = 0;
		snprintf(proc + o, sizeof(proc) - o, "%s+%s", o ? " " : "", comm);
	}
	printf("%-6lu ", r->id);
	if (all)
		printf("%-9s ", request_status_name(r->status));
	printf("%-24s %-40s %-5s %8llu %8llu  %s  %s\n", row->repo, target, r->proto,
	       (unsigned long long)r->count, (unsigned long long)r->nattempts,
	       last, proc);
	/* The agent's words: printable already, and made so again here. */
	if (r->why[0]) {
		char why[REQUEST_WHY_MAX + 1];

		safe_text(r->why, why, sizeof(why));
		printf("%-6s %s  asked by the agent: \"%s\"\n", "", all ? "          " : "", why);
	}
}

int requests_list(const char *dir, const char *repo, bool all, bool json)
{
	_cleanup_(view_free) struct store_view v = { .st = { .lock_fd = -1 } };
	_cleanup_free_ struct row *rows = NULL;
	size_t nrows = 0, total = 0;
	uint64_t dropped = 0;
	int r;

	r = view_load(&v, dir, repo);
	/* Read whole: a slow reader (a pager) must not hold up attempts. */
	request_store_close(&v.st);
	if (r < 0)
		return EXIT_TROUBLE;
	for (size_t i = 0; i < v.n; i++)
		total += v.files[i].n;
	rows = calloc(total ? total : 1, sizeof(*rows));
	if (!rows)
		return EXIT_TROUBLE;
	for (size_t i = 0; i < v.n; i++) {
		dropped += v.files[i].dropped;
		for (size_t j = 0; j < v.files[i].n; j++)
			if (all || v.files[i].items[j].status == REQUEST_PENDING)
				rows[nrows++] = (struct row){ v.files[i].repo,
							      &v.files[i].items[j] };
	}
	qsort(rows, nrows, sizeof(*rows), by_count);
	if (json) {
		printf("{\"version\":1,\"dropped\":%llu,\"requests\":[",
		       (unsigned long long)dropped);
		for (size_t i = 0; i < nrows; i++)
			print_row_json(&rows[i], i == 0);
		printf("%s]}\n", nrows ? "\n" : "");
	} else if (nrows) {
		printf("%-6s ", "ID");
		if (all)
			printf("%-9s ", "STATUS");
		printf("%-24s %-40s %-5s %8s %8s  %-20s  %s\n", "REPO", "REQUEST",
		       "PROTO", "COUNT", "ATTEMPTS", "LAST SEEN", "PROCESS");
		for (size_t i = 0; i < nrows; i++)
			print_row_text(&rows[i], all);
	} else {
		printf("no %srequests%s%s\n", all ? "" : "pending ",
		       repo ? " for " : "", repo ? repo : "");
	}
	if (dropped && !json)
		printf("(%llu more were not recorded: a repository reached %d pending requests; decide some)\n",
		       (unsigned long long)dropped, REQUESTS_MAX_PENDING);
	return 0;
}
