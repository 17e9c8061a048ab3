// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attempt/run.c - `egret run`: one attempt from start to teardown. The
 * attempt is made (attempt.h), COMMAND started in it and served until it
 * exits (supervise.h), then everything is removed.
 *
 * Every step before exec fails closed: COMMAND does not run, egret exits
 * EXIT_SETUP with one line naming the step, the error and the fix.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include "attempt/attempt.h"
#include "attempt/cgroup.h"
#include "launch/environ.h"
#include "launch/keeper.h"
#include "launch/landlock.h"
#include "launch/launch.h"
#include "attempt/options.h"
#include "attempt/preflight.h"
#include "attempt/receipt.h"
#include "attempt/run.h"
#include "attempt/state.h"
#include "attempt/supervise.h"
#include "launch/terminal.h"
#include "launch/user.h"
#include "dns/proxy.h"
#include "lib/exit.h"
#include "lib/log.h"
#include "lib/paths.h"
#include "lib/trust.h"
#include "lib/util.h"
#include "policy/policy.h"
#include "requests/ask.h"

_Static_assert(STATE_HELD_DNS == DNS_PROXY_LISTENERS, "one record entry per listener");
_Static_assert(LAUNCH_MAX_HOLD_FDS >= DNS_PROXY_LISTENERS + 1, "the listeners and the pty");

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

/* COMMAND's environment (launch/environ.h), and where it finds its limits
 * (attempt/limits.h), set last: over anything of the caller's by that
 * name. Logs its one-line failure. */
static int command_environ(const struct attempt *a, const struct run_opts *o,
			   const struct launch_user *user, bool pty, char *const *from_env,
			   char ***ret)
{
	char limits_txt[PATH_MAX + 16], limits_json[PATH_MAX + 24], denials[PATH_MAX + 16];
	char request[PATH_MAX + 16];
	struct environ_opts env = o->env;
	int r;

	if (a->limits.txt[0]) {
		if (env.nset + ENVIRON_EGRET_VARS > ARRAY_SIZE(env.set) ||
		    path_fmt(limits_txt, sizeof(limits_txt), "EGRET_LIMITS=%s", a->limits.txt) < 0 ||
		    path_fmt(limits_json, sizeof(limits_json), "EGRET_LIMITS_JSON=%s",
			     a->limits.json) < 0 ||
		    path_fmt(denials, sizeof(denials), "EGRET_DENIALS=%s", a->limits.denials) < 0) {
			log_error("COMMAND's environment: no room for EGRET_LIMITS");
			return -E2BIG;
		}
		env.set[env.nset++] = limits_txt;
		env.set[env.nset++] = limits_json;
		env.set[env.nset++] = denials;
	}
	if (a->limits.txt[0] && a->inbox.path[0]) {
		if (path_fmt(request, sizeof(request), "%s=%s", ASK_ENV, a->inbox.path) < 0)
			return log_error_errno(-E2BIG, "COMMAND's environment: no room for %s",
					       ASK_ENV);
		env.set[env.nset++] = request;
	}
	r = environ_build(from_env, user, &env, pty, ret);
	if (r < 0)
		log_error_errno(r, "COMMAND's environment (at most %d variables)", ENVIRON_MAX_VARS);
	return r;
}

/* COMMAND in the attempt's cgroup, with its terminal and environment.
 * Returns 0, or the status egret exits with (COMMAND did not start). */
static int start_command(struct attempt *a, const struct run_opts *o,
			 const struct launch_user *user,
			 const struct landlock_plan *landlock, struct terminal *term,
			 char *const *from_env, struct launch_child *ret)
{
	struct launch_error lerr = {};
	struct launch launch;
	char self[PATH_MAX];
	char **envp = NULL;
	struct winsize size = { .ws_col = o->pty_cols, .ws_row = o->pty_rows };
	int r;

	r = terminal_open(term, o->pty, user->set ? user->uid : (uid_t)-1,
			  o->pty_cols ? &size : NULL);
	if (r < 0) {
		log_error_errno(r, "give COMMAND a terminal of its own (a pseudo-terminal; is devpts mounted?)");
		return EXIT_SETUP;
	}
	if (command_environ(a, o, user, term->pty, from_env, &envp) < 0)
		return EXIT_SETUP;
	launch = (struct launch){ .argv = o->argv, .cgroup_fd = a->cgroup_fd,
				  .terminal = term, .landlock = *landlock,
				  .envp = envp, .chdir = o->chdir,
				  .user = *user, .nkeep_fds = o->nkeep_fds,
				  .world = o->world, .exit_fd = a->exit_fd > 2 ? a->exit_fd : 0,
				  .view = o->view_plan, .umask = o->umask,
				  .nested_sandbox = o->nested_sandbox };
	memcpy(launch.keep_fds, o->keep_fds, sizeof(o->keep_fds));
	/* Under a keeper, the DNS proxy's port stays taken while egretd is
	 * down (state.h: held_dns). */
	if (a->dns)
		dns_proxy_listen_fds(a->dns, launch.hold_fds);
	/* And COMMAND's pty: egretd's restart is no hangup. */
	if (term->pty)
		launch.hold_fds[DNS_PROXY_LISTENERS] = term->master;
	/* Mounted over, the start directory is another one: COMMAND goes
	 * there by its path, into the view. */
	if (o->view)
		launch.chdir = o->view_plan.dir;
	/* In a caller's mounts of its own, the limits directory goes along
	 * (attempt.c: attempt_limits); without its clone, no variable
	 * names it. */
	launch.view.limits_tree = a->limits.tree_fd;
	launch.view.limits_id = a->st.id;
	r = launch_spawn(&launch, ret, &lerr);
	free(envp);
	if (r == 0) {
		a->keeper_pidfd = ret->keeper_pidfd;
		return 0;
	}
	if (r == -ECHILD && lerr.step == LAUNCH_STEP_BORN) {
		/* Linux 6.x before the fix of cgroup_post_fork() compares the
		 * kill count of the new process's cgroup with that of its
		 * parent's: a parent in a cgroup that once got cgroup.kill
		 * loses every child it starts elsewhere (DEPLOYMENT.md). */
		if (cgroup2_self(self, sizeof(self)) < 0)
			snprintf(self, sizeof(self), "?");
		log_error("start command: its first process was killed as it was born into cgroup %s; on this kernel that happens to every clone3(CLONE_INTO_CGROUP) from a cgroup that once received cgroup.kill, as egret's own (%s) may have: start egret from a fresh cgroup (docs/DEPLOYMENT.md, \"A reused cgroup\")",
			  a->st.cgroup, self);
		return EXIT_SETUP;
	}
	if (r == -ECHILD && lerr.step == LAUNCH_STEP_EXEC) {
		log_error_errno(-lerr.err, "%s", o->argv[0]);
		return lerr.err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC;
	}
	if (r == -ECHILD) {
		log_error_errno(-lerr.err, "start command: %s", launch_step_name(lerr.step));
		return EXIT_SETUP;
	}
	if (r == -ENOSYS || r == -EINVAL || r == -E2BIG)
		log_error_errno(r, "start command in cgroup %s (clone3 with CLONE_INTO_CGROUP needs Linux 5.7+)",
				a->st.cgroup);
	else
		log_error_errno(r, "start command in cgroup %s", a->st.cgroup);
	return EXIT_SETUP;
}

/* The built-in default policy opens hosts nobody wrote down: said on
 * stderr, one line (not with -q; egret check shows what it opens). */
static void note_builtin_policy(void)
{
	log_warn("note: no %s; using the built-in default policy: Debian and Ubuntu registries and the git remote (egret check shows it)",
		 POLICY_DEFAULT_PATH);
}

/* For egretd: the file COMMAND's keeper writes its status to, before
 * COMMAND starts. */
static int open_exit_file(struct attempt *a)
{
	char path[PATH_MAX];
	int r = private_dir_ensure(EGRETD_ATTEMPT_DIR);

	if (r == 0)
		r = state_file_path(a->st.id, "exit", path, sizeof(path));
	if (r < 0)
		return log_error_errno(r, "prepare %s", EGRETD_ATTEMPT_DIR);
	a->exit_fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (a->exit_fd < 0)
		return log_error_errno(-errno, "create %s", path);
	/* Its block now: the keeper's write must never need one. */
	r = keeper_status_reserve(a->exit_fd);
	if (r < 0)
		return log_error_errno(r, "reserve room for COMMAND's status in %s (an egretd restarted while COMMAND runs could not tell how it ended)",
				       path);
	return 0;
}

/* For egretd: what a re-adopting egretd needs, in the record, once
 * COMMAND runs (state.h). */
static int record_daemon(struct attempt *a, const struct launch_child *child,
			 const struct terminal *term)
{
	int r;

	a->st.keeper = child->keeper_pid;
	a->st.command = child->pid;
	a->st.dns_port = dns_proxy_port(a->dns);
	dns_proxy_listen_fds(a->dns, a->st.held_dns);
	for (int i = 0; i < STATE_HELD_DNS; i++)
		if (a->st.held_dns[i] < 3)
			a->st.held_dns[i] = 0;
	a->st.held_pty = term->pty && term->master > 2 ? term->master : 0;
	r = state_update(a->state_fd, &a->st);
	if (r < 0)
		return log_error_errno(r, "update record of attempt %s", a->st.id);
	return 0;
}

/* Take the attempt down: the status to exit with (125 if something of it
 * stayed behind, where COMMAND itself succeeded). */
static int attempt_finish(struct attempt *a, int status)
{
	int r = attempt_close(a);

	if (r < 0 && status == 0)
		return EXIT_SETUP;
	if (r == 0 && a->st.id[0])
		log_info("attempt %s: exit status %d; cgroup, pins and record removed",
			 a->st.id, status);
	return status;
}

int attempt_run(const struct run_opts *o, const struct launch_user *user,
		const struct landlock_plan *landlock,
		struct attempt_control *control)
{
	struct launch_child child = { .pidfd = -1, .keeper_pidfd = -1 };
	struct attempt *a = attempt_new();
	struct terminal term;
	_cleanup_close_ int sigfd = -1;
	int status = EXIT_SETUP;
	sigset_t old;

	if (!a) {
		log_error_errno(-ENOMEM, "attempt");
		if (control && control->finished)
			control->finished(control, status);
		return status;
	}
	if (control && control->uid_lock_fd >= 0) {
		a->uid_lock_fd = control->uid_lock_fd;
		a->uid_locked = user->uid;
		control->uid_lock_fd = -1;
	}
	terminal_init(&term);
	sigfd = signals_take(&old);
	if (sigfd < 0) {
		log_error_errno(sigfd, "signalfd");
		goto out;
	}

	/* egretd's from its record's first line: another egretd, or an
	 * egret run's gc, leaves it alone (attempt/gc.h). */
	if (control) {
		a->st.daemon = 1;
		a->st.caller = control->caller;
		a->st.receipt = control->receipt;
		snprintf(a->st.instance, sizeof(a->st.instance), "%s", control->instance);
	}
	if (attempt_open(a, o, user) < 0 || (control && open_exit_file(a) < 0))
		goto out;
	if (o->builtin_policy)
		note_builtin_policy();
	/* COMMAND's environment starts from egret's own, or from egretd's
	 * caller's: never the other way round. */
	status = start_command(a, o, user, landlock, &term,
			       control && control->env ? control->env : environ,
			       &child);
	if (status != 0)
		goto out;
	if (control && record_daemon(a, &child, &term) < 0) {
		status = EXIT_SETUP;
		goto out;
	}
	if (control && control->started)
		control->started(control, a->st.id);

	status = supervise(a, o, child.pid, child.pidfd, sigfd, &term, control);
	if (status < 0) {
		log_error_errno(status, "wait for command");
		status = EXIT_SETUP;
	}
	attempt_receipt(a, o, status, false);
out:
	if (child.pidfd >= 0)
		close(child.pidfd);
	terminal_close(&term);
	if (control && control->finished)
		control->finished(control, status);
	status = attempt_finish(a, status);
	attempt_free(a);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return status;
}

int attempt_readopt(const struct run_opts *o, const struct launch_user *user,
		    struct attempt_adoptee *who, struct attempt_control *control)
{
	_cleanup_close_ int sigfd = -1;
	struct terminal term;
	struct attempt a;
	int status = EXIT_SETUP, r;
	sigset_t old;
	pid_t other;

	attempt_init(&a);
	terminal_init(&term);
	a.exit_fd = TAKE_FD(who->exit_fd);
	a.keeper_pidfd = TAKE_FD(who->keeper_pidfd);
	sigfd = signals_take(&old);
	if (sigfd < 0) {
		log_error_errno(sigfd, "signalfd");
		close(TAKE_FD(who->state_fd));
		goto out;
	}
	/* The uid stays the attempt's: its lock went with the dead egret. */
	a.uid_locked = user->uid;
	if (preflight_uid_lock(user->uid, &a.uid_lock_fd, &other) < 0)
		log_warn("warning: cannot lock uid %u again (egret pid %d holds it)",
			 (unsigned int)user->uid, (int)other);
	if (a.keeper_pidfd < 0) {
		/* COMMAND ended while nobody served it (or as its egret took
		 * the attempt down): its status, then whatever is left of the
		 * attempt removed, without serving it again. */
		a.st = who->st;
		a.state_fd = TAKE_FD(who->state_fd);
		a.cgroup_made = a.pins_made = true;
		r = keeper_read_status(a.exit_fd);
		if (r < 0)
			log_error("attempt %s ended while egretd was down, and how is not known",
				  a.st.id);
		status = r < 0 ? EXIT_SETUP : r;
		goto out;
	}
	if (attempt_reopen(&a, o, &who->st, TAKE_FD(who->state_fd), who->dns_fds) < 0)
		goto out;
	/* Its pty, as the keeper held it: relayed once its caller is back. */
	if (who->pty_fd >= 0)
		terminal_adopt(&term, TAKE_FD(who->pty_fd));
	status = supervise(&a, o, who->st.command, who->command_pidfd, sigfd, &term,
			   control);
	if (status < 0) {
		log_error_errno(status, "wait for command");
		status = EXIT_SETUP;
	}
	attempt_receipt(&a, o, status, true);
out:
	terminal_close(&term);
	if (control->ended)
		control->ended(control);
	if (control->finished)
		control->finished(control, status);
	status = attempt_finish(&a, status);
	if (sigfd >= 0)
		sigprocmask(SIG_SETMASK, &old, NULL);
	return status;
}
