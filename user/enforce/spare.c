// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "enforce/loader.h"
#include "enforce/spare.h"
#include "lib/log.h"
#include "lib/paths.h"
#include "lib/trust.h"
#include "lib/util.h"

/* "spare_<tag>_<max_entries>_<max_cidrs>_" - the part every name shares. */
static void key_of(__u32 me, __u32 mc, char *buf, size_t len)
{
	char tag[32];

	loader_object_tag(tag, sizeof(tag));
	snprintf(buf, len, "%s_%u_%u_", tag, me, mc);
}

static bool pid_alive(const char *name)
{
	const char *us = strrchr(name, '_');
	long pid = us ? strtol(us + 1, NULL, 10) : 0;

	return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

static bool dir_ready(void)
{
	return bpffs_ensure() == 0 && private_dir_ensure(SPARE_ROOT) == 0;
}

/* ---- taking ------------------------------------------------------- */

/* Our own directory, as we made it: a directory, ours, 0700. */
static bool dir_is_ours(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && stat_private_dir(&st);
}

static __u32 prog_type_of(int i)
{
	switch (loader_progs[i].type) {
	case BPF_CGROUP_INET_SOCK_CREATE:
		return BPF_PROG_TYPE_CGROUP_SOCK;
	case BPF_CGROUP_SETSOCKOPT:
		return BPF_PROG_TYPE_CGROUP_SOCKOPT;
	case BPF_CGROUP_INET_EGRESS:
		return BPF_PROG_TYPE_CGROUP_SKB;
	case BPF_CGROUP_SOCK_OPS:
		return BPF_PROG_TYPE_SOCK_OPS;
	default:
		return BPF_PROG_TYPE_CGROUP_SOCK_ADDR;
	}
}

/*
 * The program is the one its name says, and every map it uses is one of
 * the set's pinned maps (@ids), or its own read-only data: programs and
 * maps of two spares cannot be paired up into one.
 */
static int check_prog(int fd, int i, const __u32 *ids, size_t nids)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), used[16];

	info.nr_map_ids = ARRAY_SIZE(used);
	info.map_ids = (__u64)(unsigned long)used;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		return -errno;
	if (strncmp(info.name, loader_progs[i].name, sizeof(info.name) - 1) ||
	    info.type != prog_type_of(i) || info.nr_map_ids > ARRAY_SIZE(used))
		return -EPROTO;
	for (__u32 k = 0; k < info.nr_map_ids; k++) {
		struct bpf_map_info mi = {};
		__u32 mlen = sizeof(mi);
		bool pinned = false;
		int mfd;

		for (size_t j = 0; j < nids; j++)
			pinned = pinned || ids[j] == used[k];
		if (pinned)
			continue;
		mfd = bpf_map_get_fd_by_id(used[k]);
		if (mfd < 0)
			return -errno;
		if (bpf_obj_get_info_by_fd(mfd, &mi, &mlen) < 0 ||
		    !strstr(mi.name, ".rodata")) {
			close(mfd);
			return -EPROTO;
		}
		close(mfd);
	}
	return 0;
}

/* Present, of the right kind and size, and (allow maps) empty. */
static int check_map(int fd, int which, __u32 me, __u32 mc, __u32 *ret_id)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	unsigned char key[64];

	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		return -errno;
	*ret_id = info.id;
	switch (which) {
	case LOADER_ALLOW4:
	case LOADER_ALLOW6:
		if (info.type != BPF_MAP_TYPE_HASH || info.max_entries != me)
			return -EPROTO;
		break;
	case LOADER_CIDR4:
	case LOADER_CIDR6:
		if (info.type != BPF_MAP_TYPE_LPM_TRIE || info.max_entries != mc)
			return -EPROTO;
		break;
	case LOADER_HOST4:
	case LOADER_HOST6:
		/* An address planted here would pass as the host's own. */
		if (info.type != BPF_MAP_TYPE_LPM_TRIE ||
		    info.max_entries != EGRET_HOST_MAX)
			return -EPROTO;
		break;
	case LOADER_NAMES:
		if (info.type != BPF_MAP_TYPE_HASH || info.max_entries != EGRET_NAMES_PER_ENTRY * me)
			return -EPROTO;
		break;
	case LOADER_EVENTS:
		return info.type == BPF_MAP_TYPE_RINGBUF ? 0 : -EPROTO;
	case LOADER_REPEATS:
		/* A planted count would be reported as denials never made. */
		if (info.type != BPF_MAP_TYPE_HASH || info.max_entries != EGRET_REPEATS_MAX)
			return -EPROTO;
		break;
	case LOADER_COUNTERS:
		return info.type == BPF_MAP_TYPE_PERCPU_ARRAY ? 0 : -EPROTO;
	case LOADER_DNS_ORIG:
	case LOADER_CONN:
		return info.type == BPF_MAP_TYPE_SK_STORAGE ? 0 : -EPROTO;
	default:
		return info.type == BPF_MAP_TYPE_ARRAY ? 0 : -EPROTO;
	}
	/* Never attached, so nothing may be in it: a spare that holds an
	 * allow entry is not one we made. */
	if (info.key_size > sizeof(key))
		return -EPROTO;
	return bpf_map_get_next_key(fd, NULL, key) < 0 && errno == ENOENT ? 0 : -EPROTO;
}

#define SPARE_DIR_MAX	256	/* SPARE_ROOT/<name> */

static int open_taken(struct loader *ld, const char *dir, __u32 me, __u32 mc)
{
	char path[SPARE_DIR_MAX + 64];
	__u32 ids[LOADER_NMAPS];
	int r;

	for (int i = 0; i < LOADER_NMAPS; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, loader_map_names[i]);
		ld->maps[i] = bpf_obj_get(path);
		if (ld->maps[i] < 0)
			return -errno;
		r = check_map(ld->maps[i], i, me, mc, &ids[i]);
		if (r < 0)
			return r;
	}
	for (int i = 0; i < LOADER_NPROGS; i++) {
		snprintf(path, sizeof(path), "%s/prog_%s", dir, loader_progs[i].name);
		ld->progs[i] = bpf_obj_get(path);
		if (ld->progs[i] < 0)
			return -errno;
		r = check_prog(ld->progs[i], i, ids, LOADER_NMAPS);
		if (r < 0)
			return r;
	}
	return 0;
}

int spare_take(struct loader *ld, __u32 max_entries, __u32 max_cidrs)
{
	char key[96], from[SPARE_DIR_MAX + 256], to[SPARE_DIR_MAX];
	_cleanup_(closedirp) DIR *d = NULL;
	struct dirent *de;
	int r = -ENOENT;

	key_of(max_entries, max_cidrs, key, sizeof(key));
	/* Only a directory we made is worth looking into. */
	if (!dir_is_ours(SPARE_ROOT))
		return -ENOENT;
	d = opendir(SPARE_ROOT);
	if (!d)
		return -ENOENT;
	snprintf(to, sizeof(to), SPARE_ROOT "/taken_%d", getpid());
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "spare_", 6) || strncmp(de->d_name + 6, key, strlen(key)))
			continue;
		snprintf(from, sizeof(from), SPARE_ROOT "/%s", de->d_name);
		if (!dir_is_ours(from))
			continue;
		/* Whoever renames it has it; the others find it gone. */
		if (rename(from, to) == 0) {
			r = 0;
			break;
		}
	}
	if (r < 0)
		return r;
	r = open_taken(ld, to, max_entries, max_cidrs);
	/* Held by our fds now (or discarded): the pins go either way. */
	flat_dir_remove(to);
	if (r < 0) {
		log_debug("spare %s: unusable (%s); loading now", de ? de->d_name : "?",
			  strerror(-r));
		loader_destroy(ld);
	}
	return r;
}

/* ---- making ------------------------------------------------------- */

static int count_key(const char *key)
{
	_cleanup_(closedirp) DIR *d = opendir(SPARE_ROOT);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d))) {
		const char *rest = !strncmp(de->d_name, "spare_", 6) ? de->d_name + 6 :
				   !strncmp(de->d_name, "making_", 7) ? de->d_name + 7 : NULL;

		n += rest && !strncmp(rest, key, strlen(key));
	}
	return n;
}

int spare_make(__u32 max_entries, __u32 max_cidrs)
{
	char key[96], dir[SPARE_DIR_MAX], done[SPARE_DIR_MAX], path[SPARE_DIR_MAX + 64];
	const char *step;	/* unused: a spare that cannot be made is no error */
	struct loader ld;
	int r;

	if (!dir_ready())
		return -EPERM;
	key_of(max_entries, max_cidrs, key, sizeof(key));
	if (count_key(key) >= SPARE_MAX)
		return 0;
	snprintf(dir, sizeof(dir), SPARE_ROOT "/making_%s%d", key, getpid());
	snprintf(done, sizeof(done), SPARE_ROOT "/spare_%s%d", key, getpid());
	if (mkdir(dir, 0700) < 0)
		return -errno;
	loader_init(&ld);
	r = loader_load_fresh(&ld, max_entries, max_cidrs, &step);
	for (int i = 0; r == 0 && i < LOADER_NPROGS; i++) {
		snprintf(path, sizeof(path), "%s/prog_%s", dir, loader_progs[i].name);
		r = bpf_obj_pin(ld.progs[i], path) < 0 ? -errno : 0;
	}
	for (int i = 0; r == 0 && i < LOADER_NMAPS; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, loader_map_names[i]);
		r = bpf_obj_pin(ld.maps[i], path) < 0 ? -errno : 0;
	}
	if (r == 0 && rename(dir, done) < 0)
		r = -errno;
	if (r < 0)
		flat_dir_remove(dir);
	loader_destroy(&ld);
	return r;
}

void spare_make_async(__u32 max_entries, __u32 max_cidrs)
{
	sigset_t none;
	pid_t pid;
	int fd;

	pid = fork();
	if (pid < 0)
		return;
	if (pid > 0) {
		waitpid(pid, NULL, 0);
		return;
	}
	/* Twice, so the maker is nobody's child we must wait for; no fd of
	 * ours (sockets, the attempt's record and uid locks) goes with it:
	 * closed before the second fork, which we do not wait for. */
	close_range(3, ~0U, 0);
	if (fork() != 0)
		_exit(0);
	setsid();
	/* Off the attempt's network namespace (egret may run in one a test or
	 * a container made): loading needs none, and holding it keeps it. */
	unshare(CLONE_NEWNET);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
	_exit(spare_make(max_entries, max_cidrs) < 0 ? 1 : 0);
}

/* ---- gc ----------------------------------------------------------- */

int spare_gc(bool all)
{
	char tag[32], path[PATH_MAX];
	_cleanup_(closedirp) DIR *d = NULL;
	struct dirent *de;
	int n = 0;

	d = opendir(SPARE_ROOT);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	loader_object_tag(tag, sizeof(tag));
	while ((de = readdir(d))) {
		const char *name = de->d_name;
		bool stale;

		if (name[0] == '.')
			continue;
		if (!strncmp(name, "spare_", 6))
			stale = all || strncmp(name + 6, tag, strlen(tag));
		else	/* making_, taken_: their process is at work */
			stale = all || !pid_alive(name);
		if (!stale)
			continue;
		snprintf(path, sizeof(path), SPARE_ROOT "/%s", name);
		if (flat_dir_remove(path) == 0)
			n++;
	}
	return n;
}
