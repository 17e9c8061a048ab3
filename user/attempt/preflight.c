// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <poll.h>
#include <unistd.h>

#include "attempt/preflight.h"
#include "enforce/tasks.h"
#include "launch/user.h"
#include "launch/world.h"
#include "lib/child.h"
#include "lib/lockfile.h"
#include "lib/paths.h"
#include "lib/trust.h"
#include "lib/util.h"

/* Daemons whose API socket grants root: a container they start for
 * COMMAND would run outside the attempt's cgroup. egretd's (its default
 * path, daemon/config.h) is one too: it refuses callers inside an
 * attempt, and COMMAND should never get as far as asking. */
static const char *const daemon_sockets[] = {
	"/run/egretd/egret.sock",
	"/run/docker.sock",
	"/var/run/docker.sock",
	"/run/containerd/containerd.sock",
	"/run/docker/containerd/containerd.sock",
	"/run/k3s/containerd/containerd.sock",
	"/run/podman/podman.sock",
	"/run/crio/crio.sock",
	"/var/run/crio/crio.sock",
	"/run/cri-dockerd.sock",
	"/run/buildkit/buildkitd.sock",
	"/run/libvirt/libvirt-sock",
	"/run/libvirt/virtqemud-sock",
	"/var/snap/lxd/common/lxd/unix.socket",
	"/var/lib/lxd/unix.socket",
	"/var/lib/incus/unix.socket",
	"/var/snap/microk8s/current/var/kubernetes/backend/kine.sock",
};

int preflight_std_fds(char *err, size_t errlen)
{
	static const char *const names[] = { "stdin", "stdout", "stderr" };

	for (int fd = 0; fd <= 2; fd++) {
		socklen_t len = sizeof(int);
		struct stat st;
		int domain;

		if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
			continue;
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 ||
		    domain != AF_UNIX) {
			snprintf(err, errlen,
				 "%s is a non-unix socket made outside the attempt: COMMAND could send through it unjudged (give it a pipe or a file)",
				 names[fd]);
			return -EPERM;
		}
	}
	return 0;
}

/* What a child asks as COMMAND's user, in the caller's world. */
struct as_user {
	const struct launch_user *user;
	const struct attempt_world *world;
	const char *dir, *home;
};

/* In the child (lib/child.h): 0, or 255 when it could not become @user. */
static int become(const struct as_user *a)
{
	if (world_enter_child(a->world) < 0 ||
	    child_become(a->user->uid, a->user->gid, (size_t)a->user->ngroups,
			 a->user->groups) < 0)
		return 255;
	return 0;
}

/* The index of the first daemon socket the user can write, plus 1; 0. */
static int reachable_child(void *arg)
{
	if (become(arg))
		return 255;
	for (size_t i = 0; i < ARRAY_SIZE(daemon_sockets); i++) {
		struct stat st;

		if (stat(daemon_sockets[i], &st) == 0 && S_ISSOCK(st.st_mode) &&
		    access(daemon_sockets[i], W_OK) == 0)
			return (int)i + 1;
	}
	return 0;
}

/*
 * In a child that has become @user, can the socket at each path be
 * written (connected to)? access() as that user is the kernel's own
 * answer: owner, groups, mode and ACLs, and search permission on every
 * directory above. Returns the index of the first reachable socket, or -1.
 */
static int first_reachable(const struct launch_user *user,
			   const struct attempt_world *world)
{
	struct as_user a = { .user = user, .world = world };
	int r = child_run_as(reachable_child, &a);

	if (r < 0 || r == 255)
		return -2;
	return r - 1;
}

int preflight_daemon_sockets(const struct launch_user *user,
			     const struct attempt_world *world, char *err,
			     size_t errlen)
{
	int i = -1;

	if (user) {
		i = first_reachable(user, world);
		if (i == -2) {
			snprintf(err, errlen, "cannot check which daemon sockets COMMAND's user reaches");
			return -EPERM;
		}
	} else {
		/* uid 0 owns them: any that exists is reachable. */
		for (size_t k = 0; k < ARRAY_SIZE(daemon_sockets) && i < 0; k++) {
			struct stat st;

			if (stat(daemon_sockets[k], &st) == 0 && S_ISSOCK(st.st_mode))
				i = (int)k;
		}
	}
	if (i < 0)
		return 0;
	snprintf(err, errlen,
		 "COMMAND's user could connect to %s, which acts as root outside the attempt (run COMMAND as a user that cannot)",
		 daemon_sockets[i]);
	return -EPERM;
}

/*
 * Is the live task of @path (a /proc status file) running with @uid as
 * any of its four uids? *@threads: the Threads: line (of a process's
 * leader: how many tasks it has), 0 if none.
 */
static bool status_has_uid(const char *path, uid_t uid, char *comm, size_t commlen,
			   long *threads)
{
	/* Name:, State:, Uid: and Threads: are in the first kilobyte: one
	 * read, no stdio (this runs for every process on the host). */
	char buf[2048], *line, *save = NULL;
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool dead = false, found = false;
	ssize_t n;

	*threads = 0;
	if (fd < 0)
		return false;	/* gone meanwhile */
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long ids[4];

		if (!strncmp(line, "Name:", 5)) {
			snprintf(comm, commlen, "%s", line + 6);
		} else if (!strncmp(line, "State:", 6)) {
			dead = strpbrk(line + 6, "ZX") != NULL;
		} else if (!strncmp(line, "Uid:", 4) &&
			   sscanf(line + 4, "%lu %lu %lu %lu", &ids[0], &ids[1], &ids[2],
				  &ids[3]) == 4) {
			for (int i = 0; i < 4; i++)
				found = found || ids[i] == (unsigned long)uid;
		} else if (!strncmp(line, "Threads:", 8)) {
			*threads = strtol(line + 8, NULL, 10);
			break;	/* State: and Uid: come before Threads: */
		}
	}
	return found && !dead;
}

/*
 * Each thread has credentials of its own (a raw setresuid changes one
 * thread only), and a process whose first thread exited shows that
 * thread as a zombie while the others run: so every task of a process
 * with more than one is read, and only a task that is itself a zombie is
 * skipped. A process of one thread is its leader's status alone.
 */
static bool process_has_uid(const char *pid, uid_t uid, char *comm, size_t commlen)
{
	char path[96];
	_cleanup_(closedirp) DIR *tasks = NULL;
	struct dirent *de;
	long threads;

	snprintf(path, sizeof(path), "/proc/%.24s/status", pid);
	if (status_has_uid(path, uid, comm, commlen, &threads))
		return true;
	if (threads <= 1)
		return false;
	snprintf(path, sizeof(path), "/proc/%.24s/task", pid);
	tasks = opendir(path);
	if (!tasks)
		return false;	/* gone meanwhile */
	while ((de = readdir(tasks))) {
		long ignored;

		if (!isdigit((unsigned char)de->d_name[0]) || !strcmp(de->d_name, pid))
			continue;
		snprintf(path, sizeof(path), "/proc/%.24s/task/%.24s/status", pid, de->d_name);
		if (status_has_uid(path, uid, comm, commlen, &ignored))
			return true;
	}
	return false;
}

/* Is /proc the PID namespace egret lives in (its "self" is our pid)? The
 * iterator walks that namespace; where /proc shows another, /proc alone
 * decides, as it always did. */
static bool proc_is_ours(void)
{
	char link[32];
	ssize_t n = readlink("/proc/self", link, sizeof(link) - 1);

	if (n <= 0)
		return false;
	link[n] = '\0';
	return atoi(link) == (int)getpid();
}

int preflight_shared_uid(uid_t uid, char *err, size_t errlen)
{
	_cleanup_(closedirp) DIR *d = NULL;
	struct dirent *de;
	char comm[64] = "?";

	/* The set's task iterator sees every task of our PID namespace, as
	 * /proc does, in 20-30 us against 1-2 ms: when it finds none, that
	 * is the answer. When it finds one, or cannot tell (no set pinned
	 * yet, a kernel without BTF), /proc decides, and names the process
	 * as our namespace numbers it. */
	if (proc_is_ours() && tasks_uid_runs(uid) == 0)
		return 0;
	d = opendir("/proc");
	if (!d) {
		int r = -errno;

		snprintf(err, errlen, "cannot read /proc to see what else runs as uid %u", (unsigned int)uid);
		return r < 0 ? r : -EIO;
	}
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (process_has_uid(de->d_name, uid, comm, sizeof(comm))) {
			snprintf(err, errlen,
				 "COMMAND's uid %u also runs pid %.16s (%.32s) outside the attempt, which COMMAND could reach through everything that uid owns (give each attempt a uid of its own, --user 200001, 200002, ...; or --allow-shared-uid)",
				 (unsigned int)uid, de->d_name, comm);
			return -EEXIST;
		}
	}
	return 0;
}

static void uid_lock_path(uid_t uid, char *buf, size_t len)
{
	snprintf(buf, len, EGRET_UID_LOCK_DIR "/uid-%u", (unsigned int)uid);
}

int preflight_uid_lock(uid_t uid, int *ret_fd, pid_t *ret_pid)
{
	_cleanup_close_ int fd = -1;
	char path[64], text[16] = "";
	ssize_t n;
	int r;

	r = private_dir_ensure(EGRET_UID_LOCK_DIR);
	if (r < 0)
		return r;
	uid_lock_path(uid, path, sizeof(path));
	/* One file per uid in use: its holder removes it (lib/lockfile.h).
	 * A holder that wrote no pid is a pruner (or a taker about to write
	 * its own), there for an instant: asked again, briefly. */
	for (int tries = 0;; tries++) {
		_cleanup_close_ int held = -1;

		fd = lockfile_take(path, LOCK_EX | LOCK_NB);
		if (fd != -EWOULDBLOCK)
			break;
		held = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		n = held >= 0 ? pread(held, text, sizeof(text) - 1, 0) : 0;
		*ret_pid = n > 0 ? (pid_t)atoi(text) : 0;
		if (*ret_pid > 0 || tries == 3)
			return -EWOULDBLOCK;
		poll(NULL, 0, 5);
	}
	if (fd < 0)
		return fd;
	n = snprintf(text, sizeof(text), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, text, (size_t)n, 0) != n)
		return -errno;
	*ret_fd = TAKE_FD(fd);
	return 0;
}

void preflight_uid_prune(uid_t uid)
{
	char path[64];
	int fd;

	uid_lock_path(uid, path, sizeof(path));
	fd = lockfile_take(path, LOCK_EX | LOCK_NB);
	lockfile_drop(path, fd);
}

void preflight_uid_prune_range(uid_t first, uid_t last)
{
	_cleanup_(closedirp) DIR *d = opendir(EGRET_UID_LOCK_DIR);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		char *end;
		unsigned long u;

		if (strncmp(de->d_name, "uid-", 4))
			continue;
		u = strtoul(de->d_name + 4, &end, 10);
		if (*end || end == de->d_name + 4 || u < first || u > last)
			continue;
		preflight_uid_prune((uid_t)u);
	}
}

void preflight_uid_unlock(uid_t uid, int fd)
{
	char path[64];

	uid_lock_path(uid, path, sizeof(path));
	lockfile_drop(path, fd);
}

static int places_child(void *arg)
{
	const struct as_user *a = arg;
	struct stat st;
	int bad = 0;

	if (become(a))
		return 255;
	if (access(a->dir ? a->dir : ".", R_OK | X_OK) < 0)
		bad |= PLACES_CWD;
	if (!a->home || stat(a->home, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    access(a->home, W_OK | X_OK) < 0)
		bad |= PLACES_HOME;
	return bad;
}

int preflight_places(const struct launch_user *user,
		     const struct attempt_world *world, const char *dir,
		     const char *home)
{
	struct as_user a = { .user = user, .world = world, .dir = dir, .home = home };
	int r = child_run_as(places_child, &a);

	if (r < 0)
		return r;
	return r == 255 ? -EPERM : r;
}
