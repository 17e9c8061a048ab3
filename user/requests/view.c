// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/log.h"
#include "requests/view.h"

void view_free(struct store_view *v)
{
	for (size_t i = 0; i < v->n; i++)
		request_file_free(&v->files[i]);
	free(v->files);
	request_store_close(&v->st);
}

/* Lock the store and read every repository's requests (or @repo's). */
int view_load(struct store_view *v, const char *dir, const char *repo)
{
	char **repos = NULL, err[512] = "";
	size_t nrepos = 0;
	int r;

	memset(v, 0, sizeof(*v));
	r = request_store_open(&v->st, dir, REQUESTS_LOCK_WAIT_MS);
	if (r < 0)
		return log_error_errno(r, "open the request store %s%s", dir,
				       r == -EACCES || r == -EPERM ?
				       " (needs root, or egret's uid)" :
				       r == -EAGAIN ? " (its lock is held: try again)" : "");
	r = request_store_repos(&v->st, &repos, &nrepos);
	if (r < 0)
		return log_error_errno(r, "read %s/requests", dir);
	v->files = calloc(nrepos ? nrepos : 1, sizeof(*v->files));
	for (size_t i = 0; r == 0 && v->files && i < nrepos; i++) {
		if (repo && strcasecmp(repos[i], repo))
			continue;
		r = request_file_load(&v->st, repos[i], &v->files[v->n], err, sizeof(err));
		if (r < 0)
			log_error("%s", err[0] ? err : strerror(-r));
		else
			v->n++;
	}
	for (size_t i = 0; i < nrepos; i++)
		free(repos[i]);
	free(repos);
	return !v->files ? -ENOMEM : r;
}
