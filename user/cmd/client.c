// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "attempt/run_options.h"
#include "launch/environ.h"
#include "cmd/client.h"
#include "daemon/config.h"
#include "daemon/wire.h"
#include "lib/exit.h"
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

static void passed_free(int *unused)
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
	} else {
		log_error("--%s: no field of egretd's request carries it (attempt/run_options.def)",
			  name);
		return -EINVAL;
	}
	return 0;
}

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

static int request_from_args(const char *socket, int argc, char **argv,
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

static int connect_to(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

/* The request, with our stdin, stdout and stderr beside it. */
static int send_request(int fd, const uint8_t *buf, size_t len)
{
	union {
		char buf[CMSG_SPACE(3 * sizeof(int))];
		struct cmsghdr align;
	} u = {};
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	const int fds[3] = { 0, 1, 2 };

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	return sendmsg(fd, &msg, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -errno;
}

static int send_signal(int fd, int sig)
{
	static struct wire_msg m;
	uint8_t buf[64];
	char err[128];
	int n;

	m.type = WIRE_SIGNAL;
	m.signal.signo = (uint32_t)sig;
	n = wire_encode(&m, buf, sizeof(buf), err, sizeof(err));
	if (n < 0)
		return n;
	return send(fd, buf, (size_t)n, MSG_NOSIGNAL) == n ? 0 : -errno;
}

/* How long a client whose egretd went away mid-attempt tries to reach
 * the one that re-adopts it (systemd restarts egretd within seconds). */
#define REATTACH_S	WIRE_REATTACH_S

/* The connection to egretd dropped after STARTED: connect again and ask
 * for attempt @id (ATTACH). The new fd, or -errno. */
static int reattach(const char *socket, const char *id)
{
	static struct wire_msg m;
	uint8_t buf[WIRE_HEADER_LEN + WIRE_FIELD_HEADER_LEN + EGRET_ID_MAX + 8];
	char err[128];
	int n, fd = -ETIMEDOUT;

	m.type = WIRE_ATTACH;
	m.attach.id = (char *)id;
	n = wire_encode(&m, buf, sizeof(buf), err, sizeof(err));
	if (n < 0)
		return n;
	log_warn("egretd went away during attempt %s: reconnecting (for up to %d s)",
		 id, REATTACH_S);
	for (int i = 0; i < REATTACH_S * 5; i++) {
		fd = connect_to(socket);
		/* Our stdio again: COMMAND's pty, if it has one, is relayed
		 * to our terminal as before. */
		if (fd >= 0 && send_request(fd, buf, (size_t)n) == 0)
			return fd;
		if (fd >= 0)
			close(fd);
		poll(NULL, 0, 200);
	}
	return fd < 0 ? fd : -ETIMEDOUT;
}

/*
 * COMMAND stopped at its pty's suspend key (egretd's SIGTSTP): as a job
 * in the foreground of our terminal we stop too, so that the shell has
 * the terminal back, and continued (fg) we continue COMMAND. Not such a
 * job (a miner's pipes, a script), nobody could continue us: COMMAND
 * goes on at once.
 */
static void suspend_as_job(int fd)
{
	_cleanup_close_ int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (tty >= 0 && tcgetpgrp(tty) == getpgrp())
		raise(SIGTSTP);		/* its default action: stopped here */
	send_signal(fd, SIGCONT);
}

/* Until EXIT: egretd's messages, and our signals forwarded; a connection
 * lost after STARTED is made again (ATTACH). */
static int wait_exit(const char *socket, int fd, int sigfd)
{
	_cleanup_free_ struct wire_msg *m = malloc(sizeof(*m));
	_cleanup_free_ uint8_t *buf = malloc(WIRE_MAX);
	struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
			       { .fd = sigfd, .events = POLLIN } };
	char err[256], id[EGRET_ID_MAX + 1] = "";
	_cleanup_close_ int again = -1;

	if (!m || !buf)
		return log_error_errno(-ENOMEM, "egretd's answer");
	for (;;) {
		struct signalfd_siginfo si;
		ssize_t n;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return log_error_errno(-errno, "wait for egretd");
		if ((p[1].revents & POLLIN) &&
		    read(sigfd, &si, sizeof(si)) == sizeof(si))
			send_signal(p[0].fd, (int)si.ssi_signo);
		if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = recv(p[0].fd, buf, WIRE_MAX, 0);
		if (n <= 0 && id[0]) {
			if (again >= 0)
				close(again);
			again = reattach(socket, id);
			if (again < 0) {
				log_error_errno(again, "reach egretd again for attempt %s", id);
				return -EPIPE;
			}
			p[0].fd = again;
			continue;
		}
		if (n <= 0) {
			log_error("egretd closed the connection before the attempt ended");
			return -EPIPE;
		}
		if (wire_decode(buf, (size_t)n, m, err, sizeof(err)) < 0) {
			log_error("egretd's answer: %s", err);
			return -EBADMSG;
		}
		if (m->type == WIRE_ERROR)
			log_error("%s", m->error.text);
		else if (m->type == WIRE_SIGNAL && m->signal.signo == SIGTSTP)
			suspend_as_job(p[0].fd);
		else if (m->type == WIRE_STARTED)
			snprintf(id, sizeof(id), "%s", m->started.id);
		else if (m->type == WIRE_EXIT)
			return (int)m->exit.status;
	}
}

/* The refusal egretd queued for us, if any, printed: true if there was. */
static bool said_why(int fd, struct wire_msg *m, uint8_t *buf)
{
	char err[256];
	ssize_t n;

	while ((n = recv(fd, buf, WIRE_MAX, MSG_DONTWAIT)) > 0)
		if (wire_decode(buf, (size_t)n, m, err, sizeof(err)) == 0 &&
		    m->type == WIRE_ERROR) {
			log_error("%s", m->error.text);
			return true;
		}
	return false;
}

/* @m encoded (in @buf) and sent to egretd at @socket with our stdio
 * beside it: the connection, or -1 after one line. */
static int request_send(const char *socket, struct wire_msg *m, uint8_t *buf, const char *what)
{
	_cleanup_close_ int fd = -1;
	char err[256];
	int n, r;

	n = wire_encode(m, buf, WIRE_MAX, err, sizeof(err));
	if (n < 0) {
		log_error("the request for egretd: %s", err);
		return -1;
	}
	fd = connect_to(socket);
	if (fd < 0) {
		log_error_errno(fd, "connect to egretd at %s (is it running? without root, egret %s goes through egretd)",
				socket, what);
		return -1;
	}
	r = send_request(fd, buf, (size_t)n);
	if (r < 0) {
		/* Refused before it read our request (egretd answers a flood
		 * from its accept loop): its answer is queued for us. */
		if (said_why(fd, m, buf))
			return -1;
		if (r == -EPIPE || r == -ECONNRESET)
			log_error("egretd closed the connection before it read the request (it stopped, or is restarting)%s",
				  m->type == WIRE_RUN ? "; COMMAND did not start" : "");
		else
			log_error_errno(r, "send the request to egretd");
		return -1;
	}
	return TAKE_FD(fd);
}

int client_run(const char *socket, int argc, char **argv)
{
	_cleanup_(passed_free) int options = 0;
	_cleanup_free_ struct wire_msg *m = calloc(1, sizeof(*m));
	_cleanup_free_ uint8_t *buf = malloc(WIRE_MAX);
	_cleanup_close_ int fd = -1, sigfd = -1;
	char cwd[PATH_MAX];
	sigset_t mask;
	int r;

	if (!m || !buf)
		return EXIT_SETUP;
	if (request_from_args(socket, argc, argv, m, cwd, sizeof(cwd)) < 0)
		return EXIT_SETUP;
	/* Signals for COMMAND: taken here and sent on, as egret run does. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	/* A terminal's: COMMAND's pty follows its size, and a job continued
	 * (fg) continues COMMAND. */
	sigaddset(&mask, SIGWINCH);
	sigaddset(&mask, SIGCONT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0) {
		log_error_errno(-errno, "signalfd");
		return EXIT_SETUP;
	}
	fd = request_send(socket, m, buf, "run");
	if (fd < 0)
		return EXIT_SETUP;
	r = wait_exit(socket, fd, sigfd);
	return r < 0 ? EXIT_SETUP : r;
}

int client_status(const char *socket, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "via", required_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	_cleanup_free_ struct wire_msg *m = calloc(1, sizeof(*m));
	_cleanup_free_ uint8_t *buf = malloc(WIRE_MAX);
	_cleanup_close_ int fd = -1;
	int c, r;

	if (!m || !buf)
		return EXIT_SETUP;
	m->type = WIRE_STATUS;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+jh", opts, NULL)) != -1) {
		if (c == 'j') {
			m->status.json = true;
		} else if (c == 'V' && !strcmp(optarg, socket)) {
			continue;
		} else if (c == 'h') {
			printf("Usage: egret status [--json] [--via SOCKET] [ID]\n\n"
			       "Your own live attempts, as egretd (at SOCKET, else $EGRET_SOCKET,\n"
			       "else " DAEMON_SOCKET_DEFAULT ") shows them.\n");
			return 0;
		} else {
			log_error("%s: not an option of egret status through egretd (--json, --via SOCKET, ID)",
				  argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		if (!attempt_id_valid(argv[optind]) || optind + 1 < argc) {
			log_error("status: '%s' is not an attempt id", argv[optind]);
			return 2;
		}
		m->status.id = argv[optind];
	}
	fd = request_send(socket, m, buf, "status");
	if (fd < 0)
		return EXIT_SETUP;
	r = wait_exit(socket, fd, -1);
	return r < 0 ? EXIT_SETUP : r;
}
