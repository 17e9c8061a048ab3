// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "launch/view_git.h"
#include "lib/sigsafe.h"
#include "lib/util.h"

/* Submodule git directories guarded at most, and how deep their names
 * nest (modules/a/b/...): more is refused, never left unguarded. */
#define MODULES_MAX	64
#define MODULES_DEPTH	4
/* Entries of hooks/ or info/ checked at most; more is refused. */
#define DIR_ENTRIES_MAX	512

struct guard {
	const struct view_git *v;
	int gitdirs;		/* guarded so far */
};

/* @name below @dfd, no symlink on the way nor at the end. */
static int open_beneath(int dfd, const char *name, int flags)
{
	struct open_how how = {
		.flags = (unsigned long long)(flags | O_CLOEXEC | O_NOFOLLOW),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, dfd, name, &how, sizeof(how));

	return fd < 0 ? -errno : fd;
}

/* @fd's file or directory, mounted over itself (read-only with @ro). */
static int bind_over(int fd, bool ro)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
	_cleanup_close_ int clone = -1;

	clone = open_tree(fd, "", AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (clone < 0)
		return -errno;
	if (ro && mount_setattr(clone, "", AT_EMPTY_PATH, &attr, sizeof(attr)) < 0)
		return -errno;
	if (move_mount(clone, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return -errno;
	return 0;
}

/* A plain file with one name: nothing else writes it. */
static int one_name(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	return st.st_nlink == 1 ? 0 : -EMLINK;
}

/* @dfd's file @name read-only; missing is fine unless @must. */
static int ro_file(int dfd, const char *name, bool must)
{
	_cleanup_close_ int fd = open_beneath(dfd, name, O_PATH);
	int r;

	if (fd == -ENOENT && !must)
		return 0;
	if (fd < 0)
		return fd;
	r = one_name(fd);
	return r < 0 ? r : bind_over(fd, true);
}

/* @dfd's file @name read-only, made (empty, the owner's) in @orig first
 * where it is missing: an absent one the attempt could make. */
static int ro_made_file(const struct guard *g, int dfd, int orig, const char *name)
{
	_cleanup_close_ int made = -1;

	if (orig >= 0) {
		made = openat(orig, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (made < 0 && errno != EEXIST)
			return -errno;
		if (made >= 0 && fchown(made, g->v->owner_uid, g->v->owner_gid) < 0)
			return -errno;
	}
	return ro_file(dfd, name, orig >= 0);
}

struct entries {
	int seen;
};

/* A plain file with another name, or one entry too many: refused. */
static int entry_one_name(int fd, const char *name, void *ctx)
{
	struct entries *e = ctx;
	struct stat st;

	if (++e->seen > DIR_ENTRIES_MAX)
		return -E2BIG;
	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return S_ISREG(st.st_mode) && st.st_nlink != 1 ? -EMLINK : 0;
}

/* No entry of the directory @fd is a plain file with another name. */
static int entries_one_name(int fd)
{
	struct entries e = { 0 };

	return dirents_each(fd, entry_one_name, &e);
}

/* The directory @name made in @orig (empty, the owner's) if missing. */
static int made_dir(const struct guard *g, int orig, const char *name)
{
	_cleanup_close_ int made = -1;

	if (orig < 0)
		return 0;
	if (mkdirat(orig, name, 0755) < 0)
		return errno == EEXIST ? 0 : -errno;
	made = open_beneath(orig, name, O_RDONLY | O_DIRECTORY);
	if (made < 0)
		return made;
	return fchown(made, g->v->owner_uid, g->v->owner_gid) < 0 ? -errno : 0;
}

/* The directory @name of @dfd read-only, made first where missing. */
static int ro_dir(const struct guard *g, int dfd, int orig, const char *name)
{
	_cleanup_close_ int fd = -1, list = -1;
	int r = made_dir(g, orig, name);

	if (r < 0)
		return r;
	fd = open_beneath(dfd, name, O_PATH | O_DIRECTORY);
	if (fd < 0)
		return fd;
	list = open_beneath(dfd, name, O_RDONLY | O_DIRECTORY);
	if (list < 0)
		return list;
	r = entries_one_name(list);
	return r < 0 ? r : bind_over(fd, true);
}

/* info/ pinned (git writes info/refs there at gc) and its attributes
 * read-only, made first where missing. */
static int guard_info(const struct guard *g, int dfd, int orig)
{
	_cleanup_close_ int info = -1, info_orig = -1;
	int r = made_dir(g, orig, "info");

	if (r < 0)
		return r;
	info = open_beneath(dfd, "info", O_PATH | O_DIRECTORY);
	if (info < 0)
		return info;
	r = bind_over(info, false);
	if (r < 0)
		return r;
	close(info);
	info = open_beneath(dfd, "info", O_PATH | O_DIRECTORY);
	if (info < 0)
		return info;
	info_orig = orig >= 0 ? open_beneath(orig, "info", O_PATH | O_DIRECTORY) : -1;
	return ro_made_file(g, info, info_orig, "attributes");
}

static int guard_gitdir(struct guard *g, int dir, int orig, int depth);

struct modules {
	struct guard *g;
	int dir, dir_orig, depth;
};

static int guard_modules(struct guard *g, int dfd, int orig, const char *name, int depth);

/* One entry of a modules/ directory: a git directory (pinned, guarded)
 * or a directory of nested names; anything else git takes for none. */
static int guard_module(int list, const char *name, void *ctx)
{
	struct modules *m = ctx;
	_cleanup_close_ int e = -1, e_orig = -1;
	int r;

	(void)list;
	e = open_beneath(m->dir, name, O_PATH | O_DIRECTORY);
	if (e == -ENOTDIR || e == -ELOOP)
		return 0;
	if (e < 0)
		return e;
	e_orig = m->dir_orig >= 0 ? open_beneath(m->dir_orig, name, O_PATH | O_DIRECTORY) : -1;
	if (!git_looks_like_gitdir(e))
		return guard_modules(m->g, m->dir, m->dir_orig, name, m->depth + 1);
	r = bind_over(e, false);
	if (r < 0)
		return r;
	close(e);
	e = open_beneath(m->dir, name, O_PATH | O_DIRECTORY);
	return e < 0 ? e : guard_gitdir(m->g, e, e_orig, m->depth + 1);
}

/*
 * The submodules' git directories under @dfd's "modules" (names may
 * nest: modules/a/b): each pinned and guarded as a git directory.
 */
static int guard_modules(struct guard *g, int dfd, int orig, const char *name, int depth)
{
	_cleanup_close_ int list = -1, dir = -1, dir_orig = -1;
	struct modules m;

	list = open_beneath(dfd, name, O_RDONLY | O_DIRECTORY);
	if (list == -ENOENT)
		return 0;
	if (list < 0)
		return list;
	if (depth > MODULES_DEPTH)
		return -E2BIG;
	dir = open_beneath(dfd, name, O_PATH | O_DIRECTORY);
	dir_orig = orig >= 0 ? open_beneath(orig, name, O_PATH | O_DIRECTORY) : -1;
	if (dir < 0)
		return dir;
	m = (struct modules){ .g = g, .dir = dir, .dir_orig = dir_orig, .depth = depth };
	return dirents_each(list, guard_module, &m);
}

/* A git directory's configuration, hooks and info read-only, and its
 * submodules' git directories alike. */
static int guard_gitdir(struct guard *g, int dir, int orig, int depth)
{
	int r;

	if (++g->gitdirs > MODULES_MAX)
		return -E2BIG;
	r = ro_file(dir, "config", false);
	if (r == 0)
		r = ro_made_file(g, dir, orig, "config.worktree");
	if (r == 0)
		r = ro_dir(g, dir, orig, "hooks");
	if (r == 0)
		r = guard_info(g, dir, orig);
	return r < 0 ? r : guard_modules(g, dir, orig, "modules", depth);
}

/* A clone: .git pinned, then guarded as a git directory. */
static int guard_clone(struct guard *g, int start, int start_orig)
{
	_cleanup_close_ int dotgit = -1, orig = -1;
	int r;

	dotgit = open_beneath(start, ".git", O_PATH | O_DIRECTORY);
	if (dotgit < 0)
		return dotgit;
	r = bind_over(dotgit, false);
	if (r < 0)
		return r;
	close(dotgit);
	dotgit = open_beneath(start, ".git", O_PATH | O_DIRECTORY);
	orig = open_beneath(start_orig, ".git", O_PATH | O_DIRECTORY);
	if (dotgit < 0 || orig < 0)
		return dotgit < 0 ? dotgit : orig;
	return guard_gitdir(g, dotgit, orig, 0);
}

/* A worktree: its .git file read-only; its git directory pinned, its
 * pointers read-only; the common git directory guarded. */
static int guard_worktree(struct guard *g, int start, int common_orig)
{
	const struct view_git *v = g->v;
	_cleanup_close_ int common = -1, own = -1, own_orig = -1;
	char rel[NAME_MAX + 16];
	int r;

	r = ro_file(start, ".git", true);
	if (r < 0)
		return r;
	common = git_open_checked(v->git->common, &v->git->common_id);
	if (common < 0)
		return common;
	strcpy(rel, "worktrees/");
	strcat(rel, v->git->name);
	own = open_beneath(common, rel, O_PATH | O_DIRECTORY);
	if (own < 0)
		return own;
	if (!git_id_is(own, &v->git->gitdir_id))
		return -ESTALE;
	r = bind_over(own, false);
	if (r < 0)
		return r;
	close(own);
	own = open_beneath(common, rel, O_PATH | O_DIRECTORY);
	if (own < 0)
		return own;
	own_orig = common_orig >= 0 ? open_beneath(common_orig, rel, O_PATH | O_DIRECTORY) : -1;
	r = ro_file(own, "gitdir", true);
	if (r == 0)
		r = ro_file(own, "commondir", true);
	if (r == 0)
		r = ro_made_file(g, own, own_orig, "config.worktree");
	return r < 0 ? r : guard_gitdir(g, common, common_orig, 0);
}

int view_git_guard(const struct view_git *v)
{
	struct guard g = { .v = v };
	_cleanup_close_ int start = -1;

	if (v->git->kind == GIT_LAYOUT_NONE)
		return 0;
	start = git_open_checked(v->dir, &v->dir_id);
	if (start < 0)
		return start;
	if (v->git->kind == GIT_LAYOUT_CLONE)
		return guard_clone(&g, start, v->start_orig);
	return guard_worktree(&g, start, v->common_orig);
}
