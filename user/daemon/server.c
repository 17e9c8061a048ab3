// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attempt/gc.h"
#include "attempt/preflight.h"
#include "daemon/adopt.h"
#include "daemon/handle.h"
#include "daemon/metrics.h"
#include "daemon/metrics_http.h"
#include "daemon/reply.h"
#include "daemon/server.h"
#include "daemon/uids.h"
#include "lib/exit.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/trust.h"
#include "lib/util.h"

#define SD_LISTEN_FDS_START	3

int daemon_activated_fd(void)
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

int daemon_listen(const struct daemon_config *cfg)
{
	return trusted_socket_listen(cfg->socket_path, SOCK_SEQPACKET, cfg->socket_gid, 0660, 64);
}

/*
 * The accept loop's processes: one per connection, from accept on
 * ("pending": its caller has not asked for an attempt yet, or is being
 * refused), "running" once the loop granted it an attempt's slot, and
 * one per re-adoption (running from the start). The limits count running
 * ones; pending ones have caps of their own, so that a caller's idle
 * connections neither take its attempts' slots nor fork without bound.
 */
#define PENDING_MAX		256	/* connections not yet running, in all */
#define PENDING_PER_UID		32	/* ... of one uid, beyond its callers.max */
#define LINGER_MAX		256	/* refusals waiting for their caller */
#define LINGER_MS		1000
#define WORKERS_MAX		(DAEMON_MAX_LIMIT + PENDING_MAX)

struct worker {
	pid_t pid;
	uid_t uid;
	bool running;
	int slot_fd;		/* our end of its slot channel (its reports
				 * once running: daemon/metrics.h), or -1 */
	struct metrics_live *live;	/* its last report, once running */
	char id[EGRET_ID_MAX + 1];	/* an attempt being re-adopted, or "" */
};

struct server {
	const struct daemon_config *cfg;
	const char *instance;
	int instance_lock;	/* held by the loop alone (attempt/instance.h) */
	int listen_fd, sigfd;
	sigset_t old;
	struct worker w[WORKERS_MAX];
	unsigned int n;
	struct { int fd; uint64_t until_ms; } linger[LINGER_MAX];
	unsigned int nlinger;
	struct metrics metrics;
	struct metrics_http http;
	struct rlimit nofile;	/* as egretd found it: its processes' */
	bool nofile_raised;
};

static unsigned int count(const struct server *sv, bool running, const uid_t *uid)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < sv->n; i++)
		n += sv->w[i].running == running && (!uid || sv->w[i].uid == *uid);
	return n;
}

/* Reap every child that ended, and forget it: what it reported last
 * (still in its channel, maybe) goes into the totals. */
static void reap(struct server *sv)
{
	int wstatus;
	pid_t pid;

	while ((pid = waitpid(-1, &wstatus, WNOHANG)) > 0) {
		struct worker *w;
		unsigned int i;

		for (i = 0; i < sv->n && sv->w[i].pid != pid; i++)
			;
		if (i == sv->n)
			continue;
		w = &sv->w[i];
		if (w->slot_fd >= 0 && w->live)
			metrics_live_read(&sv->metrics, w->live, w->slot_fd);
		metrics_live_end(&sv->metrics, w->live, wstatus);
		if (w->slot_fd >= 0)
			close(w->slot_fd);
		*w = sv->w[--sv->n];
	}
}

static const struct daemon_caller *caller_of(const struct daemon_config *cfg, uid_t uid)
{
	for (size_t i = 0; i < cfg->ncallers; i++)
		if (cfg->callers[i].uid == uid)
			return &cfg->callers[i];
	return NULL;
}

/* May @uid start one more attempt? NULL, or the refusal to send. The
 * caller's own entry (and its cgroup) is the handler's to check: here
 * only its uid counts. */
static const char *over_limit(const struct server *sv, uid_t uid, char *buf, size_t len)
{
	const struct daemon_caller *k = caller_of(sv->cfg, uid);
	unsigned int all = count(sv, true, NULL), mine = count(sv, true, &uid);

	if (!k)
		snprintf(buf, len, "egretd: uid %u may not launch attempts (egretd.yaml: callers)",
			 (unsigned int)uid);
	else if (all >= sv->cfg->max)
		snprintf(buf, len, "egretd: %u attempts run, its limit (egretd.yaml: attempts.max); try again later",
			 all);
	else if (mine >= k->max)
		snprintf(buf, len, "egretd: uid %u runs %u attempts, its limit (egretd.yaml: callers.max)",
			 (unsigned int)uid, mine);
	else
		return NULL;
	return buf;
}

/* Refuse @conn from the loop itself, without a process: the one line,
 * then the connection kept until its caller hangs up (reply.h: its
 * request unread, a close would reset it), LINGER_MS at most. */
static void refuse_here(struct server *sv, int conn, const char *text)
{
	static struct wire_msg m;
	char sink[512];

	log_warn("refused: %s", text);
	m.type = WIRE_ERROR;
	m.error.text = (char *)text;
	daemon_send_msg(conn, &m);
	daemon_send_exit(conn, EXIT_SETUP);
	shutdown(conn, SHUT_WR);
	while (recv(conn, sink, sizeof(sink), MSG_DONTWAIT) > 0)
		;
	if (sv->nlinger == LINGER_MAX) {
		close(conn);	/* a flood: its request was read, if it came */
		return;
	}
	sv->linger[sv->nlinger].fd = conn;
	sv->linger[sv->nlinger++].until_ms = mono_us() / 1000 + LINGER_MS;
}

/* Lingering refusals whose caller hung up, or whose time is up. */
static void linger_sweep(struct server *sv, const struct pollfd *p, unsigned int np)
{
	uint64_t now = mono_us() / 1000;
	char sink[512];

	for (unsigned int i = 0; i < sv->nlinger;) {
		bool done = now >= sv->linger[i].until_ms;

		for (unsigned int k = 0; k < np && !done; k++)
			if (p[k].fd == sv->linger[i].fd && p[k].revents) {
				ssize_t r;

				while ((r = recv(p[k].fd, sink, sizeof(sink), MSG_DONTWAIT)) > 0)
					;
				done = r == 0 || (r < 0 && errno != EAGAIN);
			}
		if (done) {
			close(sv->linger[i].fd);
			sv->linger[i] = sv->linger[--sv->nlinger];
		} else {
			i++;
		}
	}
}

/* A process for one connection or one re-adoption: without the accept
 * loop's fds, in a session of its own (a terminal egretd was started from
 * sends its ^C to egretd, never to the attempts), signals as they were. */
static pid_t fork_worker(struct server *sv)
{
	pid_t pid = fork();

	if (pid == 0) {
		close(sv->listen_fd);
		close(sv->sigfd);
		for (unsigned int i = 0; i < sv->n; i++)
			if (sv->w[i].slot_fd >= 0)
				close(sv->w[i].slot_fd);
		for (unsigned int i = 0; i < sv->nlinger; i++)
			close(sv->linger[i].fd);
		if (sv->instance_lock >= 0)
			close(sv->instance_lock);	/* the loop's alone */
		metrics_http_close(&sv->http);
		if (sv->nofile_raised)
			setrlimit(RLIMIT_NOFILE, &sv->nofile);
		setsid();
		sigprocmask(SIG_SETMASK, &sv->old, NULL);
	}
	return pid;
}

static void serve_one(struct server *sv, int conn)
{
	struct ucred cred = { .uid = (uid_t)-1 };
	socklen_t clen = sizeof(cred);
	const struct daemon_caller *k;
	unsigned int cap;
	int ch[2];
	char buf[200];
	pid_t pid;

	getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &clen);
	/* Refused now, before it can cost a process. */
	k = caller_of(sv->cfg, cred.uid);
	if (!k) {
		snprintf(buf, sizeof(buf), "egretd: uid %u may not launch attempts (egretd.yaml: callers)",
			 (unsigned int)cred.uid);
		refuse_here(sv, conn, buf);
		return;
	}
	/* A burst of all its attempts at once waits, and a few more. */
	cap = k->max + PENDING_PER_UID;
	if (count(sv, false, NULL) >= PENDING_MAX ||
	    count(sv, false, &cred.uid) >= cap || sv->n >= WORKERS_MAX) {
		snprintf(buf, sizeof(buf), "egretd: too many connections of uid %u wait for an answer (at most %u, %d in all); try again later",
			 (unsigned int)cred.uid, cap, PENDING_MAX);
		refuse_here(sv, conn, buf);
		return;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ch) < 0) {
		refuse_here(sv, conn, "egretd: out of resources (socketpair); try again later");
		return;
	}
	uids_prepare(sv->cfg);
	pid = fork_worker(sv);
	if (pid == 0) {
		close(ch[0]);
		_exit(daemon_handle(sv->cfg, sv->instance, conn, ch[1]));
	}
	close(ch[1]);
	if (pid < 0) {
		log_error_errno(-errno, "fork for a connection");
		close(ch[0]);
		refuse_here(sv, conn, "egretd: out of resources (fork); try again later");
		return;
	}
	sv->w[sv->n++] = (struct worker){ .pid = pid, .uid = cred.uid, .slot_fd = ch[0] };
	close(conn);
}

/* A pending process asks for its attempt's slot (its caller sent a valid
 * RUN): granted (an empty answer; the channel then carries its reports)
 * or refused (the line to send). A channel closed unanswered is a
 * process that needs none (ATTACH, a refusal of its own). */
static void on_slot_request(struct server *sv, struct worker *w)
{
	char ask, buf[200];
	const char *why = NULL;
	ssize_t n;

	if (w->running) {
		if (metrics_live_read(&sv->metrics, w->live, w->slot_fd) < 0)
			close(TAKE_FD(w->slot_fd));
		return;
	}
	n = recv(w->slot_fd, &ask, 1, MSG_DONTWAIT);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n == 1) {
		why = over_limit(sv, w->uid, buf, sizeof(buf));
		if (!why) {
			w->running = true;
			w->live = metrics_live_new(&sv->metrics, false);
		}
		send(w->slot_fd, why ? why : "", why ? strlen(why) : 0, MSG_NOSIGNAL);
	}
	if (n != 1 || why)
		close(TAKE_FD(w->slot_fd));
}

/* How often egretd looks for attempts nobody serves (a connection's
 * process that died while egretd lived on), besides at its start. */
#define ADOPT_SCAN_MS	10000

static bool serving(const struct server *sv, const char *id)
{
	for (unsigned int i = 0; i < sv->n; i++)
		if (!strcmp(sv->w[i].id, id))
			return true;
	return false;
}

/*
 * Re-adopt every attempt of this egretd's that nobody serves
 * (daemon/adopt.h), each in a process of its own that counts against the
 * limits as its caller's: one whose connection's process died, one an
 * earlier egretd left, one killed during its set-up (removed). An attempt
 * being re-adopted holds its record's lock, so a second scan passes it
 * over. Then the lock files of our uids that nobody holds. What root
 * egret runs left is theirs (their next start under the same parent, or
 * egret gc): egretd sweeping the host undid other deployments' evidence.
 */
static void adopt_orphans(struct server *sv)
{
	static struct adopt_candidate found[DAEMON_MAX_LIMIT];
	int n = daemon_adopt_find(sv->instance, found, ARRAY_SIZE(found));

	for (int i = 0; i < n && sv->n < WORKERS_MAX; i++) {
		int ch[2] = { -1, -1 };
		pid_t pid;

		if (serving(sv, found[i].id))
			continue;
		/* Its reports' channel; without one it runs unreported. */
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ch) < 0)
			ch[0] = ch[1] = -1;
		pid = fork_worker(sv);
		if (pid == 0) {
			if (ch[0] >= 0)
				close(ch[0]);
			_exit(daemon_adopt(sv->instance, found[i].id, ch[1]));
		}
		if (ch[1] >= 0)
			close(ch[1]);
		if (pid < 0) {
			log_error_errno(-errno, "fork to re-adopt attempt %s", found[i].id);
			if (ch[0] >= 0)
				close(ch[0]);
			continue;
		}
		sv->w[sv->n] = (struct worker){ .pid = pid, .uid = found[i].caller,
			.running = true, .slot_fd = ch[0],
			.live = metrics_live_new(&sv->metrics, true) };
		memcpy(sv->w[sv->n++].id, found[i].id, sizeof(found[i].id));
	}
	preflight_uid_prune_range(sv->cfg->uid_first, sv->cfg->uid_last);
	gc_hidden_files();
}

/* Callers keep the uids they used (daemon/uids.h): a range smaller than
 * their shares together can leave a later caller without one. */
static void warn_shares(const struct daemon_config *cfg)
{
	unsigned long long sum = 0, n = (unsigned long long)cfg->uid_last - cfg->uid_first + 1;

	for (size_t i = 0; i < cfg->ncallers; i++)
		sum += uids_share(cfg, &cfg->callers[i]);
	if (sum > n)
		log_warn("egretd: the callers' shares of attempts.uids come to %llu uids, the range has %llu: a caller that comes late may find none left (each keeps %u x its max)",
			 sum, n, UIDS_SHARE);
}

/* The fds to wait on: the socket, signals, slot channels, lingerers
 * (then the metrics endpoint's: metrics_http_poll_set()). */
static unsigned int poll_set(const struct server *sv, struct pollfd *p)
{
	unsigned int np = 0;

	p[np++] = (struct pollfd){ .fd = sv->listen_fd, .events = POLLIN };
	p[np++] = (struct pollfd){ .fd = sv->sigfd, .events = POLLIN };
	for (unsigned int i = 0; i < sv->n; i++)
		if (sv->w[i].slot_fd >= 0)
			p[np++] = (struct pollfd){ .fd = sv->w[i].slot_fd, .events = POLLIN };
	for (unsigned int i = 0; i < sv->nlinger; i++)
		p[np++] = (struct pollfd){ .fd = sv->linger[i].fd, .events = POLLIN };
	return np;
}

/* Signals: false once one says to stop (SIGTERM, SIGINT). */
static bool signals_let_run(struct server *sv)
{
	struct signalfd_siginfo si;

	while (read(sv->sigfd, &si, sizeof(si)) == sizeof(si))
		if (si.ssi_signo == SIGHUP) {
			log_info("egretd: SIGHUP: the configuration is read at start only; restart to change it");
		} else if (si.ssi_signo != SIGCHLD) {
			/* The attempts are processes of their own: they
			 * run on, each to its end. */
			log_info("egretd: signal %u: no new attempts; %u running stay",
				 si.ssi_signo, count(sv, true, NULL));
			return false;
		}
	return true;
}

/*
 * The loop holds a channel to each of its processes (their reports,
 * daemon/metrics.h), besides the pending connections and lingerers: with
 * attempts.max near its limit that is past the usual soft limit of 1024
 * fds. It polls, so a higher one is harmless here; the processes it
 * forks get egretd's own back (COMMAND's select() would not take fds
 * past 1024).
 */
#define LOOP_FDS	(WORKERS_MAX + LINGER_MAX + METRICS_POLL_MAX + 64)

static void fds_raise(struct server *sv)
{
	struct rlimit want;

	if (getrlimit(RLIMIT_NOFILE, &sv->nofile) < 0)
		return;
	want = sv->nofile;
	if (want.rlim_cur >= LOOP_FDS)
		return;
	want.rlim_cur = want.rlim_max < LOOP_FDS ? want.rlim_max : LOOP_FDS;
	if (want.rlim_cur > sv->nofile.rlim_cur && setrlimit(RLIMIT_NOFILE, &want) == 0)
		sv->nofile_raised = true;
	if (!sv->nofile_raised || want.rlim_cur < LOOP_FDS)
		log_warn("egretd: %llu fds at most (RLIMIT_NOFILE): with attempts.max near %d, connections may be refused",
			 (unsigned long long)(sv->nofile_raised ? want.rlim_cur : sv->nofile.rlim_cur),
			 DAEMON_MAX_LIMIT);
}

/* The signals the loop reads, its fds, the metrics endpoint: 0, or
 * -errno after one line. */
static int serve_start(struct server *sv)
{
	const char *step = "";
	sigset_t mask;
	int r;

	fds_raise(sv);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &sv->old);
	sv->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sv->sigfd < 0)
		return log_error_errno(-errno, "egretd: signalfd");
	if (metrics_init(&sv->metrics, sv->cfg) < 0)
		return log_error_errno(-ENOMEM, "egretd: the metrics' registry");
	r = metrics_http_open(&sv->http, &sv->cfg->metrics, &step);
	if (r < 0)
		return log_error_errno(r, "egretd: serve the metrics at %s (egretd.yaml: %s)",
				       !strcmp(step, "metrics.socket") ? sv->cfg->metrics.socket :
				       sv->cfg->metrics.listen, step);
	if (sv->cfg->metrics.socket[0] || sv->cfg->metrics.listen[0])
		log_info("egretd: metrics at %s%s%s", sv->cfg->metrics.socket,
			 sv->cfg->metrics.socket[0] && sv->cfg->metrics.listen[0] ? " and " : "",
			 sv->cfg->metrics.listen);
	return 0;
}

/* One turn of the loop: 1 to go on, 0 to stop, -errno. */
static int serve_step(struct server *sv, struct pollfd *p, uint64_t *next_scan)
{
	uint64_t now = mono_us() / 1000;
	unsigned int np, nh;
	int timeout, conn, ht;

	if (now >= *next_scan) {
		adopt_orphans(sv);
		*next_scan = now + ADOPT_SCAN_MS;
	}
	timeout = (int)(*next_scan - now);
	if (sv->nlinger && timeout > 100)
		timeout = 100;
	ht = metrics_http_timeout_ms(&sv->http);
	if (ht >= 0 && ht < timeout)
		timeout = ht;
	np = poll_set(sv, p);
	nh = metrics_http_poll_set(&sv->http, p + np);
	if (poll(p, np + nh, timeout) < 0 && errno != EINTR)
		return -errno;
	if (!signals_let_run(sv))
		return 0;
	for (unsigned int k = 2; k < np; k++) {
		if (!p[k].revents)
			continue;
		for (unsigned int i = 0; i < sv->n; i++)
			if (sv->w[i].slot_fd == p[k].fd) {
				on_slot_request(sv, &sv->w[i]);
				break;
			}
	}
	linger_sweep(sv, p, np);
	reap(sv);
	metrics_http_serve(&sv->http, p + np, nh, &sv->metrics, count(sv, true, NULL));
	if (!(p[0].revents & POLLIN))
		return 1;
	conn = accept4(sv->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (conn >= 0)
		serve_one(sv, conn);
	else if (errno == EMFILE || errno == ENFILE || errno == ENOMEM)
		poll(NULL, 0, 100);	/* out of fds: not a busy loop */
	return 1;
}

int daemon_serve(const struct daemon_config *cfg, const char *instance,
		 int instance_lock, int fd)
{
	static struct server sv;
	static struct pollfd p[2 + WORKERS_MAX + LINGER_MAX + METRICS_POLL_MAX];
	uint64_t next_scan = 0;
	int r;

	sv.cfg = cfg;
	sv.instance = instance;
	sv.instance_lock = instance_lock;
	sv.listen_fd = fd;
	sv.http = (struct metrics_http){ .listen_fd = { -1, -1 } };
	r = serve_start(&sv);
	if (r < 0)
		goto out;
	log_info("egretd: listening on %s for %zu caller(s), attempts as uids %u-%u, at most %u at once",
		 instance, cfg->ncallers, (unsigned int)cfg->uid_first,
		 (unsigned int)cfg->uid_last, cfg->max);
	warn_shares(cfg);
	while ((r = serve_step(&sv, p, &next_scan)) > 0)
		;
out:
	for (unsigned int i = 0; i < sv.nlinger; i++)
		close(sv.linger[i].fd);
	metrics_http_close(&sv.http);
	metrics_free(&sv.metrics);
	return r;
}
