/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * launch/view.h - the attempt's own filesystem view (--view; egretd
 * always asks for it).
 *
 * COMMAND gets a mount namespace of its own, a child of the caller's
 * (nothing propagates back), and an IPC namespace of its own. In it:
 *  - the start directory, and for a `git worktree` its repository's git
 *    directory, are bind-mounted over themselves with an idmapped mount
 *    that shows their owner's uid and gid as COMMAND's: COMMAND edits,
 *    creates and commits as the owner, and on disk every file stays the
 *    owner's. Only that one uid and gid are mapped: files of other owners
 *    look unmapped (nobody) and cannot be written, so COMMAND gets at
 *    most the owner's own rights on that tree. A start directory of
 *    anyone but the expected owner is refused: egretd never lends its
 *    rights. An overlayfs (a container's writable layer) refuses the
 *    idmap: one clear line, never a weaker mode.
 *  - which git directories are mapped is decided by git/layout.h's
 *    checks, made before anything is created, never by what a pointer
 *    file says alone: an attempt that rewrote one chose what the next
 *    attempt got. Each directory is mounted onto the very one checked
 *    (its identity checked again in the child, the mount made onto its
 *    fd), so no path swapped in between moves a mount.
 *  - git's pointers (.git, the worktree's gitdir and commondir) are
 *    pinned: mount points an attempt cannot rename, replace or rewrite;
 *    the configuration the miner's own git runs (config,
 *    config.worktree, hooks/, info/, and a submodule's under modules/)
 *    is read-only (view_git.h).
 *  - with --view-cache (an operator's choice per egretd caller), a
 *    directory of the owner's, mapped alike, is HOME/.cache in every
 *    attempt: what one attempt leaves there, a later one reads.
 *  - /tmp, /var/tmp, /dev/shm and /run/lock are fresh tmpfs instances,
 *    /dev/mqueue a fresh mqueue of the new IPC namespace, and HOME is
 *    VIEW_HOME, a tmpfs of its own outside /tmp (view_home.h), filled from
 *    the owner's template with --home-from: everything COMMAND's uid can
 *    write outside the worktree is gone when its last process is (memory
 *    charged to the attempt's cgroup), and so are its SysV IPC objects
 *    and POSIX queues. A worktree below one of those places is mounted
 *    back at its path inside the new instance.
 */
#ifndef EGRET_LAUNCH_VIEW_H
#define EGRET_LAUNCH_VIEW_H

#include <stdbool.h>
#include <sys/types.h>

#include "git/layout.h"
#include "launch/view_home.h"

struct attempt_world;
struct launch_user;

/* The step of view_apply_child() that failed (launch.h numbers them as
 * its own, from LAUNCH_STEP_VIEW_NS, in this order). */
enum view_step {
	VIEW_STEP_NS,		/* its mount and IPC namespaces */
	VIEW_STEP_OWNER,	/* the start directory is not the owner's */
	VIEW_STEP_IDMAP,	/* the idmapped mount */
	VIEW_STEP_OVERLAY,	/* ... refused by overlayfs */
	VIEW_STEP_PRIVATE,	/* the fresh places */
	VIEW_STEP_HOME,		/* HOME, and what --home-from copies into it */
	VIEW_STEP_GIT,		/* git's pointers and configuration guarded */
	VIEW_STEP_CHANGED,	/* a directory is not the one checked */
};


struct launch_view {
	bool on;
	const char *dir;	/* the start directory, in COMMAND's mounts */
	uid_t owner_uid;	/* who must own it; shown as COMMAND's uid */
	gid_t owner_gid;	/* shown as COMMAND's gid */
	int userns_fd;		/* maps the owner to COMMAND (view_userns) */
	const char *cache;	/* NULL, or the owner's directory that is
				 * mounted, mapped alike, at VIEW_CACHE */
	struct git_id dir_id;	/* the start directory, as checked */
	struct git_id cache_id;	/* the cache, as checked */
	int home_from_fd;	/* --home-from: the owner's template, or -1 */
	bool own_home;		/* HOME is VIEW_HOME (no --home names another) */
	struct git_layout git;	/* its git directories (git/layout.h) */
	/* In a caller's mounts of its own (egretd serving a container), the
	 * attempt's limits directory (attempt/limits.h), cloned in egret's
	 * mounts (open_tree), to appear at EGRET_LIMITS_DIR/limits_id; -1:
	 * none (egret's own mounts show it, or it was not made). */
	int limits_tree;
	const char *limits_id;
};

/* Where a persistent cache (--view-cache) appears: XDG's default for HOME,
 * where pip and Go's build cache look; npm and Go's module cache are sent
 * there too (VIEW_CACHE_ENV). */
#define VIEW_CACHE	VIEW_HOME "/.cache"
#define VIEW_CACHE_ENV	{ "npm_config_cache=" VIEW_CACHE "/npm", \
			  "GOMODCACHE=" VIEW_CACHE "/go-mod" }

/*
 * A user namespace whose maps take @from_uid/@from_gid (on disk) to
 * @to_uid/@to_gid: what the idmapped mount shows. Its fd, or -errno. The
 * namespace lives as long as the fd does, without a process.
 */
int view_userns(uid_t from_uid, gid_t from_gid, uid_t to_uid, gid_t to_gid);

/* "UID:GID" (--view-owner), never uid 0: 0, or -EINVAL. */
int view_owner_parse(const char *text, uid_t *uid, gid_t *gid);

/*
 * The view of COMMAND's @user, starting in @dir (absolute, in COMMAND's
 * mounts, those of @w), which @dirfd is open on (world_open_dir()):
 * checked before anything is made, with one line for what fails. Its
 * owner must be @owner ("UID:GID", egretd's caller), or else it is
 * whoever owns it now, never root (that would lend root's files); on
 * overlayfs the idmap cannot be had; its git directories must pass
 * git/layout.h's checks (opened with the owner's rights). Then the user
 * namespace of the mapping, whose fd the caller closes once COMMAND runs.
 * 0, or -errno after one line.
 */
int view_prepare(struct launch_view *v, int dirfd, const char *dir,
		 const char *owner, const struct launch_user *user,
		 const struct attempt_world *w);

/* --view-cache @dir, open on @fd: the owner's (v->owner_uid), or -errno
 * after one line; then it is mounted at VIEW_CACHE. */
int view_prepare_cache(struct launch_view *v, int fd, const char *dir);

/* --home-from @dir, open on @fd (taken: closed with the view): the
 * owner's, or -errno after one line; copied into HOME (view_home.h). */
int view_prepare_home(struct launch_view *v, int fd, const char *dir);

/* What view_prepare() opened that outlives it in the parent: closed once
 * COMMAND runs. */
void view_release(struct launch_view *v);

/* The places COMMAND may write beneath (landlock.h): the trees mapped
 * and the fresh places, NULL-terminated in @ret (VIEW_WRITABLE_MAX + 1
 * slots). Async-signal-safe. */
#define VIEW_WRITABLE_MAX	8
const char *const *view_writable(const struct launch_view *v, const char **ret);

/*
 * In the child, as root, after it entered the caller's namespaces and
 * before it drops root: make the view for COMMAND running as @uid:@gid.
 * Async-signal-safe. 0, or -errno with the failing enum view_step in
 * *@ret_step.
 */
int view_apply_child(const struct launch_view *v, uid_t uid, gid_t gid, int *ret_step);

/*
 * In the child, after view_apply_child(): v->limits_tree at
 * EGRET_LIMITS_DIR/v->limits_id, over a tmpfs of the view's own (0711,
 * read-only once placed) at EGRET_LIMITS_DIR, made if the caller's /run
 * lacks it. Like the manifest, no enforcement: -errno when it cannot be
 * had (the caller's /run read-only), and COMMAND runs without it.
 * Async-signal-safe.
 */
int view_place_limits(const struct launch_view *v);

#endif
