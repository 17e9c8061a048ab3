// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attempt/effective.h"
#include "attempt/options.h"
#include "policy/load.h"
#include "requests/approvals.h"

/* Problems go to @d, named by the approvals file. */
static int load_approvals(const struct effective_in *in, struct policy *out,
			  struct diag *d)
{
	struct approvals a = {};
	char path[4096];
	int r;

	r = approvals_path(in->policy_file, in->repo, path, sizeof(path));
	if (r == 0)
		r = approvals_load(&a, path, in->repo, d);
	if (r == 0)
		r = approvals_apply(&a, out);
	if (r < 0 && d->n == 0)
		diag_say(d, "approvals for %s: %s", in->repo, strerror(-r));
	approvals_free(&a);
	return r;
}

/* The built-in catalog is parsed at build time (egret_catalog_built):
 * neither a start nor egretd parses it (2-3 ms of a start: issue 42). */
const struct catalog *effective_catalog(void)
{
	return &egret_catalog_built;
}

int effective_policy(const struct effective_in *in, struct policy *out,
		     bool *ret_builtin)
{
	const struct catalog *cat = &egret_catalog_built;
	struct policy_doc doc = {};
	bool have_doc;			/* a file or the built-in default */
	struct diag d = { .file = "policy" };
	const char *path = in->policy_file ? in->policy_file : POLICY_DEFAULT_PATH;
	int r;

	*ret_builtin = false;
	/* Only the command line: no file, no built-in default. */
	have_doc = !in->policy_file || strcmp(in->policy_file, POLICY_FILE_NONE);
	if (!have_doc) {
		r = 0;
	} else if (!in->policy_file && access(path, F_OK) < 0 && errno == ENOENT) {
		*ret_builtin = true;
		r = policy_doc_load_default(&doc, cat, &d);
	} else {
		r = policy_doc_load_file(&doc, path, cat, &d);
	}
	if (r == 0 && have_doc)
		r = policy_resolve(&doc, cat, in->repo, in->remote, out, &d);
	/* What the operator approved for this repo joins its section. */
	if (r == 0 && have_doc && in->repo)
		r = load_approvals(in, out, &d);
	for (size_t i = 0; r == 0 && in->cli && i < in->cli->nspecs; i++)
		r = policy_add_spec(out, &in->cli->specs[i]);
	for (size_t i = 0; r == 0 && in->cli && i < in->cli->nhosts; i++)
		r = policy_add_host(out, &in->cli->hosts[i]);
	if (r < 0 && d.n == 0)
		diag_say(&d, "%s", strerror(-r));
	if (r < 0)
		diag_log(&d);
	policy_doc_free(&doc);
	return r < 0 ? -EINVAL : 0;
}

void effective_settings(const struct policy *p, long *max_entries, long *max_cidrs,
			long *min_ttl, char *upstreams_csv, size_t csv_len)
{
	if (*max_entries < 0)
		*max_entries = p->max_entries > 0 ? p->max_entries : EGRET_DEFAULT_MAX_ENTRIES;
	if (*max_cidrs < 0)
		*max_cidrs = p->max_cidrs > 0 ? p->max_cidrs : EGRET_DEFAULT_MAX_CIDRS;
	if (*min_ttl < 0)
		*min_ttl = p->min_ttl >= 0 ? p->min_ttl : POLICY_DEFAULT_MIN_TTL;
	if (!upstreams_csv[0])
		snprintf(upstreams_csv, csv_len, "%s", p->upstreams_csv);
}

__u64 effective_upload_limit(__u64 cli, const struct policy *p)
{
	if (!cli || (p->upload_limit && p->upload_limit < cli))
		return p->upload_limit;
	return cli;
}

const char *effective_source(const struct run_opts *o)
{
	return o->builtin_policy ? "<built-in default policy>" :
	       o->policy_file ? o->policy_file : POLICY_DEFAULT_PATH;
}
