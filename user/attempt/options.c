// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <arpa/inet.h>
#include <stdio.h>

#include "launch/launch.h"
#include "attempt/options.h"
#include "lib/text.h"
#include "enforce/unix_filter.h"
#include "lib/log.h"
#include "lib/paths.h"
#include "lib/util.h"

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
		"  --umask MASK          COMMAND's umask, octal (default: egret's; through egretd:\n"
		"                        the caller's)\n"
		"  --view                with --user: COMMAND's own mounts: the start directory\n"
		"                        (and a worktree's git directories) idmapped so that its\n"
		"                        owner's files are COMMAND's, private /tmp, /var/tmp,\n"
		"                        /dev/shm, /run/lock, IPC, and HOME " VIEW_HOME "\n"
		"  --view-owner UID:GID  with --view: the owner the start directory must have\n"
		"                        (default: whoever owns it, never root)\n"
		"  --view-cache DIR      with --view: DIR, the owner's, is COMMAND's HOME/.cache\n"
		"                        (npm's, pip's and Go's caches), kept across attempts\n"
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
		"  --pty-size COLSxROWS  that pty's size (default: egret's terminal's, else\n"
		"                        80x24); implies --pty\n"
		"  --id ID               attempt id (default: random); names cgroup and pins\n"
		"  --cgroup-parent DIR   cgroup2 directory to create the attempt in\n"
		"                        (default: egret/ under egret's own cgroup)\n"
		"  --upload-limit SIZE   bytes COMMAND may send to each destination (name or\n"
		"                        static rule), e.g. 1M, 512K; the policy's may be lower\n"
		"  --max-entries N       exact addresses per family the attempt may hold\n"
		"                        (default %d)\n"
		"  --max-cidrs N         prefixes per family it may hold (default %d)\n"
		"  --dns-upstream ADDR[:PORT]  resolver egret forwards allowed names to\n"
		"                        (repeatable; default: /etc/resolv.conf)\n"
		"  --dns-min-ttl SECONDS lifetime floor of learned addresses (default %d)\n"
		"  --log FILE            append every decision as a JSON line (docs/EVENTS.md)\n"
		"  --log-allowed         log allowed decisions too\n"
		"  --audit               deny nothing; log what would be denied\n"
		"  --deny-errno ERRNO    what a refused connect() or sendto() fails with:\n"
		"                        ECONNREFUSED (default where the kernel can, Linux\n"
		"                        5.18+), EPERM, ENETUNREACH or EHOSTUNREACH\n"
		"  --no-shared           load the BPF programs now, for this attempt alone\n"
		"                        (docs/ARCHITECTURE.md)\n"
		"  --no-pinning          TLS and plain HTTP to learned addresses may name\n"
		"                        any host: SNI and Host pinning off, whatever the\n"
		"                        policy's pinning: says (docs/POLICY.md)\n"
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
	for (size_t i = 0; i < ARRAY_SIZE(deny_errnos); i++)
		if (deny_errnos[i].e == e)
			return deny_errnos[i].name;
	return "?";
}

static int parse_deny_errno(const char *text, int *ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(deny_errnos); i++)
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

/* ---- the option table ------------------------------------------- */

/* What parsing one command line carries from option to option. */
struct run_parse {
	struct run_opts *o;
	int verbosity;		/* enum log_level, set once all options are read */
	/* One buffer for every parser's reason, as --keep-fd falls back on
	 * its own words only when nothing was said. */
	char err[256];
};

struct run_option;
typedef int (*run_option_fn)(struct run_parse *p, const struct run_option *opt,
			     const char *arg);

/*
 * One `egret run` option. Most only set a field of struct run_opts
 * (@field, checked against its type where the row is made: a bool setter
 * pointed at a long would write past it); the rest have a handler of
 * their own. A handler returns 0, 1 to stop with 1 (--help), or -EINVAL
 * after logging one line.
 */
struct run_option {
	const char *name;
	int has_arg;		/* no_argument or required_argument */
	char short_name;	/* 'v', or 0: long only */
	run_option_fn parse;
	size_t field;		/* offsetof(struct run_opts, ...) */
	long min, max;		/* option_long's bounds, */
	const char *unit;	/* and what it counts ("seconds") */
	bool (*valid)(const char *arg);	/* option_checked's test, */
	const char *want;	/* and what it says when that fails */
};

/* The offset of run_opts' @member, a compile error unless it is a @type. */
#define RUN_FIELD(member, type)							\
	(offsetof(struct run_opts, member) +					\
	 0 * sizeof(char[__builtin_types_compatible_p(				\
		__typeof__(((struct run_opts *)0)->member), type) ? 1 : -1]))

static void *option_field(struct run_parse *p, const struct run_option *opt)
{
	return (char *)p->o + opt->field;
}

/* "--home rel: want an absolute path", the shape most refusals take. */
static int option_refuse(const struct run_option *opt, const char *arg,
			 const char *why)
{
	log_error("--%s %s: %s", opt->name, arg, why);
	return -EINVAL;
}

static int option_flag(struct run_parse *p, const struct run_option *opt,
		       const char *arg)
{
	*(bool *)option_field(p, opt) = true;
	return 0;
}

static int option_string(struct run_parse *p, const struct run_option *opt,
			 const char *arg)
{
	*(const char **)option_field(p, opt) = arg;
	return 0;
}

/* --home, --chdir and --state-dir take absolute paths only. */
static int option_path(struct run_parse *p, const struct run_option *opt,
		       const char *arg)
{
	if (arg[0] != '/')
		return option_refuse(opt, arg, "want an absolute path");
	return option_string(p, opt, arg);
}

/* A string its own test admits: "--repo 'x': want owner/name" if not. */
static int option_checked(struct run_parse *p, const struct run_option *opt,
			  const char *arg)
{
	if (!opt->valid(arg)) {
		log_error("--%s '%s': %s", opt->name, arg, opt->want);
		return -EINVAL;
	}
	return option_string(p, opt, arg);
}

/* --cgroup-parent is used as given (no mount prefixed): a full path. */
static bool cgroup_parent_valid(const char *arg)
{
	return arg[0] == '/';
}

static int option_long(struct run_parse *p, const struct run_option *opt,
		       const char *arg)
{
	if (parse_long(arg, opt->min, opt->max, option_field(p, opt)) < 0) {
		log_error("--%s '%s': want %s from %ld to %ld", opt->name, arg,
			  opt->unit, opt->min, opt->max);
		return -EINVAL;
	}
	return 0;
}

static int option_allow(struct run_parse *p, const struct run_option *opt,
			const char *arg)
{
	if (policy_add_allow_text(&p->o->cli, arg, p->err, sizeof(p->err)) < 0)
		return option_refuse(opt, arg, p->err);
	return 0;
}

static int option_dns_upstream(struct run_parse *p, const struct run_option *opt,
			       const char *arg)
{
	if (upstream_list_add(p->o->upstreams_csv, sizeof(p->o->upstreams_csv),
			      arg, p->err, sizeof(p->err)) < 0)
		return option_refuse(opt, arg, p->err);
	return 0;
}

static int option_git_remote(struct run_parse *p, const struct run_option *opt,
			     const char *arg)
{
	if (git_remote_parse(arg, &p->o->remote, p->err, sizeof(p->err)) < 0)
		return option_refuse(opt, arg, p->err);
	p->o->has_remote = true;
	return 0;
}

/* The id names the cgroup and the pins: a file name, never a path. Not
 * an option_checked row: its message counts EGRET_ID_MAX. */
static int option_id(struct run_parse *p, const struct run_option *opt,
		     const char *arg)
{
	if (!attempt_id_valid(arg)) {
		log_error("--id '%s': want 1-%d of [A-Za-z0-9_.-], not starting with '.' or '-'",
			  arg, EGRET_ID_MAX);
		return -EINVAL;
	}
	p->o->id = arg;
	return 0;
}

/* An fd COMMAND must not hold (launch_keep_fd_check) is refused here,
 * before anything is set up. */
static int option_keep_fd(struct run_parse *p, const struct run_option *opt,
			  const char *arg)
{
	struct run_opts *o = p->o;
	long fd;

	if (parse_long(arg, 3, 65535, &fd) < 0 ||
	    launch_keep_fd_check((int)fd, p->err, sizeof(p->err)) < 0)
		return option_refuse(opt, arg, p->err[0] ? p->err :
				     "want a file descriptor number above 2");
	if (o->nkeep_fds == LAUNCH_MAX_KEEP_FDS) {
		log_error("--keep-fd: at most %d", LAUNCH_MAX_KEEP_FDS);
		return -EINVAL;
	}
	o->keep_fds[o->nkeep_fds++] = (int)fd;
	return 0;
}

/* --pass-env NAME and --setenv NAME=VALUE: one more of at most ENVIRON_MAX_OPTS. */
static int option_environ_add(const struct run_option *opt, const char *arg,
			      bool assignment, const char **list, size_t *n)
{
	if (!environ_assignment_valid(arg, assignment))
		return option_refuse(opt, arg, assignment ? "want NAME=VALUE" :
					       "want a variable's NAME");
	if (*n == ENVIRON_MAX_OPTS) {
		log_error("--%s: more than %d", opt->name, ENVIRON_MAX_OPTS);
		return -EINVAL;
	}
	list[(*n)++] = arg;
	return 0;
}

static int option_pass_env(struct run_parse *p, const struct run_option *opt,
			   const char *arg)
{
	return option_environ_add(opt, arg, false, p->o->env.pass, &p->o->env.npass);
}

static int option_setenv(struct run_parse *p, const struct run_option *opt,
			 const char *arg)
{
	return option_environ_add(opt, arg, true, p->o->env.set, &p->o->env.nset);
}

static int option_allow_unix(struct run_parse *p, const struct run_option *opt,
			     const char *arg)
{
	struct run_opts *o = p->o;

	if (o->nunix_names == EGRET_UNIX_ALLOW_MAX) {
		log_error("--allow-unix: more than %d names", EGRET_UNIX_ALLOW_MAX);
		return -EINVAL;
	}
	if (unix_name_parse(arg, &o->unix_names[o->nunix_names]) < 0)
		return option_refuse(opt, arg, "want @NAME, an abstract socket name of 1 to 107 bytes (path-based sockets are judged by their file permissions)");
	o->nunix_names++;
	return 0;
}

static int option_deny_errno(struct run_parse *p, const struct run_option *opt,
			     const char *arg)
{
	if (parse_deny_errno(arg, &p->o->deny_errno) < 0)
		return option_refuse(opt, arg, "want ECONNREFUSED, EPERM, ENETUNREACH or EHOSTUNREACH");
	return 0;
}

static int option_upload_limit(struct run_parse *p, const struct run_option *opt,
			       const char *arg)
{
	uint64_t v;

	if (size_parse(arg, &v) < 0)
		return option_refuse(opt, arg, SIZE_WANT);
	/* Given twice (egretd's ceiling, then the caller's), the smaller. */
	if (!p->o->upload_limit || v < p->o->upload_limit)
		p->o->upload_limit = v;
	return 0;
}

/* Octal, as umask(1) takes it; no more than the permission bits. */
static int option_umask(struct run_parse *p, const struct run_option *opt,
			const char *arg)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 8);

	if (!*arg || *end || v > 0777 || arg[0] == '-' || arg[0] == '+')
		return option_refuse(opt, arg, "want an octal mask, 0000 to 0777");
	p->o->umask = (int)v;
	return 0;
}

/* COLSxROWS, as terminals are named (80x24); a pty, then, always. */
static int option_pty_size(struct run_parse *p, const struct run_option *opt,
			   const char *arg)
{
	unsigned long cols = 0, rows = 0;
	char *x = NULL, *end = NULL;

	if (isdigit((unsigned char)arg[0]))
		cols = strtoul(arg, &x, 10);
	if (x && *x == 'x' && isdigit((unsigned char)x[1]))
		rows = strtoul(x + 1, &end, 10);
	if (!end || *end || cols < 1 || rows < 1 || cols > 4096 || rows > 4096)
		return option_refuse(opt, arg, "want COLUMNSxROWS, such as 120x40 (1 to 4096 each)");
	p->o->pty_cols = (unsigned short)cols;
	p->o->pty_rows = (unsigned short)rows;
	p->o->pty = true;
	return 0;
}

static int option_verbose(struct run_parse *p, const struct run_option *opt,
			  const char *arg)
{
	p->verbosity = p->verbosity < LOG_INFO ? LOG_INFO : LOG_DEBUG;
	return 0;
}

static int option_quiet(struct run_parse *p, const struct run_option *opt,
			const char *arg)
{
	p->verbosity = LOG_ERR;
	p->o->quiet = true;
	return 0;
}

static int option_help(struct run_parse *p, const struct run_option *opt,
		       const char *arg)
{
	run_usage(stdout);
	return 1;
}

#define OPT_CALL(n, arg, fn)	{ .name = (n), .has_arg = (arg), .parse = (fn) }
#define OPT_SHORT(n, s, fn)	{ .name = (n), .has_arg = no_argument, \
				  .short_name = (s), .parse = (fn) }
#define OPT_FLAG(n, m)		{ .name = (n), .has_arg = no_argument,		\
				  .parse = option_flag, .field = RUN_FIELD(m, bool) }
#define OPT_STRING(n, m)	{ .name = (n), .has_arg = required_argument,	\
				  .parse = option_string,			\
				  .field = RUN_FIELD(m, const char *) }
#define OPT_PATH(n, m)		{ .name = (n), .has_arg = required_argument,	\
				  .parse = option_path,				\
				  .field = RUN_FIELD(m, const char *) }
#define OPT_CHECKED(n, m, test, says) { .name = (n), .has_arg = required_argument, \
				  .parse = option_checked,			\
				  .field = RUN_FIELD(m, const char *),		\
				  .valid = (test), .want = (says) }
#define OPT_LONG(n, m, lo, hi, what) { .name = (n), .has_arg = required_argument, \
				  .parse = option_long, .field = RUN_FIELD(m, long), \
				  .min = (lo), .max = (hi), .unit = (what) }

/*
 * In the order getopt_long matches abbreviations against ("--allow-r" is
 * --allow-root); run_usage() says what each one does.
 */
static const struct run_option run_options[] = {
	OPT_CALL("allow", required_argument, option_allow),
	OPT_STRING("policy", policy_file),
	OPT_STRING("user", user),
	OPT_FLAG("allow-root", allow_root),
	OPT_CALL("id", required_argument, option_id),
	OPT_CHECKED("cgroup-parent", cgroup_parent, cgroup_parent_valid,
		    "want an absolute path on the cgroup2 mount"),
	OPT_LONG("max-entries", max_entries, 1, 1L << 24, "a number"),
	OPT_LONG("max-cidrs", max_cidrs, 1, 1L << 24, "a number"),
	OPT_CALL("dns-upstream", required_argument, option_dns_upstream),
	OPT_LONG("dns-min-ttl", dns_min_ttl, 0, 86400, "seconds"),
	OPT_CHECKED("repo", repo, policy_repo_name_valid, "want owner/name"),
	OPT_CALL("git-remote", required_argument, option_git_remote),
	OPT_CALL("keep-fd", required_argument, option_keep_fd),
	OPT_STRING("log", log_file),
	OPT_FLAG("log-allowed", log_allowed),
	OPT_FLAG("audit", audit),
	OPT_PATH("state-dir", state_dir),
	OPT_FLAG("no-shared", no_shared),
	OPT_FLAG("no-pinning", no_pinning),
	OPT_FLAG("pty", pty),
	OPT_CALL("pty-size", required_argument, option_pty_size),
	OPT_FLAG("allow-shared-uid", allow_shared_uid),
	OPT_FLAG("allow-unconfined-unix", allow_unconfined_unix),
	OPT_CALL("allow-unix", required_argument, option_allow_unix),
	OPT_PATH("home", env.home),
	OPT_PATH("chdir", chdir),
	OPT_CALL("umask", required_argument, option_umask),
	OPT_FLAG("view", view),
	OPT_STRING("view-owner", view_owner),
	OPT_PATH("view-cache", view_cache),
	OPT_FLAG("clean-env", env.clean),
	OPT_CALL("pass-env", required_argument, option_pass_env),
	OPT_CALL("setenv", required_argument, option_setenv),
	OPT_CALL("deny-errno", required_argument, option_deny_errno),
	OPT_CALL("upload-limit", required_argument, option_upload_limit),
	OPT_SHORT("verbose", 'v', option_verbose),
	OPT_SHORT("quiet", 'q', option_quiet),
	OPT_SHORT("help", 'h', option_help),
};

/* '+': options end at COMMAND; ':': a missing argument is told apart. */
#define RUN_SHORT_OPTIONS	"+:vqh"

/* What getopt_long returns for a long-only option: past every char. */
#define RUN_OPTION_VAL_BASE	256

/* The table as getopt_long wants it; @ret has room for a terminator. */
static void run_options_getopt(struct option *ret)
{
	for (size_t i = 0; i < ARRAY_SIZE(run_options); i++) {
		const struct run_option *opt = &run_options[i];

		ret[i] = (struct option){
			.name = opt->name,
			.has_arg = opt->has_arg,
			.val = opt->short_name ? opt->short_name :
						 RUN_OPTION_VAL_BASE + (int)i,
		};
	}
	ret[ARRAY_SIZE(run_options)] = (struct option){};
}

/* The row getopt_long's @c stands for; NULL: not an option of ours. */
static const struct run_option *run_option_find(int c)
{
	if (c >= RUN_OPTION_VAL_BASE &&
	    c < RUN_OPTION_VAL_BASE + (int)ARRAY_SIZE(run_options))
		return &run_options[c - RUN_OPTION_VAL_BASE];
	for (size_t i = 0; i < ARRAY_SIZE(run_options); i++)
		if (c && run_options[i].short_name == c)
			return &run_options[i];
	return NULL;
}

int run_opts_parse(int argc, char **argv, struct run_opts *o)
{
	struct option longopts[ARRAY_SIZE(run_options) + 1];
	struct run_parse p = { .o = o, .verbosity = LOG_WARN };
	const struct run_option *opt;
	int c, r;

	policy_init(&o->cli);
	policy_init(&o->policy);
	o->max_entries = o->max_cidrs = o->dns_min_ttl = -1;
	o->umask = -1;
	run_options_getopt(longopts);
	opterr = 0;
	optind = 0;	/* full re-initialisation: parse may run more than once */
	while ((c = getopt_long(argc, argv, RUN_SHORT_OPTIONS, longopts, NULL)) != -1) {
		if (c == ':') {
			log_error("run: option '%s' needs an argument",
				  argv[optind - 1]);
			return -EINVAL;
		}
		opt = run_option_find(c);
		if (!opt) {
			log_error("run: unknown option '%s' (see egret run --help)",
				  argv[optind - 1]);
			return -EINVAL;
		}
		r = opt->parse(&p, opt, optarg);
		if (r != 0)
			return r;
	}
	log_set_level((enum log_level)p.verbosity);
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
