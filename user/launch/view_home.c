// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launch/view_home.h"
#include "lib/sigsafe.h"
#include "lib/util.h"

struct copy {
	uid_t owner;		/* whose every entry must be */
	uid_t uid;		/* COMMAND's: what the copy makes is its */
	gid_t gid;
	unsigned long files;
	unsigned long long bytes;
};

/* Nothing the copy makes is others' to write, nor set-id. */
static mode_t safe_mode(mode_t m)
{
	return m & 0775;
}

static int copy_file(struct copy *c, int from_fd, const struct stat *st, int to, const char *name)
{
	_cleanup_close_ int out = -1;
	char buf[16384];
	ssize_t n;

	out = openat(to, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     safe_mode(st->st_mode));
	if (out < 0)
		return -errno;
	if (fchown(out, c->uid, c->gid) < 0 || fchmod(out, safe_mode(st->st_mode)) < 0)
		return -errno;
	while ((n = read(from_fd, buf, sizeof(buf))) > 0) {
		if ((c->bytes += (unsigned long long)n) > VIEW_HOME_BYTES_MAX)
			return -E2BIG;
		for (ssize_t at = 0; at < n;) {
			ssize_t w = write(out, buf + at, (size_t)(n - at));

			if (w < 0)
				return -errno;
			at += w;
		}
	}
	return n < 0 ? -errno : 0;
}

static int copy_tree(struct copy *c, int from, int to, int depth);

/* A symlink, copied as one: its text only, never followed. */
static int copy_link(struct copy *c, int from, int to, const char *name)
{
	char target[PATH_MAX];
	ssize_t n = readlinkat(from, name, target, sizeof(target) - 1);

	if (n < 0)
		return -errno;
	target[n] = '\0';
	if (symlinkat(target, to, name) < 0 ||
	    fchownat(to, name, c->uid, c->gid, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return 0;
}

static int copy_dir(struct copy *c, int in, const struct stat *st, int to, const char *name,
		    int depth)
{
	_cleanup_close_ int made = -1;
	int r;

	if (depth >= VIEW_HOME_DEPTH)
		return -E2BIG;
	if (mkdirat(to, name, 0700) < 0)
		return -errno;
	made = openat(to, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (made < 0)
		return -errno;
	if (fchown(made, c->uid, c->gid) < 0)
		return -errno;
	r = copy_tree(c, in, made, depth + 1);
	if (r == 0 && fchmod(made, safe_mode(st->st_mode)) < 0)
		r = -errno;
	return r;
}

/* One entry @name of @from into @to, judged on what was opened (owner,
 * type), never followed. */
static int copy_entry(struct copy *c, int from, int to, const char *name, int depth)
{
	_cleanup_close_ int in = -1;
	struct stat st;

	if (++c->files > VIEW_HOME_FILES_MAX)
		return -E2BIG;
	if (fstatat(from, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (st.st_uid != c->owner)
		return -EPERM;
	if (S_ISLNK(st.st_mode))
		return copy_link(c, from, to, name);
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return 0;	/* a device, FIFO or socket: left out */
	in = openat(from, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC |
		    (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0));
	if (in < 0)
		return -errno;
	if (fstat(in, &st) < 0)
		return -errno;
	if (st.st_uid != c->owner)
		return -EPERM;
	if (S_ISDIR(st.st_mode))
		return copy_dir(c, in, &st, to, name, depth);
	return S_ISREG(st.st_mode) ? copy_file(c, in, &st, to, name) : 0;
}

struct tree_ctx {
	struct copy *c;
	int to;
	int depth;
};

static int copy_one(int from, const char *name, void *ctx)
{
	struct tree_ctx *t = ctx;

	return copy_entry(t->c, from, t->to, name, t->depth);
}

static int copy_tree(struct copy *c, int from, int to, int depth)
{
	struct tree_ctx t = { c, to, depth };

	return dirents_each(from, copy_one, &t);
}

int view_home_make(int from, uid_t owner, uid_t uid, gid_t gid)
{
	char opts[64] = "mode=0700,uid=", *p;
	_cleanup_close_ int home = -1, top = -1;
	struct copy c = { .owner = owner, .uid = uid, .gid = gid };

	/* The mount point is the host's (an empty directory of root's); the
	 * tmpfs over it is the attempt's alone. */
	if (mkdir(VIEW_HOME, 0755) < 0 && errno != EEXIST)
		return -errno;
	p = put_uint(opts + strlen(opts), (unsigned int)uid);
	strcpy(p, ",gid=");
	put_uint(p + strlen(p), (unsigned int)gid);
	if (mount("tmpfs", VIEW_HOME, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		return -errno;
	if (from < 0)
		return 0;
	home = open(VIEW_HOME, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	top = openat(from, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (home < 0 || top < 0)
		return -errno;
	return copy_tree(&c, top, home, 0);
}
