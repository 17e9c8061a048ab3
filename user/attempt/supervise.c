// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attempt/supervise.c - the attempt while COMMAND runs: one epoll loop for
 * the child's pidfd, signals, the expiry sweep, the terminal, the DNS
 * proxy, the host's addresses, events, requests and approvals.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "attempt/attempt.h"
#include "attempt/effective.h"
#include "launch/keeper.h"
#include "launch/launch.h"
#include "attempt/options.h"
#include "attempt/supervise.h"
#include "launch/terminal.h"
#include "attempt/watch.h"
#include "attempt/watchdog.h"
#include "dns/proxy.h"
#include "enforce/allow.h"
#include "enforce/hostaddr.h"
#include "enforce/loader.h"
#include "lib/exit.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "observe/events.h"
#include "observe/figures.h" /* IWYU pragma: keep (struct figures on the stack) */
#include "observe/summary.h"
#include "requests/log.h"

/* What the loop watches while COMMAND runs, besides the DNS proxy. */
struct supervisor {
	struct loop loop;
	struct loop_source child;	/* pidfd: COMMAND's, or its keeper's */
	int command_pidfd;		/* COMMAND's, for its signals */
	int exit_fd;			/* the keeper's status file, or -1 */
	struct loop_source signals;	/* signalfd */
	struct loop_source sweep;	/* timerfd */
	struct loop_source report;	/* timerfd: control->report's, or -1 */
	struct attempt *a;
	struct attempt_control *control;
	struct approvals_watch approvals;
	struct watchdog dog;		/* --timeout, and the denial lines */
	struct allow_maps maps;
	struct allow_learned *learned;	/* the DNS path's memory (enforce/allow.h) */
	struct terminal *term;
	int status;
};

static void on_child(struct loop_source *src, uint32_t events)
{
	struct supervisor *sv = container_of(src, struct supervisor, child);
	siginfo_t info = {};

	(void)events;
	if (waitid(P_PIDFD, (id_t)src->fd, &info, WEXITED | WNOHANG) < 0) {
		int r = -errno;

		/* Not our child: a keeper we re-adopted has exited (a pidfd
		 * polls readable at exit), its file says how COMMAND ended. */
		if (r == -ECHILD && sv->exit_fd >= 0) {
			r = keeper_read_status(sv->exit_fd);
			if (r < 0)
				log_error("COMMAND's keeper ended without its status (killed?)");
			sv->status = r < 0 ? EXIT_SETUP : r;
			r = 0;
		}
		loop_stop(&sv->loop, r);
		return;
	}
	if (!info.si_pid)
		return;
	sv->status = launch_exit_code(info.si_code, info.si_status);
	loop_stop(&sv->loop, 0);
}

/* A terminal's signal goes to the process group in its foreground: the
 * pty's, or COMMAND's own (it leads its session). */
static void signal_group(struct supervisor *sv, int sig)
{
	kill(-terminal_signal_group(sv->term), sig);
}

/* @sig for COMMAND (@pidfd), then SIGCONT for it and its terminal's
 * group, which a stopped COMMAND needs to act on it. */
static void signal_command(struct terminal *t, int pidfd, int sig)
{
	if (sig != SIGCONT)
		syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
	if (sig == SIGKILL)
		return;
	syscall(SYS_pidfd_send_signal, pidfd, SIGCONT, NULL, 0);
	if (t && t->leader > 0)
		kill(-terminal_signal_group(t), SIGCONT);
}

void attempt_control_signal(struct attempt_control *ctl, int sig)
{
	struct terminal *t = ctl->term;

	switch (sig) {
	case SIGWINCH:
		if (t)
			terminal_resize(t);
		break;
	case SIGCONT:
		if (t) {
			terminal_hold(t, false);
			terminal_resume(t);
		}
		signal_command(t, ctl->child_pidfd, SIGCONT);
		break;
	default:
		signal_command(t, ctl->child_pidfd, sig);
	}
}

/* The suspend key stopped COMMAND (terminal.h: suspended): the caller's
 * terminal as it was, and its client told. */
static void on_suspended(void *ctx)
{
	struct attempt_control *ctl = ctx;

	terminal_suspend(ctl->term);
	terminal_hold(ctl->term, true);
	ctl->suspended(ctl);
}

/* Stop until SIGCONT, as a shell's job: SIGTSTP is blocked (signalfd), so
 * raise it with its default action and let it through once. */
static void suspend_self(void)
{
	sigset_t tstp;

	sigemptyset(&tstp);
	sigaddset(&tstp, SIGTSTP);
	signal(SIGTSTP, SIG_DFL);
	raise(SIGTSTP);
	sigprocmask(SIG_UNBLOCK, &tstp, NULL);	/* stopped here */
	sigprocmask(SIG_BLOCK, &tstp, NULL);
}

/*
 * COMMAND stopped (Ctrl-Z in its pty, or forwarded from egret's
 * terminal): if egret is a job in a terminal's foreground, it stops too,
 * so the shell gets the terminal back, and `fg` resumes both. Without job
 * control (a miner's pipes) COMMAND's stop is its own business.
 */
static void on_child_stopped(struct supervisor *sv)
{
	siginfo_t info = {};

	if (waitid(P_PIDFD, (id_t)sv->child.fd, &info, WSTOPPED | WNOHANG) < 0 ||
	    !info.si_pid || info.si_code != CLD_STOPPED ||
	    !terminal_job_control(sv->term))
		return;
	terminal_suspend(sv->term);
	suspend_self();
	terminal_resume(sv->term);
	signal_group(sv, SIGCONT);
	syscall(SYS_pidfd_send_signal, sv->command_pidfd, SIGCONT, NULL, 0);
}

/*
 * COMMAND is in a session of its own, so the terminal's signals reach
 * egret alone: Ctrl-C, Ctrl-\, Ctrl-Z and hangups (si_code SI_KERNEL)
 * are passed to COMMAND's foreground process group, as the terminal would
 * have; a window size change resizes COMMAND's pty; SIGINT, SIGTERM,
 * SIGHUP and SIGQUIT someone sent egret go to COMMAND itself.
 */
static void on_signal(struct loop_source *src, uint32_t events)
{
	struct supervisor *sv = container_of(src, struct supervisor, signals);
	struct signalfd_siginfo si;

	(void)events;
	while (read(src->fd, &si, sizeof(si)) == sizeof(si)) {
		int sig = (int)si.ssi_signo;

		switch (sig) {
		case SIGCHLD:
			on_child_stopped(sv);
			break;
		case SIGWINCH:
			terminal_resize(sv->term);
			break;
		case SIGCONT:
			terminal_resume(sv->term);
			signal_group(sv, SIGCONT);
			break;
		case SIGTSTP:
			terminal_stop_group(sv->term);
			break;
		default:
			if (si.ssi_code == SI_KERNEL)
				signal_group(sv, sig);
			else
				signal_command(sv->term, sv->command_pidfd, sig);
		}
	}
}

/* Free the space of expired learned entries (BPF denies them already). */
static void on_sweep(struct loop_source *src, uint32_t events)
{
	struct supervisor *sv = container_of(src, struct supervisor, sweep);
	uint64_t ticks;
	int n;

	(void)events;
	if (read(src->fd, &ticks, sizeof(ticks)) < 0)
		return;
	n = allow_sweep(&sv->maps, allow_now_ns());
	if (n > 0)
		log_debug("sweep: removed %d expired entries", n);
}

/* What the attempt counted so far, to egretd's metrics. */
static void on_report(struct loop_source *src, uint32_t events)
{
	struct supervisor *sv = container_of(src, struct supervisor, report);
	struct figures fig;
	uint64_t ticks;

	(void)events;
	if (read(src->fd, &ticks, sizeof(ticks)) < 0)
		return;
	summary_figures(&sv->a->ev, effective_catalog(), false, &fig);
	sv->control->report(sv->control, &fig, false, false);
}

/* The supervisor of @a's COMMAND (@pidfd; its keeper's, if it has one)
 * and of the signals of @sigfd. */
static void supervisor_init(struct supervisor *sv, struct attempt *a, int pidfd,
			    int sigfd)
{
	sv->maps = loader_allow_maps(&a->ld);
	/* The DNS path's shortcuts: the host's addresses from memory, and
	 * no rewrite of an entry it has just written (enforce/allow.h). */
	sv->maps.host = &a->host;
	sv->maps.learned = sv->learned = allow_learned_new();
	sv->child = (struct loop_source){ .fn = on_child,
		.fd = a->keeper_pidfd >= 0 ? a->keeper_pidfd : pidfd };
	sv->command_pidfd = pidfd;
	sv->exit_fd = a->exit_fd;
	sv->signals = (struct loop_source){ .fd = sigfd, .fn = on_signal };
	sv->a = a;
}

/* What the caller's channel acts on: COMMAND to signal, the loop to end,
 * COMMAND's terminal and its suspend key. */
static void control_bind(struct attempt_control *control, struct supervisor *sv,
			 int pidfd, struct terminal *term)
{
	if (!control)
		return;
	control->child_pidfd = pidfd;
	control->loop = &sv->loop;
	sv->control = control;
	control->term = term->pty ? term : NULL;
	if (control->suspended && term->pty) {
		term->suspended = on_suspended;
		term->suspended_ctx = control;
	}
}

/* The loop's own sources: COMMAND, signals, the sweep (every @sweep_ms),
 * the caller's channel and its extra source, COMMAND's terminal. */
static int watch_own(struct supervisor *sv, struct attempt_control *control,
		     struct terminal *term, pid_t pid, uint64_t sweep_ms)
{
	int r;

	if (sv->sweep.fd < 0)
		return -errno;
	if ((r = timerfd_arm_ms(sv->sweep.fd, sweep_ms, true)) < 0 ||
	    (r = loop_watch(&sv->loop, &sv->child, EPOLLIN)) < 0 ||
	    (r = loop_watch(&sv->loop, &sv->signals, EPOLLIN)) < 0 ||
	    (r = loop_watch(&sv->loop, &sv->sweep, EPOLLIN)) < 0 ||
	    (control && (r = loop_watch(&sv->loop, &control->src, EPOLLIN)) < 0) ||
	    (control && control->extra &&
	     (r = loop_watch(&sv->loop, control->extra, EPOLLIN)) < 0))
		return r;
	if (sv->report.fd >= 0 &&
	    ((r = timerfd_arm_ms(sv->report.fd, SUPERVISE_REPORT_MS, true)) < 0 ||
	     (r = loop_watch(&sv->loop, &sv->report, EPOLLIN)) < 0))
		return r;
	return terminal_start(term, &sv->loop, pid);
}

/* What the attempt serves from the loop: DNS, the host's addresses, the
 * events, the watchdog, the request log and the approvals. */
static int watch_attempt(struct supervisor *sv, struct attempt *a,
			 const struct run_opts *o)
{
	int r;

	if ((r = dns_proxy_start(a->dns, &sv->loop, &sv->maps)) < 0 ||
	    (r = hostaddr_start(&a->host, &sv->loop)) < 0)
		return r;
	events_set_tls(&a->ev, a->ld.maps[LOADER_TLS_COUNTS], a->ld.slot);
	a->ev.dests_fd = a->ld.maps[LOADER_DEST_COUNTS];
	a->ev.tally_fd = a->ld.maps[LOADER_DEST_TALLY];
	if ((r = events_start(&a->ev, &sv->loop, loader_events_fd(&a->ld),
			      loader_counters_fd(&a->ld), a->ld.key, loader_repeats_fd(&a->ld),
			      dns_proxy_names(a->dns))) < 0 ||
	    (r = watchdog_start(&sv->dog, &sv->loop, &a->ev, a->st.cgroup, o->timeout_ms,
				o->quiet)) < 0 ||
	    (o->repo && (r = request_log_start(&a->requests, &sv->loop)) < 0) ||
	    (r = request_inbox_start(&a->inbox, &sv->loop)) < 0 ||
	    (o->approvals_path[0] &&
	     (r = approvals_watch_start(&sv->approvals, &sv->loop, o->approvals_path,
					o->repo, &o->approvals_stamp, &o->policy,
					a->dns, &sv->maps)) < 0))
		return r;
	return 0;
}

/* COMMAND ended with @r: what it left in its pty, then the terminal as we
 * found it, before egret prints anything more; the events drained, the
 * log's destinations, the watchdog's word on @r, the summary. */
static int supervise_end(struct supervisor *sv, struct attempt *a,
			 const struct run_opts *o, struct terminal *term, int r)
{
	terminal_drain(term);
	terminal_suspend(term);
	events_drain(&a->ev);
	summary_log_destinations(&a->ev);
	if (sv->control && sv->control->report) {
		struct figures fig;

		summary_figures(&a->ev, effective_catalog(), true, &fig);
		sv->control->report(sv->control, &fig, true, sv->dog.timed_out);
	}
	if (r >= 0)
		r = watchdog_status(&sv->dog, r, stderr);
	a->timed_out = sv->dog.timed_out;
	if (!o->quiet)
		summary_print(&a->ev, stderr);
	return r;
}

/* Whatever was watched, unwatched; the loop closed. */
static void supervise_stop(struct supervisor *sv, struct attempt *a,
			   struct attempt_control *control, struct terminal *term)
{
	terminal_drain(term);
	/* The proxy's sources belong to this loop: detach them now. */
	dns_proxy_close(a->dns);
	a->dns = NULL;
	approvals_watch_free(&sv->approvals);
	watchdog_stop(&sv->dog, &sv->loop);
	hostaddr_close(&a->host);
	request_inbox_detach(&a->inbox);
	request_log_detach(&a->requests);
	loop_close(&sv->loop);
	allow_learned_free(sv->learned);
	if (control)
		control->term = NULL;
	term->suspended = NULL;
}

/* Serve DNS and wait for COMMAND. Returns its exit code or -errno. */
int supervise(struct attempt *a, const struct run_opts *o, pid_t pid,
	      int pidfd, int sigfd, struct terminal *term,
	      struct attempt_control *control)
{
	struct supervisor sv = { .status = -EIO, .term = term,
				 .approvals = { .timer = { .fd = -1 } },
				 .dog = { .deadline = { .fd = -1 }, .tick = { .fd = -1 } } };
	_cleanup_close_ int sweep_fd = -1, report_fd = -1;
	/* Sweep about as often as entries can expire, within 1 s to 30 s. */
	uint64_t sweep_ms = o->dns_min_ttl < 1 ? 1000 :
			    o->dns_min_ttl > 30 ? 30000 : o->dns_min_ttl * 1000ULL;
	int r;

	r = loop_init(&sv.loop);
	if (r < 0)
		return r;
	supervisor_init(&sv, a, pidfd, sigfd);
	sweep_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	sv.sweep = (struct loop_source){ .fd = sweep_fd, .fn = on_sweep };
	if (control && control->report)
		report_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	sv.report = (struct loop_source){ .fd = report_fd, .fn = on_report };
	control_bind(control, &sv, pidfd, term);
	r = watch_own(&sv, control, term, pid, sweep_ms);
	if (r >= 0)
		r = watch_attempt(&sv, a, o);
	if (r >= 0) {
		r = loop_run(&sv.loop);
		if (r == 0)
			r = sv.status;
		r = supervise_end(&sv, a, o, term, r);
	}
	supervise_stop(&sv, a, control, term);
	return r;
}
