/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * requests/export.h - requests as JSON lines, for fleets: each node's
 * egretd writes the denials that became requests on its stdout (the
 * cluster's log pipeline collects them), and `egret requests import`
 * folds collected lines into one store to review (docs/DEPLOYMENT.md,
 * "Fleets"). One line per request and flush:
 *
 *   {"egret":"request","repo":"octo/app","attempt":"ab12...","kind":"name",
 *    "target":"files.example.net","port":443,"proto":"tcp","count":3,
 *    "new_attempt":true,"first":1764547200,"last":1764547201,"pid":412,
 *    "comm":"curl","node":"node-7"}
 *
 * count is the denials since the last line for that request and attempt
 * (0 for a request the agent asked for before it was refused);
 * new_attempt says whether this is the attempt's first line for it; why,
 * only when the agent asked (`egret request`), its reason, printable
 * ASCII (made so again when a line is read).
 */
#ifndef EGRET_REQUEST_EXPORT_H
#define EGRET_REQUEST_EXPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "requests/store.h"

#define REQUEST_LINE_MAX	2048

/* The line for @delta (count = denials since the last line) of @repo's
 * attempt @attempt, with its newline, into @buf. Its length, or
 * -ENOSPC. */
int request_export_format(const char *repo, const char *attempt,
			  const struct request *delta, bool new_attempt,
			  char *buf, size_t len);

/* A parsed line. */
struct request_line {
	char repo[POLICY_REPO_MAX];
	char attempt[EGRET_ID_MAX + 1];
	struct request r;
	bool new_attempt;
};

/*
 * The request line in @text, wherever it starts (a log pipeline may put
 * a prefix before it). 1 with @ret filled, 0 when @text holds none (any
 * other line), -EBADMSG with why in @err for one that is broken: strict,
 * as what egretd wrote, unknown keys and missing ones refused.
 */
int request_export_parse(const char *text, struct request_line *ret,
			 char *err, size_t errlen);

/* The `node` every line names from now on (egretd: its configured
 * node, else the host's name); unset or "": this process's hostname. */
#define REQUEST_NODE_MAX	63
void request_export_set_node(const char *node);

#endif
