// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attempt/preflight.h"
#include "daemon/uids.h"
#include "lib/atomic_file.h"
#include "lib/log.h"
#include "lib/paths.h"
#include "lib/trust.h"
#include "lib/util.h"

#define OWNER_PREFIX	"owner-"

static void owner_path(uid_t uid, char *buf, size_t len)
{
	snprintf(buf, len, EGRET_UID_LOCK_DIR "/" OWNER_PREFIX "%u", (unsigned int)uid);
}

/* Which uids of the range may have an owner, one bit each (uid_first
 * first), from one read of the directory: opening each uid's file, most
 * of them absent, cost 2.8-3.3 ms of every pick over a range of 1024
 * (issue 42). A bit set is only "read its file"; a bit clear is "had no
 * file when the directory was read", which take() checks again under the
 * uid's lock. NULL (no memory, no directory): every bit set, every file
 * read, as before. */
static uint8_t *owner_files(const struct daemon_config *cfg)
{
	size_t n = (size_t)cfg->uid_last - cfg->uid_first + 1;
	_cleanup_(closedirp) DIR *d = opendir(EGRET_UID_LOCK_DIR);
	uint8_t *bits = d ? calloc((n + 7) / 8, 1) : NULL;
	struct dirent *de;

	while (bits && (de = readdir(d))) {
		const char *num = de->d_name + sizeof(OWNER_PREFIX) - 1;
		unsigned long v;
		char *end;

		if (strncmp(de->d_name, OWNER_PREFIX, sizeof(OWNER_PREFIX) - 1) ||
		    *num < '0' || *num > '9')
			continue;
		v = strtoul(num, &end, 10);
		if (*end || v < cfg->uid_first || v > cfg->uid_last)
			continue;
		v -= cfg->uid_first;
		bits[v / 8] |= (uint8_t)(1u << (v % 8));
	}
	return bits;
}

static bool may_be_owned(const uint8_t *bits, const struct daemon_config *cfg, uint64_t u)
{
	uint64_t i = u - cfg->uid_first;

	return !bits || (bits[i / 8] & (1u << (i % 8)));
}

/* uids_owner(), or -ENOENT where the directory had no file for @u. */
static int owner_of(const uint8_t *bits, const struct daemon_config *cfg, uint64_t u,
		    uid_t *ret_owner)
{
	return may_be_owned(bits, cfg, u) ? uids_owner((uid_t)u, ret_owner) : -ENOENT;
}

unsigned int uids_share(const struct daemon_config *cfg, const struct daemon_caller *k)
{
	unsigned long long n = (unsigned long long)cfg->uid_last - cfg->uid_first + 1;
	unsigned long long s = (unsigned long long)UIDS_SHARE * k->max;

	return (unsigned int)(s < n ? s : n);
}

int uids_owner(uid_t uid, uid_t *ret_owner)
{
	_cleanup_close_ int fd = -1;
	char path[64], text[16] = "", *end;
	unsigned long v;
	ssize_t n;

	owner_path(uid, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -errno;
	n = pread(fd, text, sizeof(text) - 1, 0);
	if (n < 0)
		return -errno;
	v = strtoul(text, &end, 10);
	/* Written whole by rename: anything else is not ours to trust, and
	 * the uid stays out of everyone's reach (fail closed). */
	if (end == text || *end != '\n' || v > (uid_t)-2)
		return -EBADMSG;
	*ret_owner = (uid_t)v;
	return 0;
}

static int fill_owner(FILE *f, const void *ctx)
{
	return fprintf(f, "%u\n", *(const unsigned int *)ctx) < 0 ? -EIO : 0;
}

static int own(uid_t uid, uid_t caller)
{
	char path[64];
	unsigned int c = (unsigned int)caller;

	owner_path(uid, path, sizeof(path));
	return atomic_file_write(path, 0600, fill_owner, &c);
}

/* Lock @u and check no process runs as it: 0 (locked, in *@lock), 1 when
 * busy, -errno. */
static int take(uid_t u, int *lock)
{
	char why[320];
	pid_t other;
	int r = preflight_uid_lock(u, lock, &other);

	if (r == -EWOULDBLOCK)
		return 1;
	if (r < 0)
		return r;
	if (preflight_shared_uid(u, why, sizeof(why)) == 0)
		return 0;
	preflight_uid_unlock(u, *lock);
	*lock = -1;
	return 1;
}

int uids_pick(const struct daemon_config *cfg, const struct daemon_caller *k,
	      uid_t *ret, int *ret_lock)
{
	unsigned int owned = 0, share = uids_share(cfg, k);
	_cleanup_free_ uint8_t *bits = NULL;
	bool unowned = false;
	uid_t owner;
	int r;

	r = private_dir_ensure(EGRET_UID_LOCK_DIR);
	if (r < 0)
		return r;
	bits = owner_files(cfg);
	/* Its own first, lowest first. */
	for (uint64_t u = cfg->uid_first; u <= cfg->uid_last; u++) {
		r = owner_of(bits, cfg, u, &owner);
		if (r == -ENOENT)
			unowned = true;
		if (r < 0 || owner != k->uid)
			continue;
		owned++;
		r = take((uid_t)u, ret_lock);
		if (r <= 0) {
			*ret = (uid_t)u;
			return r;
		}
	}
	if (owned >= share)
		return -EBUSY;
	if (!unowned)
		return -ENOSPC;
	/* A new one. The owner is read again under the uid's lock: two
	 * callers' requests that both found it unowned meet there. */
	for (uint64_t u = cfg->uid_first; u <= cfg->uid_last; u++) {
		if (owner_of(bits, cfg, u, &owner) != -ENOENT)
			continue;
		r = take((uid_t)u, ret_lock);
		if (r < 0)
			return r;
		if (r > 0)
			continue;
		r = uids_owner((uid_t)u, &owner);
		if (r == -ENOENT)
			r = own((uid_t)u, k->uid);
		else if (r == 0 && owner == k->uid)
			r = 0;
		else
			r = 1;	/* taken meanwhile, by another caller */
		if (r == 0) {
			*ret = (uid_t)u;
			return 0;
		}
		preflight_uid_unlock((uid_t)u, *ret_lock);
		*ret_lock = -1;
		if (r < 0)
			return log_error_errno(r, "record the owner of uid %u", (unsigned int)u);
	}
	return -ENOSPC;
}
