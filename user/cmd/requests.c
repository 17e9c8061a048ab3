// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd/requests.c - `egret requests`: options, approve and deny - the operator's side
 * of the review gate. Only the operator (whoever can write the state
 * directory and the policy's directory) gets here; attempts only add
 * evidence.
 */
#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attempt/watch.h"
#include "cmd/requests.h"
#include "cmd/requests_list.h"
#include "lib/exit.h"
#include "lib/log.h"
#include "lib/text.h"
#include "lib/trust.h"
#include "lib/util.h"
#include "requests/approvals.h"
#include "requests/import.h"
#include "requests/store.h"
#include "requests/view.h"


/* What approving a lookup opens without --ports: HTTPS's. */
#define REQUESTS_LOOKUP_PORT	443

static void requests_usage(FILE *out)
{
	fprintf(out,
		"Usage: egret requests list [--repo OWNER/NAME] [--all] [--json]\n"
		"       egret requests approve ID... [--ports PORTS] [--policy FILE] [--repo OWNER/NAME]\n"
		"       egret requests deny ID... [--repo OWNER/NAME]\n"
		"       egret requests import FILE...\n\n"
		"Denied destinations of attempts run with --repo, waiting for a decision.\n"
		"  list      pending requests, most frequent first (--all: decided ones too)\n"
		"  approve   allow the request's host or address for its repository only,\n"
		"            in the approvals file next to the policy (approved.d/); the\n"
		"            request's port, or PORTS; a lookup asked for none: 443\n"
		"  deny      dismiss: the same request is counted but never pending again\n"
		"  import    fold the request lines egretds wrote on their stdout (a fleet's\n"
		"            collected logs; '-' for stdin) into this store\n\n"
		"  --state-dir DIR   the store (default " REQUESTS_DEFAULT_DIR ")\n"
		"  --policy FILE     whose directory holds approved.d/ (default " POLICY_DEFAULT_PATH ")\n");
}

/* ---- approve and deny --------------------------------------------- */

/* "alice (uid 0)": the uid is the kernel's word, SUDO_USER sudo's. */
static void who_decides(char *buf, size_t len)
{
	const char *sudo = getenv("SUDO_USER");
	struct passwd *pw = getpwuid(getuid());
	char name[32];

	safe_text(sudo && *sudo ? sudo : pw ? pw->pw_name : "?", name, sizeof(name));
	snprintf(buf, len, "%s (uid %u)", name, (unsigned int)getuid());
}

static int parse_ids(int argc, char **argv, unsigned long *ids, int *n)
{
	*n = 0;
	for (int i = 0; i < argc; i++) {
		char *end;

		errno = 0;
		ids[*n] = strtoul(argv[i], &end, 10);
		if (argv[i][0] < '1' || argv[i][0] > '9' || errno || *end) {
			log_error("requests: '%s' is not a request id (see egret requests list)",
				  argv[i]);
			return -EINVAL;
		}
		(*n)++;
	}
	if (*n == 0) {
		log_error("requests: give at least one request id");
		return -EINVAL;
	}
	return 0;
}

/* The request as an approval entry; -EINVAL if it cannot be one. */
static int to_approval(const struct request *rq, const struct port_range *ports,
		       int nports, struct approval *ap)
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
	if (nports >= 0) {
		*n = (unsigned int)nports;
		memcpy(pr, ports, (size_t)nports * sizeof(*ports));
	} else {
		/* What was asked: the port its connection wanted; a lookup
		 * asked for none, and agents look names up for HTTPS: 443,
		 * never the policy's whole default (plain HTTP with it). */
		*n = 1;
		pr[0] = rq->port ? (struct port_range){ rq->port, rq->port } :
				   (struct port_range){ REQUESTS_LOOKUP_PORT, REQUESTS_LOOKUP_PORT };
	}
	ap->request = rq->id;
	return 0;
}

/* "address <target>, ports <up to 127>" fits. */
#define APPROVAL_TEXT_MAX	(DNS_NAME_MAX + 160)

/* "host pkg.example, ports 443" - what approving @rq writes. */
static void approval_text(const struct request *rq, const struct port_range *ports,
			  int nports, char *buf, size_t len)
{
	struct approval ap;
	char pt[128] = "from the policy";
	const struct port_range *pr;
	unsigned int n;

	if (to_approval(rq, ports, nports, &ap) < 0) {
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

static bool wanted(const struct request *rq, const unsigned long *ids, int nids)
{
	for (int k = 0; k < nids; k++)
		if (ids[k] == rq->id)
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
 * Load @f's approvals file and add its requests in @ids to it. Approved
 * ones too: an entry the operator removed by hand is written again.
 */
static int stage_approvals(const struct request_file *f, const unsigned long *ids,
			   int nids, const char *policy, const struct port_range *ports,
			   int nports, const char *by, const char *at, struct staged *out)
{
	struct diag d = {};
	char dir[4096];
	int r;

	if ((r = approvals_dir(policy, dir, sizeof(dir))) < 0 ||
	    (r = approvals_path(policy, f->repo, out->path, sizeof(out->path))) < 0)
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

		if (!wanted(rq, ids, nids))
			continue;
		r = to_approval(rq, ports, nports, &ap);
		if (r < 0)
			break;
		snprintf(ap.by, sizeof(ap.by), "%s", by);
		snprintf(ap.at, sizeof(ap.at), "%s", at);
		r = approvals_add(&out->a, &ap);
		if (r == -E2BIG)
			log_error("%s: more than %d approvals", out->path, APPROVALS_MAX);
		out->added += r == 0;
	}
	return r < 0 ? r : 0;
}

/* Every id exists once and can take the decision, before anything changes. */
static int check_ids(const struct store_view *v, const unsigned long *ids, int nids,
		     enum request_status to, const struct port_range *ports, int nports)
{
	for (int i = 0; i < nids; i++) {
		const struct request *rq = NULL;
		struct approval ap;
		int found = 0;

		for (size_t f = 0; f < v->n; f++)
			for (size_t j = 0; j < v->files[f].n; j++)
				if (v->files[f].items[j].id == ids[i]) {
					rq = &v->files[f].items[j];
					found++;
				}
		if (!found) {
			log_error("requests: no request %lu (see egret requests list --all)", ids[i]);
			return -ENOENT;
		}
		if (found > 1) {
			log_error("requests: id %lu belongs to %d repositories (was next-id reset?); give --repo",
				  ids[i], found);
			return -EEXIST;
		}
		if (to == REQUEST_APPROVED && to_approval(rq, ports, nports, &ap) < 0)
			return -EINVAL;
		if (to == REQUEST_DENIED && rq->status == REQUEST_APPROVED) {
			log_error("request %lu is approved; to revoke it, remove its entry from the repository's approvals file",
				  ids[i]);
			return -EINVAL;
		}
	}
	return 0;
}

/* Set the status of @f's requests in @ids, saying so; how many changed. */
static int mark(struct request_file *f, const unsigned long *ids, int nids,
		enum request_status to, const struct port_range *ports, int nports,
		const char *by)
{
	char target[APPROVAL_TEXT_MAX];
	int changed = 0;

	for (size_t j = 0; j < f->n; j++) {
		struct request *rq = &f->items[j];

		if (!wanted(rq, ids, nids))
			continue;
		if (to == REQUEST_APPROVED)
			approval_text(rq, ports, nports, target, sizeof(target));
		else
			request_target_text(rq, target, sizeof(target));
		if (rq->status == to) {
			printf("request %lu for %s (%s) is %s already\n", rq->id, f->repo,
			       target, request_status_name(to));
			continue;
		}
		rq->status = to;
		snprintf(rq->decided_by, sizeof(rq->decided_by), "%s", by);
		rq->decided_at = (int64_t)time(NULL);
		changed++;
		printf("%s request %lu for %s: %s\n",
		       to == REQUEST_APPROVED ? "approved" : "denied", rq->id, f->repo,
		       target);
	}
	return changed;
}

static bool file_wanted(const struct request_file *f, const unsigned long *ids,
			int nids)
{
	for (size_t j = 0; j < f->n; j++)
		if (wanted(&f->items[j], ids, nids))
			return true;
	return false;
}

/*
 * In three steps, so a refusal changes nothing: stage every repository's
 * approvals (refused files, bad entries stop here), write them, then mark
 * the requests. A crash after the second step leaves requests pending
 * whose approvals are in force; approving again is a no-op.
 */
static int decide(const char *dir, const char *repo, const char *policy, int argc,
		  char **argv, enum request_status to,
		  const struct port_range *ports, int nports)
{
	unsigned long ids[64];
	struct store_view v;
	_cleanup_free_ struct staged *st = NULL;
	char by[64], at[32];
	int nids, r, written = 0;

	if (argc > (int)ARRAY_SIZE(ids)) {
		log_error("requests: at most %zu ids at once", ARRAY_SIZE(ids));
		return EXIT_USAGE;
	}
	if (parse_ids(argc, argv, ids, &nids) < 0)
		return EXIT_USAGE;
	r = view_load(&v, dir, repo);
	if (r == 0)
		r = check_ids(&v, ids, nids, to, ports, nports);
	st = calloc(v.n ? v.n : 1, sizeof(*st));
	if (!st && r == 0)
		r = log_error_errno(-ENOMEM, "requests");
	who_decides(by, sizeof(by));
	iso_utc((int64_t)time(NULL), at, sizeof(at));
	for (size_t i = 0; r == 0 && to == REQUEST_APPROVED && i < v.n; i++)
		if (file_wanted(&v.files[i], ids, nids))
			r = stage_approvals(&v.files[i], ids, nids, policy, ports,
					    nports, by, at, &st[i]);
	for (size_t i = 0; r == 0 && i < v.n; i++) {
		if (!st[i].added)
			continue;
		r = approvals_save(&st[i].a, st[i].path);
		if (r < 0)
			log_error_errno(r, "write %s", st[i].path);
		else
			printf("wrote %d approval%s to %s\n", st[i].added,
			       st[i].added > 1 ? "s" : "", st[i].path);
		written += st[i].added;
	}
	for (size_t i = 0; r == 0 && i < v.n; i++) {
		if (!file_wanted(&v.files[i], ids, nids))
			continue;
		if (mark(&v.files[i], ids, nids, to, ports, nports, by) > 0 &&
		    (r = request_file_save(&v.st, &v.files[i])) < 0)
			log_error_errno(r, "write the request store");
	}
	if (r == 0 && written)
		printf("the repository's next attempts start with it; running ones pick it up within %d s\n",
		       APPROVALS_POLL_MS / 1000);
	for (size_t i = 0; st && i < v.n; i++)
		approvals_free(&st[i].a);
	view_free(&v);
	return r < 0 ? 1 : 0;
}

/* ---- the command line -------------------------------------------- */

/* What `egret requests`' options said; each subcommand reads its part. */
struct requests_args {
	const char *repo;		/* --repo: only its requests */
	const char *policy;		/* --policy: whose directory holds approved.d/ */
	const char *dir;		/* --state-dir */
	struct port_range ports[EGRET_PORT_SLOTS];
	int nports;			/* --ports; -1: not given, 0: any */
	bool all, json;			/* list --all, --json */
	int argc;			/* the operands left: request ids */
	char **argv;
};

static int requests_want_subcommand(void)
{
	log_error("requests: want list, approve ID..., deny ID... or import FILE... (see egret requests --help)");
	return EXIT_USAGE;
}

/* --ports PORTS, or "any" (0 ranges): what approve writes instead. */
static int requests_ports_parse(const char *text, struct requests_args *a)
{
	char err[160];

	if (!strcmp(text, "any")) {
		a->nports = 0;
		return 0;
	}
	a->nports = ports_parse(text, a->ports, EGRET_PORT_SLOTS, err, sizeof(err));
	if (a->nports < 0) {
		log_error("--ports %s: %s", text, err);
		return -EINVAL;
	}
	return 0;
}

/*
 * The options after the subcommand (argv[0]), in any order among the ids.
 * Returns 0, 1 when --help was printed, or -EINVAL after logging one line.
 */
static int requests_args_parse(int argc, char **argv, struct requests_args *ret)
{
	enum { OPT_REPO = 256, OPT_ALL, OPT_JSON, OPT_PORTS, OPT_POLICY, OPT_STATE_DIR };
	static const struct option opts[] = {
		{ "repo", required_argument, NULL, OPT_REPO },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "ports", required_argument, NULL, OPT_PORTS },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	*ret = (struct requests_args){ .dir = REQUESTS_DEFAULT_DIR, .nports = -1 };
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_REPO:
			if (!policy_repo_name_valid(optarg)) {
				log_error("--repo '%s': want owner/name", optarg);
				return -EINVAL;
			}
			ret->repo = optarg;
			break;
		case OPT_ALL:
			ret->all = true;
			break;
		case OPT_JSON:
			ret->json = true;
			break;
		case OPT_PORTS:
			if (requests_ports_parse(optarg, ret) < 0)
				return -EINVAL;
			break;
		case OPT_POLICY:
			ret->policy = optarg;
			break;
		case OPT_STATE_DIR:
			ret->dir = optarg;
			break;
		case 'h':
			requests_usage(stdout);
			return 1;
		default:
			log_error("requests: unknown option or missing argument '%s' (see egret requests --help)",
				  argv[optind - 1]);
			return -EINVAL;
		}
	}
	ret->argc = argc - optind;
	ret->argv = argv + optind;
	return 0;
}

/* ---- subcommands -------------------------------------------------- */

static int do_list(const struct requests_args *a)
{
	if (a->argc)
		return requests_want_subcommand();
	return requests_list(a->dir, a->repo, a->all, a->json);
}

static int do_approve(const struct requests_args *a)
{
	return decide(a->dir, a->repo, a->policy, a->argc, a->argv,
		      REQUEST_APPROVED, a->ports, a->nports);
}

/* A denial writes no approval: --ports would be a promise it ignores. */
static int do_deny(const struct requests_args *a)
{
	if (a->nports >= 0)
		return requests_want_subcommand();
	return decide(a->dir, a->repo, a->policy, a->argc, a->argv,
		      REQUEST_DENIED, NULL, -1);
}

/* Every file, or none: one broken request line refuses its file. */
static int do_import(const struct requests_args *a)
{
	if (!a->argc || a->repo || a->all || a->json || a->nports >= 0)
		return requests_want_subcommand();
	for (int i = 0; i < a->argc; i++) {
		const char *name = a->argv[i];
		FILE *in = strcmp(name, "-") ? fopen(name, "re") : stdin;
		char err[512] = "";
		size_t n = 0;
		int r;

		if (!in) {
			log_error_errno(-errno, "requests import: %s", name);
			return EXIT_TROUBLE;
		}
		r = request_import(a->dir, in, name, &n, err, sizeof(err));
		if (in != stdin)
			fclose(in);
		if (r < 0) {
			if (err[0])
				log_error("requests import: %s (nothing of %s taken)", err, name);
			else
				log_error_errno(r, "requests import: %s", name);
			return EXIT_TROUBLE;
		}
		printf("%s: %zu request lines taken\n", name, n);
	}
	return 0;
}

static const struct requests_cmd {
	const char *name;
	int (*run)(const struct requests_args *a);
} requests_cmds[] = {
	{ "list", do_list },
	{ "approve", do_approve },
	{ "deny", do_deny },
	{ "import", do_import },
};

/* The subcommand named exactly @name (no abbreviations, unlike bpftool). */
static int requests_select(const char *name, const struct requests_args *a)
{
	for (size_t i = 0; i < ARRAY_SIZE(requests_cmds); i++)
		if (!strcmp(name, requests_cmds[i].name))
			return requests_cmds[i].run(a);
	return requests_want_subcommand();
}

int cmd_requests(int argc, char **argv)
{
	struct requests_args a;
	int r;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		requests_usage(stdout);
		return 0;
	}
	if (argc < 2)
		return requests_want_subcommand();
	/* Options first, whatever the subcommand: --help works after any. */
	r = requests_args_parse(argc - 1, argv + 1, &a);
	if (r != 0)
		return r > 0 ? 0 : EXIT_USAGE;
	return requests_select(argv[1], &a);
}
