// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <arpa/inet.h>
#include <stdio.h>

#include "attempt/launch.h"
#include "attempt/options.h"
#include "enforce/unix_filter.h"
#include "lib/log.h"
#include "lib/paths.h"

void run_usage(FILE *out)
{
	fprintf(out,
		"Usage: egret run [OPTIONS] -- COMMAND [ARG...]\n\n"
		"Run COMMAND in a fresh cgroup whose network egress is denied unless allowed.\n\n"
		"  --allow SPEC          allow a destination (repeatable): ADDR, CIDR,\n"
		"                        ADDR:PORTS, CIDR:PORTS, [V6ADDR]:PORTS, [V6CIDR]:PORTS,\n"
		"                        HOST, HOST:PORTS, *.DOMAIN[:PORTS];\n"
		"                        PORTS = 443,80,8000-8100; no ports = any port\n"
		"  --policy FILE         YAML policy (docs/POLICY.md; default " POLICY_DEFAULT_PATH ",\n"
		"                        or the built-in default if that does not exist;\n"
		"                        'none': only --allow entries)\n"
		"  --repo OWNER/NAME     the target repository: selects its repos: section\n"
		"  --git-remote URL      the target repository's remote: its host is allowed\n"
		"  --state-dir DIR       where denials of a --repo become requests for the\n"
		"                        operator (egret requests; default " REQUESTS_DEFAULT_DIR ")\n"
		"  --user USER[:GROUP]   run COMMAND as USER (name or uid), with its groups\n"
		"  --allow-root          run COMMAND as root without --user (it could undo enforcement)\n"
		"  --home DIR            COMMAND's HOME (default: its user's home; USER, LOGNAME\n"
		"                        and SHELL are its user's too)\n"
		"  --chdir DIR           start COMMAND in DIR (as its user; default: egret's cwd)\n"
		"  --clean-env           start COMMAND with only PATH, HOME, USER, LOGNAME, SHELL\n"
		"                        (and TERM with a pty), plus --pass-env and --setenv\n"
		"  --pass-env NAME       with --clean-env, pass egret's NAME (repeatable)\n"
		"  --setenv NAME=VALUE   set NAME in COMMAND's environment (repeatable)\n"
		"  --allow-shared-uid    only warn when COMMAND's uid also runs processes outside\n"
		"                        the attempt (default: refuse; give each attempt a uid)\n"
		"  --allow-unconfined-unix  run on a kernel that cannot keep COMMAND from abstract\n"
		"                        unix sockets outside the attempt (Landlock ABI < 6)\n"
		"  --allow-unix @NAME    let COMMAND reach the abstract unix socket NAME outside\n"
		"                        the attempt (repeatable; then only named ones, its own\n"
		"                        included: docs/SECURITY.md; needs Linux 6.7+)\n"
		"  --keep-fd N           pass fd N to COMMAND (repeatable; never a socket other\n"
		"                        than unix, or a BPF or cgroup handle); the rest are closed\n"
		"  --pty                 give COMMAND a pseudo-terminal of its own even when\n"
		"                        none of egret's stdin, stdout and stderr is a terminal\n"
		"                        (it gets one whenever one of them is; it never gets\n"
		"                        egret's terminal)\n"
		"  --id ID               attempt id (default: random); names cgroup and pins\n"
		"  --cgroup-parent DIR   cgroup2 directory to create the attempt in\n"
		"                        (default: egret/ under egret's own cgroup)\n"
		"  --max-entries N       size of each exact-address map (default %d)\n"
		"  --max-cidrs N         size of each prefix map (default %d)\n"
		"  --dns-upstream ADDR[:PORT]  resolver egret forwards allowed names to\n"
		"                        (repeatable; default: /etc/resolv.conf)\n"
		"  --dns-min-ttl SECONDS lifetime floor of learned addresses (default %d)\n"
		"  --log FILE            append every decision as a JSON line (docs/EVENTS.md)\n"
		"  --log-allowed         log allowed decisions too\n"
		"  --audit               deny nothing; log what would be denied\n"
		"  --deny-errno ERRNO    what a refused connect() or sendto() fails with:\n"
		"                        ECONNREFUSED (default where the kernel can, Linux\n"
		"                        5.18+), EPERM, ENETUNREACH or EHOSTUNREACH\n"
		"  --no-spare            load the BPF programs now, and leave none loaded\n"
		"                        in advance for the next attempt (docs/ARCHITECTURE.md)\n"
		"  -v, --verbose         more detail (-vv: libbpf debug)\n"
		"  -q, --quiet           errors only, no exit summary\n"
		"  -h, --help            this text\n\n"
		"Exit status: COMMAND's; 128+N if it died of signal N; 126 cannot execute;\n"
		"127 not found; 125 egret could not set up enforcement (COMMAND did not run);\n"
		"2 the policy was refused (COMMAND did not run).\n",
		EGRET_DEFAULT_MAX_ENTRIES, EGRET_DEFAULT_MAX_CIDRS,
		POLICY_DEFAULT_MIN_TTL);
}

static const struct { const char *name; int e; } deny_errnos[] = {
	{ "ECONNREFUSED", ECONNREFUSED }, { "EPERM", EPERM },
	{ "ENETUNREACH", ENETUNREACH }, { "EHOSTUNREACH", EHOSTUNREACH },
};

const char *run_deny_errno_name(int e)
{
	for (size_t i = 0; i < sizeof(deny_errnos) / sizeof(deny_errnos[0]); i++)
		if (deny_errnos[i].e == e)
			return deny_errnos[i].name;
	return "?";
}

static int parse_deny_errno(const char *text, int *ret)
{
	for (size_t i = 0; i < sizeof(deny_errnos) / sizeof(deny_errnos[0]); i++)
		if (!strcasecmp(text, deny_errnos[i].name)) {
			*ret = deny_errnos[i].e;
			return 0;
		}
	return -EINVAL;
}

static int parse_long(const char *text, long min, long max, long *ret)
{
	char *end;
	long v;

	if (text[0] < '0' || text[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtol(text, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

int run_opts_parse(int argc, char **argv, struct run_opts *o)
{
	enum { OPT_ALLOW = 256, OPT_POLICY, OPT_USER, OPT_ALLOW_ROOT, OPT_ID,
	       OPT_CGROUP_PARENT, OPT_MAX_ENTRIES, OPT_MAX_CIDRS,
	       OPT_DNS_UPSTREAM, OPT_DNS_MIN_TTL, OPT_REPO, OPT_GIT_REMOTE,
	       OPT_KEEP_FD, OPT_LOG, OPT_LOG_ALLOWED, OPT_AUDIT, OPT_STATE_DIR,
	       OPT_NO_SPARE, OPT_PTY, OPT_ALLOW_SHARED_UID, OPT_ALLOW_UNCONFINED_UNIX,
	       OPT_ALLOW_UNIX, OPT_HOME, OPT_CHDIR, OPT_CLEAN_ENV, OPT_PASS_ENV,
	       OPT_SETENV, OPT_DENY_ERRNO };
	static const struct option options[] = {
		{ "allow", required_argument, NULL, OPT_ALLOW },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "user", required_argument, NULL, OPT_USER },
		{ "allow-root", no_argument, NULL, OPT_ALLOW_ROOT },
		{ "id", required_argument, NULL, OPT_ID },
		{ "cgroup-parent", required_argument, NULL, OPT_CGROUP_PARENT },
		{ "max-entries", required_argument, NULL, OPT_MAX_ENTRIES },
		{ "max-cidrs", required_argument, NULL, OPT_MAX_CIDRS },
		{ "dns-upstream", required_argument, NULL, OPT_DNS_UPSTREAM },
		{ "dns-min-ttl", required_argument, NULL, OPT_DNS_MIN_TTL },
		{ "repo", required_argument, NULL, OPT_REPO },
		{ "git-remote", required_argument, NULL, OPT_GIT_REMOTE },
		{ "keep-fd", required_argument, NULL, OPT_KEEP_FD },
		{ "log", required_argument, NULL, OPT_LOG },
		{ "log-allowed", no_argument, NULL, OPT_LOG_ALLOWED },
		{ "audit", no_argument, NULL, OPT_AUDIT },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "no-spare", no_argument, NULL, OPT_NO_SPARE },
		{ "pty", no_argument, NULL, OPT_PTY },
		{ "allow-shared-uid", no_argument, NULL, OPT_ALLOW_SHARED_UID },
		{ "allow-unconfined-unix", no_argument, NULL, OPT_ALLOW_UNCONFINED_UNIX },
		{ "allow-unix", required_argument, NULL, OPT_ALLOW_UNIX },
		{ "home", required_argument, NULL, OPT_HOME },
		{ "chdir", required_argument, NULL, OPT_CHDIR },
		{ "clean-env", no_argument, NULL, OPT_CLEAN_ENV },
		{ "pass-env", required_argument, NULL, OPT_PASS_ENV },
		{ "setenv", required_argument, NULL, OPT_SETENV },
		{ "deny-errno", required_argument, NULL, OPT_DENY_ERRNO },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	char err[256] = "";
	int c, verbosity = LOG_WARN;

	policy_init(&o->cli);
	policy_init(&o->policy);
	o->max_entries = o->max_cidrs = o->dns_min_ttl = -1;
	opterr = 0;
	optind = 0;	/* full re-initialisation: parse may run more than once */
	while ((c = getopt_long(argc, argv, "+:vqh", options, NULL)) != -1) {
		switch (c) {
		case OPT_ALLOW:
			if (policy_add_allow_text(&o->cli, optarg, err,
						  sizeof(err)) < 0) {
				log_error("--allow %s: %s", optarg, err);
				return -EINVAL;
			}
			break;
		case OPT_DNS_UPSTREAM: {
			char canon[INET6_ADDRSTRLEN + 8];
			size_t used = strlen(o->upstreams_csv);

			if (endpoint_parse(optarg, 53, canon, sizeof(canon), err,
					   sizeof(err)) < 0) {
				log_error("--dns-upstream %s: %s", optarg, err);
				return -EINVAL;
			}
			if (used + strlen(canon) + 2 > sizeof(o->upstreams_csv)) {
				log_error("--dns-upstream: too many upstreams");
				return -EINVAL;
			}
			snprintf(o->upstreams_csv + used,
				 sizeof(o->upstreams_csv) - used, "%s%s",
				 used ? "," : "", canon);
			break;
		}
		case OPT_DNS_MIN_TTL:
			if (parse_long(optarg, 0, 86400, &o->dns_min_ttl) < 0) {
				log_error("--dns-min-ttl '%s': want seconds from 0 to 86400",
					  optarg);
				return -EINVAL;
			}
			break;
		case OPT_POLICY:
			o->policy_file = optarg;
			break;
		case OPT_REPO:
			if (!policy_repo_name_valid(optarg)) {
				log_error("--repo '%s': want owner/name", optarg);
				return -EINVAL;
			}
			o->repo = optarg;
			break;
		case OPT_KEEP_FD: {
			long fd;

			if (parse_long(optarg, 3, 65535, &fd) < 0 ||
			    launch_keep_fd_check((int)fd, err, sizeof(err)) < 0) {
				log_error("--keep-fd %s: %s", optarg,
					  err[0] ? err : "want a file descriptor number above 2");
				return -EINVAL;
			}
			if (o->nkeep_fds == LAUNCH_MAX_KEEP_FDS) {
				log_error("--keep-fd: at most %d", LAUNCH_MAX_KEEP_FDS);
				return -EINVAL;
			}
			o->keep_fds[o->nkeep_fds++] = (int)fd;
			break;
		}
		case OPT_LOG:
			o->log_file = optarg;
			break;
		case OPT_NO_SPARE:
			o->no_spare = true;
			break;
		case OPT_PTY:
			o->pty = true;
			break;
		case OPT_ALLOW_SHARED_UID:
			o->allow_shared_uid = true;
			break;
		case OPT_ALLOW_UNCONFINED_UNIX:
			o->allow_unconfined_unix = true;
			break;
		case OPT_HOME:
		case OPT_CHDIR:
			if (optarg[0] != '/') {
				log_error("--%s %s: want an absolute path", c == OPT_HOME ? "home" : "chdir",
					  optarg);
				return -EINVAL;
			}
			if (c == OPT_HOME)
				o->env.home = optarg;
			else
				o->chdir = optarg;
			break;
		case OPT_CLEAN_ENV:
			o->env.clean = true;
			break;
		case OPT_PASS_ENV:
		case OPT_SETENV:
			if (!environ_assignment_valid(optarg, c == OPT_SETENV)) {
				log_error("--%s %s: want %s", c == OPT_SETENV ? "setenv" : "pass-env",
					  optarg, c == OPT_SETENV ? "NAME=VALUE" : "a variable's NAME");
				return -EINVAL;
			}
			if ((c == OPT_SETENV ? o->env.nset : o->env.npass) == ENVIRON_MAX_OPTS) {
				log_error("--%s: more than %d", c == OPT_SETENV ? "setenv" : "pass-env",
					  ENVIRON_MAX_OPTS);
				return -EINVAL;
			}
			if (c == OPT_SETENV)
				o->env.set[o->env.nset++] = optarg;
			else
				o->env.pass[o->env.npass++] = optarg;
			break;
		case OPT_ALLOW_UNIX:
			if (o->nunix_names == EGRET_UNIX_ALLOW_MAX) {
				log_error("--allow-unix: more than %d names", EGRET_UNIX_ALLOW_MAX);
				return -EINVAL;
			}
			if (unix_name_parse(optarg, &o->unix_names[o->nunix_names]) < 0) {
				log_error("--allow-unix %s: want @NAME, an abstract socket name of 1 to 107 bytes (path-based sockets are judged by their file permissions)",
					  optarg);
				return -EINVAL;
			}
			o->nunix_names++;
			break;
		case OPT_STATE_DIR:
			if (optarg[0] != '/') {
				log_error("--state-dir %s: want an absolute path", optarg);
				return -EINVAL;
			}
			o->state_dir = optarg;
			break;
		case OPT_LOG_ALLOWED:
			o->log_allowed = true;
			break;
		case OPT_AUDIT:
			o->audit = true;
			break;
		case OPT_DENY_ERRNO:
			if (parse_deny_errno(optarg, &o->deny_errno) < 0) {
				log_error("--deny-errno %s: want ECONNREFUSED, EPERM, ENETUNREACH or EHOSTUNREACH",
					  optarg);
				return -EINVAL;
			}
			break;
		case OPT_GIT_REMOTE:
			if (git_remote_parse(optarg, &o->remote, err, sizeof(err)) < 0) {
				log_error("--git-remote %s: %s", optarg, err);
				return -EINVAL;
			}
			o->has_remote = true;
			break;
		case OPT_USER:
			o->user = optarg;
			break;
		case OPT_ALLOW_ROOT:
			o->allow_root = true;
			break;
		case OPT_ID:
			if (!attempt_id_valid(optarg)) {
				log_error("--id '%s': want 1-%d of [A-Za-z0-9_.-], not starting with '.' or '-'",
					  optarg, EGRET_ID_MAX);
				return -EINVAL;
			}
			o->id = optarg;
			break;
		case OPT_CGROUP_PARENT:
			if (optarg[0] != '/') {
				log_error("--cgroup-parent '%s': want an absolute path on the cgroup2 mount",
					  optarg);
				return -EINVAL;
			}
			o->cgroup_parent = optarg;
			break;
		case OPT_MAX_ENTRIES:
		case OPT_MAX_CIDRS:
			if (parse_long(optarg, 1, 1L << 24, c == OPT_MAX_ENTRIES ?
				       &o->max_entries : &o->max_cidrs) < 0) {
				log_error("%s '%s': want a number from 1 to %u",
					  c == OPT_MAX_ENTRIES ? "--max-entries" : "--max-cidrs",
					  optarg, 1U << 24);
				return -EINVAL;
			}
			break;
		case 'v':
			verbosity = verbosity < LOG_INFO ? LOG_INFO : LOG_DEBUG;
			break;
		case 'q':
			verbosity = LOG_ERR;
			o->quiet = true;
			break;
		case 'h':
			run_usage(stdout);
			return 1;
		case ':':
			log_error("run: option '%s' needs an argument",
				  argv[optind - 1]);
			return -EINVAL;
		default:
			log_error("run: unknown option '%s' (see egret run --help)",
				  argv[optind - 1]);
			return -EINVAL;
		}
	}
	log_set_level((enum log_level)verbosity);
	if (optind >= argc) {
		log_error("run: missing COMMAND (egret run [OPTIONS] -- COMMAND [ARG...])");
		return -EINVAL;
	}
	o->argv = argv + optind;
	return 0;
}

void run_opts_free(struct run_opts *o)
{
	policy_free(&o->cli);
	policy_free(&o->policy);
}
