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
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include "attempt/attempt.h"
#include "attempt/environ.h"
#include "attempt/landlock.h"
#include "attempt/launch.h"
#include "attempt/options.h"
#include "attempt/run.h"
#include "attempt/supervise.h"
#include "attempt/terminal.h"
#include "attempt/user.h"
#include "enforce/spare.h"
#include "lib/exit.h"
#include "lib/log.h"
#include "lib/util.h"
#include "policy/policy.h"

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
			 char *const *from_env, pid_t *ret_pid, int *ret_pidfd)
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
	r = environ_build(from_env, user, &o->env, term->pty, &envp);
	if (r < 0) {
		log_error_errno(r, "COMMAND's environment (at most %d variables)", ENVIRON_MAX_VARS);
		return EXIT_SETUP;
	}
	launch = (struct launch){ .argv = o->argv, .cgroup_fd = a->cgroup_fd,
				  .terminal = term, .landlock = *landlock,
				  .envp = envp, .chdir = o->chdir,
				  .user = *user, .nkeep_fds = o->nkeep_fds,
				  .world = o->world };
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
		const struct landlock_plan *landlock,
		struct attempt_control *control)
{
	struct attempt a;
	struct terminal term;
	_cleanup_close_ int sigfd = -1, pidfd = -1;
	int status = EXIT_SETUP;
	sigset_t old;
	pid_t pid;
	int r;

	attempt_init(&a);
	if (control && control->uid_lock_fd >= 0) {
		a.uid_lock_fd = control->uid_lock_fd;
		control->uid_lock_fd = -1;
	}
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
	/* COMMAND's environment starts from egret's own, or from egretd's
	 * caller's: never the other way round. */
	status = start_command(&a, o, user, landlock, &term,
			       control && control->env ? control->env : environ,
			       &pid, &pidfd);
	if (status != 0)
		goto out;

	/* COMMAND runs: leave the next attempt programs loaded in advance. */
	if (!o->no_spare)
		spare_make_async((__u32)o->max_entries, (__u32)o->max_cidrs);
	status = supervise(&a, o, pid, pidfd, sigfd, &term, control);
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
