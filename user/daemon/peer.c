// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "attempt/cgroup.h"
#include "launch/world.h"
#include "daemon/peer.h"
#include "lib/paths.h"
#include "lib/util.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD	77	/* Linux 6.5 */
#endif

static int pidfd_of(int fd, pid_t pid)
{
	socklen_t len = sizeof(int);
	int pidfd = -1;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0 && pidfd >= 0)
		return pidfd;
	if (errno != ENOPROTOOPT && errno != EINVAL)
		return -errno;
	/* Older kernels: the pid may have been reused since connect() by a
	 * process of the same uid, which the checks below cannot tell from
	 * the caller: egretd then trusts the pid as much as the uid. */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	return pidfd < 0 ? -errno : pidfd;
}

/* Still the process the pidfd holds: what was read by pid was its. */
static bool peer_alive(const struct daemon_peer *p)
{
	return syscall(SYS_pidfd_send_signal, p->pidfd, 0, NULL, 0) == 0;
}

/* The effective uid the process has now (SO_PEERCRED's is the effective
 * one at connect()). */
static int read_uid(pid_t pid, uid_t *ret)
{
	_cleanup_fclose_ FILE *f = NULL;
	char path[64], line[256];
	unsigned int real, eff;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %u %u", &real, &eff) == 2) {
			*ret = eff;
			return 0;
		}
	return -EIO;
}

int daemon_peer_read(int fd, struct daemon_peer *ret)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct daemon_peer p = { .pidfd = -1 };
	uid_t now = (uid_t)-1;
	int r;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	if (cred.pid <= 0)
		return -ESRCH;
	p.pid = cred.pid;
	p.uid = cred.uid;
	p.gid = cred.gid;
	p.pidfd = pidfd_of(fd, cred.pid);
	if (p.pidfd < 0)
		return p.pidfd;
	r = cgroup2_of_pid(p.pid, p.pidfd, p.cgroup, sizeof(p.cgroup));
	if (r == 0)
		r = read_uid(p.pid, &now);
	if (r == 0 && now != p.uid)
		r = -EPERM;	/* not the process that connected, or it changed uid */
	if (r == 0)
		r = world_read(&p.world, p.pidfd, p.pid);
	/* Everything above was read by pid: it counts only if the pidfd's
	 * process is still there (a pid is reused only after it died). */
	if (r >= 0 && !peer_alive(&p))
		r = -ESRCH;
	if (r < 0) {
		daemon_peer_close(&p);
		return r == -ENOENT ? -ESRCH : r;
	}
	*ret = p;
	return 0;
}

void daemon_peer_close(struct daemon_peer *p)
{
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->pidfd = -1;
}

/* Is any program in @ids one of egret's connect4 programs? */
static int has_egret_prog(const __u32 *ids, __u32 n)
{
	for (__u32 i = 0; i < n; i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		_cleanup_close_ int fd = bpf_prog_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue;	/* detached meanwhile */
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 &&
		    !strncmp(info.name, "egret_connect4", sizeof(info.name) - 1))
			return 1;
	}
	return 0;
}

int daemon_cgroup2_mount(char *ret, size_t len)
{
	static char mnt[PATH_MAX];
	int r;

	if (!mnt[0]) {
		r = cgroup2_mount(mnt, sizeof(mnt));
		if (r < 0) {
			mnt[0] = '\0';
			return r;
		}
	}
	return path_fmt(ret, len, "%s", mnt);
}

int daemon_cgroup_in_attempt(const char *cgroup)
{
	char mnt[PATH_MAX], path[PATH_MAX];
	__u32 ids[64], n = ARRAY_SIZE(ids);
	_cleanup_close_ int fd = -1;
	int r;

	r = daemon_cgroup2_mount(mnt, sizeof(mnt));
	if (r == 0)
		r = path_fmt(path, sizeof(path), "%s%s", mnt,
			     strcmp(cgroup, "/") ? cgroup : "");
	if (r < 0)
		return r;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (bpf_prog_query(fd, BPF_CGROUP_INET4_CONNECT, BPF_F_QUERY_EFFECTIVE,
			   NULL, ids, &n) < 0)
		return -errno;
	return has_egret_prog(ids, n);
}
