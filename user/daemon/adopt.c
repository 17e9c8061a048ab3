// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * daemon/adopt.c - egretd's attempts taken back (daemon/adopt.h): the
 * options egretd kept for each, the records of those nobody serves, and
 * the re-adopter that runs one to its end; where its caller comes back is
 * adopt_hub.c's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "attempt/cgroup.h"
#include "attempt/command.h"
#include "attempt/gc.h"
#include "attempt/limits.h"
#include "attempt/preflight.h"
#include "attempt/state.h"
#include "launch/world.h"
#include "daemon/adopt.h"
#include "daemon/adopt_impl.h"
#include "daemon/metrics.h"
#include "daemon/peer.h"
#include "daemon/reply.h"
#include "lib/exit.h"
#include "lib/fdpass.h"
#include "lib/atomic_file.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/trust.h"
#include "lib/util.h"

#define ARGV_FILE_MAX	(1 << 20)
#define TAKE_TRIES		20	/* 50 ms apart: a record's lock a gc holds */
#define KEEPER_EXIT_WAIT_MS	2000	/* a keeper that no longer gives its fds: exiting */

/* ---- the options, kept ------------------------------------------- */

struct argv_words {
	int argc;
	char *const *argv;
};

static int fill_argv(FILE *f, const void *ctx)
{
	const struct argv_words *w = ctx;

	for (int i = 0; i < w->argc; i++)
		if (fwrite(w->argv[i], 1, strlen(w->argv[i]) + 1, f) != strlen(w->argv[i]) + 1)
			return -EIO;
	return 0;
}

int daemon_adopt_save_argv(const char *id, int argc, char *const *argv)
{
	struct argv_words w = { argc, argv };
	char path[PATH_MAX];
	int r = private_dir_ensure(EGRETD_ATTEMPT_DIR);

	if (r == 0)
		r = state_file_path(id, "argv", path, sizeof(path));
	if (r < 0)
		return r;
	return atomic_file_write(path, 0600, fill_argv, &w);
}

/* The words of @id's argv file, into *@ret_argv (one allocation with the
 * text after the pointers, NULL-terminated). Their number, or -errno. */
static int load_argv(const char *id, char ***ret_argv)
{
	char path[PATH_MAX], *text, **argv;
	_cleanup_close_ int fd = -1;
	struct stat st;
	int argc = 0;
	size_t at;

	if (state_file_path(id, "argv", path, sizeof(path)) < 0)
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	/* Root's own file, as egretd made it. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077) || st.st_size <= 0 || st.st_size > ARGV_FILE_MAX)
		return -EINVAL;
	/* At most one word per byte, then NULL; the text after them. */
	argv = malloc(((size_t)st.st_size + 1) * sizeof(char *) + (size_t)st.st_size);
	if (!argv)
		return -ENOMEM;
	text = (char *)(argv + st.st_size + 1);
	if (read(fd, text, (size_t)st.st_size) != st.st_size ||
	    text[st.st_size - 1] != '\0') {
		free(argv);
		return -EINVAL;
	}
	for (at = 0; at < (size_t)st.st_size; at += strlen(text + at) + 1)
		argv[argc++] = text + at;
	argv[argc] = NULL;
	*ret_argv = argv;
	return argc;
}

/* ---- finding what to re-adopt ------------------------------------- */

int daemon_adopt_find(const char *instance, struct adopt_candidate *ret, size_t max)
{
	_cleanup_(closedirp) DIR *d = opendir(EGRET_RUN_DIR);
	struct dirent *de;
	size_t n = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)) && n < max) {
		_cleanup_close_ int fd = -1;
		struct attempt_state st;

		if (de->d_name[0] == '.')
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 || state_is_live(fd) != 0 || state_read_fd(fd, &st) < 0 ||
		    !st.daemon || strcmp(st.instance, instance))
			continue;
		memcpy(ret[n].id, st.id, sizeof(ret[n].id));
		ret[n++].caller = st.caller;
	}
	return (int)n;
}

/* ---- the re-adopter ----------------------------------------------- */

struct adopter {
	struct attempt_control ctl;	/* .src: the hub, where callers come back */
	struct loop_source client;	/* the caller's connection, once back */
	struct loop_source timer;	/* ADOPT_CLIENT_GRACE_S without one */
	const char *cgroup;
};

/* A pidfd for @pid if it is still a process of the attempt's @cgroup
 * (a pid from the record may have been reused since), else -1. */
static int member_pidfd(pid_t pid, const char *cgroup)
{
	char mnt[PATH_MAX], mine[PATH_MAX], full[PATH_MAX];
	int pidfd;

	if (pid <= 0)
		return -1;
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return -1;
	if (cgroup2_of_pid(pid, pidfd, mine, sizeof(mine)) < 0 ||
	    daemon_cgroup2_mount(mnt, sizeof(mnt)) < 0 ||
	    path_fmt(full, sizeof(full), "%s%s", mnt, mine) < 0 || strcmp(full, cgroup) ||
	    syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0) {
		close(pidfd);
		return -1;
	}
	return pidfd;
}

static void on_adopted_client(struct loop_source *src, uint32_t events)
{
	struct adopter *a = container_of(src, struct adopter, client);

	daemon_client_event(&a->ctl, src, events);
}

/* A caller back: its connection is the attempt's from now (the newest,
 * should it come twice), and its @stdio (or NULL) the pty's terminal if
 * COMMAND has one. */
static void take_client(struct adopter *a, int fd, int *stdio)
{
	if (stdio && a->ctl.term)
		terminal_attach(a->ctl.term, stdio);
	for (int i = 0; stdio && i < 3; i++)
		if (stdio[i] >= 0)
			close(TAKE_FD(stdio[i]));
	if (a->client.fd >= 0) {
		if (a->ctl.loop)
			loop_unwatch(a->ctl.loop, &a->client);
		close(a->client.fd);
	}
	a->client = (struct loop_source){ .fd = fd, .fn = on_adopted_client };
	if (a->ctl.loop && loop_watch(a->ctl.loop, &a->client, EPOLLIN) < 0)
		log_warn("cannot watch the caller's connection");
	if (a->timer.fd >= 0)
		timerfd_arm_ms(a->timer.fd, 0, false);	/* disarmed */
}

/* Every caller handed over so far (the hub does not block). */
static void on_hub(struct loop_source *src, uint32_t events)
{
	struct adopter *a = container_of(src, struct adopter, ctl.src);
	int conn;

	(void)events;
	while ((conn = accept4(src->fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		int fds[FDS_MAX], n = fds_recv(conn, fds, 4);

		close(conn);
		if (n == 1 || n == 4)
			take_client(a, fds[0], n == 4 ? fds + 1 : NULL);
		else
			for (int i = 0; i < n; i++)
				close(fds[i]);
	}
}

static void on_no_client(struct loop_source *src, uint32_t events)
{
	struct adopter *a = container_of(src, struct adopter, timer);
	uint64_t ticks;

	(void)events;
	if (read(src->fd, &ticks, sizeof(ticks)) < 0 || a->client.fd >= 0)
		return;
	log_warn("no caller came back within %d s: ending the attempt", ADOPT_CLIENT_GRACE_S);
	if (a->ctl.child_pidfd >= 0)
		syscall(SYS_pidfd_send_signal, a->ctl.child_pidfd, SIGKILL, NULL, 0);
	else
		cgroup_kill_remove(a->cgroup, 0);
}

/* COMMAND has ended, and the record still stands: a caller on its way
 * back (handed over but not taken yet, or still reconnecting) gets the
 * status, if it comes within ADOPT_STATUS_GRACE_S. */
static void on_ended(struct attempt_control *ctl)
{
	struct adopter *a = container_of(ctl, struct adopter, ctl);
	struct pollfd p = { .fd = ctl->src.fd, .events = POLLIN };

	if (ctl->src.fd < 0)
		return;
	ctl->loop = NULL;	/* the loop is gone: nothing more to watch */
	on_hub(&ctl->src, POLLIN);
	if (a->client.fd < 0 && poll(&p, 1, ADOPT_STATUS_GRACE_S * 1000) > 0)
		on_hub(&ctl->src, POLLIN);
}

/* The status, before the teardown (attempt/supervise.h: finished), to a
 * caller that came back. */
static void on_finished(struct attempt_control *ctl, int status)
{
	struct adopter *a = container_of(ctl, struct adopter, ctl);

	metrics_attempt_finished(status);
	if (a->client.fd < 0)
		return;
	daemon_send_exit(a->client.fd, status);
	daemon_linger_close(TAKE_FD(a->client.fd));
}

/* COMMAND stopped at its pty's suspend key: a caller back is told. */
static void on_suspended(struct attempt_control *ctl)
{
	struct adopter *a = container_of(ctl, struct adopter, ctl);

	if (a->client.fd >= 0)
		daemon_send_signal(a->client.fd, SIGTSTP);
	else
		attempt_control_signal(ctl, SIGCONT);	/* nobody to stop instead */
}

/* The keeper's fd @fd if it is a pty's master (what the record says it
 * holds), else -1. */
static int pty_master_of(int keeper_pidfd, int fd)
{
	int r = (int)syscall(SYS_pidfd_getfd, keeper_pidfd, fd, 0);
	struct stat st;
	int n;

	/* A master answers TIOCGPTN (its slave's number); a slave does not. */
	if (r >= 0 && (fstat(r, &st) < 0 || !S_ISCHR(st.st_mode) || ioctl(r, TIOCGPTN, &n) < 0)) {
		close(r);
		r = -1;
	}
	return r;
}

/*
 * The DNS listeners the keeper held while nobody served the attempt
 * (state.h); one it no longer has is bound anew (dns/proxy.h). One it
 * held and no longer gives means it is exiting - COMMAND ended as we
 * looked, its status in the exit file - and binding anew would find the
 * port still taken by the dying keeper: then the attempt is one whose
 * COMMAND has ended (keeper_pidfd -1), once the keeper is gone.
 */
static void take_held_dns(struct attempt_adoptee *who)
{
	struct pollfd p = { .fd = who->keeper_pidfd, .events = POLLIN };
	bool lost = false;

	for (int i = 0; i < STATE_HELD_DNS && who->keeper_pidfd >= 0; i++) {
		if (who->st.held_dns[i] <= 2)
			continue;
		who->dns_fds[i] = (int)syscall(SYS_pidfd_getfd, who->keeper_pidfd,
					       who->st.held_dns[i], 0);
		lost = lost || who->dns_fds[i] < 0;
	}
	if (!lost || poll(&p, 1, KEEPER_EXIT_WAIT_MS) <= 0)
		return;
	for (int i = 0; i < STATE_HELD_DNS; i++)
		if (who->dns_fds[i] >= 0)
			close(TAKE_FD(who->dns_fds[i]));
	close(TAKE_FD(who->keeper_pidfd));
}

/* The attempt's parts from what is left of it: the record's lock taken
 * in *@who. 1 when there is one to re-adopt, 0 when another egretd has
 * it, or -errno. */
static int take_attempt(const char *instance, const char *id,
			struct attempt_adoptee *who)
{
	_cleanup_close_ int fd = adopt_record_open(id, O_RDWR);
	char path[PATH_MAX];

	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	/* A gc looking at the record holds its lock for an instant; another
	 * re-adopter, or a live supervisor, holds it for good. */
	for (int i = 0; i < TAKE_TRIES && flock(fd, LOCK_EX | LOCK_NB) < 0; i++) {
		if (errno != EWOULDBLOCK || i + 1 == TAKE_TRIES)
			return 0;
		poll(NULL, 0, 50);
	}
	if (state_read_fd(fd, &who->st) < 0 ||
	    !who->st.daemon || strcmp(who->st.instance, instance))
		return 0;
	who->state_fd = TAKE_FD(fd);
	/* Served again: a gc's count towards removing it starts over. */
	if (who->st.unserved) {
		who->st.unserved = 0;
		state_update(who->state_fd, &who->st);
	}
	who->keeper_pidfd = member_pidfd(who->st.keeper, who->st.cgroup);
	who->command_pidfd = member_pidfd(who->st.command, who->st.cgroup);
	take_held_dns(who);
	if (who->keeper_pidfd >= 0 && who->st.held_pty > 2)
		who->pty_fd = pty_master_of(who->keeper_pidfd, who->st.held_pty);
	if (state_file_path(id, "exit", path, sizeof(path)) == 0)
		who->exit_fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	return 1;
}

/* Has the process behind @pidfd ended (a pidfd polls readable then)? */
static bool pidfd_exited(int pidfd)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

/* What cannot be re-adopted goes now, rather than at every scan: its
 * processes, cgroup, pins and record (the record stays if something of
 * it does, for gc). */
static void remove_attempt(struct attempt_adoptee *who, const char *id)
{
	if (attempt_teardown(who->st.cgroup, who->st.pins, NULL) == 0) {
		if (who->st.uid >= 0)
			preflight_uid_prune((uid_t)who->st.uid);
		limits_remove(id);
		state_remove(id);
	}
	close(TAKE_FD(who->state_fd));
	if (who->keeper_pidfd >= 0)
		close(TAKE_FD(who->keeper_pidfd));
	if (who->exit_fd >= 0)
		close(TAKE_FD(who->exit_fd));
	for (int i = 0; i < STATE_HELD_DNS; i++)
		if (who->dns_fds[i] >= 0)
			close(TAKE_FD(who->dns_fds[i]));
	if (who->pty_fd >= 0)
		close(TAKE_FD(who->pty_fd));
}

/* Listen for the caller's return (a grace of ADOPT_CLIENT_GRACE_S) and
 * set up the control the re-adopted attempt runs under; the attempt is
 * ended if it cannot be waited for. */
static void adopter_start(struct adopter *a, const char *instance, const char *id,
			  struct attempt_adoptee *who, struct attempt_world *world)
{
	a->cgroup = who->st.cgroup;
	a->ctl = (struct attempt_control){ .src = { .fn = on_hub }, .child_pidfd = -1,
		.uid_lock_fd = -1, .world = world, .caller = who->st.caller,
		.instance = instance,
		.extra = &a->timer, .ended = on_ended, .finished = on_finished,
		.suspended = on_suspended, .report = metrics_attempt_report,
		.json_fd = STDOUT_FILENO };
	a->ctl.src.fd = adopt_hub_listen(id);
	a->timer = (struct loop_source){ .fn = on_no_client,
		.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC) };
	if (a->ctl.src.fd < 0 || a->timer.fd < 0 ||
	    timerfd_arm_ms(a->timer.fd, ADOPT_CLIENT_GRACE_S * 1000, false) < 0) {
		log_error_errno(a->ctl.src.fd < 0 ? a->ctl.src.fd : -errno,
				"attempt %s: listen for its caller", id);
		cgroup_kill_remove(who->st.cgroup, 0);
	}
}

/* The attempt ran to its end with @status: a caller back is told, and
 * what the adopter and the attempt's remains held is closed. */
static void adopter_end(struct adopter *a, struct attempt_adoptee *who, int status)
{
	if (a->client.fd >= 0) {
		daemon_send_exit(a->client.fd, status);
		daemon_linger_close(a->client.fd);
	}
	if (a->ctl.src.fd >= 0)
		close(a->ctl.src.fd);
	if (a->timer.fd >= 0)
		close(a->timer.fd);
	/* The keeper's pidfd (world.pidfd) went with the attempt. */
	if (who->command_pidfd >= 0)
		close(who->command_pidfd);
	for (int i = 0; i < STATE_HELD_DNS; i++)
		if (who->dns_fds[i] >= 0)
			close(who->dns_fds[i]);
	if (who->pty_fd >= 0)
		close(who->pty_fd);
}

int daemon_adopt(const char *instance, const char *id, int report_fd)
{
	struct attempt_adoptee who = { .state_fd = -1, .keeper_pidfd = -1,
				       .command_pidfd = -1, .exit_fd = -1,
				       .dns_fds = { -1, -1, -1, -1 }, .pty_fd = -1 };
	struct adopter a = { .client = { .fd = -1 }, .timer = { .fd = -1 } };
	struct attempt_world world = WORLD_NONE;
	_cleanup_free_ char **argv = NULL;
	int argc, r, status;

	r = take_attempt(instance, id, &who);
	if (r <= 0)
		return r < 0 ? EXIT_SETUP : 0;
	if (!who.st.keeper) {
		/* Its process died before COMMAND started: nobody waits for
		 * it (its caller saw its connection close, 125). */
		log_info("attempt %s was cut short during its set-up: removing what it left", id);
		remove_attempt(&who, id);
		return EXIT_SETUP;
	}
	argc = load_argv(id, &argv);
	r = who.keeper_pidfd >= 0 ? world_read(&world, who.keeper_pidfd, who.st.keeper) : 0;
	if (r < 0 && pidfd_exited(who.keeper_pidfd)) {
		/* COMMAND ended as we looked: its status is in the file. */
		close(TAKE_FD(who.keeper_pidfd));
		r = 0;
	}
	if (argc < 0 || r < 0) {
		log_error("attempt %s cannot be re-adopted (%s): removing it", id,
			  argc < 0 ? "its options are gone" : "its namespaces are gone");
		remove_attempt(&who, id);
		return EXIT_SETUP;
	}
	metrics_attempt_begin(report_fd, who.st.repo, 0);
	adopter_start(&a, instance, id, &who, &world);
	log_info("attempt %s: re-adopting it for uid %u (COMMAND %s)", id,
		 (unsigned int)who.st.caller, who.keeper_pidfd >= 0 ? "runs" : "has ended");
	status = attempt_command_readopt(argc, argv, &who, &a.ctl);
	if (who.state_fd >= 0) {
		/* Refused before it was taken over (its options or the policy
		 * no longer read): nothing serves it, so it goes now rather
		 * than at every scan. */
		log_error("attempt %s cannot be re-adopted: removing it", id);
		remove_attempt(&who, id);
	}
	adopter_end(&a, &who, status);
	return status;
}
