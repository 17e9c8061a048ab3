// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attempt/run.c - `egret run`: one attempt from start to teardown.
 *
 * Every step before exec fails closed: COMMAND does not run, egret exits
 * EXIT_SETUP with one line naming the step, the error and the fix.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attempt/cgroup.h"
#include "attempt/effective.h"
#include "attempt/environ.h"
#include "attempt/gc.h"
#include "attempt/landlock.h"
#include "attempt/launch.h"
#include "attempt/options.h"
#include "attempt/preflight.h"
#include "attempt/run.h"
#include "attempt/state.h"
#include "attempt/terminal.h"
#include "attempt/watch.h"
#include "dns/proxy.h"
#include "enforce/allow.h"
#include "enforce/hostaddr.h"
#include "enforce/loader.h"
#include "enforce/programs.h"
#include "enforce/spare.h"
#include "enforce/unix_filter.h"
#include "lib/exit.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/paths.h"
#include "lib/trust.h"
#include "lib/util.h"
#include "observe/events.h"
#include "policy/policy.h"
#include "requests/approvals.h"
#include "requests/log.h"

#define PRIV_HINT	"needs root, or CAP_BPF, CAP_NET_ADMIN and CAP_SYS_ADMIN"

/* Everything an attempt owns, torn down in reverse by attempt_close(). */
struct attempt;

struct attempt {
	struct attempt_state st;
	int state_fd;
	int uid_lock_fd;		/* COMMAND's uid is this attempt's */
	int cgroup_fd;
	bool cgroup_made;
	bool pins_made;
	struct loader ld;
	struct dns_proxy *dns;
	struct events ev;
	struct hostaddr host;		/* the host maps, kept current */
	struct unix_filter unix_filter;	/* named abstract sockets, if needed */
	struct request_log requests;	/* only with --repo */
	bool requests_on;
	uint64_t load_us;		/* BPF load and verification */
};

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int resolve_cgroup_parent(const struct run_opts *o, char *ret, size_t len)
{
	char mnt[PATH_MAX], self[PATH_MAX];
	int r;

	if (o->cgroup_parent) {
		if (strlen(o->cgroup_parent) >= len)
			return -ENAMETOOLONG;
		strcpy(ret, o->cgroup_parent);
		return 0;
	}
	r = cgroup2_mount(mnt, sizeof(mnt));
	if (r < 0)
		return r;
	r = cgroup2_self(self, sizeof(self));
	if (r < 0)
		return r;
	/* Our cgroup "/" is the mount itself: avoid "//egret". */
	if ((size_t)snprintf(ret, len, "%s%s/egret", mnt,
			     strcmp(self, "/") ? self : "") >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* Are we in a network namespace `ip netns` named (/run/netns/NAME)? What
 * `ip netns exec` does, remounting /sys, is then the likely cause. */
static bool in_named_netns(void)
{
	_cleanup_(closedirp) DIR *d = opendir("/run/netns");
	struct stat self, st;
	struct dirent *de;

	if (!d || stat("/proc/self/ns/net", &self) < 0)
		return false;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && fstatat(dirfd(d), de->d_name, &st, 0) == 0 &&
		    st.st_dev == self.st_dev && st.st_ino == self.st_ino)
			return true;
	return false;
}

/* The proxy's decisions go to the event log and, for refused lookups,
 * to the request log (which decides what is a request). */
static void on_dns_decision(void *ctx, const struct dns_decision *d)
{
	struct attempt *a = ctx;

	events_dns(&a->ev, d);
	if (a->requests_on)
		request_log_lookup(&a->requests, d);
}

/* BPF's denials, as the event log reads them, go to the request log. */
static void on_bpf_denial(void *ctx, const struct egret_event *e, const char *name)
{
	struct attempt *a = ctx;

	if (a->requests_on)
		request_log_event(&a->requests, e, name);
}

/*
 * The errno refused connects fail with (docs/CLIENTS.md): the operator's,
 * or the default where this kernel lets the programs choose it. An errno
 * asked for that this kernel cannot give is refused, not silently EPERM.
 */
static int pick_deny_errno(const struct run_opts *o)
{
	int can = loader_can_set_errno();

	if (can < 0)
		return log_error_errno(can, "probe the kernel's BPF helpers (%s)", PRIV_HINT);
	if (o->deny_errno && o->deny_errno != EPERM && !can) {
		log_error("--deny-errno %s: this kernel can only refuse with EPERM (bpf_set_retval needs Linux 5.18)",
			  run_deny_errno_name(o->deny_errno));
		return -EOPNOTSUPP;
	}
	if (o->deny_errno)
		return o->deny_errno;
	if (!can)
		log_info("this kernel cannot choose the errno of a refused connect (bpf_set_retval, Linux 5.18): EPERM");
	return can ? RUN_DEFAULT_DENY_ERRNO : EPERM;
}

/*
 * Steps that make the attempt, in order; each logs its own one-line
 * failure, and attempt_close() undoes whatever they reached.
 *
 * COMMAND's uid is this attempt's alone: its lock held, no process of it
 * running. After gc (a dead egret's attempt may have run as this uid),
 * before anything is made.
 */
static int attempt_claim_uid(struct attempt *a, const struct run_opts *o,
			     const struct launch_user *user)
{
	char err[320];
	pid_t other = 0;
	int r;


	r = preflight_uid_lock(user->uid, &a->uid_lock_fd, &other);
	if (r == -EWOULDBLOCK && !o->allow_shared_uid) {
		log_error("refusing to run COMMAND: another attempt (egret pid %d) runs as uid %u (give each attempt a uid of its own, or --allow-shared-uid)",
			  (int)other, (unsigned int)user->uid);
		return -EPERM;
	}
	if (r < 0 && r != -EWOULDBLOCK)
		return log_error_errno(r, "lock uid %u in %s", (unsigned int)user->uid,
				       EGRET_UID_LOCK_DIR);
	r = preflight_shared_uid(user->uid, err, sizeof(err));
	if (r == -EEXIST && o->allow_shared_uid)
		log_warn("warning: %s", err);
	else if (r < 0) {
		log_error("refusing to run COMMAND: %s", err);
		return -EPERM;
	}
	return 0;
}

/* The record first (whatever exists after it, gc can find), then the
 * cgroup under the parent. */
static int attempt_make_cgroup(struct attempt *a, const struct run_opts *o)
{
	char parent[PATH_MAX];
	int r;

	r = resolve_cgroup_parent(o, parent, sizeof(parent));
	if (r < 0 && in_named_netns())
		return log_error_errno(r, "find cgroup v2 (`ip netns exec` remounts /sys without it; run egret through nsenter --net=/run/netns/NAME, which keeps it)");
	if (r < 0)
		return log_error_errno(r, "find cgroup v2 (is cgroup2 mounted?)");
	r = cgroup_mkdir_parents(parent);
	if (r == -EMEDIUMTYPE || r == -ENOTDIR || r == -ENOENT)
		return log_error_errno(r, "cgroup parent %s: not a directory on the cgroup2 mount (fix --cgroup-parent)",
				       parent);
	if (r < 0)
		return log_error_errno(r, "create cgroup parent %s (%s)", parent, PRIV_HINT);

	if (o->id)
		strcpy(a->st.id, o->id);
	else if ((r = attempt_id_random(a->st.id, sizeof(a->st.id))) < 0)
		return log_error_errno(r, "generate attempt id");
	if ((size_t)snprintf(a->st.cgroup, sizeof(a->st.cgroup), "%s/%s",
			     parent, a->st.id) >= sizeof(a->st.cgroup))
		return log_error_errno(-ENAMETOOLONG, "cgroup path");
	snprintf(a->st.pins, sizeof(a->st.pins), EGRET_PIN_ROOT "/%s", a->st.id);
	a->st.pid = getpid();
	a->st.started = time(NULL);
	snprintf(a->st.repo, sizeof(a->st.repo), "%s", o->repo ? o->repo : "");

	/* The record comes first: whatever exists after it, gc can find. */
	r = state_create(&a->st, &a->state_fd);
	if (r == -EEXIST)
		return log_error_errno(r, "attempt id '%s' is in use (pick another --id)", a->st.id);
	if (r < 0)
		return log_error_errno(r, "create record in %s (%s)", EGRET_RUN_DIR, PRIV_HINT);

	if (mkdir(a->st.cgroup, 0755) < 0)
		return log_error_errno(-errno, "create cgroup %s%s", a->st.cgroup,
				       errno == EEXIST ? " (a stale attempt? run egret gc)" : "");
	a->cgroup_made = true;
	a->cgroup_fd = open(a->st.cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (a->cgroup_fd < 0)
		return log_error_errno(-errno, "open cgroup %s", a->st.cgroup);

	return 0;
}

static int attempt_make_pins(struct attempt *a)
{
	int r;

	r = bpffs_ensure();
	if (r < 0)
		return log_error_errno(r, "mount bpffs at %s (%s)", EGRET_BPFFS, PRIV_HINT);
	r = private_dir_ensure(EGRET_PIN_ROOT);
	if (r < 0)
		return log_error_errno(r, "prepare %s (must be a directory owned by egret's uid)",
				       EGRET_PIN_ROOT);
	if (mkdir(a->st.pins, 0700) < 0)
		return log_error_errno(-errno, "create pin directory %s%s", a->st.pins,
				       errno == EEXIST ? " (a stale attempt? run egret gc)" : "");
	a->pins_made = true;

	return 0;
}

/* The event log, and the request log when the attempt has a repo. */
static int attempt_open_logs(struct attempt *a, const struct run_opts *o)
{
	int r;

	r = events_open(&a->ev, o->log_file, a->st.id, o->audit);
	if (r < 0)
		return log_error_errno(r, "open --log %s", o->log_file);
	if (o->repo) {
		const char *dir = o->state_dir ? o->state_dir : REQUESTS_DEFAULT_DIR;

		r = request_store_prepare(dir);
		if (r < 0)
			return log_error_errno(r, "prepare state directory %s (must be a directory owned by egret's uid; fix or give --state-dir)",
					       dir);
		r = request_log_open(&a->requests, dir, o->repo, a->st.id,
				     a->st.cgroup);
		if (r < 0)
			return log_error_errno(r, "request log");
		a->requests_on = true;
	}
	a->ev.on_denial = on_bpf_denial;
	a->ev.denial_ctx = a;

	return 0;
}

/* The DNS proxy, the programs and their maps, attached and pinned. */
static int attempt_enforce(struct attempt *a, const struct run_opts *o,
			   int *ret_deny_errno)
{
	const struct allow_spec *bad = NULL;
	const char *step = NULL;
	struct allow_maps maps;
	uint64_t t1;
	int r, deny_errno;

	/* The proxy's port is baked into the programs: bind it first. */
	r = dns_proxy_open(&a->dns, &(struct dns_proxy_config){
		.rules = o->policy.hosts, .nrules = o->policy.nhosts,
		.upstreams_csv = o->upstreams_csv[0] ? o->upstreams_csv : NULL,
		.min_ttl = (uint32_t)o->dns_min_ttl, .audit = o->audit,
		.observer = { .decided = on_dns_decision, .ctx = a } }, &step);
	if (r < 0)
		return log_error_errno(r, "%s", step);

	deny_errno = pick_deny_errno(o);
	if (deny_errno < 0)
		return deny_errno;
	t1 = mono_us();
	r = programs_get(&a->ld, &(struct loader_opts){
		.max_entries = (__u32)o->max_entries,
		.max_cidrs = (__u32)o->max_cidrs,
		.dns_port = dns_proxy_port(a->dns),
		.dns_ip6_loopback = dns_proxy_ip6_loopback(a->dns),
		.log_allowed = o->log_allowed, .audit = o->audit,
		.no_spare = o->no_spare,
		.deny_errno = deny_errno == EPERM ? 0 : deny_errno }, &step);
	a->load_us = mono_us() - t1;
	if (r < 0)
		return log_error_errno(r, "%s (%s; -v shows libbpf's detail)",
				       step, PRIV_HINT);
	/* The host's addresses: sources allowed, destinations special. */
	r = hostaddr_open(&a->host, a->ld.maps[LOADER_HOST4], a->ld.maps[LOADER_HOST6]);
	if (r < 0)
		return log_error_errno(r, "read this host's addresses (rtnetlink, local table)%s",
				       r == -ENOSPC ? ": more than egret keeps" : "");
	maps = loader_allow_maps(&a->ld);
	r = allow_write_static(&maps, o->policy.specs, o->policy.nspecs, &bad);
	if (r < 0) {
		char text[128] = "?";

		spec_format(bad, text, sizeof(text));
		return log_error_errno(r, "write allow entry %s%s", text,
				       r == -ENOSPC ? " (more than 8 port rules for one address, or map full: raise --max-entries/--max-cidrs)" : "");
	}
	r = loader_attach_pin(&a->ld, a->cgroup_fd, a->st.pins, &step);
	if (r < 0)
		return log_error_errno(r, "%s %s (%s; the kernel needs cgroup BPF and bpf_link)",
				       step, a->st.cgroup, PRIV_HINT);
	if (o->unix_filter) {
		r = unix_filter_attach(&a->unix_filter, &(struct unix_filter_opts){
			.names = o->unix_names, .nnames = o->nunix_names,
			.events_fd = loader_events_fd(&a->ld),
			.counters_fd = loader_counters_fd(&a->ld),
			.audit = o->audit, .log_allowed = o->log_allowed,
			.cgroup_fd = a->cgroup_fd, .pin_dir = a->st.pins }, &step);
		if (r < 0)
			return log_error_errno(r, "%s (-v shows libbpf's detail)",
					       step);
	}
	*ret_deny_errno = deny_errno;
	return 0;
}

static int attempt_open(struct attempt *a, const struct run_opts *o,
			const struct launch_user *user)
{
	uint64_t t0 = mono_us();
	int r, deny_errno = 0;

	/* Without privilege, gc cannot even read the records; the next step
	 * says what is missing in one line. */
	r = gc_stale_attempts();
	if (r < 0 && r != -EACCES && r != -EPERM)
		log_warn("gc: some stale attempts could not be removed; continuing");
	r = user->set ? attempt_claim_uid(a, o, user) : 0;
	if (r == 0)
		r = attempt_make_cgroup(a, o);
	if (r == 0)
		r = attempt_make_pins(a);
	if (r == 0)
		r = attempt_open_logs(a, o);
	if (r == 0)
		r = attempt_enforce(a, o, &deny_errno);
	if (r < 0)
		return r;
	log_info("attempt %s: cgroup %s, %zu address and %zu host rules, DNS proxy on port %u, refusals %s; set up in %.1f ms (BPF load %.1f ms, %s)",
		 a->st.id, a->st.cgroup, o->policy.nspecs, o->policy.nhosts,
		 dns_proxy_port(a->dns), run_deny_errno_name(deny_errno),
		 (double)(mono_us() - t0) / 1000, (double)a->load_us / 1000,
		 a->ld.from_spare ? "programs loaded in advance" : "loaded now");
	return 0;
}

/* Undo attempt_open(), whatever it reached. Returns <0 if something stays. */
static int attempt_close(struct attempt *a)
{
	int r = 0;

	if (a->cgroup_fd >= 0)
		close(a->cgroup_fd);
	if (a->cgroup_made || a->pins_made)
		r = attempt_teardown(a->cgroup_made ? a->st.cgroup : "",
				     a->pins_made ? a->st.pins : "");
	dns_proxy_close(a->dns);
	a->dns = NULL;
	request_log_close(&a->requests);
	events_close(&a->ev);
	hostaddr_close(&a->host);
	unix_filter_close(&a->unix_filter);
	loader_destroy(&a->ld);
	/* Keep the record if anything stayed behind, so gc retries. */
	if (r == 0 && a->state_fd >= 0)
		r = state_remove(a->st.id);
	if (a->state_fd >= 0)
		close(a->state_fd);
	if (a->uid_lock_fd >= 0)
		close(a->uid_lock_fd);
	return r;
}

/* What the loop watches while COMMAND runs, besides the DNS proxy. */
struct supervisor {
	struct loop loop;
	struct loop_source child;	/* pidfd */
	struct loop_source signals;	/* signalfd */
	struct loop_source sweep;	/* timerfd */
	struct approvals_watch approvals;
	struct allow_maps maps;
	struct terminal *term;
	int status;
};

static void on_child(struct loop_source *src, uint32_t events)
{
	struct supervisor *sv = container_of(src, struct supervisor, child);
	siginfo_t info = {};

	(void)events;
	if (waitid(P_PIDFD, (id_t)src->fd, &info, WEXITED | WNOHANG) < 0) {
		loop_stop(&sv->loop, -errno);
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
	syscall(SYS_pidfd_send_signal, sv->child.fd, SIGCONT, NULL, 0);
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
				syscall(SYS_pidfd_send_signal, sv->child.fd, sig,
					NULL, 0);
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

/* Serve DNS and wait for COMMAND. Returns its exit code or -errno. */
static int supervise(struct attempt *a, const struct run_opts *o, pid_t pid,
		     int pidfd, int sigfd, struct terminal *term)
{
	struct supervisor sv = { .status = -EIO, .term = term,
				 .approvals = { .timer = { .fd = -1 } } };
	_cleanup_close_ int sweep_fd = -1;
	uint64_t sweep_ms;
	int r;

	r = loop_init(&sv.loop);
	if (r < 0)
		return r;
	sv.maps = loader_allow_maps(&a->ld);
	sv.child = (struct loop_source){ .fd = pidfd, .fn = on_child };
	sv.signals = (struct loop_source){ .fd = sigfd, .fn = on_signal };
	sweep_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	sv.sweep = (struct loop_source){ .fd = sweep_fd, .fn = on_sweep };
	/* Sweep about as often as entries can expire, within 1 s to 30 s. */
	sweep_ms = o->dns_min_ttl < 1 ? 1000 :
		   o->dns_min_ttl > 30 ? 30000 : o->dns_min_ttl * 1000ULL;

	if (sweep_fd < 0 || (r = timerfd_arm_ms(sweep_fd, sweep_ms, true)) < 0 ||
	    (r = loop_watch(&sv.loop, &sv.child, EPOLLIN)) < 0 ||
	    (r = loop_watch(&sv.loop, &sv.signals, EPOLLIN)) < 0 ||
	    (r = loop_watch(&sv.loop, &sv.sweep, EPOLLIN)) < 0 ||
	    (r = terminal_start(term, &sv.loop, pid)) < 0 ||
	    (r = dns_proxy_start(a->dns, &sv.loop, &sv.maps)) < 0 ||
	    (r = hostaddr_start(&a->host, &sv.loop)) < 0 ||
	    (r = events_start(&a->ev, &sv.loop, loader_events_fd(&a->ld),
			      loader_counters_fd(&a->ld), dns_proxy_names(a->dns))) < 0 ||
	    (o->repo && (r = request_log_start(&a->requests, &sv.loop)) < 0) ||
	    (o->approvals_path[0] &&
	     (r = approvals_watch_start(&sv.approvals, &sv.loop, o->approvals_path,
					o->repo, &o->approvals_stamp, &o->policy,
					a->dns, &sv.maps)) < 0)) {
		r = r < 0 ? r : -errno;
		goto out;
	}
	r = loop_run(&sv.loop);
	if (r == 0)
		r = sv.status;
	/* What COMMAND left in its pty, then the terminal as we found it,
	 * before egret prints anything more. */
	terminal_drain(term);
	terminal_suspend(term);
	events_drain(&a->ev);
	if (!o->quiet)
		events_summary(&a->ev, stderr);
out:
	terminal_drain(term);
	/* The proxy's sources belong to this loop: detach them now. */
	dns_proxy_close(a->dns);
	a->dns = NULL;
	approvals_watch_free(&sv.approvals);
	hostaddr_close(&a->host);
	request_log_detach(&a->requests);
	loop_close(&sv.loop);
	return r;
}

/* Block the signals egret handles and take them from a signalfd instead:
 * blocked before spawning, so none slips between fork and wait. */
static int signals_take(sigset_t *ret_old)
{
	static const int taken[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD,
				     SIGTSTP, SIGWINCH, SIGCONT };
	sigset_t mask;
	int fd;

	sigemptyset(&mask);
	for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]); i++)
		sigaddset(&mask, taken[i]);
	sigprocmask(SIG_BLOCK, &mask, ret_old);
	fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

/* COMMAND in the attempt's cgroup, with its terminal and environment.
 * Returns 0, or the status egret exits with (COMMAND did not start). */
static int start_command(struct attempt *a, const struct run_opts *o,
			 const struct launch_user *user,
			 const struct landlock_plan *landlock, struct terminal *term,
			 pid_t *ret_pid, int *ret_pidfd)
{
	struct launch_error lerr = {};
	struct launch launch;
	char **envp = NULL;
	int r;

	r = terminal_open(term, o->pty, user->set ? user->uid : (uid_t)-1);
	if (r < 0) {
		log_error_errno(r, "give COMMAND a terminal of its own (a pseudo-terminal; is devpts mounted?)");
		return EXIT_SETUP;
	}
	r = environ_build(environ, user, &o->env, term->pty, &envp);
	if (r < 0) {
		log_error_errno(r, "COMMAND's environment (at most %d variables)", ENVIRON_MAX_VARS);
		return EXIT_SETUP;
	}
	launch = (struct launch){ .argv = o->argv, .cgroup_fd = a->cgroup_fd,
				  .terminal = term, .landlock = *landlock,
				  .envp = envp, .chdir = o->chdir,
				  .user = *user, .nkeep_fds = o->nkeep_fds };
	memcpy(launch.keep_fds, o->keep_fds, sizeof(o->keep_fds));
	r = launch_spawn(&launch, ret_pid, ret_pidfd, &lerr);
	free(envp);
	if (r == -ECHILD && lerr.step == LAUNCH_STEP_EXEC) {
		log_error_errno(-lerr.err, "%s", o->argv[0]);
		return lerr.err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC;
	}
	if (r == -ECHILD) {
		log_error_errno(-lerr.err, "start command: %s", launch_step_name(lerr.step));
		return EXIT_SETUP;
	}
	if (r < 0) {
		log_error_errno(r, "start command in cgroup %s (clone3 with CLONE_INTO_CGROUP needs Linux 5.7+)",
				a->st.cgroup);
		return EXIT_SETUP;
	}
	return 0;
}

int attempt_run(const struct run_opts *o, const struct launch_user *user,
		const struct landlock_plan *landlock)
{
	struct attempt a = { .state_fd = -1, .cgroup_fd = -1, .uid_lock_fd = -1,
			     .ev = { .log_fd = -1 }, .host = { .src = { .fd = -1 } },
			     .requests = { .timer = { .fd = -1 } } };
	struct terminal term;
	_cleanup_close_ int sigfd = -1, pidfd = -1;
	int status = EXIT_SETUP;
	sigset_t old;
	pid_t pid;
	int r;

	loader_init(&a.ld);
	unix_filter_init(&a.unix_filter);
	terminal_init(&term);
	sigfd = signals_take(&old);
	if (sigfd < 0) {
		log_error_errno(sigfd, "signalfd");
		goto out;
	}

	if (attempt_open(&a, o, user) < 0)
		goto out;
	/* For -v: on every run it would be noise (egret check shows it). */
	if (o->builtin_policy)
		log_info("note: no %s; using the built-in default policy (Debian and Ubuntu registries, the git remote)",
			 POLICY_DEFAULT_PATH);
	status = start_command(&a, o, user, landlock, &term, &pid, &pidfd);
	if (status != 0)
		goto out;

	/* COMMAND runs: leave the next attempt programs loaded in advance. */
	if (!o->no_spare)
		spare_make_async((__u32)o->max_entries, (__u32)o->max_cidrs);
	status = supervise(&a, o, pid, pidfd, sigfd, &term);
	if (status < 0) {
		log_error_errno(status, "wait for command");
		status = EXIT_SETUP;
	}
out:
	terminal_close(&term);
	r = attempt_close(&a);
	if (r < 0 && status == 0)
		status = EXIT_SETUP;
	else if (r == 0 && a.st.id[0])
		log_info("attempt %s: exit status %d; cgroup, pins and record removed",
			 a.st.id, status);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return status;
}
