// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attempt/command.c - `egret run`'s options made into one attempt's
 * settings (options, policy, user, the checks before anything is made),
 * then attempt/run.c runs it. Run as root by `egret run` itself, or by
 * egretd for an unprivileged caller, with options egretd writes.
 */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "attempt/command.h"
#include "attempt/effective.h"
#include "launch/landlock.h"
#include "launch/launch.h"
#include "attempt/options.h"
#include "attempt/preflight.h"
#include "attempt/run.h"
#include "launch/view.h"
#include "launch/world.h"
#include "enforce/unix_filter.h"
#include "lib/exit.h"
#include "lib/log.h"
#include "lib/util.h"
#include "requests/approvals.h"

/*
 * The policy file (or built-in default) resolved for --repo/--git-remote,
 * plus --allow; then the settings: command line over policy over defaults.
 */
static int run_settle_policy(struct run_opts *o)
{
	bool builtin;
	int r;

	/* Stamp before reading: a change in between is seen as a change. */
	if (o->repo && !(o->policy_file && !strcmp(o->policy_file, POLICY_FILE_NONE))) {
		r = approvals_path(o->policy_file, o->repo, o->approvals_path,
				   sizeof(o->approvals_path));
		if (r < 0) {
			log_error_errno(r, "approvals file for %s", o->repo);
			return -EINVAL;
		}
		approvals_changed(o->approvals_path, &o->approvals_stamp);
	}
	r = effective_policy(&(struct effective_in){
		.policy_file = o->policy_file, .repo = o->repo,
		.remote = o->has_remote ? &o->remote : NULL, .cli = &o->cli },
		&o->policy, &builtin);
	if (r < 0)
		return r;
	o->builtin_policy = builtin;
	/* The operator's policy may let a repository's attempts nest a
	 * sandbox of their own, as --nested-sandbox does. */
	o->nested_sandbox |= o->policy.nested_sandbox;
	effective_settings(&o->policy, &o->max_entries, &o->max_cidrs, &o->dns_min_ttl,
			   o->upstreams_csv, sizeof(o->upstreams_csv));
	return 0;
}

/* One line each, before COMMAND starts, rather than a failure deep
 * inside a tool: a start directory or HOME its user cannot use. A --chdir
 * it cannot use is refused (-EACCES): the operator asked for it. */
static int check_places(const struct run_opts *o, const struct launch_user *user)
{
	const char *home = o->env.home ? o->env.home : user->home[0] ? user->home : "/";
	char cwd[PATH_MAX] = "?";
	int bad = preflight_places(user, o->world, o->chdir, home);

	if (bad < 0)
		return 0;
	if ((bad & PLACES_CWD) && o->chdir) {
		log_error("refusing to run COMMAND: its user (uid %u) cannot read and search --chdir %s",
			  (unsigned int)user->uid, o->chdir);
		return -EACCES;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		snprintf(cwd, sizeof(cwd), "?");
	if (bad & PLACES_CWD)
		log_warn("warning: COMMAND's user (uid %u) cannot read and search %s, where it starts: tools that work in '.' fail there (--chdir a directory it can use)",
			 (unsigned int)user->uid, cwd);
	if (bad & PLACES_HOME)
		log_warn("warning: HOME %s is not a directory COMMAND's user (uid %u) can write: tools cannot keep caches and settings there (--home DIR, e.g. one prepared for the attempt)",
			 home, (unsigned int)user->uid);
	return 0;
}

/* Who COMMAND runs as: --user, or root only with --allow-root. */
static int choose_user(const struct run_opts *o, struct launch_user *user)
{
	int r;

	if (o->user) {
		r = launch_user_parse(o->user, user);
		if (r < 0)
			log_error("--user %s: %s", o->user,
				  r == -EPERM ? "that is root; use --allow-root instead" :
				  r == -ESRCH ? "no such user or group" :
						"want USER[:GROUP]");
		return r;
	}
	if (geteuid() == 0 && !o->allow_root) {
		log_error("refusing to run COMMAND as root: give --user USER (or --allow-root to accept that root can undo enforcement)");
		return -EPERM;
	}
	if (geteuid() == 0)
		log_warn("warning: COMMAND runs as root (capabilities dropped); a root process may still find ways to undo enforcement");
	return 0;
}

/* With a kept cache, npm's and Go's module caches go there too: first,
 * so that a --setenv of the same name still decides. */
static int cache_environ(struct run_opts *o)
{
	static const char *const defaults[] = VIEW_CACHE_ENV;
	const size_t n = ARRAY_SIZE(defaults);

	if (o->env.nset + n > ENVIRON_MAX_OPTS)
		return log_error_errno(-E2BIG, "--setenv: at most %d with --view-cache",
				       (int)(ENVIRON_MAX_OPTS - n));
	memmove(o->env.set + n, o->env.set, o->env.nset * sizeof(o->env.set[0]));
	for (size_t i = 0; i < n; i++)
		o->env.set[i] = defaults[i];
	o->env.nset += n;
	return 0;
}

/* @dir as the caller sees it: through egretd (--view-owner), walked with
 * the caller's own rights, never egretd's. */
static int open_callers_dir(const struct run_opts *o, const char *dir, const char *what)
{
	uid_t uid;
	gid_t gid;
	int fd;

	if (!o->view_owner)
		fd = world_open_dir(o->world, dir);
	else if (view_owner_parse(o->view_owner, &uid, &gid) < 0)
		return log_error_errno(-EINVAL, "--view-owner %s: want UID:GID, not root", o->view_owner);
	else
		fd = world_open_dir_as(o->world, dir, uid, gid);
	if (fd < 0)
		return log_error_errno(fd, "refusing to run COMMAND: its %s %s%s", what, dir,
				       fd == -EACCES ? " (its caller cannot reach it)" : "");
	return fd;
}

/* --view: the start directory, as the caller sees it, and its mapping
 * (with --view-cache, the cache's too). */
static int plan_view(struct run_opts *o, const struct launch_user *user)
{
	_cleanup_close_ int fd = -1;
	const char *dir = o->chdir;
	int r;

	if (!dir) {
		if (!getcwd(o->view_dir, sizeof(o->view_dir)))
			return log_error_errno(-errno, "--view: egret's working directory");
		dir = o->view_dir;
	}
	fd = open_callers_dir(o, dir, "start directory");
	if (fd < 0)
		return fd;
	r = view_prepare(&o->view_plan, fd, dir, o->view_owner, user, o->world);
	/* Its HOME is the view's own unless --home names another. */
	o->view_plan.own_home = o->env.home && !strcmp(o->env.home, VIEW_HOME);
	if (r == 0 && o->view_home_from && !o->view_plan.own_home) {
		log_error("--home-from fills the view's own HOME (%s): not with --home %s", VIEW_HOME,
			  o->env.home);
		r = -EINVAL;
	}
	if (r == 0 && o->view_home_from) {
		int home = open_callers_dir(o, o->view_home_from, "home template");

		r = home < 0 ? home : view_prepare_home(&o->view_plan, home, o->view_home_from);
		if (r < 0 && home >= 0)
			close(home);
	}
	if (r < 0 || !o->view_cache)
		return r;
	close(fd);
	fd = open_callers_dir(o, o->view_cache, "cache directory");
	if (fd < 0)
		return fd;
	r = view_prepare_cache(&o->view_plan, fd, o->view_cache);
	return r < 0 ? r : cache_environ(o);
}

/* Before anything is created: what COMMAND would start with. */
static int check_start(struct run_opts *o, const struct launch_user *user)
{
	char err[256];

	if (preflight_std_fds(err, sizeof(err)) < 0 ||
	    ((o->user || !o->allow_root) &&
	     preflight_daemon_sockets(o->user ? user : NULL, o->world, err, sizeof(err)) < 0)) {
		log_error("refusing to run COMMAND: %s", err);
		return -EPERM;
	}
	/* The view makes both places; its start directory is checked now,
	 * before anything is made (launch/view.h). */
	if (o->view)
		return plan_view(o, user);
	return user->set ? check_places(o, user) : 0;
}

/*
 * Abstract unix sockets have no owner or mode. Landlock's scope (ABI 6)
 * keeps COMMAND to the attempt's own; names the operator allows, or a
 * kernel without the scope, need the cgroup unix programs instead
 * (unix_filter.h).
 */
static int plan_confinement(struct run_opts *o, struct landlock_plan *landlock)
{
	if (o->nested_sandbox)
		landlock_plan_make_nested(landlock, landlock_abi(), o->nunix_names == 0);
	else
		landlock_plan_make(landlock, landlock_abi(), o->nunix_names == 0);
	o->unix_filter = o->nunix_names > 0 || landlock->abi < 6;
	if (o->unix_filter && !unix_filter_supported()) {
		o->unix_filter = false;
		if (o->nunix_names) {
			log_error("refusing to run COMMAND: --allow-unix needs the cgroup unix socket hooks (Linux 6.7+), which this kernel lacks");
			return -EOPNOTSUPP;
		}
		if (!o->allow_unconfined_unix) {
			log_error("refusing to run COMMAND: this kernel cannot keep it from abstract unix sockets outside the attempt (needs Landlock ABI 6, Linux 6.12+, or the cgroup unix hooks of 6.7+; it has Landlock ABI %d); --allow-unconfined-unix accepts that",
				  landlock->abi);
			return -EOPNOTSUPP;
		}
		log_warn("warning: COMMAND can reach abstract unix sockets outside the attempt (Landlock ABI %d < 6, no cgroup unix hooks)",
			 landlock->abi);
	}
	/* Said, never silent: without a domain only the uid checks stand
	 * between COMMAND and processes of its uid started later. */
	if (landlock->abi == 0)
		log_warn("warning: no Landlock domain on this kernel (needs ABI 2, Linux 5.19+): nothing but the uid checks keeps COMMAND from ptracing or signalling a process of its uid started later");
	return 0;
}

/*
 * Into the caller's world (world.h) before anything is made: its network
 * namespace for the DNS proxy and the host addresses, and its resolver
 * when the policy names none: its fd, to keep open while the attempt
 * lasts, in *@ret_fd. 0, or -errno after one line.
 */
static int enter_world(struct run_opts *o, const struct attempt_world *w,
		       char *resolv, size_t len, int *ret_fd)
{
	int r, fd;

	o->world = w;
	if (!world_foreign(w))
		return 0;
	r = world_enter_net(w);
	if (r < 0)
		return log_error_errno(r, "enter the caller's network namespace");
	if (!(w->differ & CLONE_NEWNS) || o->upstreams_csv[0])
		return 0;
	fd = world_open_resolv_conf(w, resolv, len);
	if (fd < 0)
		return log_error_errno(fd, "read the caller's /etc/resolv.conf for its DNS upstreams (or name them in the policy: dns.upstreams)");
	o->resolv_conf = resolv;
	*ret_fd = fd;
	return 0;
}

/* What a start and a re-adoption both need: options, policy, the
 * caller's world, COMMAND's user. 0 to go on; -1 when --help was
 * printed (exit 0); else the status to exit with. */
struct settled {
	struct run_opts o;
	struct launch_user user;
	char resolv[32];
	int resolv_fd;
};

static void settled_free(struct settled *s)
{
	if (s->o.view_plan.on)
		view_release(&s->o.view_plan);
	run_opts_free(&s->o);
	if (s->resolv_fd >= 0)
		close(s->resolv_fd);
}

static int settle(int argc, char **argv, const struct attempt_control *control,
		  struct settled *s)
{
	int r;

	/* A reader of egret's output that went away (`egret run --pty ... |
	 * head`) is an EPIPE to handle, never a signal that kills egret and
	 * leaves COMMAND unsupervised. COMMAND gets default dispositions. */
	signal(SIGPIPE, SIG_IGN);
	s->o.requests_json_fd = control ? control->json_fd : -1;
	s->o.receipt_fd = control && control->receipt ? control->receipt_fd : -1;
	r = run_opts_parse(argc, argv, &s->o);
	if (r != 0)
		return r > 0 ? -1 : EXIT_SETUP;
	r = run_settle_policy(&s->o);
	if (r < 0)
		return r == -EINVAL ? EXIT_POLICY : EXIT_SETUP;
	if (enter_world(&s->o, control ? control->world : NULL, s->resolv,
			sizeof(s->resolv), &s->resolv_fd) < 0 ||
	    choose_user(&s->o, &s->user) < 0)
		return EXIT_SETUP;
	if (s->o.view && !s->user.set) {
		log_error("--view needs --user: it maps the start directory's owner to COMMAND's uid");
		return EXIT_SETUP;
	}
	if (!s->o.view && (s->o.view_home_from || s->o.view_cache || s->o.view_owner)) {
		log_error("--%s needs --view: it is part of COMMAND's own mounts",
			  s->o.view_home_from ? "home-from" : s->o.view_cache ? "view-cache" : "view-owner");
		return EXIT_USAGE;
	}
	if (s->o.view && !s->o.env.home)
		s->o.env.home = VIEW_HOME;
	return 0;
}

int attempt_command(int argc, char **argv, struct attempt_control *control)
{
	_cleanup_(settled_free) struct settled s = { .resolv_fd = -1 };
	struct landlock_plan landlock;
	int r = settle(argc, argv, control, &s);

	if (r != 0)
		return r < 0 ? 0 : r;
	if (check_start(&s.o, &s.user) < 0 || plan_confinement(&s.o, &landlock) < 0)
		return EXIT_SETUP;
	return attempt_run(&s.o, &s.user, &landlock, control);
}

int attempt_command_readopt(int argc, char **argv, struct attempt_adoptee *who,
			    struct attempt_control *control)
{
	_cleanup_(settled_free) struct settled s = { .resolv_fd = -1 };
	/* The options egretd wrote when it started the attempt; the policy
	 * as it is now (as approvals would have made it meanwhile). */
	int r = settle(argc, argv, control, &s);

	if (r != 0)
		return r < 0 ? EXIT_SETUP : r;
	return attempt_readopt(&s.o, &s.user, who, control);
}
