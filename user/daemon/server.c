// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/adopt.h"
#include "daemon/handle.h"
#include "daemon/server.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/trust.h"
#include "lib/util.h"

#define SD_LISTEN_FDS_START	3

/* systemd's socket activation (sd_listen_fds(3)), without libsystemd:
 * exactly one fd, meant for this process. */
static int activated_fd(void)
{
	const char *pid = getenv("LISTEN_PID"), *n = getenv("LISTEN_FDS");
	int fd = SD_LISTEN_FDS_START, type;
	socklen_t len = sizeof(type);

	if (!pid || !n || atol(pid) != (long)getpid())
		return -ENOENT;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (strcmp(n, "1"))
		return -EINVAL;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_SEQPACKET)
		return -EPROTOTYPE;
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	return fd;
}

/* The socket's directory is root's and not group/world-writable; a stale
 * socket goes, but nothing that is not a socket is ever removed. */
static int prepare_path(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)], *slash;
	struct stat st;
	int r;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return -EINVAL;
	*slash = '\0';
	r = trusted_dir_ensure(dir);
	if (r < 0)
		return r;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return -EEXIST;
		if (unlink(path) < 0)
			return -errno;
	}
	return 0;
}

int daemon_listen(const struct daemon_config *cfg)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = activated_fd(), r;
	mode_t old;

	if (fd != -ENOENT)
		return fd;
	r = prepare_path(cfg->socket_path);
	if (r < 0)
		return r;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", cfg->socket_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* Made 0600 (umask), then opened to the group: never wider. */
	old = umask(0177);
	r = bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ? -errno : 0;
	umask(old);
	if (r == 0 && (chown(cfg->socket_path, 0, cfg->socket_gid) < 0 ||
		       chmod(cfg->socket_path, 0660) < 0 || listen(fd, 64) < 0))
		r = -errno;
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/* The attempts running: one process each, and whose (the caller's uid,
 * as SO_PEERCRED says), for the limits. */
#define REFUSING_MAX	64	/* refusals waiting for their caller to hang up */

struct attempts {
	struct {
		pid_t pid;
		uid_t uid;
		char id[EGRET_ID_MAX + 1];	/* an attempt being re-adopted, or "" */
	} run[DAEMON_MAX_LIMIT];
	unsigned int n;
	pid_t refusing[REFUSING_MAX];
	unsigned int nrefusing;
};

/* Reap every child that ended, and forget it. */
static void reap(struct attempts *at)
{
	pid_t pid;

	while ((pid = waitpid(-1, NULL, WNOHANG)) > 0) {
		unsigned int i;

		for (i = 0; i < at->n && at->run[i].pid != pid; i++)
			;
		if (i < at->n) {
			at->run[i] = at->run[--at->n];
			continue;
		}
		for (i = 0; i < at->nrefusing && at->refusing[i] != pid; i++)
			;
		if (i < at->nrefusing)
			at->refusing[i] = at->refusing[--at->nrefusing];
	}
}

static unsigned int running_as(const struct attempts *at, uid_t uid)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < at->n; i++)
		n += at->run[i].uid == uid;
	return n;
}

/* Over a limit? The refusal to send, or NULL. The caller's own entry
 * (and its cgroup) is the handler's to check: here only its uid counts. */
static const char *over_limit(const struct daemon_config *cfg,
			      const struct attempts *at, uid_t uid, char *buf,
			      size_t len)
{
	const struct daemon_caller *k = NULL;
	unsigned int mine;

	for (size_t i = 0; i < cfg->ncallers && !k; i++)
		if (cfg->callers[i].uid == uid)
			k = &cfg->callers[i];
	if (!k) {
		/* Refused now, before it can hold an attempt's slot. */
		snprintf(buf, len, "egretd: uid %u may not launch attempts (egretd.yaml: callers)",
			 (unsigned int)uid);
		return buf;
	}
	if (at->n >= cfg->max) {
		snprintf(buf, len, "egretd: %u attempts run, its limit (egretd.yaml: attempts.max); try again later",
			 at->n);
		return buf;
	}
	mine = running_as(at, uid);
	if (mine >= k->max) {
		snprintf(buf, len, "egretd: uid %u runs %u attempts, its limit (egretd.yaml: callers.max)",
			 (unsigned int)uid, mine);
		return buf;
	}
	return NULL;
}

/* A process for one connection or one re-adoption: without the accept
 * loop's fds, in a session of its own (a terminal egretd was started from
 * sends its ^C to egretd, never to the attempts), signals as they were. */
static pid_t fork_worker(int listen_fd, int sigfd, const sigset_t *old)
{
	pid_t pid = fork();

	if (pid == 0) {
		close(listen_fd);
		close(sigfd);
		setsid();
		sigprocmask(SIG_SETMASK, old, NULL);
	}
	return pid;
}

static void serve_one(const struct daemon_config *cfg, struct attempts *at,
		      int listen_fd, int sigfd, int conn, const sigset_t *old)
{
	struct ucred cred = { .uid = (uid_t)-1 };
	socklen_t clen = sizeof(cred);
	const char *why;
	char buf[160];
	pid_t pid;

	getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &clen);
	why = over_limit(cfg, at, cred.uid, buf, sizeof(buf));
	if (why && at->nrefusing == REFUSING_MAX) {
		/* A flood: the callers see the connection close, unanswered. */
		close(conn);
		return;
	}
	/* A process even for a refusal: it waits for the caller to hang up,
	 * which the accept loop must not. */
	pid = fork_worker(listen_fd, sigfd, old);
	if (pid == 0)
		_exit(daemon_handle(cfg, conn, why));
	if (pid < 0)	/* the caller sees its connection close: 125 */
		log_error_errno(-errno, "fork for a connection");
	else if (why)
		at->refusing[at->nrefusing++] = pid;
	else
		at->run[at->n++] = (typeof(at->run[0])){ .pid = pid, .uid = cred.uid };
	close(conn);
}

/* How often egretd looks for attempts nobody serves (a connection's
 * process that died while egretd lived on), besides at its start. */
#define ADOPT_SCAN_MS	10000

static bool serving(const struct attempts *at, const char *id)
{
	for (unsigned int i = 0; i < at->n; i++)
		if (!strcmp(at->run[i].id, id))
			return true;
	return false;
}

/*
 * Re-adopt every attempt of egretd's that nobody serves (daemon/adopt.h),
 * each in a process of its own that counts against the limits as its
 * caller's. An attempt being re-adopted holds its record's lock, so a
 * second scan passes it over.
 */
static void adopt_orphans(struct attempts *at, int listen_fd, int sigfd,
			  const sigset_t *old)
{
	static struct adopt_candidate found[DAEMON_MAX_LIMIT];
	int n = daemon_adopt_find(found, ARRAY_SIZE(found));

	for (int i = 0; i < n && at->n < DAEMON_MAX_LIMIT; i++) {
		pid_t pid;

		if (serving(at, found[i].id))
			continue;
		pid = fork_worker(listen_fd, sigfd, old);
		if (pid == 0)
			_exit(daemon_adopt(found[i].id));
		if (pid < 0) {
			log_error_errno(-errno, "fork to re-adopt attempt %s", found[i].id);
			continue;
		}
		at->run[at->n] = (typeof(at->run[0])){ .pid = pid, .uid = found[i].caller };
		memcpy(at->run[at->n++].id, found[i].id, sizeof(found[i].id));
	}
}

int daemon_serve(const struct daemon_config *cfg, int fd)
{
	static struct attempts at;
	uint64_t next_scan = 0;
	_cleanup_close_ int sigfd = -1;
	sigset_t mask, old;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &old);
	sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0)
		return -errno;
	log_info("egretd: listening on %s for %zu caller(s), attempts as uids %u-%u, at most %u at once",
		 cfg->socket_path, cfg->ncallers, (unsigned int)cfg->uid_first,
		 (unsigned int)cfg->uid_last, cfg->max);
	for (;;) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
				       { .fd = sigfd, .events = POLLIN } };
		struct signalfd_siginfo si;
		uint64_t now = mono_us() / 1000;
		int conn;

		if (now >= next_scan) {
			adopt_orphans(&at, fd, sigfd, &old);
			next_scan = now + ADOPT_SCAN_MS;
		}
		if (poll(p, 2, (int)(next_scan - now)) < 0 && errno != EINTR)
			return -errno;
		while (read(sigfd, &si, sizeof(si)) == sizeof(si))
			if (si.ssi_signo == SIGHUP) {
				log_info("egretd: SIGHUP: the configuration is read at start only; restart to change it");
			} else if (si.ssi_signo != SIGCHLD) {
				/* The attempts are processes of their own: they
				 * run on, each to its end. */
				log_info("egretd: signal %u: no new attempts; %u running stay",
					 si.ssi_signo, at.n);
				return 0;
			}
		reap(&at);
		if (!(p[0].revents & POLLIN))
			continue;
		conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (conn >= 0)
			serve_one(cfg, &at, fd, sigfd, conn, &old);
		else if (errno == EMFILE || errno == ENFILE || errno == ENOMEM)
			poll(NULL, 0, 100);	/* out of fds: not a busy loop */
	}
}
