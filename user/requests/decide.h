/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * requests/decide.h - the operator's decision on requests (`egret requests
 * approve` and `deny`): the store's records marked and, for an approval,
 * the repository's approvals file written (docs/POLICY.md, "Requests").
 * It logs what stops it; what it does, it tells its caller to print.
 */
#ifndef EGRET_REQUESTS_DECIDE_H
#define EGRET_REQUESTS_DECIDE_H

#include <stdbool.h>

#include "requests/store.h"

/* What approving a lookup opens without --ports: HTTPS's. */
#define REQUESTS_LOOKUP_PORT	443
/* Ids one decision takes. */
#define REQUESTS_DECIDE_MAX	64

struct request_decision {
	enum request_status to;		/* REQUEST_APPROVED or REQUEST_DENIED */
	const unsigned long *ids;
	int nids;
	const char *repo;		/* NULL: each id's repository, whichever */
	const char *policy;		/* its directory holds approved.d/; NULL: the default */
	const struct port_range *ports;	/* what an approval allows: */
	int nports;			/* -1: the request's own port; 0: any */
	const char *by;			/* who decides: "alice (uid 0)" */
};

/* What a decision did, told as it happens. */
struct decision_report {
	/* @added approvals written to @path. */
	void (*wrote)(const char *path, int added);
	/* @rq of @repo has the decision now (@already: it had it);
	 * @target is what it allows ("host a.test, ports 443") or asked. */
	void (*decided)(const char *repo, const struct request *rq, const char *target,
			bool already);
};

/*
 * Apply @dec to the store in @dir, in three steps so that a refusal
 * changes nothing: every id checked and every repository's approvals made
 * in memory (refused files, bad entries stop here), the approvals written,
 * then the requests marked. A crash after the second step leaves requests
 * pending whose approvals are in force; approving again is a no-op.
 * The number of approvals written, or -errno after one line.
 */
int requests_decide(const char *dir, const struct request_decision *dec,
		    const struct decision_report *report);

#endif
