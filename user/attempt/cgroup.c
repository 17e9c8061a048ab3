// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/types.h>

#include "attempt/cgroup.h"
#include "lib/paths.h"
#include "lib/util.h"

int cgroup2_mount_parse(FILE *mountinfo, char *ret, size_t len)
{
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;

	/* "36 25 0:30 / /sys/fs/cgroup rw,... shared:1 - cgroup2 cgroup2 rw" */
	while (getline(&line, &cap, mountinfo) > 0) {
		char *sep = strstr(line, " - ");
		char mnt[PATH_MAX], fstype[32];

		if (!sep || sscanf(sep + 3, "%31s", fstype) != 1 ||
		    strcmp(fstype, "cgroup2") != 0)
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		/* mountinfo escapes spaces as \040; a cgroup mount with one
		 * is too odd to support. */
		if (strchr(mnt, '\\'))
			continue;
		if (strlen(mnt) >= len)
			return -ENAMETOOLONG;
		strcpy(ret, mnt);
		return 0;
	}
	return -ENOENT;
}

/*
 * One line of /proc/PID/cgroup text, @n bytes, its newline if any
 * included: 1 with the v2 path in @ret if it is the "0::" line, 0 if it is
 * another, or -errno (a v2 line that is not a path, has a NUL in it, or
 * does not fit).
 */
static int self_line(const char *line, size_t n, char *ret, size_t len)
{
	if (n < 3 || memcmp(line, "0::", 3))
		return 0;
	if (line[n - 1] == '\n')
		n--;
	if (n == 3 || line[3] != '/' || memchr(line, '\0', n))
		return -EINVAL;
	if (n - 3 >= len)
		return -ENAMETOOLONG;
	memcpy(ret, line + 3, n - 3);
	ret[n - 3] = '\0';
	return 1;
}

int cgroup2_self_parse(FILE *proc_cgroup, char *ret, size_t len)
{
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int r;

	while ((n = getline(&line, &cap, proc_cgroup)) > 0)
		if ((r = self_line(line, (size_t)n, ret, len)) != 0)
			return r < 0 ? r : 0;
	return -ENOENT;
}

int cgroup2_self_parse_text(const char *text, size_t n, char *ret, size_t len)
{
	const char *end = text + n, *nl;
	int r;

	for (; text < end; text = nl + 1) {
		nl = memchr(text, '\n', (size_t)(end - text));
		if (!nl)
			nl = end - 1;	/* the last line, with no newline */
		if ((r = self_line(text, (size_t)(nl - text) + 1, ret, len)) != 0)
			return r < 0 ? r : 0;
	}
	return -ENOENT;
}

int cgroup2_mount(char *ret, size_t len)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return -errno;
	return cgroup2_mount_parse(f, ret, len);
}

int cgroup_keep_path(char *ret, size_t len)
{
	/* Asked at every attempt's start (gc, then the programs), and a
	 * process's cgroup2 mount does not move: read once. egretd's
	 * handlers inherit it. */
	static char keep[PATH_MAX];
	char mnt[PATH_MAX];
	int r = 0;

	if (!keep[0]) {
		r = cgroup2_mount(mnt, sizeof(mnt));
		if (r == 0)
			r = path_fmt(keep, sizeof(keep), "%s/egret-keep", mnt);
		if (r < 0)
			keep[0] = '\0';
	}
	if (r == 0)
		r = path_fmt(ret, len, "%s", keep);
	if (r < 0 && len)
		ret[0] = '\0';
	return r;
}

int cgroup2_self(char *ret, size_t len)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/cgroup", "re");

	if (!f)
		return -errno;
	return cgroup2_self_parse(f, ret, len);
}

/* The kernel's handle type for kernfs (cgroup) files: the cgroup id. */
#ifndef FILEID_KERNFS
#define FILEID_KERNFS	0xfe
#endif

int cgroup2_path_of_id(uint64_t id, char *ret, size_t len)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + sizeof(uint64_t)];
	} h = {};
	char mnt[PATH_MAX], link[64], path[PATH_MAX];
	_cleanup_close_ int mfd = -1, fd = -1;
	size_t n;
	ssize_t got;
	int r;

	r = cgroup2_mount(mnt, sizeof(mnt));
	if (r < 0)
		return r;
	mfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return -errno;
	h.fh.handle_bytes = sizeof(uint64_t);
	h.fh.handle_type = FILEID_KERNFS;
	memcpy(h.fh.f_handle, &id, sizeof(id));
	fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	got = readlink(link, path, sizeof(path) - 1);
	if (got < 0)
		return -errno;
	path[got] = '\0';
	/* Our mount's path of it; the cgroup's is what follows the mount. */
	n = strlen(mnt);
	if (strncmp(path, mnt, n) || (path[n] != '/' && path[n] != '\0'))
		return -EXDEV;
	if ((size_t)snprintf(ret, len, "%s", path[n] ? path + n : "/") >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* PIDFD_GET_INFO (Linux 6.13), which Debian 12's headers predate: the
 * first version of its struct. */
struct egret_pidfd_info {
	__u64 mask;
	__u64 cgroupid;
	__u32 pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	__u32 spare0[1];
};
#define EGRET_PIDFD_GET_INFO	_IOWR(0xFF, 11, struct egret_pidfd_info)
#define EGRET_PIDFD_INFO_CGROUPID	(1ULL << 2)

int cgroup_id_of_pidfd(int pidfd, uint64_t *ret_id, pid_t *ret_tgid)
{
	struct egret_pidfd_info info = { .mask = EGRET_PIDFD_INFO_CGROUPID };

	if (ioctl(pidfd, EGRET_PIDFD_GET_INFO, &info) < 0)
		return -errno;
	if (!(info.mask & EGRET_PIDFD_INFO_CGROUPID))
		return -EXDEV;
	*ret_id = info.cgroupid;
	*ret_tgid = (pid_t)info.tgid;
	return 0;
}

/*
 * @pid's cgroup v2 path from /proc/PID/cgroup, read whole with read(2)
 * into the stack (no stdio stream, no heap: this is asked at every
 * egretd request). Text longer than the buffer (v1 hierarchies with long
 * paths) is parsed as a stream from the start instead.
 */
static int proc_cgroup_read(pid_t pid, char *ret, size_t len)
{
	char path[32], text[8192];
	_cleanup_close_ int fd = -1;
	_cleanup_fclose_ FILE *f = NULL;
	size_t have = 0;
	ssize_t n = 0;

	if (path_fmt(path, sizeof(path), "/proc/%d/cgroup", (int)pid) < 0)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (have < sizeof(text) &&
	       ((n = read(fd, text + have, sizeof(text) - have)) > 0 ||
		(n < 0 && errno == EINTR)))
		have += n > 0 ? (size_t)n : 0;
	if (n < 0)
		return -errno;
	if (have < sizeof(text))
		return cgroup2_self_parse_text(text, have, ret, len);
	if (lseek(fd, 0, SEEK_SET) < 0 || !(f = fdopen(fd, "re")))
		return -errno;
	fd = -1;	/* the stream's now */
	return cgroup2_self_parse(f, ret, len);
}

int cgroup2_of_pid(pid_t pid, int pidfd, char *ret, size_t len)
{
	struct egret_pidfd_info info = { .mask = EGRET_PIDFD_INFO_CGROUPID };
	int r;

	r = proc_cgroup_read(pid, ret, len);
	if (r < 0 || strncmp(ret, "/..", 3))
		return r;
	if (ioctl(pidfd, EGRET_PIDFD_GET_INFO, &info) < 0)
		return errno == ENOTTY || errno == EINVAL ? -EXDEV : -errno;
	if (!(info.mask & EGRET_PIDFD_INFO_CGROUPID))
		return -EXDEV;
	return cgroup2_path_of_id(info.cgroupid, ret, len);
}

int cgroup_check_dir(const char *path)
{
	struct statfs sfs;
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (statfs(path, &sfs) < 0)
		return -errno;
	if (sfs.f_type != CGROUP2_SUPER_MAGIC)
		return -EMEDIUMTYPE;
	return 0;
}

int cgroup_mkdir_parents(const char *path)
{
	char buf[PATH_MAX];
	char *slash;
	int r;

	if (strlen(path) >= sizeof(buf) || path[0] != '/')
		return -EINVAL;
	r = cgroup_check_dir(path);
	if (r != -ENOENT)
		return r;

	/* Create the parent first, then this level, checking the filesystem
	 * at each step so a typo never makes directories on a plain fs. */
	strcpy(buf, path);
	slash = strrchr(buf, '/');
	if (slash == buf)
		return -ENOENT;
	*slash = '\0';
	r = cgroup_mkdir_parents(buf);
	if (r < 0)
		return r;
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	return cgroup_check_dir(path);
}

int cgroup_populated(const char *path)
{
	char file[PATH_MAX], buf[256];
	_cleanup_close_ int fd = -1;
	ssize_t n;
	char *p;

	snprintf(file, sizeof(file), "%s/cgroup.events", path);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	p = strstr(buf, "populated ");
	if (!p)
		return -EIO;
	return p[10] == '1';
}

static long elapsed_ms(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) * 1000 +
	       (now.tv_nsec - start->tv_nsec) / 1000000;
}

/* rmdir @path and every cgroup below it, deepest first. A cgroup is a
 * directory whose only contents are kernel files, so rmdir works once its
 * children are gone and no process is left. */
static int cgroup_remove_tree(const char *path, int depth)
{
	struct dirent *de;
	DIR *dir;
	int r = 0;

	if (depth > 64)
		return -ELOOP;
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		char child[PATH_MAX];

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") ||
		    !strcmp(de->d_name, ".."))
			continue;
		if ((size_t)snprintf(child, sizeof(child), "%s/%s", path,
				     de->d_name) >= sizeof(child)) {
			r = -ENAMETOOLONG;
			break;
		}
		r = cgroup_remove_tree(child, depth + 1);
		if (r < 0)
			break;
	}
	closedir(dir);
	if (r < 0)
		return r;
	return rmdir(path) < 0 ? -errno : 0;
}

/* cgroup.kill: 0, or a negative errno (-ENOENT: no such cgroup). */
static int cgroup_kill(const char *path)
{
	char file[PATH_MAX];
	_cleanup_close_ int fd = -1;

	if (access(path, F_OK) < 0)
		return -errno;
	snprintf(file, sizeof(file), "%s/cgroup.kill", path);
	fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* cgroup.kill SIGKILLs every process in the subtree atomically, so a
	 * forking process cannot outrun it. */
	if (write(fd, "1", 1) != 1)
		return -errno;
	return 0;
}

int cgroup_kill_wait(const char *path, int timeout_ms)
{
	struct timespec start;
	int r = cgroup_kill(path);

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (r == 0) {
		r = cgroup_populated(path);
		if (r <= 0)
			return r;
		if (elapsed_ms(&start) > timeout_ms)
			return -ETIMEDOUT;
		r = poll(NULL, 0, 5) < 0 ? -errno : 0;
	}
	return r;
}

int cgroup_kill_remove(const char *path, int timeout_ms)
{
	struct timespec start;
	int r = cgroup_kill(path);

	if (r < 0)
		return r;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		r = cgroup_populated(path);
		if (r < 0)
			return r;
		if (r == 0) {
			r = cgroup_remove_tree(path, 0);
			if (r != -EBUSY)
				return r;
		}
		if (elapsed_ms(&start) > timeout_ms)
			return -ETIMEDOUT;
		poll(NULL, 0, 5);
	}
}
