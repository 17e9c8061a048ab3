/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * git/layout.h - where a worktree's git directories are, checked before
 * anyone acts on them.
 *
 * Everything git's pointers say (the worktree's .git file, the gitdir's
 * commondir and gitdir files) lives in trees an attempt can write. An
 * attempt that rewrote them decided what egretd mapped into the next
 * attempt (the caller's ~/.ssh, as a "gitdir") and which configuration
 * the miner's own git read afterwards. So a layout is taken only in the
 * two shapes git makes, each checked to be what it claims:
 *
 *  - a clone: TOP/.git a directory (no symlink) that looks like a git
 *    directory (HEAD, objects/, refs/) and names no other (no commondir);
 *  - a `git worktree add`: TOP/.git a file "gitdir: COMMON/worktrees/NAME"
 *    where COMMON looks like a git directory, worktrees/NAME lies in it
 *    with no symlink on the way, its commondir names COMMON and its gitdir
 *    names TOP/.git back; COMMON is neither TOP nor above it, nor the
 *    home given, nor above that.
 *
 * Anything else is refused with the reason, never taken silently.
 */
#ifndef EGRET_GIT_LAYOUT_H
#define EGRET_GIT_LAYOUT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum git_layout_kind {
	GIT_LAYOUT_NONE,	/* no TOP/.git */
	GIT_LAYOUT_CLONE,	/* TOP/.git is the git directory */
	GIT_LAYOUT_WORKTREE,	/* TOP/.git names COMMON/worktrees/NAME */
};

/* A file's identity, as fstat gives it. */
struct git_id {
	dev_t dev;
	ino_t ino;
};

struct git_layout {
	enum git_layout_kind kind;
	struct git_id top;
	/* GIT_LAYOUT_WORKTREE: the common directory as the .git file names
	 * it (absolute), the worktree's own below it ("worktrees/NAME"). */
	char common[PATH_MAX];
	char name[NAME_MAX + 1];
	struct git_id common_id;
	struct git_id gitdir_id;
};

/*
 * Opens an absolute @path (a directory) as whoever the layout is checked
 * for: an O_PATH fd, or -errno. egretd opens the caller's paths with the
 * caller's rights, in the caller's namespaces.
 */
typedef int (*git_open_dir_fn)(void *ctx, const char *path);

struct git_layout_rules {
	uid_t owner;		/* every git directory taken is this uid's */
	const char *top;	/* TOP's path, absolute, as @open_dir sees it */
	int home;		/* an O_PATH fd on the owner's home, or -1 */
	git_open_dir_fn open_dir;
	void *ctx;
};

/*
 * The layout of the worktree whose top directory @topfd is (an O_PATH
 * fd). 0 with *@ret filled (GIT_LAYOUT_NONE when there is no .git), or
 * -errno with the reason in @err (one phrase, no trailing period).
 */
int git_layout_find(int topfd, const struct git_layout_rules *rules,
		    struct git_layout *ret, char *err, size_t errlen);

/* HEAD a regular file, objects/ and refs/ directories, none a symlink:
 * what git itself takes for a git directory. */
bool git_looks_like_gitdir(int fd);

/* Does @fd stand for @id? */
bool git_id_is(int fd, const struct git_id *id);

/* The directory @path (an O_PATH fd), still the one @id names: -ESTALE
 * when it was moved or replaced since it was checked. */
int git_open_checked(const char *path, const struct git_id *id);

#endif
