// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attempt/attempt.c - making an attempt and taking it down: its record,
 * cgroup, pins, logs, DNS proxy and programs (attempt/programs.c), in
 * order; each step fails closed with one line naming the step, the error
 * and the fix.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "attempt/attempt.h"
#include "attempt/attempt_impl.h"
#include "attempt/cgroup.h"
#include "attempt/effective.h"
#include "attempt/gc.h"
#include "attempt/options.h"
#include "attempt/preflight.h"
#include "attempt/state.h"
#include "launch/user.h"
#include "launch/world.h"	/* IWYU pragma: keep (o->world->differ) */
#include "dns/decision.h"
#include "dns/proxy.h"
#include "enforce/allow.h"
#include "enforce/hostaddr.h"
#include "enforce/loader.h"
#include "enforce/sockkill.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/pages.h"
#include "lib/paths.h"
#include "lib/trust.h"
#include "lib/util.h"
#include "observe/events.h"
#include "requests/log.h"
#include "requests/store.h"

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
	feed_dns(&a->feed, d);
	if (a->requests_on)
		request_log_lookup(&a->requests, d);
}

/* A connection over its destination's upload budget: BPF drops all it
 * sends; end it now rather than let it retry for minutes. */
static void on_over_budget(void *ctx, uint64_t cookie)
{
	struct attempt *a = ctx;
	int r = sockets_destroy_cookie(a->ld.key, cookie);

	if (r < 0)
		log_errno(LOG_WARN, r, "end a connection over its upload budget (its sends stay refused)");
}

/* BPF's denials, as the event log reads them, go to COMMAND's feed and
 * the request log. */
static void on_bpf_denial(void *ctx, const struct egret_event *e, const char *name,
			  uint64_t count)
{
	struct attempt *a = ctx;

	feed_bpf(&a->feed, e, name, count);
	if (a->requests_on)
		request_log_event(&a->requests, e, name, count);
}

/*
 * Steps that make the attempt, in order; each logs its own one-line
 * failure, and attempt_close() undoes whatever they reached.
 *
 * COMMAND's uid is this attempt's alone: its lock held, no process of it
 * running. After gc (a dead egret's attempt may have run as this uid),
 * before anything is made. egretd picked the uid with both checks done
 * (pick_uid in daemon/handle.c), moments before: not scanned again.
 */
static int attempt_claim_uid(struct attempt *a, const struct run_opts *o,
			     const struct launch_user *user)
{
	char err[320];
	pid_t other = 0;
	int r;

	if (a->uid_lock_fd >= 0)
		return 0;	/* held already, and the uid found unused (egretd) */
	a->uid_locked = user->uid;
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

/*
 * Remove what dead egrets left under the cgroup parent this attempt will
 * use, and nothing else: another deployment's, another suite's or another
 * operator's attempts on the host are theirs to collect (egret gc, their
 * own next start), and a host-wide sweep from every start made egrets on
 * one host undo each other's evidence. Without privilege, gc cannot even
 * read the records; the next step says what is missing in one line.
 */
static int gc_own_parent(const struct run_opts *o)
{
	char parent[PATH_MAX];

	if (resolve_cgroup_parent(o, parent, sizeof(parent)) < 0)
		return 0;	/* attempt_make_cgroup says why, in one line */
	return gc_stale_attempts(&(struct gc_opts){ .daemon = GC_DAEMON_NONE,
						    .under = parent });
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
		return log_error_errno(r, "create cgroup parent %s%s", parent, attempt_priv_hint(r));

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
	a->st.uid = a->uid_lock_fd >= 0 ? (long)a->uid_locked : -1;
	snprintf(a->st.repo, sizeof(a->st.repo), "%s", o->repo ? o->repo : "");

	/* The record comes first: whatever exists after it, gc can find. */
	r = state_create(&a->st, &a->state_fd);
	if (r == -EEXIST)
		return log_error_errno(r, "attempt id '%s' is in use (pick another --id)", a->st.id);
	if (r < 0)
		return log_error_errno(r, "create record in %s%s", EGRET_RUN_DIR, attempt_priv_hint(r));

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
		return log_error_errno(r, "mount bpffs at %s%s", EGRET_BPFFS, attempt_priv_hint(r));
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
		a->requests.json_fd = o->requests_json_fd;
		a->requests_on = true;
	}
	a->ev.on_denial = on_bpf_denial;
	a->ev.on_over = on_over_budget;
	a->ev.denial_ctx = a;

	return 0;
}

/* The DNS proxy, on @port or (0) any free one. */
static int attempt_open_dns(struct attempt *a, const struct run_opts *o, uint16_t port,
			    int *adopt_fds)
{
	const char *step = NULL;
	int r = dns_proxy_open(&a->dns, &(struct dns_proxy_config){
		.rules = o->policy.hosts, .nrules = o->policy.nhosts,
		.upstreams_csv = o->upstreams_csv[0] ? o->upstreams_csv : NULL,
		.resolv_conf = o->resolv_conf, .port = port, .adopt_fds = adopt_fds,
		.min_ttl = (uint32_t)o->dns_min_ttl, .audit = o->audit,
		.pinning = !o->no_pinning &&
			   (o->policy.npin_ports > 0 || o->policy.nhttp_ports > 0),
		.observer = { .decided = on_dns_decision, .ctx = a } }, &step);

	if (r == -EADDRINUSE && port)
		return log_error_errno(r, "%s: port %u, which the attempt's programs send DNS to, was taken while egretd was down",
				       step, (unsigned int)port);
	if (r < 0)
		return log_error_errno(r, "%s", step);
	return 0;
}

/* The request socket beside the manifest, where the agent asks (attempts
 * with --repo): like the manifest, no enforcement. */
static void attempt_inbox(struct attempt *a)
{
	char dir[PATH_MAX];
	int r;

	if (!a->requests_on)
		return;
	r = path_fmt(dir, sizeof(dir), "%s/%s", EGRET_LIMITS_DIR, a->st.id);
	if (r == 0)
		r = request_inbox_open(&a->inbox, dir, &a->requests, a->ld.key);
	if (r < 0)
		log_warn("warning: COMMAND cannot ask for hosts (egret request): %s/%s: %s",
			 dir, INBOX_SOCKET, strerror(-r));
}

/*
 * The limits manifest and the denial feed, for COMMAND to read. They are
 * no enforcement: a failure to write them costs only them, with one
 * warning. Where COMMAND runs in its caller's mount namespace (egretd
 * serving a container), files made here would not be in its view: none
 * are made (docs/AGENTS.md).
 */
static void attempt_limits(struct attempt *a, const struct run_opts *o, int deny_errno)
{
	bool elsewhere = o->world && (o->world->differ & CLONE_NEWNS);
	char dir[PATH_MAX];
	int r;

	/* In a caller's mounts of its own, only a view (egretd's always)
	 * can show COMMAND what egret writes here. */
	if (elsewhere && !o->view) {
		log_debug("attempt %s: no limits manifest: COMMAND runs in its caller's mount namespace",
			  a->st.id);
		return;
	}
	r = limits_write(&a->limits, &(struct limits_in){
		.id = a->st.id, .deny_errno = deny_errno, .requests = a->requests_on }, o);
	if (r < 0) {
		log_warn("warning: COMMAND runs without its limits manifest ($EGRET_LIMITS): %s/%s: %s",
			 EGRET_LIMITS_DIR, a->st.id, strerror(-r));
		limits_remove(a->st.id);
		return;
	}
	a->feed.log = (struct jsonl_log){ .fd = TAKE_FD(a->limits.feed_fd), .attempt = a->st.id,
					  .boot_to_real_ns = jsonl_boot_to_real_ns() };
	attempt_inbox(a);
	/* The directory as it is now, socket and all, for the view to place
	 * in the caller's mounts (launch/view_limits.c). */
	if (elsewhere && path_fmt(dir, sizeof(dir), "%s/%s", EGRET_LIMITS_DIR, a->st.id) == 0) {
		a->limits.tree_fd = open_tree(AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (a->limits.tree_fd < 0) {
			log_warn("warning: COMMAND runs without its limits manifest: clone %s: %s",
				 dir, strerror(errno));
			a->limits.txt[0] = '\0';	/* no variable names it */
		}
	}
}

int attempt_open(struct attempt *a, const struct run_opts *o,
		 const struct launch_user *user)
{
	uint64_t t0 = mono_us();
	int r, deny_errno = 0;

	r = gc_own_parent(o);
	if (r < 0 && r != -EACCES && r != -EPERM)
		log_warn("gc: some stale attempts could not be removed; continuing");
	r = user->set ? attempt_claim_uid(a, o, user) : 0;
	if (r == 0)
		r = attempt_make_cgroup(a, o);
	if (r == 0)
		r = attempt_make_pins(a);
	if (r == 0)
		r = attempt_open_logs(a, o);
	/* The proxy's port goes into the attempt's settings: bind it first. */
	if (r == 0)
		r = attempt_open_dns(a, o, 0, NULL);
	if (r == 0)
		r = attempt_programs_attach(a, o, &deny_errno);
	if (r < 0)
		return r;
	attempt_limits(a, o, deny_errno);
	log_info("attempt %s: cgroup %s, %zu address and %zu host rules, DNS proxy on port %u, refusals %s; set up in %.1f ms (BPF programs %.1f ms, %s)",
		 a->st.id, a->st.cgroup, o->policy.nspecs, o->policy.nhosts,
		 dns_proxy_port(a->dns), run_deny_errno_name(deny_errno),
		 (double)(mono_us() - t0) / 1000, (double)a->load_us / 1000,
		 a->ld.loaded_now ? "loaded now" : "the pinned set");
	return 0;
}

/* COMMAND's feed goes on where the dead egret left it; without it (an
 * attempt from before feeds), COMMAND's refusals are still refused. */
static void attempt_feed_reopen(struct attempt *a)
{
	struct stat st;
	int fd = limits_feed_reopen(a->st.id);

	if (fd < 0) {
		log_debug("attempt %s: no denial feed to go on with: %s", a->st.id, strerror(-fd));
		return;
	}
	a->feed.log = (struct jsonl_log){ .fd = fd, .attempt = a->st.id,
					  .boot_to_real_ns = jsonl_boot_to_real_ns() };
	a->feed.bytes = fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
	attempt_inbox(a);
}

int attempt_reopen(struct attempt *a, const struct run_opts *o,
		   const struct attempt_state *st, int state_fd, int *dns_fds)
{
	__u64 key;
	int r;

	/* Ours from here: attempt_close() takes it down. */
	a->st = *st;
	a->state_fd = state_fd;
	a->cgroup_made = a->pins_made = true;
	a->cgroup_fd = open(st->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (a->cgroup_fd < 0)
		return log_error_errno(-errno, "open cgroup %s", st->cgroup);
	r = attempt_open_logs(a, o);
	if (r == 0)
		r = attempt_open_dns(a, o, (uint16_t)st->dns_port, dns_fds);
	if (r < 0)
		return r;
	r = loader_cgroup_key(a->cgroup_fd, &key);
	if (r == 0)
		r = loader_open_pins(&a->ld, st->pins, key);
	if (r == 0) {
		struct allow_maps maps = loader_allow_maps(&a->ld);

		a->ld.quota = (struct allow_quota){ .max_entries = (__u32)o->max_entries,
						    .max_cidrs = (__u32)o->max_cidrs };
		dests_init(&a->ld.dests, a->ld.maps[LOADER_DEST_COUNTS],
			   a->ld.maps[LOADER_DEST_TALLY], a->ld.key, EGRET_DESTS_DEFAULT, effective_upload_limit(o->upload_limit, &o->policy));
		r = allow_recount(&maps);
		if (r == 0)
			r = dests_recover(&a->ld.dests);
	}
	if (r < 0)
		return log_error_errno(r, "open the pinned maps in %s", st->pins);
	r = hostaddr_open(&a->host, a->ld.maps[LOADER_HOST4], a->ld.maps[LOADER_HOST6],
			  a->ld.key);
	if (r < 0)
		return log_error_errno(r, "read this host's addresses (rtnetlink, local table)");
	attempt_feed_reopen(a);
	log_info("attempt %s: re-adopted: cgroup %s, DNS proxy on port %u again",
		 st->id, st->cgroup, st->dns_port);
	return 0;
}

/* What attempt_init() and attempt_new() set in zeroed memory. */
static void attempt_init_zeroed(struct attempt *a)
{
	a->state_fd = a->cgroup_fd = a->uid_lock_fd = -1;
	a->keeper_pidfd = a->exit_fd = -1;
	a->limits.feed_fd = a->limits.tree_fd = -1;
	a->feed.log.fd = a->ev.log.fd = -1;
	a->host.src.fd = -1;
	a->requests.timer.fd = -1;
	request_inbox_init(&a->inbox);
	loader_init(&a->ld);
}

void attempt_init(struct attempt *a)
{
	memset(a, 0, sizeof(*a));
	attempt_init_zeroed(a);
}

struct attempt *attempt_new(void)
{
	/* Fresh zero pages: only the pages a start writes are faulted in
	 * (issue 42). A struct attempt is 72 KiB, most of it tables that
	 * fill only as COMMAND is refused, and clearing it on the stack
	 * faulted in every page. */
	struct attempt *a = pages_zeroed(sizeof(*a));

	if (a)
		attempt_init_zeroed(a);
	return a;
}

void attempt_free(struct attempt *a)
{
	pages_free(a, sizeof(*a));
}

int attempt_close(struct attempt *a)
{
	/* What this egret knows that spares the teardown work: its counters,
	 * read once its cgroup is empty (no socket made: no socket to destroy
	 * and no entry of BPF's to forget), and its entries forgotten through
	 * the map fds it holds (a purge cut short leaves the work to the
	 * teardown, from the pins). */
	struct teardown_known known = {
		.counters_fd = a->ev.counters_fd, .counters_key = a->ev.counters_key,
	};
	int r = 0;

	if (a->cgroup_made)
		teardown_count_sockets(a->st.cgroup, &known);
	known.forgotten = a->pins_made && a->ld.key &&
			  loader_forget(&a->ld, known.no_sockets) == 0;

	if (a->cgroup_fd >= 0)
		close(a->cgroup_fd);
	if (a->keeper_pidfd >= 0)
		close(a->keeper_pidfd);
	if (a->cgroup_made || a->pins_made)
		r = attempt_teardown(a->cgroup_made ? a->st.cgroup : "",
				     a->pins_made ? a->st.pins : "", &known);
	dns_proxy_close(a->dns);
	a->dns = NULL;
	request_inbox_close(&a->inbox, a->st.id);
	request_log_close(&a->requests);
	events_close(&a->ev);
	feed_close(&a->feed);
	if (a->limits.feed_fd >= 0)
		close(a->limits.feed_fd);
	if (a->limits.tree_fd >= 0)
		close(a->limits.tree_fd);
	hostaddr_close(&a->host);
	loader_destroy(&a->ld);
	if (a->exit_fd >= 0)
		close(a->exit_fd);
	/* The manifest of the attempt whose record this is (not of another
	 * that holds the id this one asked for). */
	if (a->state_fd >= 0)
		limits_remove(a->st.id);
	/* Keep the record if anything stayed behind, so gc retries. */
	if (r == 0 && a->state_fd >= 0)
		r = state_remove(a->st.id);
	if (a->state_fd >= 0)
		close(a->state_fd);
	preflight_uid_unlock(a->uid_locked, a->uid_lock_fd);
	return r;
}
