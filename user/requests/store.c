// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * requests/store.c - the request store on disk: its directory and lock,
 * a repository's file read and written whole, ids, and merging what an
 * attempt saw into a file. The files' text: requests/record.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "lib/atomic_file.h"
#include "lib/trust.h"
#include "lib/util.h"
#include "policy/policy.h"
#include "requests/store.h"

#define LINE_MAX_LEN	4096

/* ---- the directory ------------------------------------------------ */

static int file_of(const struct request_store *s, const char *repo, char *buf,
		   size_t len)
{
	char name[2 * POLICY_REPO_MAX];
	int r = policy_repo_file_name(repo, name, sizeof(name));

	if (r < 0)
		return r;
	if ((size_t)snprintf(buf, len, "%s/requests/%s", s->dir, name) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int request_store_prepare(const char *dir)
{
	char sub[4200];
	int r;

	r = private_dir_ensure(dir);
	if (r < 0)
		return r;
	if ((size_t)snprintf(sub, sizeof(sub), "%s/requests", dir) >= sizeof(sub))
		return -ENAMETOOLONG;
	return private_dir_ensure(sub);
}

int request_store_open(struct request_store *s, const char *dir, int wait_ms)
{
	char path[4200];
	int r;

	*s = (struct request_store){ .lock_fd = -1 };
	if ((size_t)snprintf(s->dir, sizeof(s->dir), "%s", dir) >= sizeof(s->dir))
		return -ENAMETOOLONG;
	r = request_store_prepare(dir);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "%s/lock", dir);
	s->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (s->lock_fd < 0)
		return -errno;
	/* Bounded: a stuck holder must not hang attempts at exit. */
	for (int waited = 0;; waited += 20) {
		if (flock(s->lock_fd, LOCK_EX | LOCK_NB) == 0) {
			/* Every writer holds the lock: what a dead one left
			 * half-written goes now. */
			snprintf(path, sizeof(path), "%s/requests", dir);
			atomic_file_sweep(dir);
			atomic_file_sweep(path);
			return 0;
		}
		if (errno != EWOULDBLOCK || waited >= wait_ms)
			break;
		usleep(20000);
	}
	r = errno == EWOULDBLOCK ? -EAGAIN : -errno;
	close(s->lock_fd);
	s->lock_fd = -1;
	return r;
}

void request_store_close(struct request_store *s)
{
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	s->lock_fd = -1;
}

/* ---- one repository's file ---------------------------------------- */

static int read_header(FILE *in, char *repo, size_t repolen, uint64_t *dropped)
{
	char line[LINE_MAX_LEN];

	if (!fgets(line, sizeof(line), in))
		return -EBADMSG;
	return request_header_parse(line, repo, repolen, dropped);
}

int request_file_load(const struct request_store *s, const char *repo,
		      struct request_file *f, char *err, size_t errlen)
{
	char path[4400], line[LINE_MAX_LEN], in_file[POLICY_REPO_MAX];
	_cleanup_fclose_ FILE *in = NULL;
	unsigned int lineno = 1;
	int r;

	memset(f, 0, sizeof(*f));
	snprintf(f->repo, sizeof(f->repo), "%s", repo);
	r = file_of(s, repo, path, sizeof(path));
	if (r < 0)
		return r;
	in = fopen(path, "re");
	if (!in && errno == ENOENT)
		return 0;
	if (!in)
		return -errno;
	if (read_header(in, in_file, sizeof(in_file), &f->dropped) < 0) {
		snprintf(err, errlen, "%s:1: not an egret requests file", path);
		return -EBADMSG;
	}
	if (strcasecmp(in_file, repo)) {
		snprintf(err, errlen, "%s holds requests of '%s', not '%s'", path,
			 in_file, repo);
		return -EBADMSG;
	}
	snprintf(f->repo, sizeof(f->repo), "%s", in_file);
	while (fgets(line, sizeof(line), in)) {
		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if ((r = array_grow((void **)&f->items, &f->cap, f->n, sizeof(*f->items),
				       REQUESTS_MAX_RECORDS)) < 0) {
			snprintf(err, errlen, "%s: more than %d records", path,
				 REQUESTS_MAX_RECORDS);
			return r;
		}
		if (request_parse(line, &f->items[f->n]) < 0) {
			snprintf(err, errlen, "%s:%u: corrupt record", path, lineno);
			return -EBADMSG;
		}
		f->n++;
	}
	return ferror(in) ? -EIO : 0;
}

static int fill(FILE *out, const void *ctx)
{
	const struct request_file *f = ctx;
	char line[LINE_MAX_LEN];
	int r;

	request_header_format(f, line, sizeof(line));
	fprintf(out, "%s\n", line);
	for (size_t i = 0; i < f->n; i++) {
		r = request_format(&f->items[i], line, sizeof(line));
		if (r < 0)
			return r;
		fprintf(out, "%s\n", line);
	}
	return 0;
}

static int fill_next_id(FILE *out, const void *ctx)
{
	fprintf(out, "%lu\n", *(const unsigned long *)ctx);
	return 0;
}

int request_file_save(struct request_store *s, const struct request_file *f)
{
	char path[4400];
	int r = file_of(s, f->repo, path, sizeof(path));

	if (r == 0 && s->ids_taken) {
		char idpath[4200];

		snprintf(idpath, sizeof(idpath), "%s/next-id", s->dir);
		r = atomic_file_write(idpath, 0600, fill_next_id, &s->next_id);
		s->ids_taken = r < 0;
	}
	return r < 0 ? r : atomic_file_write(path, 0600, fill, f);
}

void request_file_free(struct request_file *f)
{
	free(f->items);
	f->items = NULL;
	f->n = f->cap = 0;
}

int request_store_repos(const struct request_store *s, char ***ret_repos,
			size_t *ret_n)
{
	char path[4400], **repos = NULL, repo[POLICY_REPO_MAX];
	_cleanup_(closedirp) DIR *dir = NULL;
	struct dirent *de;
	size_t n = 0;
	uint64_t dropped;

	snprintf(path, sizeof(path), "%s/requests", s->dir);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		_cleanup_fclose_ FILE *in = NULL;
		char **mem;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/requests/%s", s->dir, de->d_name);
		in = fopen(path, "re");
		if (!in || read_header(in, repo, sizeof(repo), &dropped) < 0)
			continue;
		mem = reallocarray(repos, n + 1, sizeof(*repos));
		if (!mem || !(mem[n] = strdup(repo))) {
			free(mem ? mem : repos);
			return -ENOMEM;
		}
		repos = mem;
		n++;
	}
	*ret_repos = repos;
	*ret_n = n;
	return 0;
}

/* ---- merging ------------------------------------------------------ */

/* @fn for every request of every repository's file that reads. */
static void each_request(const struct request_store *s,
			 void (*fn)(const struct request *r, void *ctx), void *ctx)
{
	char **repos = NULL, err[512];
	size_t n = 0;

	if (request_store_repos(s, &repos, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		struct request_file f;

		if (request_file_load(s, repos[i], &f, err, sizeof(err)) == 0)
			for (size_t j = 0; j < f.n; j++)
				fn(&f.items[j], ctx);
		request_file_free(&f);
		free(repos[i]);
	}
	free(repos);
}

static void take_max_id(const struct request *r, void *ctx)
{
	unsigned long *max = ctx;

	*max = r->id > *max ? r->id : *max;
}

/* The highest id in the store's files: next-id lost or damaged. */
static unsigned long highest_id(const struct request_store *s)
{
	unsigned long max = 0;

	each_request(s, take_max_id, &max);
	return max;
}

static void count_pending(const struct request *r, void *ctx)
{
	*(uint64_t *)ctx += r->status == REQUEST_PENDING;
}

uint64_t request_store_pending(const struct request_store *s)
{
	uint64_t n = 0;

	each_request(s, count_pending, &n);
	return n;
}

/* Ids are global and never reused; next-id is written (atomically, before
 * the file that uses them) by request_file_save(). */
static unsigned long next_id(struct request_store *s)
{
	if (!s->next_id) {
		char path[4200], buf[32] = "", *end;
		_cleanup_fclose_ FILE *in = NULL;
		unsigned long v = 0;

		snprintf(path, sizeof(path), "%s/next-id", s->dir);
		in = fopen(path, "re");
		if (in && fgets(buf, sizeof(buf), in)) {
			errno = 0;
			v = strtoul(buf, &end, 10);
			if (errno || (*end && *end != '\n'))
				v = 0;
		}
		s->next_id = v ? v : highest_id(s) + 1;
	}
	s->ids_taken = true;
	return s->next_id++;
}

static void add_attempt(struct request *r, const char *attempt)
{
	for (unsigned int i = 0; i < r->nrecent; i++)
		if (!strcmp(r->attempts[i], attempt))
			return;
	if (r->nrecent == REQUEST_ATTEMPTS) {
		memmove(r->attempts[0], r->attempts[1],
			(REQUEST_ATTEMPTS - 1) * sizeof(r->attempts[0]));
		r->nrecent--;
	}
	snprintf(r->attempts[r->nrecent++], sizeof(r->attempts[0]), "%s", attempt);
}

int request_file_merge(struct request_store *s, struct request_file *f,
		       const struct request *seen, const char *attempt,
		       bool new_attempt)
{
	struct request *r = NULL;
	int err;

	for (size_t i = 0; i < f->n; i++) {
		struct request *x = &f->items[i];

		if (x->kind == seen->kind && x->port == seen->port &&
		    !strcmp(x->target, seen->target)) {
			r = x;
			break;
		}
	}
	if (!r) {
		size_t pending = 0;

		for (size_t i = 0; i < f->n; i++)
			pending += f->items[i].status == REQUEST_PENDING;
		if (pending >= REQUESTS_MAX_PENDING || f->n >= REQUESTS_MAX_RECORDS) {
			f->dropped++;
			return -ENOSPC;
		}
		if ((err = array_grow((void **)&f->items, &f->cap, f->n, sizeof(*f->items),
				       REQUESTS_MAX_RECORDS)) < 0)
			return err;
		r = &f->items[f->n];
		*r = (struct request){ .kind = seen->kind, .port = seen->port,
				       .first = seen->first };
		strcpy(r->target, seen->target);
		r->id = next_id(s);
		f->n++;
	}
	r->count += seen->count;
	if (new_attempt)
		r->nattempts++;
	if (seen->first < r->first)
		r->first = seen->first;
	if (seen->last > r->last)
		r->last = seen->last;
	add_attempt(r, attempt);
	/* An agent's ask (no denial counted) leaves the proto a refusal set. */
	if (seen->count || !r->proto[0])
		snprintf(r->proto, sizeof(r->proto), "%s", seen->proto);
	if (seen->why[0])	/* its latest reason */
		memcpy(r->why, seen->why, sizeof(r->why));
	if (seen->pid || seen->comm[0]) {
		r->pid = seen->pid;
		snprintf(r->comm, sizeof(r->comm), "%s", seen->comm);
	}
	for (unsigned int i = 0; i < seen->ncommands; i++)
		request_add_command(r, seen->commands[i]);
	return 0;
}
