// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git/layout.h"
#include "lib/util.h"

/* ".." walked at most this far: deeper than any real tree. */
#define UP_MAX	4096

#define O_DIR_PATH	(O_PATH | O_DIRECTORY | O_CLOEXEC)

static int id_of(int fd, struct git_id *id)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	*id = (struct git_id){ st.st_dev, st.st_ino };
	return 0;
}

static bool id_same(const struct git_id *a, const struct git_id *b)
{
	return a->dev == b->dev && a->ino == b->ino;
}

bool git_id_is(int fd, const struct git_id *id)
{
	struct git_id here = { 0 };

	return id_of(fd, &here) == 0 && id_same(&here, id);
}

int git_open_checked(const char *path, const struct git_id *id)
{
	int fd = open(path, O_DIR_PATH);

	if (fd < 0)
		return -errno;
	if (!git_id_is(fd, id)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

static bool owned_by(int fd, uid_t uid)
{
	struct stat st;

	return fstat(fd, &st) == 0 && st.st_uid == uid;
}

bool git_looks_like_gitdir(int fd)
{
	struct stat st;

	return fstatat(fd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	       fstatat(fd, "objects", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
	       fstatat(fd, "refs", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* @dfd's regular file @name, one line at most (its newline dropped), into
 * @buf: 0, or -errno (-EINVAL: not one line of text; -ENAMETOOLONG). */
static int read_line(int dfd, const char *name, char *buf, size_t len)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	ssize_t n;

	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	n = read(fd, buf, len - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n == len - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	if (n > 0 && buf[n - 1] == '\r')
		buf[--n] = '\0';
	if (n == 0 || strlen(buf) != (size_t)n || strchr(buf, '\n'))
		return -EINVAL;
	return 0;
}

/* 1 if @id is @fd's directory or one above it, 0 if not, -errno. */
static int at_or_above(int fd, const struct git_id *id)
{
	_cleanup_close_ int cur = openat(fd, ".", O_DIR_PATH);
	struct git_id here = { 0 }, above = { 0 };

	if (cur < 0)
		return -errno;
	for (int i = 0; i < UP_MAX; i++) {
		int up, r = id_of(cur, &here);

		if (r < 0)
			return r;
		if (id_same(&here, id))
			return 1;
		up = openat(cur, "..", O_DIR_PATH);
		if (up < 0)
			return -errno;
		r = id_of(up, &above);
		close(cur);
		cur = up;
		if (r < 0)
			return r;
		if (id_same(&above, &here))
			return 0;	/* the root */
	}
	return -ELOOP;
}

/* @path (from a pointer file in @dfd): relative to @dfd, or absolute
 * through the rules' opener. */
static int open_pointer(const struct git_layout_rules *r, int dfd, const char *path)
{
	int fd;

	if (path[0] == '/')
		return r->open_dir(r->ctx, path);
	fd = openat(dfd, path, O_DIR_PATH);
	return fd < 0 ? -errno : fd;
}

/* A clone: TOP/.git, a git directory that names no other. */
static int find_clone(int topfd, const struct git_layout_rules *r, char *err, size_t errlen)
{
	_cleanup_close_ int dotgit = openat(topfd, ".git", O_DIR_PATH | O_NOFOLLOW);
	struct stat st;

	if (dotgit < 0)
		return snprintf(err, errlen, "%s/.git: %s", r->top, strerror(errno)), -errno;
	if (!owned_by(dotgit, r->owner))
		return snprintf(err, errlen, "%s/.git is not the caller's", r->top), -EPERM;
	if (!git_looks_like_gitdir(dotgit))
		return snprintf(err, errlen, "%s/.git is not a git directory (no HEAD, objects/ or refs/)",
				r->top), -EINVAL;
	if (fstatat(dotgit, "commondir", &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
		return snprintf(err, errlen, "%s/.git/commondir is there, and a clone's git directory names no other (an attempt may have written it: remove it)",
				r->top), -EINVAL;
	return 0;
}

/* "gitdir: COMMON/worktrees/NAME" of TOP/.git, split: COMMON into
 * ret->common (absolute), NAME into ret->name; the whole into @gitdir. */
static int split_pointer(const struct git_layout_rules *r, const char *line,
			 struct git_layout *ret, char *gitdir, size_t len)
{
	static const char worktrees[] = "worktrees";
	const char *name, *prev;
	size_t n;

	if (strncmp(line, "gitdir: ", 8))
		return -EINVAL;
	line += 8;
	n = line[0] == '/' ? (size_t)snprintf(gitdir, len, "%s", line) :
			     (size_t)snprintf(gitdir, len, "%s/%s", r->top, line);
	if (n >= len)
		return -ENAMETOOLONG;
	while (n > 1 && gitdir[n - 1] == '/')
		gitdir[--n] = '\0';
	name = strrchr(gitdir, '/');
	prev = name && name > gitdir ? memrchr(gitdir, '/', (size_t)(name - gitdir)) : NULL;
	if (!prev || !strcmp(name + 1, "") || !strcmp(name + 1, ".") || !strcmp(name + 1, "..") ||
	    strlen(name + 1) >= sizeof(ret->name) ||
	    (size_t)(name - prev - 1) != strlen(worktrees) ||
	    strncmp(prev + 1, worktrees, strlen(worktrees)))
		return -EINVAL;
	strcpy(ret->name, name + 1);
	n = prev == gitdir ? 1 : (size_t)(prev - gitdir);
	memcpy(ret->common, gitdir, n);
	ret->common[n] = '\0';
	return 0;
}

/* The worktree's own directory's pointers name COMMON and TOP/.git back. */
static int check_backpointers(int topfd, int nfd, const struct git_layout_rules *r,
			      const struct git_layout *l, char *err, size_t errlen)
{
	char line[PATH_MAX + 16], *base;
	_cleanup_close_ int common = -1, back = -1;
	struct git_id top = { 0 };
	int rr;

	rr = read_line(nfd, "commondir", line, sizeof(line));
	if (rr == 0 && (common = open_pointer(r, nfd, line)) < 0)
		rr = common;
	if (rr < 0 || !git_id_is(common, &l->common_id))
		return snprintf(err, errlen, "%s/worktrees/%s/commondir does not name %s", l->common,
				l->name, l->common), -EINVAL;
	rr = read_line(nfd, "gitdir", line, sizeof(line));
	base = rr == 0 ? strrchr(line, '/') : NULL;
	if (base && strcmp(base, "/.git"))
		base = NULL;
	if (base) {
		*base = '\0';
		back = open_pointer(r, nfd, line[0] ? line : "/");
	}
	if (!base || back < 0 || id_of(topfd, &top) < 0 || !git_id_is(back, &top))
		return snprintf(err, errlen, "%s/worktrees/%s/gitdir does not name %s/.git back: that worktree is not this one",
				l->common, l->name, r->top), -EINVAL;
	return 0;
}

/* COMMON is neither TOP nor above it, nor the owner's home or above it. */
static int check_common_place(int topfd, const struct git_layout_rules *r,
			      const struct git_layout *l, char *err, size_t errlen)
{
	int above = at_or_above(topfd, &l->common_id);

	if (above != 0)
		return snprintf(err, errlen, "%s is %s or a directory above it", l->common, r->top),
		       above < 0 ? above : -EINVAL;
	if (r->home >= 0 && (above = at_or_above(r->home, &l->common_id)) != 0)
		return snprintf(err, errlen, "%s is the caller's home or a directory above it",
				l->common), above < 0 ? above : -EINVAL;
	return 0;
}

/* A worktree: TOP/.git names COMMON/worktrees/NAME, and that is what it
 * is (git/layout.h). */
static int find_worktree(int topfd, const struct git_layout_rules *r, struct git_layout *l,
			 char *err, size_t errlen)
{
	char line[PATH_MAX + 16], gitdir[PATH_MAX];
	_cleanup_close_ int common = -1, named = -1, worktrees = -1, nfd = -1;
	int rr;

	rr = read_line(topfd, ".git", line, sizeof(line));
	if (rr == 0)
		rr = split_pointer(r, line, l, gitdir, sizeof(gitdir));
	if (rr < 0)
		return snprintf(err, errlen, "%s/.git is not \"gitdir: <repository>/.git/worktrees/<name>\": egret takes the git directories of a clone or of `git worktree add` only",
				r->top), rr;
	common = r->open_dir(r->ctx, l->common);
	named = r->open_dir(r->ctx, gitdir);
	if (common < 0 || named < 0)
		return snprintf(err, errlen, "%s/.git names %s: %s", r->top, gitdir,
				strerror(-(common < 0 ? common : named))), common < 0 ? common : named;
	if (!owned_by(common, r->owner) || !owned_by(named, r->owner))
		return snprintf(err, errlen, "%s/.git names %s, which is not the caller's", r->top,
				gitdir), -EPERM;
	if (!git_looks_like_gitdir(common))
		return snprintf(err, errlen, "%s is not a git directory (no HEAD, objects/ or refs/)",
				l->common), -EINVAL;
	worktrees = openat(common, "worktrees", O_DIR_PATH | O_NOFOLLOW);
	if (worktrees >= 0)
		nfd = openat(worktrees, l->name, O_DIR_PATH | O_NOFOLLOW);
	if (nfd < 0 || id_of(common, &l->common_id) < 0 || id_of(nfd, &l->gitdir_id) < 0 ||
	    !git_id_is(named, &l->gitdir_id))
		return snprintf(err, errlen, "%s/.git names %s, which is not %s/worktrees/%s itself (a symlink on the way?)",
				r->top, gitdir, l->common, l->name), -EINVAL;
	rr = check_backpointers(topfd, nfd, r, l, err, errlen);
	return rr < 0 ? rr : check_common_place(topfd, r, l, err, errlen);
}

int git_layout_find(int topfd, const struct git_layout_rules *rules,
		    struct git_layout *ret, char *err, size_t errlen)
{
	struct git_layout l = { .kind = GIT_LAYOUT_NONE };
	struct stat st;
	int r;

	err[0] = '\0';
	r = id_of(topfd, &l.top);
	if (r < 0)
		return snprintf(err, errlen, "%s: %s", rules->top, strerror(-r)), r;
	if (fstatat(topfd, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			return snprintf(err, errlen, "%s/.git: %s", rules->top, strerror(errno)), -errno;
	} else if (S_ISDIR(st.st_mode)) {
		l.kind = GIT_LAYOUT_CLONE;
		r = find_clone(topfd, rules, err, errlen);
	} else if (S_ISREG(st.st_mode)) {
		l.kind = GIT_LAYOUT_WORKTREE;
		r = find_worktree(topfd, rules, &l, err, errlen);
	} else {
		return snprintf(err, errlen, "%s/.git is neither a directory nor a file", rules->top),
		       -EINVAL;
	}
	if (r < 0)
		return r;
	*ret = l;
	return 0;
}
