// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "launch/world.h"
#include "lib/child.h"
#include "lib/fdpass.h"
#include "lib/util.h"

static const struct {
	const char *name;
	int flag;
} kinds[] = {
	{ "mnt", CLONE_NEWNS }, { "net", CLONE_NEWNET }, { "pid", CLONE_NEWPID },
	{ "uts", CLONE_NEWUTS }, { "ipc", CLONE_NEWIPC }, { "user", CLONE_NEWUSER },
	{ "cgroup", CLONE_NEWCGROUP },
};

/* What was read by pid counts only while the pidfd's process lives: a
 * pid is reused only after it died. */
static bool still_there(int pidfd)
{
	return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0;
}

int world_read(struct attempt_world *ret, int pidfd, pid_t pid)
{
	struct attempt_world w = { .pidfd = pidfd, .pid = pid };
	char path[64];

	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		struct stat mine, theirs;

		snprintf(path, sizeof(path), "/proc/self/ns/%s", kinds[i].name);
		if (stat(path, &mine) < 0)
			return -errno;
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, kinds[i].name);
		if (stat(path, &theirs) < 0)
			return errno == ENOENT ? -ESRCH : -errno;
		if (mine.st_ino != theirs.st_ino || mine.st_dev != theirs.st_dev)
			w.differ |= kinds[i].flag;
	}
	if (!still_there(pidfd))
		return -ESRCH;
	*ret = w;
	return 0;
}

int world_enter_net(const struct attempt_world *w)
{
	if (!world_foreign(w) || !(w->differ & CLONE_NEWNET))
		return 0;
	return setns(w->pidfd, CLONE_NEWNET) < 0 ? -errno : 0;
}

int world_pid_for_children(const struct attempt_world *w, bool enter)
{
	int fd, r;

	if (!world_foreign(w) || !(w->differ & CLONE_NEWPID))
		return 0;
	if (enter)
		return setns(w->pidfd, CLONE_NEWPID) < 0 ? -errno : 0;
	/* Our own (active) namespace is always one we may make children in
	 * again. */
	fd = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = setns(fd, CLONE_NEWPID) < 0 ? -errno : 0;
	close(fd);
	return r;
}

int world_enter_child(const struct attempt_world *w)
{
	int flags;

	if (!world_foreign(w))
		return 0;
	flags = w->differ & (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWCGROUP);
	if (!flags)
		return 0;
	/* One call: all of them at once, or none. */
	return setns(w->pidfd, flags) < 0 ? -errno : 0;
}

/* @path opened with @flags inside the caller's root (its symlinks, a
 * stub resolver's file say, are the caller's too): the fd, or -errno. */
static int open_in_root(const struct attempt_world *w, const char *path, int flags)
{
	struct open_how how = {
		.flags = (__u64)flags | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	_cleanup_close_ int root = -1;
	char at[64];
	int fd;

	snprintf(at, sizeof(at), "/proc/%d/root", (int)w->pid);
	root = open(at, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	if (!still_there(w->pidfd))
		return -ESRCH;
	fd = (int)syscall(SYS_openat2, root, path, &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}

int world_open_resolv_conf(const struct attempt_world *w, char *path, size_t len)
{
	struct stat st;
	int fd = open_in_root(w, "etc/resolv.conf", O_RDONLY | O_NOCTTY);

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if ((size_t)snprintf(path, len, "/proc/self/fd/%d", fd) >= len) {
		close(fd);
		return -ENAMETOOLONG;
	}
	return fd;
}

int world_open_dir(const struct attempt_world *w, const char *path)
{
	int fd;

	if (world_foreign(w) && (w->differ & CLONE_NEWNS))
		return open_in_root(w, path, O_PATH | O_DIRECTORY);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

struct open_as {
	const struct attempt_world *w;
	const char *path;
	uid_t uid;
	gid_t gid;
	int sock;	/* where the child sends the fd it opened */
};

/* In the child (lib/child.h): its fd table is its own, so the fd it
 * opens travels back over @sock. */
static int open_as_child(void *arg)
{
	struct open_as *a = arg;
	int fd;

	/* The caller's ids, none of root's groups: the path must be one it
	 * can walk itself. */
	if (child_become(a->uid, a->gid, 0, NULL) < 0)
		return EPERM;
	fd = world_open_dir(a->w, a->path);
	if (fd < 0)
		return -fd;
	return fd_send(a->sock, fd) < 0 ? EIO : 0;
}

int world_open_dir_as(const struct attempt_world *w, const char *path, uid_t uid, gid_t gid)
{
	struct open_as a = { .w = w, .path = path, .uid = uid, .gid = gid };
	int socks[2], fd, r;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, socks) < 0)
		return -errno;
	a.sock = socks[1];
	r = child_run_as(open_as_child, &a);
	close(socks[1]);
	/* The child is gone: its message waits in the socket, or never came
	 * (then its status, or the wait's failure, says why). */
	fd = fd_recv(socks[0]);
	if (fd < 0 && r != 0)
		fd = r > 0 ? -r : r == -ECHILD ? -EIO : r;
	close(socks[0]);
	return fd;
}

const char *world_names(int differ, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if ((differ & kinds[i].flag) && at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s%s",
					       at ? ", " : "", kinds[i].name);
	return buf;
}
