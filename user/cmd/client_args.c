// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd/client_args.c - egret run's command line as egretd's request: the
 * socket it names, the options egretd takes from a caller (the rows of
 * attempt/run_options.def a caller may send), COMMAND, its environment
 * and its directory. What egretd decides itself is refused here, never
 * ignored. cmd/client.c sends it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attempt/run_options.h"
#include "cmd/client.h"
#include "cmd/client_impl.h"
#include "daemon/config.h"
#include "launch/environ.h"
#include "lib/log.h"
#include "lib/paths.h"
#include "lib/util.h"

extern char **environ;

/* --via SOCKET among the options, or NULL. */
static const char *via_option(int argc, char **argv)
{
	/* Options end at "--" or at the first word that is not one (COMMAND,
	 * whose own --via is its business). request_options() refuses a
	 * --via this did not see (an abbreviation): never a silent default. */
	for (int i = 1; i < argc && argv[i][0] == '-' && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--via") && i + 1 < argc)
			return argv[i + 1];
		if (!strncmp(argv[i], "--via=", 6))
			return argv[i] + 6;
	}
	return NULL;
}

const char *client_daemon_socket(int argc, char **argv)
{
	const char *via = via_option(argc, argv), *env = getenv("EGRET_SOCKET");

	if (via)
		return via;
	return env && *env ? env : DAEMON_SOCKET_DEFAULT;
}

const char *client_socket(int argc, char **argv)
{
	if (!via_option(argc, argv) && geteuid() == 0)
		return NULL;
	return client_daemon_socket(argc, argv);
}

/* An option for egretd to pass on: "NAME=VALUE", or "NAME" alone, on the
 * heap. Owned here, not by the request: a refusal is decoded into the
 * same message (said_why()), which would lose them, or name others. */
static char umask_text[8];
static char *passed[WIRE_OPTION_MAX];
static size_t npassed;

void client_passed_free(int *unused)
{
	for (size_t i = 0; i < npassed; i++)
		free(passed[i]);
	npassed = 0;
}

static int pass_on(struct wire_run *run, const char *name, const char *value)
{
	char *word;

	if (run->noption == WIRE_OPTION_MAX) {
		log_error("--%s: at most %d such options through egretd", name, WIRE_OPTION_MAX);
		return -E2BIG;
	}
	if ((value ? asprintf(&word, "%s=%s", name, value) : asprintf(&word, "%s", name)) < 0)
		return log_error_errno(-ENOMEM, "--%s", name);
	run->option[run->noption++] = word;
	passed[npassed++] = word;
	return 0;
}

/*
 * An option with a wire field of its own (RUN_VIA_FIELD), into that
 * field; --chdir into @chdir_to (the request's CWD, request_from_args()).
 */
static int take_field(struct wire_run *run, const char **chdir_to, const char *name,
		      char *arg)
{
	if (!strcmp(name, "allow")) {
		if (run->nallow == WIRE_ALLOW_MAX) {
			log_error("--allow: at most %d through egretd", WIRE_ALLOW_MAX);
			return -E2BIG;
		}
		run->allow[run->nallow++] = arg;
	} else if (!strcmp(name, "repo")) {
		run->repo = arg;
	} else if (!strcmp(name, "audit")) {
		run->audit = true;
	} else if (!strcmp(name, "pty")) {
		run->pty = true;
	} else if (!strcmp(name, "chdir")) {
		*chdir_to = arg;
	} else if (!strcmp(name, "receipt")) {
		/* Ours to open: egretd writes the receipt into it, never
		 * into a path of its own choosing. */
		if (client_receipt_fd >= 0)
			close(client_receipt_fd);
		client_receipt_fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
					 0644);
		if (client_receipt_fd < 0)
			return log_error_errno(-errno, "--receipt %s", arg);
		run->receipt = true;
	} else {
		log_error("--%s: no field of egretd's request carries it (attempt/run_options.def)",
			  name);
		return -EINVAL;
	}
	return 0;
}

int client_receipt_fd = -1;

/* What getopt_long answers for --via: neither a row's nor a char. */
#define OPT_VIA	1

/*
 * The options that mean something through egretd, into @run; the index of
 * COMMAND's first word, or -errno after one line. A RUN_VIA_OPTION row
 * shapes COMMAND's own process: egretd passes it on to egret run
 * (wire_option_valid()), which judges it. Everything else (the policy
 * file, state, log, user, cgroup, ids, the view) is egretd's to decide,
 * so asking for it is refused, never ignored.
 */
static int request_options(const char *socket, int argc, char **argv,
			   struct wire_run *run, const char **chdir_to)
{
	/* The rows a caller may send (RUN_VIA_CALLER), then --via. */
	_cleanup_free_ struct option *opts = calloc(run_option_nrows + 2, sizeof(*opts));
	/* '+': options end at COMMAND; then the rows' short letters (-q, -v). */
	_cleanup_free_ char *shorts = calloc(2 * run_option_nrows + 2, 1);
	const struct run_option_row *row;
	bool umask_given = false;
	int c, r;

	if (!opts || !shorts)
		return log_error_errno(-ENOMEM, "the options");
	shorts[0] = '+';
	opts[run_options_getopt(opts, shorts + 1, RUN_VIA_CALLER)] =
		(struct option){ .name = "via", .has_arg = required_argument, .val = OPT_VIA };
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
		r = run_option_index(c);
		row = r < 0 ? NULL : &run_option_rows[r];
		if (c == OPT_VIA && strcmp(optarg, socket)) {
			log_error("--via %s: give it once, spelled out (--via SOCKET)", optarg);
			return -EINVAL;
		}
		if (c == OPT_VIA)
			continue;
		if (!row) {
			log_error("%s: not an option egret run takes through egretd (egretd decides the rest; docs/EGRETD.md)",
				  argv[optind - 1]);
			return -EINVAL;
		}
		umask_given |= !strcmp(row->name, "umask");
		r = row->via & RUN_VIA_OPTION ?
			pass_on(run, row->name, row->metavar ? optarg : NULL) :
			take_field(run, chdir_to, row->name, optarg);
		if (r < 0)
			return r;
	}
	/* The caller's umask reaches COMMAND, as it would without egretd. */
	if (!umask_given) {
		mode_t mask = umask(0);

		umask(mask);
		snprintf(umask_text, sizeof(umask_text), "%04o", (unsigned int)mask);
		if (pass_on(run, "umask", umask_text) < 0)
			return -E2BIG;
	}
	return optind;
}

/* COMMAND's words from @first on, and the caller's environment, as egret
 * run would start from it (egretd filters it the same way). */
static int request_command(int first, int argc, char **argv, struct wire_run *run)
{
	if (first >= argc || !argv[first][0]) {
		log_error("no COMMAND given (egret run [options] -- COMMAND [ARGS...])");
		return -EINVAL;
	}
	for (int i = first; i < argc; i++) {
		if (run->argc == WIRE_ARGV_MAX) {
			log_error("COMMAND: more than %d arguments through egretd", WIRE_ARGV_MAX);
			return -E2BIG;
		}
		run->argv[run->argc++] = argv[i];
	}
	for (char **e = environ; *e; e++) {
		if (!environ_assignment_valid(*e, true))
			continue;
		if (run->envc == WIRE_ENV_MAX) {
			log_error("the environment: more than %d variables through egretd",
				  WIRE_ENV_MAX);
			return -E2BIG;
		}
		run->env[run->envc++] = *e;
	}
	return 0;
}

int client_request_from_args(const char *socket, int argc, char **argv,
			     struct wire_msg *m, char *cwd, size_t cwdlen)
{
	const char *chdir_to = NULL;
	int first;

	m->type = WIRE_RUN;
	first = request_options(socket, argc, argv, &m->run, &chdir_to);
	if (first < 0)
		return first;
	if (request_command(first, argc, argv, &m->run) < 0)
		return -EINVAL;
	if (chdir_to && chdir_to[0] == '/')
		snprintf(cwd, cwdlen, "%s", chdir_to);
	else if (!getcwd(cwd, cwdlen))
		return log_error_errno(-errno, "the current directory");
	else if (chdir_to &&
		 path_fmt(cwd + strlen(cwd), cwdlen - strlen(cwd), "/%s", chdir_to) < 0)
		return log_error_errno(-ENAMETOOLONG, "--chdir %s", chdir_to);
	m->run.cwd = cwd;
	return 0;
}
