// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attempt/command.h"
#include "attempt/preflight.h"
#include "daemon/adopt.h"
#include "attempt/show.h"
#include "attempt/run_options.h"
#include "daemon/handle.h"
#include "daemon/metrics.h"
#include "daemon/peer.h"
#include "daemon/reply.h"
#include "daemon/run_argv.h"
#include "daemon/uids.h"
#include "daemon/wire.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/strv.h"
#include "lib/text.h"
#include "lib/util.h"

#define REQUEST_TIMEOUT_S	5	/* a caller's time to send its request */

/*
 * egretd never uses its own rights for the caller: a stdio fd must be one
 * the caller could use as such. An O_PATH fd grants no access at all (it
 * needs only search on the directory), yet reopening it as root would
 * open the file; stdin must have been opened for reading, stdout and
 * stderr for writing; and only what stdio is made of passes: a file, a
 * pipe or FIFO, a character device (a terminal, /dev/null), a socket.
 */
static int stdio_fd_check(int fd, int i, char *err, size_t errlen)
{
	static const char *const names[] = { "stdin", "stdout", "stderr" };
	int flags = fcntl(fd, F_GETFL), acc;
	struct stat st;

	if (flags < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: %s", names[i], strerror(errno));
		return -EBADMSG;
	}
	acc = flags & O_ACCMODE;
	if (flags & O_PATH)
		snprintf(err, errlen, "%s is an O_PATH fd, which gives no access to its file", names[i]);
	else if (i == 0 && acc != O_RDONLY && acc != O_RDWR)
		snprintf(err, errlen, "stdin is not open for reading");
	else if (i > 0 && acc != O_WRONLY && acc != O_RDWR)
		snprintf(err, errlen, "%s is not open for writing", names[i]);
	else if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode) &&
		 !S_ISSOCK(st.st_mode))
		snprintf(err, errlen, "%s is not a file, pipe, terminal or socket", names[i]);
	else
		return 0;
	return -EBADMSG;
}

/* The caller's receipt file (--receipt): a regular file it opened for
 * writing, which egretd writes the receipt into and nothing else. */
static int receipt_fd_check(int fd, char *err, size_t errlen)
{
	int flags = fcntl(fd, F_GETFL);
	struct stat st;

	if (flags < 0 || fstat(fd, &st) < 0 || (flags & O_PATH) || !S_ISREG(st.st_mode) ||
	    ((flags & O_ACCMODE) != O_WRONLY && (flags & O_ACCMODE) != O_RDWR)) {
		snprintf(err, errlen, "the receipt's fd is not a regular file open for writing");
		return -EBADMSG;
	}
	return 0;
}

/* The request and the fds beside it (stdin, stdout, stderr; a RUN's
 * receipt file with RECEIPT), which land in @fds. A request cut short, or
 * other fds, is refused. */
static int read_request(int conn, uint8_t *buf, struct wire_msg *m, int fds[4],
			char *err, size_t errlen)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = buf, .iov_len = WIRE_MAX };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	int nfds = 0, r;
	ssize_t n;

	setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO,
		   &(struct timeval){ .tv_sec = REQUEST_TIMEOUT_S }, sizeof(struct timeval));
	n = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC);
	if (n < 0 && errno == EAGAIN) {
		snprintf(err, errlen, "no request within %d s", REQUEST_TIMEOUT_S);
		return -EBADMSG;
	}
	if (n < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (nfds < 4)
				fds[nfds++] = fd;
			else
				close(fd);
		}
	}
	if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		snprintf(err, errlen, "the request was cut short");
		return -EMSGSIZE;
	}
	r = wire_decode(buf, (size_t)n, m, err, errlen);
	if (r == 0 && m->type != WIRE_RUN && m->type != WIRE_ATTACH && m->type != WIRE_STATUS) {
		snprintf(err, errlen, "want a RUN, ATTACH or STATUS request, got %s",
			 wire_type_name(m->type));
		r = -EBADMSG;
	}
	if (r == 0 && m->type == WIRE_ATTACH && nfds && nfds != 3) {
		snprintf(err, errlen, "an ATTACH comes with stdin, stdout and stderr or none, got %d fds",
			 nfds);
		r = -EBADMSG;
	}
	if (r == 0 && (m->type == WIRE_RUN || m->type == WIRE_STATUS) &&
	    nfds != 3 + (m->type == WIRE_RUN && m->run.receipt)) {
		snprintf(err, errlen, "want stdin, stdout and stderr%s beside the request, got %d fds",
			 m->type == WIRE_RUN && m->run.receipt ? " and the receipt's file" : "", nfds);
		r = -EBADMSG;
	}
	for (int i = 0; r == 0 && nfds >= 3 && i < 3; i++)
		r = stdio_fd_check(fds[i], i, err, errlen);
	if (r == 0 && nfds == 4)
		r = receipt_fd_check(fds[3], err, errlen);
	return r;
}

/* Is this caller allowed this request? NULL, or why not. */
static const char *judge(const struct daemon_caller *k, const struct wire_run *run)
{
	if (!daemon_caller_may_repo(k, run->repo))
		return "the repository is not one this caller may select (egretd.yaml: callers.repos)";
	if (run->nallow && !k->allow)
		return "this caller may not add --allow entries (egretd.yaml: callers.allow)";
	if (run->audit && !k->audit)
		return "this caller may not use --audit (egretd.yaml: callers.audit)";
	/* The options its entry must allow (attempt/run_options.def). */
	for (size_t i = 0; i < run->noption; i++) {
		const char *o = run->option[i], *eq = strchr(o, '=');
		const struct run_option_row *row = run_option_find(o, eq ? (size_t)(eq - o) : strlen(o));
		const char *why;

		if (!row || !(row->via & RUN_VIA_GATED))
			continue;
		why = daemon_caller_may_option(k, row->name, eq ? eq + 1 : NULL);
		if (why)
			return why;
	}
	return NULL;
}

/* egret run's command line for the request (daemon/run_argv.h) into
 * @argv: 0, or the status of the refusal sent. */
static int write_argv(int conn, const struct wire_run *run, uid_t uid,
		      const struct daemon_peer *peer, const char *state_dir,
		      const struct daemon_caller *k, struct strv *argv)
{
	char mnt[PATH_MAX];
	struct run_argv_from from = { .uid = uid, .peer = peer, .caller = k,
				      .cgroup_mount = mnt, .state_dir = state_dir };
	int r = daemon_cgroup2_mount(mnt, sizeof(mnt));

	if (r < 0)
		return daemon_refusef(conn, "egretd: cannot find the cgroup2 mount");
	r = strv_init(argv, daemon_run_argv_max());
	if (r == 0)
		r = daemon_run_argv(argv, run, &from);
	if (r == -E2BIG)
		return daemon_refusef(conn, "egretd: the request makes egret run's command line longer than its %zu words",
				      argv->cap);
	if (r < 0)
		return daemon_refusef(conn, "egretd: %s", r == -ENOMEM ? "out of memory" :
				      "egret run's command line: an option its table does not let egretd write");
	return 0;
}

static void on_client(struct loop_source *src, uint32_t events)
{
	daemon_client_event(container_of(src, struct attempt_control, src), src, events);
}

/* The connection's attempt: its control, and what egretd wrote for it. */
struct handler {
	struct attempt_control ctl;
	int argc;
	char **argv;
	bool exit_sent;
	int log_fd;		/* egretd's stderr, or -1 */
};

/* The status, before the teardown (attempt/supervise.h: finished). */
static void on_finished(struct attempt_control *ctl, int status)
{
	struct handler *h = container_of(ctl, struct handler, ctl);

	metrics_attempt_finished(status);
	/* A SIGNAL still unread would reset the connection at close, and
	 * the caller would read that instead of its EXIT. */
	daemon_send_exit(ctl->src.fd, status);
	daemon_linger_close(TAKE_FD(ctl->src.fd));
	h->exit_sent = true;
	/* The caller's stdio goes now: its reader sees EOF once COMMAND's
	 * last process is gone, not after our teardown. */
	if (h->log_fd >= 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			close(null);
		}
		dup2(h->log_fd, STDERR_FILENO);
	}
}

/* COMMAND runs: the caller hears the attempt's id (for an ATTACH, should
 * this process die), and the options go where a re-adopting egretd finds
 * them. A failure to write them costs only the re-adoption. */
/* COMMAND stopped at its pty's suspend key: the client stops too. */
static void on_suspended(struct attempt_control *ctl)
{
	daemon_send_signal(ctl->src.fd, SIGTSTP);
}

static void on_started(struct attempt_control *ctl, const char *id)
{
	struct handler *h = container_of(ctl, struct handler, ctl);
	static struct wire_msg m;
	int r = daemon_adopt_save_argv(id, h->argc, h->argv);

	metrics_attempt_started();
	if (r < 0)
		log_warn("warning: attempt %s cannot be re-adopted if egretd dies: %s",
			 id, strerror(-r));
	m.type = WIRE_STARTED;
	m.started.id = id;
	daemon_send_msg(ctl->src.fd, &m);
}

/* Ask the accept loop for an attempt's slot (daemon/server.c): 0, or
 * -EUSERS with the refusal in @why. */
static int ask_slot(int slot_fd, char *why, size_t len)
{
	ssize_t n;

	if (send(slot_fd, "R", 1, MSG_NOSIGNAL) != 1) {
		snprintf(why, len, "egretd: its accept loop is gone; try again");
		return -EUSERS;
	}
	do
		n = recv(slot_fd, why, len - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		return 0;
	if (n < 0)
		snprintf(why, len, "egretd: its accept loop is gone; try again");
	else
		why[n] = '\0';
	return -EUSERS;
}

/* STATUS: the caller's own attempts of this egretd, printed to its
 * stdout (its stderr for a failure), then EXIT with egret status's. */
static int show_status(int conn, const char *instance, uid_t uid, const struct wire_msg *m,
		       int fds[3])
{
	struct show_filter f = { .only = m->status.id, .json = m->status.json,
				 .by_caller = true, .caller = uid, .instance = instance };
	int status;

	fflush(stdout);
	if (dup2(fds[1], STDOUT_FILENO) < 0 || dup2(fds[2], STDERR_FILENO) < 0)
		return daemon_refusef(conn, "egretd: take the caller's fds: %s", strerror(errno));
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	status = attempt_show(&f);
	daemon_send_exit(conn, status);
	daemon_linger_close(conn);
	return status;
}

/* Who the caller is, and whether it may ask at all: 0 with its entry in
 * *@ret, or the status of the refusal sent. */
static int admit_caller(const struct daemon_config *cfg, int conn, struct daemon_peer *peer,
			const struct daemon_caller **ret)
{
	int r = daemon_peer_read(conn, peer);

	if (r < 0)
		return daemon_refusef(conn, r == -EXDEV ?
			"egretd cannot place the caller's cgroup from its own cgroup namespace: give egretd a cgroup2 mount of the whole hierarchy" :
			"egretd cannot tell who the caller is (%s): a caller in another PID namespace needs egretd in the host's",
			      strerror(-r));
	*ret = daemon_config_caller(cfg, peer->uid, peer->cgroup);
	if (!*ret)
		return daemon_refusef(conn, "egretd: uid %u (cgroup %s) may not launch attempts (egretd.yaml: callers)",
			      (unsigned int)peer->uid, peer->cgroup);
	r = daemon_cgroup_in_attempt(peer->cgroup);
	if (r != 0)
		return daemon_refusef(conn, r > 0 ? "egretd: the caller runs inside an attempt, which can never start another" :
					    "egretd: cannot tell whether the caller runs inside an attempt (%s)",
			      strerror(-r));
	if (peer->world.differ & CLONE_NEWUSER)
		return daemon_refusef(conn, "egretd: the caller runs in a user namespace of its own, where egretd cannot start attempts yet (docs/DEPLOYMENT.md)");
	return 0;
}

/* A uid of the caller's for the attempt, locked: 0, or the status of the
 * refusal sent. */
static int take_uid(const struct daemon_config *cfg, const struct daemon_caller *k,
		    int conn, uid_t *uid, int *lock_fd)
{
	int r = uids_pick(cfg, k, uid, lock_fd);

	if (r == -EBUSY)
		return daemon_refusef(conn, "egretd: every uid of this caller's share of attempts.uids (%u) is in use",
				      uids_share(cfg, k));
	if (r == -ENOSPC)
		return daemon_refusef(conn, "egretd: attempts.uids has no uid left that no other caller's attempt ran as (a uid stays its first caller's: widen attempts.uids)");
	if (r < 0)
		return daemon_refusef(conn, "egretd: lock an attempt uid: %s", strerror(-r));
	return 0;
}

/* The attempt uid a request was given and its lock (attempt/preflight.h),
 * until the attempt takes the lock over. */
struct uid_hold {
	uid_t uid;
	int lock_fd;		/* -1: none, or taken over */
};

static void uid_hold_release(struct uid_hold *u)
{
	preflight_uid_unlock(u->uid, TAKE_FD(u->lock_fd));
}

/*
 * The request @m, admitted, as egret run (@argv) in this process with
 * @held's uid: its messages go to the caller's stderr and COMMAND gets the
 * caller's @fds. Its environment is built from the caller's (control.env);
 * egretd's own environment stays egretd's: nothing of the caller's
 * reaches getenv() here (c-ares, libbpf and libc read some). The status.
 */
static int run_attempt(int conn, const char *instance, const struct wire_msg *m,
		       const struct strv *argv, struct daemon_peer *peer,
		       struct uid_hold *held, const int fds[4])
{
	struct handler h = { .log_fd = -1 };
	int json_fd, status;

	/* egretd's own stdout stays reachable: the attempt's requests go
	 * there as JSON lines, for a fleet's log pipeline. */
	json_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	/* egretd's log too: what the teardown says, after the caller has
	 * its EXIT and may be gone, goes there (on_finished). */
	h.log_fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	for (int i = 0; i < 3; i++)
		if (dup2(fds[i], i) < 0)
			return daemon_refusef(conn, "egretd: take the caller's fds: %s", strerror(errno));
	for (int i = 0; i < 3; i++)
		if (fds[i] > 2)
			close(fds[i]);
	h = (struct handler){ .argc = (int)argv->n, .argv = argv->v, .log_fd = h.log_fd,
		.ctl = { .src = { .fd = conn, .fn = on_client },
			 .child_pidfd = -1, .env = m->run.env,
			 .uid_lock_fd = TAKE_FD(held->lock_fd),
			 .world = &peer->world, .caller = peer->uid, .instance = instance,
			 .started = on_started, .finished = on_finished,
			 .suspended = on_suspended, .report = metrics_attempt_report,
			 .json_fd = json_fd,
			 .receipt = m->run.receipt, .receipt_fd = fds[3] } };
	status = attempt_command(h.argc, h.argv, &h.ctl);
	/* Not taken over (refused before the attempt began): ours to drop. */
	preflight_uid_unlock(held->uid, h.ctl.uid_lock_fd);
	daemon_peer_close(peer);
	if (!h.exit_sent)
		on_finished(&h.ctl, status);
	return status;
}

int daemon_handle(const struct daemon_config *cfg, const char *instance, int conn,
		  int slot_fd)
{
	/* Once per process, and never touched by the accept loop: zero
	 * pages until written, where a calloc() of the loop's heap cleared
	 * (and so copied) all 82 KiB, 20-odd page faults (issue 42). */
	static struct wire_msg msg;
	static uint8_t buf[WIRE_MAX];
	struct wire_msg *m = &msg;
	_cleanup_(strv_free) struct strv argv = {};
	_cleanup_(uid_hold_release) struct uid_hold held = { .lock_fd = -1 };
	const struct daemon_caller *k = NULL;
	struct daemon_peer peer;
	int fds[4] = { -1, -1, -1, -1 }, r;
	char err[256], comm[64], ns[64];
	const char *why;

	r = admit_caller(cfg, conn, &peer, &k);
	if (r != 0)
		return r;
	r = read_request(conn, buf, m, fds, err, sizeof(err));
	if (r < 0)
		return daemon_refusef(conn, "egretd: bad request: %s", r == -EBADMSG || r == -E2BIG || r == -EMSGSIZE ? err : strerror(-r));
	if (m->type == WIRE_ATTACH)
		return daemon_adopt_hand_over(conn, peer.uid, m->attach.id, fds);
	if (m->type == WIRE_STATUS)
		return show_status(conn, instance, peer.uid, m, fds);
	why = judge(k, &m->run);
	if (why)
		return daemon_refusef(conn, "egretd: refused: %s", why);
	/* A valid request: only now does it count against the limits. Its
	 * channel then carries the attempt's figures (daemon/metrics.h). */
	if (ask_slot(slot_fd, err, sizeof(err)) < 0)
		return daemon_refusef(conn, "%s", err);
	metrics_attempt_begin(slot_fd, m->run.repo, mono_us());
	r = take_uid(cfg, k, conn, &held.uid, &held.lock_fd);
	if (r != 0)
		return r;
	r = write_argv(conn, &m->run, held.uid, &peer, cfg->state_dir, k, &argv);
	if (r != 0)
		return r;
	safe_text(m->run.argv[0], comm, sizeof(comm));
	log_info("uid %u (pid %d, namespaces not egretd's: %s): attempt as uid %u: %s",
		 (unsigned int)peer.uid, (int)peer.pid,
		 peer.world.differ ? world_names(peer.world.differ, ns, sizeof(ns)) : "none",
		 (unsigned int)held.uid, comm);
	return run_attempt(conn, instance, m, &argv, &peer, &held, fds);
}
