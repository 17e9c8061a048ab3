// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd/requests.c - `egret requests`: its options and subcommands, and what
 * they print. The store and the decisions are requests/'s (requests/view.h,
 * requests/decide.h, requests/import.h).
 */
#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attempt/watch.h"
#include "cmd/requests.h"
#include "cmd/requests_list.h"
#include "lib/cmd.h"
#include "lib/exit.h"
#include "lib/log.h"
#include "lib/text.h"
#include "lib/util.h"
#include "requests/decide.h"
#include "requests/import.h"

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

/* Read before any subcommand runs (--help works after any); the
 * subcommand's operands are its @argv after its name. */
static struct requests_args args;

static void requests_usage(FILE *out);

static int requests_want_subcommand(void)
{
	log_error("requests: want list, approve ID..., deny ID... or import FILE... (see egret requests --help)");
	return EXIT_USAGE;
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

static void print_wrote(const char *path, int added)
{
	printf("wrote %d approval%s to %s\n", added, added > 1 ? "s" : "", path);
}

static void print_decided(const char *repo, const struct request *rq, const char *target,
			  bool already)
{
	if (already)
		printf("request %lu for %s (%s) is %s already\n", rq->id, repo, target,
		       request_status_name(rq->status));
	else
		printf("%s request %lu for %s: %s\n",
		       rq->status == REQUEST_APPROVED ? "approved" : "denied", rq->id, repo,
		       target);
}

/* The request ids @argv (@argc of them) decided @to (requests/decide.h). */
static int decide(int argc, char **argv, enum request_status to,
		  const struct port_range *ports, int nports)
{
	static const struct decision_report report = {
		.wrote = print_wrote, .decided = print_decided,
	};
	unsigned long ids[REQUESTS_DECIDE_MAX];
	char by[64];
	struct request_decision dec = {
		.to = to, .ids = ids, .repo = args.repo, .policy = args.policy,
		.ports = ports, .nports = nports, .by = by,
	};
	int r;

	if (argc > (int)ARRAY_SIZE(ids)) {
		log_error("requests: at most %zu ids at once", ARRAY_SIZE(ids));
		return EXIT_USAGE;
	}
	if (parse_ids(argc, argv, ids, &dec.nids) < 0)
		return EXIT_USAGE;
	who_decides(by, sizeof(by));
	r = requests_decide(args.dir, &dec, &report);
	if (r > 0)
		printf("the repository's next attempts start with it; running ones pick it up within %d s\n",
		       APPROVALS_POLL_MS / 1000);
	return r < 0 ? EXIT_TROUBLE : 0;
}

/* ---- subcommands -------------------------------------------------- */

static int do_list(int argc, char **argv)
{
	if (argc > 1)
		return requests_want_subcommand();
	return requests_list(args.dir, args.repo, args.all, args.json);
}

static int do_approve(int argc, char **argv)
{
	return decide(argc - 1, argv + 1, REQUEST_APPROVED, args.ports, args.nports);
}

/* A denial writes no approval: --ports would be a promise it ignores. */
static int do_deny(int argc, char **argv)
{
	if (args.nports >= 0)
		return requests_want_subcommand();
	return decide(argc - 1, argv + 1, REQUEST_DENIED, NULL, -1);
}

/* Every file, or none: one broken request line refuses its file. */
static int do_import(int argc, char **argv)
{
	if (argc < 2 || args.repo || args.all || args.json || args.nports >= 0)
		return requests_want_subcommand();
	for (int i = 1; i < argc; i++) {
		const char *name = argv[i];
		FILE *in = strcmp(name, "-") ? fopen(name, "re") : stdin;
		char err[512] = "";
		size_t n = 0;
		int r;

		if (!in) {
			log_error_errno(-errno, "requests import: %s", name);
			return EXIT_TROUBLE;
		}
		r = request_import(args.dir, in, name, &n, err, sizeof(err));
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

static int requests_unknown(int argc, char **argv)
{
	return requests_want_subcommand();
}

/* `egret requests SUBCOMMAND`: a new one is a row here, and the usage
 * lists it. */
static const struct cmd requests_cmds[] = {
	{ "list", do_list, "pending requests, most frequent first (--all: decided ones too)" },
	{ "approve", do_approve,
	  "allow the request's host or address for its repository only,\n"
	  "in the approvals file next to the policy (approved.d/); the\n"
	  "request's port, or PORTS; a lookup asked for none: 443" },
	{ "deny", do_deny, "dismiss: the same request is counted but never pending again" },
	{ "import", do_import,
	  "fold the request lines egretds wrote on their stdout (a fleet's\n"
	  "collected logs; '-' for stdin) into this store" },
};

static void requests_usage(FILE *out)
{
	fprintf(out,
		"Usage: egret requests list [--repo OWNER/NAME] [--all] [--json]\n"
		"       egret requests approve ID... [--ports PORTS] [--policy FILE] [--repo OWNER/NAME]\n"
		"       egret requests deny ID... [--repo OWNER/NAME]\n"
		"       egret requests import FILE...\n\n"
		"Denied destinations of attempts run with --repo, waiting for a decision.\n");
	cmd_list(out, requests_cmds, ARRAY_SIZE(requests_cmds), 9);
	fprintf(out, "\n"
		"  --state-dir DIR   the store (default " REQUESTS_DEFAULT_DIR ")\n"
		"  --policy FILE     whose directory holds approved.d/ (default " POLICY_DEFAULT_PATH ")\n");
}

/* ---- the command line -------------------------------------------- */

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

int cmd_requests(int argc, char **argv)
{
	_cleanup_free_ char **words = NULL;
	int r;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		requests_usage(stdout);
		return 0;
	}
	if (argc < 2)
		return requests_want_subcommand();
	/* Options first, whatever the subcommand: --help works after any. */
	r = requests_args_parse(argc - 1, argv + 1, &args);
	if (r != 0)
		return r > 0 ? 0 : EXIT_USAGE;
	/* The subcommand's name, then its operands (getopt moved them last). */
	words = calloc((size_t)args.argc + 2, sizeof(*words));
	if (!words) {
		log_error_errno(-ENOMEM, "requests");
		return EXIT_TROUBLE;
	}
	words[0] = argv[1];
	memcpy(words + 1, args.argv, (size_t)args.argc * sizeof(*words));
	return cmd_select(requests_cmds, ARRAY_SIZE(requests_cmds), args.argc + 1, words,
			  requests_unknown);
}
