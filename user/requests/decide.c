// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * requests/decide.c - approve and deny (requests/decide.h): the operator's
 * side of the review gate. Only the operator (whoever can write the state
 * directory and the policy's directory) gets here; attempts only add
 * evidence.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/log.h"
#include "lib/text.h"
#include "lib/trust.h"
#include "lib/util.h"
#include "requests/approvals.h"
#include "requests/decide.h"
#include "requests/view.h"

/* The request as an approval entry; -EINVAL if it cannot be one. */
static int to_approval(const struct request *rq, const struct request_decision *dec,
		       struct approval *ap)
{
	char err[160];
	unsigned int *n;
	struct port_range *pr;

	memset(ap, 0, sizeof(*ap));
	/* Its name is allowed already: what it asks is a budget, which the
	 * policy sets (an approval only ever allows a destination). */
	if (!strcmp(rq->proto, "upload")) {
		log_error("request %lu asks for a larger upload budget for %s: raise it in the policy (upload_limit:, upload_limits:, or the repository's section: docs/POLICY.md), not by approval",
			  rq->id, rq->target);
		return -EINVAL;
	}
	ap->is_host = rq->kind == REQUEST_NAME;
	if (ap->is_host ? host_rule_parse(rq->target, &ap->host, err, sizeof(err)) :
			  allow_spec_parse(rq->target, &ap->spec, err, sizeof(err))) {
		log_error("request %lu: '%s' cannot be allowed as it is (%s); add a rule to the policy by hand",
			  rq->id, rq->target, err);
		return -EINVAL;
	}
	n = ap->is_host ? &ap->host.nports : &ap->spec.nports;
	pr = ap->is_host ? ap->host.ports : ap->spec.ports;
	if (dec->nports >= 0) {
		*n = (unsigned int)dec->nports;
		memcpy(pr, dec->ports, (size_t)dec->nports * sizeof(*dec->ports));
	} else {
		/* What was asked: the port its connection wanted; a lookup
		 * asked for none, and agents look names up for HTTPS: 443,
		 * never the policy's whole default (plain HTTP with it). */
		*n = 1;
		pr[0] = rq->port ?
			(struct port_range){ rq->port, rq->port } :
			(struct port_range){ REQUESTS_LOOKUP_PORT, REQUESTS_LOOKUP_PORT };
	}
	ap->request = rq->id;
	return 0;
}

/* "address <target>, ports <up to 127>" fits. */
#define APPROVAL_TEXT_MAX	(DNS_NAME_MAX + 160)

/* "host pkg.example, ports 443" - what approving @rq writes. */
static void approval_text(const struct request *rq, const struct request_decision *dec,
			  char *buf, size_t len)
{
	struct approval ap;
	char pt[128] = "from the policy";
	const struct port_range *pr;
	unsigned int n;

	if (to_approval(rq, dec, &ap) < 0) {
		snprintf(buf, len, "?");
		return;
	}
	n = ap.is_host ? ap.host.nports : ap.spec.nports;
	pr = ap.is_host ? ap.host.ports : ap.spec.ports;
	if (n != PORTS_FROM_POLICY)
		ports_format(pr, n, pt, sizeof(pt), false);
	snprintf(buf, len, "%s %s, ports %s", ap.is_host ? "host" : "address",
		 rq->target, pt);
}

/* approved.d must be the operator's: the loader would refuse it anyway. */
static int approvals_dir_ready(const char *dir)
{
	int r = trusted_dir_ensure(dir);

	if (r == -EPERM)
		log_error("refusing to write approvals into %s: it must be a directory owned by root and not group/world-writable",
			  dir);
	else if (r < 0)
		log_error_errno(r, "create %s", dir);
	return r;
}

static bool wanted(const struct request *rq, const struct request_decision *dec)
{
	for (int k = 0; k < dec->nids; k++)
		if (dec->ids[k] == rq->id)
			return true;
	return false;
}

static bool file_wanted(const struct request_file *f, const struct request_decision *dec)
{
	for (size_t j = 0; j < f->n; j++)
		if (wanted(&f->items[j], dec))
			return true;
	return false;
}

/* One repository's approvals, made in memory before any file is written. */
struct staged {
	char path[4096];
	struct approvals a;
	int added;		/* entries not in the file yet */
};

/*
 * Load @f's approvals file and add its requests in @dec to it. Approved
 * ones too: an entry the operator removed by hand is written again.
 */
static int stage_approvals(const struct request_file *f, const struct request_decision *dec,
			   const char *at, struct staged *out)
{
	struct diag d = {};
	char dir[4096];
	int r;

	if ((r = approvals_dir(dec->policy, dir, sizeof(dir))) < 0 ||
	    (r = approvals_path(dec->policy, f->repo, out->path, sizeof(out->path))) < 0)
		return log_error_errno(r, "approvals path");
	r = approvals_dir_ready(dir);
	if (r < 0)
		return r;
	r = approvals_load(&out->a, out->path, f->repo, &d);
	for (int i = 0; r < 0 && i < d.n; i++)
		log_error("%s", d.msg[i]);
	for (size_t j = 0; j < f->n && r >= 0; j++) {
		const struct request *rq = &f->items[j];
		struct approval ap;

		if (!wanted(rq, dec))
			continue;
		r = to_approval(rq, dec, &ap);
		if (r < 0)
			break;
		snprintf(ap.by, sizeof(ap.by), "%s", dec->by);
		snprintf(ap.at, sizeof(ap.at), "%s", at);
		r = approvals_add(&out->a, &ap);
		if (r == -E2BIG)
			log_error("%s: more than %d approvals", out->path, APPROVALS_MAX);
		out->added += r == 0;
	}
	return r < 0 ? r : 0;
}

/* Every id exists once and can take the decision, before anything changes. */
static int check_ids(const struct store_view *v, const struct request_decision *dec)
{
	for (int i = 0; i < dec->nids; i++) {
		const struct request *rq = NULL;
		struct approval ap;
		int found = 0;

		for (size_t f = 0; f < v->n; f++)
			for (size_t j = 0; j < v->files[f].n; j++)
				if (v->files[f].items[j].id == dec->ids[i]) {
					rq = &v->files[f].items[j];
					found++;
				}
		if (!found) {
			log_error("requests: no request %lu (see egret requests list --all)",
				  dec->ids[i]);
			return -ENOENT;
		}
		if (found > 1) {
			log_error("requests: id %lu belongs to %d repositories (was next-id reset?); give --repo",
				  dec->ids[i], found);
			return -EEXIST;
		}
		if (dec->to == REQUEST_APPROVED && to_approval(rq, dec, &ap) < 0)
			return -EINVAL;
		if (dec->to == REQUEST_DENIED && rq->status == REQUEST_APPROVED) {
			log_error("request %lu is approved; to revoke it, remove its entry from the repository's approvals file",
				  dec->ids[i]);
			return -EINVAL;
		}
	}
	return 0;
}

/* Set the status of @f's requests in @dec, telling each; how many changed. */
static int mark(struct request_file *f, const struct request_decision *dec,
		const struct decision_report *report)
{
	char target[APPROVAL_TEXT_MAX];
	int changed = 0;

	for (size_t j = 0; j < f->n; j++) {
		struct request *rq = &f->items[j];

		if (!wanted(rq, dec))
			continue;
		if (dec->to == REQUEST_APPROVED)
			approval_text(rq, dec, target, sizeof(target));
		else
			request_target_text(rq, target, sizeof(target));
		if (rq->status == dec->to) {
			report->decided(f->repo, rq, target, true);
			continue;
		}
		rq->status = dec->to;
		snprintf(rq->decided_by, sizeof(rq->decided_by), "%s", dec->by);
		rq->decided_at = (int64_t)time(NULL);
		changed++;
		report->decided(f->repo, rq, target, false);
	}
	return changed;
}

/* Step one of an approval: each repository's approvals, in memory. */
static int stage_all(struct store_view *v, const struct request_decision *dec,
		     struct staged *st)
{
	char at[32];
	int r = 0;

	iso_utc((int64_t)time(NULL), at, sizeof(at));
	for (size_t i = 0; r == 0 && i < v->n; i++)
		if (file_wanted(&v->files[i], dec))
			r = stage_approvals(&v->files[i], dec, at, &st[i]);
	return r;
}

/* Step two: the approvals files that gained entries, written; how many
 * entries, or -errno. */
static int write_all(const struct store_view *v, const struct staged *st,
		     const struct decision_report *report)
{
	int r = 0, written = 0;

	for (size_t i = 0; r == 0 && i < v->n; i++) {
		if (!st[i].added)
			continue;
		r = approvals_save(&st[i].a, st[i].path);
		if (r < 0)
			log_error_errno(r, "write %s", st[i].path);
		else
			report->wrote(st[i].path, st[i].added);
		written += st[i].added;
	}
	return r < 0 ? r : written;
}

/* Step three: the requests marked, and their files saved. */
static int mark_all(struct store_view *v, const struct request_decision *dec,
		    const struct decision_report *report)
{
	int r = 0;

	for (size_t i = 0; r == 0 && i < v->n; i++) {
		if (!file_wanted(&v->files[i], dec))
			continue;
		if (mark(&v->files[i], dec, report) > 0 &&
		    (r = request_file_save(&v->st, &v->files[i])) < 0)
			log_error_errno(r, "write the request store");
	}
	return r;
}

int requests_decide(const char *dir, const struct request_decision *dec,
		    const struct decision_report *report)
{
	_cleanup_(view_free) struct store_view v = { .st = { .lock_fd = -1 } };
	struct staged *st = NULL;
	int r, written = 0;

	r = view_load(&v, dir, dec->repo);
	if (r == 0)
		r = check_ids(&v, dec);
	if (r == 0 && !(st = calloc(v.n ? v.n : 1, sizeof(*st))))
		r = log_error_errno(-ENOMEM, "requests");
	if (r == 0 && dec->to == REQUEST_APPROVED)
		r = stage_all(&v, dec, st);
	if (r == 0)
		r = written = write_all(&v, st, report);
	if (r >= 0)
		r = mark_all(&v, dec, report);
	for (size_t i = 0; st && i < v.n; i++)
		approvals_free(&st[i].a);
	free(st);
	return r < 0 ? r : written;
}
