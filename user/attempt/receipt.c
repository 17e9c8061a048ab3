// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attempt/receipt.c - the receipt of an attempt (attempt/receipt.h): its
 * facts gathered, signed (observe/receipt.h), written where the caller
 * asked - through egretd into the fd the caller opened with its own
 * rights - and kept in the state directory, oldest pruned.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attempt/attempt.h"
#include "attempt/effective.h"
#include "attempt/options.h"
#include "attempt/receipt.h"
#include "lib/atomic_file.h"
#include "lib/log.h"
#include "lib/paths.h"
#include "lib/sign.h"
#include "lib/trust.h"
#include "lib/util.h"
#include "observe/receipt.h"
#include "policy/show.h"
#include "requests/store.h"

#ifndef EGRET_VERSION
#define EGRET_VERSION "0.1.0"
#endif

int receipt_key_path(const char *key_opt, const char *state_dir, char *buf, size_t len)
{
	if (key_opt)
		return path_fmt(buf, len, "%s", key_opt);
	return path_fmt(buf, len, "%s/%s", state_dir ? state_dir : REQUESTS_DEFAULT_DIR,
			RECEIPT_KEY_NAME);
}

/* The effective policy as `egret check --json` shows it, hashed. */
static int policy_digest(const struct run_opts *o, char hex[65])
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	int r;

	if (!f)
		return -errno;
	policy_show_json(f, &o->policy, effective_source(o), o->builtin_policy, o->repo,
			 o->max_entries, o->max_cidrs, o->dns_min_ttl);
	if (fclose(f) != 0) {
		free(text);
		return -EIO;
	}
	r = sign_sha256_hex(text, n, hex);
	free(text);
	return r;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Where the caller asked: root's path, or egretd's caller's fd. */
static int hand_over(const struct run_opts *o, const char *text, size_t len)
{
	_cleanup_close_ int fd = -1;
	int r;

	if (o->receipt_fd >= 0)
		return write_all(o->receipt_fd, text, len);
	fd = open(o->receipt_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	r = write_all(fd, text, len);
	return r == 0 && fsync(fd) < 0 ? -errno : r;
}

struct keep_entry {
	char name[EGRET_ID_MAX + 8];
	time_t mtime;
};

static int newest_first(const void *a, const void *b)
{
	const struct keep_entry *x = a, *y = b;

	return x->mtime < y->mtime ? 1 : x->mtime > y->mtime ? -1 : 0;
}

/* At most RECEIPTS_KEEP, none older than RECEIPTS_KEEP_DAYS. */
static void prune(const char *dir)
{
	_cleanup_free_ struct keep_entry *e = calloc(RECEIPTS_KEEP + 64, sizeof(*e));
	time_t cutoff = time(NULL) - (time_t)RECEIPTS_KEEP_DAYS * 86400;
	size_t n = 0, cap = RECEIPTS_KEEP + 64;
	struct dirent *de;
	struct stat st;
	DIR *d = opendir(dir);

	if (!d || !e) {
		if (d)
			closedir(d);
		return;
	}
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);

		if (l < 6 || strcmp(de->d_name + l - 5, ".json") || l >= sizeof(e->name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (st.st_mtime < cutoff || n == cap) {
			unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		memcpy(e[n].name, de->d_name, l + 1);
		e[n++].mtime = st.st_mtime;
	}
	qsort(e, n, sizeof(*e), newest_first);
	for (size_t i = RECEIPTS_KEEP; i < n; i++)
		unlinkat(dirfd(d), e[i].name, 0);
	closedir(d);
}

static int fill_text(FILE *f, const void *ctx)
{
	return fputs(ctx, f) < 0 ? -EIO : 0;
}

static int keep(const struct run_opts *o, const char *id, const char *text)
{
	const char *state = o->state_dir ? o->state_dir : REQUESTS_DEFAULT_DIR;
	char dir[PATH_MAX], path[PATH_MAX];
	int r;

	if (path_fmt(dir, sizeof(dir), "%s/receipts", state) < 0 ||
	    path_fmt(path, sizeof(path), "%s/%s.json", dir, id) < 0)
		return -ENAMETOOLONG;
	r = private_dir_ensure(dir);
	if (r == 0)
		r = atomic_file_write(path, 0600, fill_text, text);
	if (r == 0)
		prune(dir);
	return r;
}

int attempt_receipt(struct attempt *a, const struct run_opts *o, int status, bool readopted)
{
	const char *state = o->state_dir ? o->state_dir : REQUESTS_DEFAULT_DIR;
	struct receipt_facts f = {
		.attempt = a->st.id, .repo = o->repo, .version = EGRET_VERSION,
		.started = a->st.started, .ended = time(NULL), .daemon = a->st.daemon,
		.caller = a->st.caller, .readopted = readopted, .status = status,
		.timed_out = a->timed_out,
	};
	char hex[65], keypath[PATH_MAX];
	_cleanup_free_ char *text = NULL;
	struct sign_key key;
	size_t len;
	int r;

	/* A re-adopted attempt whose caller asked: the kept copy only. */
	bool keep_only = !o->receipt_path && o->receipt_fd < 0 && readopted && a->st.receipt;

	if (!o->receipt_path && o->receipt_fd < 0 && !keep_only)
		return 0;
	f.policy_sha256 = hex;
	r = receipt_key_path(o->receipt_key, o->state_dir, keypath, sizeof(keypath));
	if (r == 0 && !o->receipt_key)
		r = request_store_prepare(state);
	if (r == 0)
		r = sign_key_load(keypath, 1, &key);
	if (r < 0)
		return log_error_errno(r, "no receipt: the signing key %s", keypath);
	r = policy_digest(o, hex);
	if (r == 0)
		r = receipt_make(&a->ev, &f, &key, &text, &len);
	sign_key_clear(&key);
	if (r < 0)
		return log_error_errno(r, "no receipt: make it");
	r = keep_only ? 0 : hand_over(o, text, len);
	if (r < 0)
		return log_error_errno(r, "no receipt: write %s",
				       o->receipt_fd >= 0 ? "the caller's file" : o->receipt_path);
	r = keep(o, a->st.id, text);
	if (r < 0)
		log_warn("warning: the receipt is not kept in %s/receipts: %s", state, strerror(-r));
	log_info("attempt %s: receipt written, signed by %s", a->st.id, key.pub_text);
	return 0;
}
