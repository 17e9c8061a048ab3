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
#include "attempt/run_options.h"
#include "lib/text.h"
#include "enforce/unix_filter.h"
#include "lib/log.h"
#include "lib/paths.h"
#include "lib/util.h"

void run_usage(FILE *out)
{
	fprintf(out,
		"Usage: egret run [OPTIONS] -- COMMAND [ARG...]\n\n"
		"Run COMMAND in a fresh cgroup whose network egress is denied unless allowed.\n\n");
	run_options_usage(out, RUN_VIA_ANY);
	fprintf(out, "\n"
		"Exit status: COMMAND's; 128+N if it died of signal N; 126 cannot execute;\n"
		"127 not found; 125 egret could not set up enforcement (COMMAND did not run);\n"
		"2 the policy was refused (COMMAND did not run).\n");
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
 * One `egret run` option: a row of attempt/run_options.def, its PARSE
 * spelled out (OPT_* below). Most only set a field of struct run_opts
 * (@field, checked against its type where the row is made: a bool setter
 * pointed at a long would write past it); the rest have a handler of
 * their own. A handler returns 0, 1 to stop with 1 (--help), or -EINVAL
 * after logging one line.
 */
struct run_option {
	const char *name;
	const char *metavar;	/* NULL: takes no argument */
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

/* A duration: seconds, or a number with s, m or h; at most 7 days. */
static int option_timeout(struct run_parse *p, const struct run_option *opt,
			  const char *arg)
{
	char *end;
	unsigned long v = isdigit((unsigned char)arg[0]) ? strtoul(arg, &end, 10) : 0;
	unsigned long unit = 1;

	if (v && !strcmp(end, "m"))
		unit = 60;
	else if (v && !strcmp(end, "h"))
		unit = 3600;
	else if (!v || (*end && strcmp(end, "s")))
		return option_refuse(opt, arg, "want a duration: 90, 30s, 10m, 2h");
	if (v > 7 * 86400 / unit)
		return option_refuse(opt, arg, "want at most 7 days");
	p->o->timeout_ms = (uint64_t)v * unit * 1000;
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

/* What a row of attempt/run_options.def does (its PARSE). */
#define OPT_CALL(fn)		.parse = (fn)
#define OPT_FLAG(m)		.parse = option_flag, .field = RUN_FIELD(m, bool)
#define OPT_STRING(m)		.parse = option_string, .field = RUN_FIELD(m, const char *)
#define OPT_PATH(m)		.parse = option_path, .field = RUN_FIELD(m, const char *)
#define OPT_CHECKED(m, test, says) .parse = option_checked,			\
				  .field = RUN_FIELD(m, const char *),		\
				  .valid = (test), .want = (says)
#define OPT_LONG(m, lo, hi, what) .parse = option_long, .field = RUN_FIELD(m, long), \
				  .min = (lo), .max = (hi), .unit = (what)

/* The table's rows with what each does, in its order: run_option_rows[i]
 * (its name, argument and usage) is run_options[i]. */
static const struct run_option run_options[] = {
#define RUN_OPTION(n, s, meta, via, parse, help) \
	{ .name = (n), .short_name = (s), .metavar = (meta), parse },
#include "attempt/run_options.def"
#undef RUN_OPTION
};

int run_opts_parse(int argc, char **argv, struct run_opts *o)
{
	struct option longopts[ARRAY_SIZE(run_options) + 1];
	/* '+': options end at COMMAND; ':': a missing argument is told apart. */
	char shorts[2 + 2 * ARRAY_SIZE(run_options) + 1] = "+:";
	struct run_parse p = { .o = o, .verbosity = LOG_WARN };
	int c, i, r;

	policy_init(&o->cli);
	policy_init(&o->policy);
	o->max_entries = o->max_cidrs = o->dns_min_ttl = -1;
	o->umask = -1;
	run_options_getopt(longopts, shorts + 2, RUN_VIA_ANY);
	opterr = 0;
	optind = 0;	/* full re-initialisation: parse may run more than once */
	while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
		if (c == ':') {
			log_error("run: option '%s' needs an argument",
				  argv[optind - 1]);
			return -EINVAL;
		}
		i = run_option_index(c);
		if (i < 0) {
			log_error("run: unknown option '%s' (see egret run --help)",
				  argv[optind - 1]);
			return -EINVAL;
		}
		r = run_options[i].parse(&p, &run_options[i], optarg);
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
