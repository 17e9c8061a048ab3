// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd/request.c - `egret request` (cmd/request.h): one message on the
 * attempt's request socket, one answer. Nothing is checked here that
 * egret does not check again: this end runs as the agent.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "cmd/request.h"
#include "lib/exit.h"
#include "lib/log.h"
#include "lib/util.h"
#include "requests/ask.h"

#define ANSWER_WAIT_S	10

static int usage(FILE *to)
{
	fprintf(to, "Usage: egret request NAME[:PORTS] --why TEXT\n"
		"       egret request ADDRESS[:PORTS] --why TEXT\n\n"
		"Inside an attempt: ask the operator for a host this attempt was refused,\n"
		"saying what it is for. The request waits for their review (egret requests\n"
		"list); nothing is allowed during this attempt. PORTS: up to %d single\n"
		"ports, comma-separated (none: the name itself, for port 443). TEXT: at\n"
		"most %d characters, printable ASCII kept. At most %d requests a minute\n"
		"and %d per attempt.\n"
		"Exit status: 0 pending, 1 refused (egret says why), 2 usage, or no\n"
		"request socket here ($%s is unset outside attempts that take requests).\n",
		ASK_PORTS_MAX, ASK_WHY_MAX, ASK_PER_MINUTE, ASK_PER_ATTEMPT, ASK_ENV);
	return to == stdout ? 0 : EXIT_USAGE;
}

/* The answer, printable: it comes from egret, but through a socket. */
static void print_answer(const char *buf, ssize_t n)
{
	for (ssize_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];

		putchar(c == '\n' || (c >= 0x20 && c < 0x7f) ? c : '?');
	}
	if (n && buf[n - 1] != '\n')
		putchar('\n');
}

static int ask(const char *path, const char *msg, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = ANSWER_WAIT_S };
	char buf[ASK_ANSWER_MAX];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		log_error("$%s: path too long", ASK_ENV);
		return EXIT_USAGE;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    send(fd, msg, len, MSG_NOSIGNAL) < 0) {
		log_error("egret request: %s: %s", path, strerror(errno));
		return EXIT_TROUBLE;
	}
	n = recv(fd, buf, sizeof(buf), 0);
	if (n <= 0) {
		log_error("egret request: no answer from egret: %s",
			  n < 0 ? strerror(errno) : "it closed the socket");
		return EXIT_TROUBLE;
	}
	print_answer(buf, n);
	return n >= 7 && !strncmp(buf, "pending", 7) ? 0 : EXIT_TROUBLE;
}

int cmd_request(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "why", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *why = NULL, *path = getenv(ASK_ENV);
	char msg[ASK_MSG_MAX];
	int c, n;

	optind = 1;
	while ((c = getopt_long(argc, argv, "w:h", opts, NULL)) != -1) {
		if (c == 'w')
			why = optarg;
		else
			return usage(c == 'h' ? stdout : stderr);
	}
	if (optind != argc - 1 || !why) {
		log_error("egret request: want one NAME[:PORTS] and --why TEXT (egret request --help)");
		return EXIT_USAGE;
	}
	if (!path || !path[0]) {
		log_error("egret request: $%s is unset: not inside an attempt that takes requests (an attempt with a repository)",
			  ASK_ENV);
		return EXIT_USAGE;
	}
	n = snprintf(msg, sizeof(msg), "%s%c%s", argv[optind], '\0', why);
	if (n < 0 || (size_t)n >= sizeof(msg)) {
		log_error("egret request: the request is over %d bytes: shorten --why (at most %d characters are kept)",
			  ASK_MSG_MAX, ASK_WHY_MAX);
		return EXIT_USAGE;
	}
	return ask(path, msg, (size_t)n);
}
