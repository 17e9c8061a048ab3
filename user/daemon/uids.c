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
#include "lib/loop.h"
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

/*
 * What the accept loop has learnt of the owner files, which every handler
 * inherits at its fork (issue 42): each pick read every owner file of the
 * range, one open, pread and close each, 100-200 of them on a host whose
 * callers have run a burst, 1-2 ms of every attempt. An owner file is
 * written once and never changed (own()), so what it said stays true for
 * as long as it is there. A handler trusts an entry only for a file its
 * own read of the directory lists; an entry that names its caller is read
 * again under the uid's lock before the attempt runs as it (take_own()),
 * so a stale entry (the directory removed and made again) can only pass
 * a uid over, never give one to the wrong caller. owner + 1; 0: unknown.
 */
static uid_t known_owner[DAEMON_UIDS_MAX];
static uint64_t known_at_ms;
static unsigned int turn;

#define KNOWN_REFRESH_MS	100	/* the loop reads new files at most this often */

static bool known(const struct daemon_config *cfg, uint64_t u, uid_t *ret_owner)
{
	uid_t o = known_owner[u - cfg->uid_first];

	if (!o)
		return false;
	*ret_owner = o - 1;
	return true;
}

void uids_prepare(const struct daemon_config *cfg)
{
	_cleanup_free_ uint8_t *bits = NULL;
	uint64_t now = mono_us() / 1000;
	uid_t owner;

	turn++;
	if (known_at_ms && now - known_at_ms < KNOWN_REFRESH_MS)
		return;
	known_at_ms = now;
	bits = owner_files(cfg);
	for (uint64_t u = cfg->uid_first; bits && u <= cfg->uid_last; u++)
		if (may_be_owned(bits, cfg, u) && !known(cfg, u, &owner) &&
		    uids_owner((uid_t)u, &owner) == 0)
			known_owner[u - cfg->uid_first] = owner + 1;
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

/* uids_owner(), or -ENOENT where the directory had no file for @u; what
 * the loop knew of a file that is still there is taken as it is. */
static int owner_of(const uint8_t *bits, const struct daemon_config *cfg, uint64_t u,
		    uid_t *ret_owner)
{
	if (!may_be_owned(bits, cfg, u))
		return -ENOENT;
	return bits && known(cfg, u, ret_owner) ? 0 : uids_owner((uid_t)u, ret_owner);
}

/* take() of a uid @k owns by what was known: its file read again under
 * the lock, which decides. 0 (locked), 1 (busy, or not its own), -errno. */
static int take_own(const struct daemon_caller *k, uid_t u, int *lock)
{
	uid_t owner;
	int r = take(u, lock);

	if (r != 0)
		return r;
	if (uids_owner(u, &owner) == 0 && owner == k->uid)
		return 0;
	preflight_uid_unlock(u, *lock);
	*lock = -1;
	return 1;
}

/* One of @k's own uids that is free, locked: the lowest, as one request
 * at a time finds it, else from the loop's turn on, different for each
 * request, so that the requests of a burst do not each try every busy
 * uid before their own. 1: every one busy (or none), with their number in
 * *@ret_owned and whether the range had an unowned uid in *@ret_unowned. */
static int pick_own(const struct daemon_config *cfg, const struct daemon_caller *k,
		    const uint8_t *bits, uid_t *ret, int *ret_lock,
		    unsigned int *ret_owned, bool *ret_unowned)
{
	size_t n = (size_t)cfg->uid_last - cfg->uid_first + 1;
	_cleanup_free_ uid_t *own = calloc(n, sizeof(*own));
	unsigned int owned = 0, first;
	uid_t owner;
	int r;

	if (!own)
		return -ENOMEM;
	for (uint64_t u = cfg->uid_first; u <= cfg->uid_last; u++) {
		r = owner_of(bits, cfg, u, &owner);
		if (r == -ENOENT)
			*ret_unowned = true;
		if (r == 0 && owner == k->uid)
			own[owned++] = (uid_t)u;
	}
	*ret_owned = owned;
	first = owned ? turn % owned : 0;
	/* The lowest, then from the turn on, each once. */
	for (unsigned int i = 0; owned && i <= owned; i++) {
		unsigned int at = i ? (first + i - 1) % owned : 0;

		if (i && !at)
			continue;
		r = take_own(k, own[at], ret_lock);
		if (r <= 0) {
			*ret = own[at];
			return r;
		}
	}
	return 1;
}

int uids_pick(const struct daemon_config *cfg, const struct daemon_caller *k,
	      uid_t *ret, int *ret_lock)
{
	unsigned int owned = 0;
	_cleanup_free_ uint8_t *bits = NULL;
	bool unowned = false;
	uid_t owner;
	int r;

	r = private_dir_ensure(EGRET_UID_LOCK_DIR);
	if (r < 0)
		return r;
	bits = owner_files(cfg);
	/* Its own first. */
	r = pick_own(cfg, k, bits, ret, ret_lock, &owned, &unowned);
	if (r <= 0)
		return r;
	if (owned >= uids_share(cfg, k))
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
