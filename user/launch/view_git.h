/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * launch/view_git.h - in the attempt's view (view.h), git's pointers
 * pinned and the configuration the miner's own git runs made read-only.
 *
 * What an attempt leaves in the git directory outlives it: the miner's
 * git reads it afterwards (and the next attempt's view was chosen by it).
 * So, in the attempt's mounts only, after the idmapped trees are placed:
 *  - pinned (a mount over itself, which cannot be renamed, replaced or
 *    removed): a clone's .git, a worktree's git directory, each submodule
 *    git directory under modules/, each one's info/;
 *  - read-only: a worktree's .git file, its gitdir and commondir; in each
 *    git directory config, config.worktree, hooks/ and info/attributes
 *    (the last three made, empty and the owner's, where they are missing,
 *    so that the attempt cannot make them; git ignores an empty
 *    config.worktree).
 * A read-only file must be a plain file with no other name (a hard link
 * made before would be a writable way in); hooks/ and info/ must hold no
 * such file either. Committing, fetching and `git gc` write only refs,
 * objects, logs and the index, and work; `git config` without --global
 * does not.
 */
#ifndef EGRET_LAUNCH_VIEW_GIT_H
#define EGRET_LAUNCH_VIEW_GIT_H

#include <sys/types.h>

#include "git/layout.h"

/* What the guard acts on: the start directory (its path in the view and
 * its identity as checked), its layout, the owner of what is made. */
struct view_git {
	const char *dir;
	struct git_id dir_id;
	const struct git_layout *git;
	uid_t owner_uid;
	gid_t owner_gid;
	int start_orig;		/* the start directory outside the view */
	int common_orig;	/* the common git directory outside it, or -1 */
};

/*
 * In the launch child, as root, once the trees are placed: guard what
 * @v->git found (a missing hooks/ or info/ is made outside the view).
 * Async-signal-safe. 0 or -errno (-ESTALE: a directory is no longer the
 * one checked).
 */
int view_git_guard(const struct view_git *v);

#endif
