// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "requests/export.h"
#include "requests/import.h"
#include "requests/store.h"

#define IMPORT_REPOS_MAX	256

struct imported {
	struct request_file files[IMPORT_REPOS_MAX];
	size_t n;
};

/* The loaded file of @repo (loading it the first time), or NULL. */
static struct request_file *file_of(struct request_store *st, struct imported *im,
				    const char *repo, char *err, size_t errlen)
{
	for (size_t i = 0; i < im->n; i++)
		if (!strcmp(im->files[i].repo, repo))
			return &im->files[i];
	if (im->n == IMPORT_REPOS_MAX) {
		snprintf(err, errlen, "more than %d repositories", IMPORT_REPOS_MAX);
		return NULL;
	}
	if (request_file_load(st, repo, &im->files[im->n], err, errlen) < 0)
		return NULL;
	return &im->files[im->n++];
}

static int read_lines(struct request_store *st, struct imported *im, FILE *in,
		      const char *name, size_t *ret_n, char *err, size_t errlen)
{
	char line[REQUEST_LINE_MAX + 512], why[256];
	size_t lineno = 0;

	while (fgets(line, sizeof(line), in)) {
		struct request_line l;
		struct request_file *f;
		int r;

		lineno++;
		if (!strchr(line, '\n') && !feof(in)) {
			snprintf(err, errlen, "%s:%zu: a line over %zu bytes", name, lineno,
				 sizeof(line) - 1);
			return -EBADMSG;
		}
		r = request_export_parse(line, &l, why, sizeof(why));
		if (r == 0)
			continue;
		if (r < 0) {
			snprintf(err, errlen, "%s:%zu: %s", name, lineno, why);
			return r;
		}
		f = file_of(st, im, l.repo, why, sizeof(why));
		if (!f) {
			snprintf(err, errlen, "%s:%zu: %s", name, lineno, why);
			return -EBADMSG;
		}
		r = request_file_merge(st, f, &l.r, l.attempt, l.new_attempt);
		if (r < 0 && r != -ENOSPC)
			return r;
		(*ret_n)++;
	}
	return ferror(in) ? -EIO : 0;
}

int request_import(const char *dir, FILE *in, const char *name, size_t *ret_n,
		   char *err, size_t errlen)
{
	struct imported *im = calloc(1, sizeof(*im));
	struct request_store st;
	int r;

	*ret_n = 0;
	if (!im)
		return -ENOMEM;
	r = request_store_open(&st, dir, REQUESTS_LOCK_WAIT_MS);
	if (r == 0) {
		r = read_lines(&st, im, in, name, ret_n, err, errlen);
		for (size_t i = 0; r == 0 && i < im->n; i++)
			r = request_file_save(&st, &im->files[i]);
		request_store_close(&st);
	}
	for (size_t i = 0; i < im->n; i++)
		request_file_free(&im->files[i]);
	free(im);
	return r;
}
