// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "enforce/loader_impl.h"
#include "enforce/shared.h"
#include "lib/lockfile.h"
#include "lib/log.h"
#include "lib/paths.h"
#include "lib/trust.h"
#include "lib/util.h"

#define SET_DIR_MAX	(sizeof(SHARED_ROOT) + 64)

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
	case BPF_SK_MSG_VERDICT:
		return BPF_PROG_TYPE_SK_MSG;
	case BPF_TRACE_ITER:
		return BPF_PROG_TYPE_TRACING;
	default:
		return BPF_PROG_TYPE_CGROUP_SOCK_ADDR;
	}
}

/* Read-only data maps already found to be that, in one open of the set:
 * a later program using the same map needs no second look (the programs
 * we hold keep it, so its id names no other map). */
struct rodata_seen {
	__u32 ids[8];
	size_t n;
};

static bool rodata_seen_has(const struct rodata_seen *seen, __u32 id)
{
	for (size_t j = 0; seen && j < seen->n; j++)
		if (seen->ids[j] == id)
			return true;
	return false;
}

/* Is the map of @id read-only data? 0, or -errno (-EPROTO: it is not). */
static int check_rodata(__u32 id, int i, struct rodata_seen *seen)
{
	struct bpf_map_info mi = {};
	__u32 mlen = sizeof(mi);
	int mfd;

	if (rodata_seen_has(seen, id))
		return 0;
	mfd = bpf_map_get_fd_by_id(id);
	if (mfd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(mfd, &mi, &mlen) < 0 || !strstr(mi.name, ".rodata")) {
		close(mfd);
		return -EPROTO;
	}
	if (i < LOADER_NMAIN_PROGS)
		loader_note_rodata(mfd, &mi);
	close(mfd);
	if (seen && seen->n < ARRAY_SIZE(seen->ids))
		seen->ids[seen->n++] = id;
	return 0;
}

/*
 * The program is the one its name says, and every map it uses is one of
 * the set's (@ids) or its own read-only data: programs and maps of two
 * sets cannot be paired up into one.
 */
static int check_prog(int fd, int i, const __u32 *ids, size_t nids,
		      struct rodata_seen *seen)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), used[LOADER_NSHARED + 4];

	info.nr_map_ids = ARRAY_SIZE(used);
	info.map_ids = (__u64)(unsigned long)used;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		return -errno;
	if (strncmp(info.name, loader_progs[i].name, sizeof(info.name) - 1) ||
	    info.type != prog_type_of(i) || info.nr_map_ids > ARRAY_SIZE(used))
		return -EPROTO;
	for (__u32 k = 0; k < info.nr_map_ids; k++) {
		bool ours = false;
		int r;

		for (size_t j = 0; j < nids; j++)
			ours = ours || (ids[j] && ids[j] == used[k]);
		if (ours)
			continue;
		r = check_rodata(used[k], i, seen);
		if (r < 0)
			return r;
	}
	return 0;
}

/* What each of the set's maps must be: its type, and for those sized by
 * egret.h, its size. */
static const struct { __u32 type, max; } map_kinds[LOADER_NSHARED] = {
	[LOADER_ALLOW4] = { BPF_MAP_TYPE_HASH, EGRET_SHARED_ENTRIES },
	[LOADER_ALLOW6] = { BPF_MAP_TYPE_HASH, EGRET_SHARED_ENTRIES },
	[LOADER_CIDR4] = { BPF_MAP_TYPE_LPM_TRIE, EGRET_SHARED_CIDRS },
	[LOADER_CIDR6] = { BPF_MAP_TYPE_LPM_TRIE, EGRET_SHARED_CIDRS },
	[LOADER_NAMES] = { BPF_MAP_TYPE_HASH, EGRET_NAMES_PER_ENTRY * EGRET_SHARED_ENTRIES },
	[LOADER_HOST4] = { BPF_MAP_TYPE_LPM_TRIE, EGRET_SHARED_HOSTS },
	[LOADER_HOST6] = { BPF_MAP_TYPE_LPM_TRIE, EGRET_SHARED_HOSTS },
	[LOADER_UNIX_ALLOW] = { BPF_MAP_TYPE_HASH, EGRET_SHARED_UNIX },
	[LOADER_CONN] = { BPF_MAP_TYPE_SK_STORAGE, 0 },
	[LOADER_DNS_ORIG] = { BPF_MAP_TYPE_SK_STORAGE, 0 },
	[LOADER_ATTEMPT] = { BPF_MAP_TYPE_CGROUP_STORAGE, 0 },
	[LOADER_COUNTERS] = { BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE, 0 },
	[LOADER_RINGS] = { BPF_MAP_TYPE_ARRAY_OF_MAPS, EGRET_SLOTS_MAX },
	[LOADER_REPEAT_OF] = { BPF_MAP_TYPE_ARRAY_OF_MAPS, EGRET_SLOTS_MAX },
	[LOADER_SLOTS] = { BPF_MAP_TYPE_HASH, EGRET_SLOTS_MAX },
	[LOADER_PINS] = { BPF_MAP_TYPE_HASH, EGRET_NAMES_PER_ENTRY * EGRET_SHARED_ENTRIES },
	[LOADER_PIN_SOCK] = { BPF_MAP_TYPE_SK_STORAGE, 0 },
	[LOADER_PIN_SOCKS] = { BPF_MAP_TYPE_SOCKHASH, 0 },
	[LOADER_TLS_COUNTS] = { BPF_MAP_TYPE_ARRAY, EGRET_SLOTS_MAX },
	[LOADER_HTTP_SOCK] = { BPF_MAP_TYPE_SK_STORAGE, 0 },
	[LOADER_DEST_COUNTS] = { BPF_MAP_TYPE_HASH, EGRET_SHARED_DESTS },
	[LOADER_ACCT_SOCK] = { BPF_MAP_TYPE_SK_STORAGE, 0 },
	[LOADER_DEST_TALLY] = { BPF_MAP_TYPE_PERCPU_HASH, EGRET_SHARED_DESTS },
	[LOADER_ADDR_DEST] = { BPF_MAP_TYPE_HASH, EGRET_SHARED_ENTRIES },
	[LOADER_PIN_BUFS] = { BPF_MAP_TYPE_PERCPU_ARRAY, 0 },
	[LOADER_PIN_BUF_SOCK] = { BPF_MAP_TYPE_SK_STORAGE, 0 },
};

static int check_map(int fd, int which, __u32 *ret_id)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		return -errno;
	*ret_id = info.id;
	if (info.type != map_kinds[which].type ||
	    (map_kinds[which].max && info.max_entries != map_kinds[which].max))
		return -EPROTO;
	return 0;
}

/* egret_tls is attached to the set's sockhash, and only it: without it
 * a pinned connection's writes are judged on the wire alone. */
static int check_tls_attached(const struct loader *ld)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), ids[2] = {}, n = 2, flags = 0;

	if (bpf_obj_get_info_by_fd(ld->progs[LOADER_TLS], &info, &len) < 0)
		return -errno;
	if (bpf_prog_query(ld->maps[LOADER_PIN_SOCKS], BPF_SK_MSG_VERDICT, 0, &flags,
			   ids, &n) < 0)
		return -errno;
	return n == 1 && ids[0] == info.id ? 0 : -EPROTO;
}

static void set_dir(char *buf, size_t len)
{
	char tag[32];

	loader_object_tag(tag, sizeof(tag));
	snprintf(buf, len, SHARED_ROOT "/%s", tag);
}

int shared_tasks_prog(void)
{
	char dir[SET_DIR_MAX], path[SET_DIR_MAX + 64];
	int fd, r;

	set_dir(dir, sizeof(dir));
	/* Made by egret as root, 0700: a pin anyone else put there is not
	 * one to trust. */
	if (!dir_is_ours(dir))
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/prog_%s", dir, loader_progs[LOADER_TASKS].name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	r = check_prog(fd, LOADER_TASKS, NULL, 0, NULL);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/* The pinned set in @dir, checked. The unix programs and their names map
 * may be absent (a kernel without the hooks), but not one without the
 * other. */
static int open_set(struct loader *ld, const char *dir)
{
	char path[SET_DIR_MAX + 64];
	__u32 ids[LOADER_NSHARED] = {};
	struct rodata_seen seen = {};
	int r;

	if (!dir_is_ours(dir))
		return -ENOENT;
	for (int i = 0; i < LOADER_NSHARED; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, loader_map_names[i]);
		ld->maps[i] = bpf_obj_get(path);
		if (ld->maps[i] < 0) {
			if (i == LOADER_UNIX_ALLOW && errno == ENOENT)
				continue;
			return -errno;
		}
		r = check_map(ld->maps[i], i, &ids[i]);
		if (r < 0)
			return r;
	}
	for (int i = 0; i < LOADER_NPROGS; i++) {
		bool unix_prog = i == LOADER_UNIX_CONNECT || i == LOADER_UNIX_SENDMSG;

		snprintf(path, sizeof(path), "%s/prog_%s", dir, loader_progs[i].name);
		ld->progs[i] = bpf_obj_get(path);
		if (ld->progs[i] < 0) {
			if (unix_prog && errno == ENOENT && ld->maps[LOADER_UNIX_ALLOW] < 0)
				continue;
			/* Optional: the uid check reads /proc without it. */
			if (i == LOADER_TASKS && errno == ENOENT)
				continue;
			return -errno;
		}
		if (unix_prog && ld->maps[LOADER_UNIX_ALLOW] < 0)
			return -EPROTO;
		r = check_prog(ld->progs[i], i, ids, LOADER_NSHARED, &seen);
		if (r < 0)
			return r;
	}
	return check_tls_attached(ld);
}

/* Pin what loader_load_set() loaded into a making_<tag>_<pid> sibling
 * of @dir (bpffs names take no dots), then rename it into place: whoever
 * renames first made the set. */
static int pin_set(struct loader *ld, const char *dir)
{
	char making[SET_DIR_MAX + 32], path[SET_DIR_MAX + 96], tag[32];
	int r = 0;

	loader_object_tag(tag, sizeof(tag));
	snprintf(making, sizeof(making), SHARED_ROOT "/making_%s_%d", tag, (int)getpid());
	if (mkdir(making, 0700) < 0)
		return -errno;
	for (int i = 0; r == 0 && i < LOADER_NPROGS; i++) {
		if (ld->progs[i] < 0)
			continue;
		snprintf(path, sizeof(path), "%s/prog_%s", making, loader_progs[i].name);
		r = bpf_obj_pin(ld->progs[i], path) < 0 ? -errno : 0;
	}
	for (int i = 0; r == 0 && i < LOADER_NSHARED; i++) {
		if (ld->maps[i] < 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", making, loader_map_names[i]);
		r = bpf_obj_pin(ld->maps[i], path) < 0 ? -errno : 0;
	}
	if (r == 0 && rename(making, dir) < 0)
		r = -errno;
	if (r < 0)
		flat_dir_remove(making);
	return r;
}

/* The set's programs attached to @keep too, the links pinned in @dir as
 * keep_<program> (shared.h): once per set. Best effort - without it
 * attempts only start and end slower. */
static void keep_hooks_on(struct loader *ld, const char *dir, const char *keep)
{
	char path[SET_DIR_MAX + 64];
	_cleanup_close_ int cg = -1;

	snprintf(path, sizeof(path), "%s/keep_%s", dir, loader_progs[0].name);
	if (!keep || access(path, F_OK) == 0)
		return;
	if (mkdir(keep, 0755) < 0 && errno != EEXIST)
		return;
	cg = open(keep, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg < 0)
		return;
	for (int i = 0; i < LOADER_NPROGS; i++) {
		_cleanup_close_ int link = -1;

		if (ld->progs[i] < 0 || !loader_prog_per_cgroup(i))
			continue;
		link = bpf_link_create(ld->progs[i], cg, loader_progs[i].type, NULL);
		snprintf(path, sizeof(path), "%s/keep_%s", dir, loader_progs[i].name);
		/* Another egret's pin first: ours is detached as it closes. */
		if (link < 0 || bpf_obj_pin(link, path) < 0)
			log_debug("keep %s attached to %s: %s", loader_progs[i].name, keep,
				  strerror(errno));
	}
}

/* SHARED_LOCK_DIR/@name.lock, its directory made. */
static int lock_path(const char *name, char *buf, size_t len)
{
	int r = private_dir_ensure(EGRET_RUN_DIR);

	if (r == 0)
		r = private_dir_ensure(SHARED_LOCK_DIR);

	return r < 0 ? r : path_fmt(buf, len, SHARED_LOCK_DIR "/%s.lock", name);
}

/* "making_<tag>_<pid>": is its maker still at work? */
static bool maker_alive(const char *name)
{
	const char *us = strrchr(name, '_');
	long pid = us ? strtol(us + 1, NULL, 10) : 0;

	return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* Half-made sets whose maker died (killed while the verifier ran): no
 * one can use them. Under the make lock, or from gc. */
static int remove_half_made(DIR *d)
{
	char path[PATH_MAX];
	struct dirent *de;
	int n = 0;

	rewinddir(d);
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "making_", 7) || maker_alive(de->d_name))
			continue;
		snprintf(path, sizeof(path), SHARED_ROOT "/%s", de->d_name);
		if (flat_dir_remove(path) == 0)
			n++;
	}
	return n;
}

/* Load this build's set and pin it in @dir for the next attempts; under
 * the make lock. */
static int make_set(struct loader *ld, const char *dir, const char *keep,
		    const char **ret_step)
{
	_cleanup_(closedirp) DIR *d = NULL;
	int r = loader_load_set(ld, true, ret_step);

	if (r < 0)
		return r;
	r = bpffs_ensure();
	if (r == 0)
		r = private_dir_ensure(SHARED_ROOT);
	if (r == 0 && (d = opendir(SHARED_ROOT)))
		remove_half_made(d);
	if (r == 0)
		r = pin_set(ld, dir);
	if (r < 0)
		log_debug("the programs are not pinned for the next attempts: %s",
			  strerror(-r));
	else
		keep_hooks_on(ld, dir, keep);
	return 0;
}

int shared_get(struct loader *ld, bool fresh, const char *keep, const char **ret_step)
{
	char dir[SET_DIR_MAX], tag[32], path[PATH_MAX];
	_cleanup_close_ int lock = -1, make = -1;
	int r;

	/* This attempt's own (--no-shared): no task iterator, which would
	 * cost it a parse of the kernel's BTF for one uid check. */
	if (fresh)
		return loader_load_set(ld, false, ret_step);
	/* Ours to use from here: `egret gc --programs` leaves it alone. */
	loader_object_tag(tag, sizeof(tag));
	r = lock_path(tag, path, sizeof(path));
	if (r == 0)
		r = lock = lockfile_take(path, LOCK_SH);
	if (r < 0) {
		*ret_step = "lock the pinned programs for this attempt (" SHARED_LOCK_DIR ")";
		return r;
	}
	set_dir(dir, sizeof(dir));
	r = open_set(ld, dir);
	if (r == 0)
		goto done;
	loader_destroy(ld);
	/* None yet (or unusable): load it, one egret at a time. A lock we
	 * cannot take only costs a second load. */
	if (lock_path("make", path, sizeof(path)) == 0)
		make = lockfile_take(path, LOCK_EX);
	if (make >= 0) {
		r = open_set(ld, dir);	/* made while we waited */
		if (r == 0)
			goto done;
		loader_destroy(ld);
	}
	if (r != -ENOENT) {
		log_info("the pinned programs in %s are unusable (%s): loading and pinning them again",
			 dir, strerror(-r));
		flat_dir_remove(dir);
	}
	r = make_set(ld, dir, keep, ret_step);
	if (r < 0)
		return r;
	ld->set_lock = TAKE_FD(lock);
	return 0;
done:
	keep_hooks_on(ld, dir, keep);
	ld->set_lock = TAKE_FD(lock);
	return 0;
}

int shared_gc(const char *keep)
{
	char path[PATH_MAX], lock[PATH_MAX];
	_cleanup_(closedirp) DIR *d = NULL;
	struct dirent *de;
	int n, left = 0;

	d = opendir(SHARED_ROOT);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	n = remove_half_made(d);
	rewinddir(d);
	while ((de = readdir(d))) {
		const char *name = de->d_name;
		int fd;

		if (name[0] == '.' || !strncmp(name, "making_", 7))
			continue;
		/* In use (an attempt, an egretd): taken exclusively, it is not. */
		fd = lock_path(name, lock, sizeof(lock)) == 0 ?
			lockfile_take(lock, LOCK_EX | LOCK_NB) : -ENAMETOOLONG;
		if (fd < 0) {
			left++;
			continue;
		}
		snprintf(path, sizeof(path), SHARED_ROOT "/%s", name);
		if (flat_dir_remove(path) == 0)
			n++;
		else
			left++;
		lockfile_drop(lock, fd);
	}
	/* Its programs were the removed sets'; none is attached to it now. */
	if (!left && keep)
		rmdir(keep);
	return n;
}
