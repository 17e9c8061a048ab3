// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "launch/user.h"
#include "launch/view.h"
#include "launch/view_git.h"
#include "launch/world.h"
#include "lib/child.h"
#include "lib/sigsafe.h"
#include "lib/log.h"
#include "lib/util.h"

/* The start directory, the cache, a worktree's common git directory. */
#define VIEW_TREES	3

/* Places anyone may write: each a fresh instance for the attempt. */
static const char *const private_places[] = { "/tmp", "/var/tmp", "/dev/shm", "/run/lock" };

static int write_map(pid_t pid, const char *which, unsigned int in, unsigned int out)
{
	char path[64] = "/proc/", line[48], *p;
	_cleanup_close_ int fd = -1;

	p = put_uint(path + strlen(path), (unsigned int)pid);
	*p++ = '/';
	strcpy(p, which);
	p = put_uint(line, in);
	*p++ = ' ';
	p = put_uint(p, out);
	strcpy(p, " 1\n");
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, line, strlen(line)) < 0)
		return -errno;
	return 0;
}

/* Born in the new namespace (lib/child.h), it holds it until its maps
 * are written and its fd taken (the pipe's end closed); then the fd alone
 * keeps it. */
static int userns_child(void *arg)
{
	const int *done = arg;
	char c;

	/* Its copy of the write end, or the read would never end. */
	close(done[1]);
	while (read(done[0], &c, 1) < 0 && errno == EINTR)
		;
	return 0;
}

int view_userns(uid_t from_uid, gid_t from_gid, uid_t to_uid, gid_t to_gid)
{
	char path[64] = "/proc/";
	struct child child;
	int done[2], fd = -1, r;

	if (pipe2(done, O_CLOEXEC) < 0)
		return -errno;
	r = child_start(&child, CLONE_NEWUSER, userns_child, done);
	if (r < 0) {
		close(done[0]);
		close(done[1]);
		return r;
	}
	/* An idmapped mount maps an id on disk as an id inside the
	 * namespace to the one outside: from_uid's files show as to_uid,
	 * and what to_uid writes lands as from_uid. */
	r = write_map(child.pid, "uid_map", from_uid, to_uid);
	if (r == 0)
		r = write_map(child.pid, "gid_map", from_gid, to_gid);
	if (r == 0) {
		strcpy(put_uint(path + strlen(path), (unsigned int)child.pid), "/ns/user");
		fd = open(path, O_RDONLY | O_CLOEXEC);
		r = fd < 0 ? -errno : 0;
	}
	close(done[1]);
	child_reap(&child);
	close(done[0]);
	return r < 0 ? r : fd;
}

int view_owner_parse(const char *text, uid_t *uid, gid_t *gid)
{
	unsigned int u, g;
	char end;

	if (sscanf(text, "%u:%u%c", &u, &g, &end) != 2 || !u)
		return -EINVAL;
	*uid = (uid_t)u;
	*gid = (gid_t)g;
	return 0;
}

/* How the layout's directories are opened: with the owner's rights when
 * egretd names one (no right of egretd's lent), in the caller's world. */
struct opener {
	const struct attempt_world *w;
	const struct launch_view *v;
	bool as_owner;
};

static int open_as_owner(void *ctx, const char *path)
{
	const struct opener *o = ctx;

	return o->as_owner ? world_open_dir_as(o->w, path, o->v->owner_uid, o->v->owner_gid)
			   : world_open_dir(o->w, path);
}

/* The owner's home, which no git directory may be: an O_PATH fd, or -1
 * (a caller in a world of its own has a passwd of its own). */
static int owner_home(const struct launch_view *v, const struct attempt_world *w)
{
	struct passwd pw, *found = NULL;
	char buf[4096];
	int fd;

	if (world_foreign(w) || getpwuid_r(v->owner_uid, &pw, buf, sizeof(buf), &found) != 0 ||
	    !found || pw.pw_dir[0] != '/')
		return -1;
	fd = open(pw.pw_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -1 : fd;
}

/* Which git directories the view maps (git/layout.h), decided now. */
static int prepare_git(struct launch_view *v, int dirfd, const char *dir, bool as_owner,
		       const struct attempt_world *w)
{
	struct opener o = { .w = w, .v = v, .as_owner = as_owner };
	_cleanup_close_ int home = owner_home(v, w);
	char err[PATH_MAX + 256];
	int r;

	r = git_layout_find(dirfd, &(struct git_layout_rules){ .owner = v->owner_uid, .top = dir,
							       .home = home, .open_dir = open_as_owner,
							       .ctx = &o },
			    &v->git, err, sizeof(err));
	if (r < 0)
		log_error("refusing to run COMMAND: its git directories: %s", err);
	return r;
}

int view_prepare(struct launch_view *v, int dirfd, const char *dir,
		 const char *owner, const struct launch_user *user,
		 const struct attempt_world *w)
{
	struct statfs sfs;
	struct stat st;
	int fd, r;

	*v = (struct launch_view){ .on = true, .dir = dir, .userns_fd = -1, .home_from_fd = -1,
				   .limits_tree = -1 };
	if (fstat(dirfd, &st) < 0)
		return log_error_errno(-errno, "the start directory %s", dir);
	v->dir_id = (struct git_id){ st.st_dev, st.st_ino };
	if (owner) {
		if (view_owner_parse(owner, &v->owner_uid, &v->owner_gid) < 0)
			return log_error_errno(-EINVAL, "--view-owner %s: want UID:GID, not root", owner);
		if (st.st_uid != v->owner_uid)
			return log_error_errno(-EPERM, "refusing to run COMMAND: its start directory %s is not its caller's (uid %u owns it, the caller is uid %u): egretd maps only the caller's own files to the attempt",
					       dir, (unsigned int)st.st_uid, (unsigned int)v->owner_uid);
	} else if (st.st_uid == 0) {
		return log_error_errno(-EPERM, "--view: the start directory %s is root's, and mapping root's files to COMMAND would lend it root's rights there (chown it to the account the worktree is for)",
				       dir);
	} else {
		v->owner_uid = st.st_uid;
		v->owner_gid = st.st_gid;
	}
	if (fstatfs(dirfd, &sfs) == 0 && sfs.f_type == OVERLAYFS_SUPER_MAGIC)
		return log_error_errno(-EINVAL, "refusing to run COMMAND: its start directory %s lies on overlayfs (a container's writable layer), which refuses the idmapped mount that makes it the attempt's own; keep worktrees on a volume or a tmpfs (docs/DEPLOYMENT.md)",
				       dir);
	r = prepare_git(v, dirfd, dir, owner != NULL, w);
	if (r < 0)
		return r;
	fd = view_userns(v->owner_uid, v->owner_gid, user->uid, user->gid);
	if (fd < 0)
		return log_error_errno(fd, "--view: a user namespace for the idmapped mount (needs Linux 5.12+)");
	v->userns_fd = fd;
	return 0;
}

int view_prepare_cache(struct launch_view *v, int fd, const char *dir)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return log_error_errno(-errno, "the cache directory %s", dir);
	if (st.st_uid != v->owner_uid)
		return log_error_errno(-EPERM, "refusing to run COMMAND: the cache directory %s is not its caller's (uid %u owns it): egretd maps only the caller's own files to the attempt",
				       dir, (unsigned int)st.st_uid);
	v->cache = dir;
	v->cache_id = (struct git_id){ st.st_dev, st.st_ino };
	return 0;
}

int view_prepare_home(struct launch_view *v, int fd, const char *dir)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return log_error_errno(-errno, "the home template %s", dir);
	if (st.st_uid != v->owner_uid)
		return log_error_errno(-EPERM, "refusing to run COMMAND: the home template %s is not its caller's (uid %u owns it): egretd copies only the caller's own files into the attempt",
				       dir, (unsigned int)st.st_uid);
	v->home_from_fd = fd;
	return 0;
}

void view_release(struct launch_view *v)
{
	if (v->userns_fd >= 0)
		close(v->userns_fd);
	if (v->home_from_fd >= 0)
		close(v->home_from_fd);
	v->userns_fd = v->home_from_fd = -1;
}

/* The path @fd stands for, from the kernel (no symlink, no ".."). */
static int fd_path(int fd, char *buf, size_t len)
{
	char link[32] = "/proc/self/fd/";
	ssize_t n;

	put_uint(link + strlen(link), (unsigned int)fd);
	n = readlink(link, buf, len - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n >= len - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return 0;
}

/* Is @path @top, or below it? */
static bool below(const char *path, const char *top)
{
	size_t n = strlen(top);

	if (n == 1)
		return true;	/* "/" */
	return !strncmp(path, top, n) && (path[n] == '/' || path[n] == '\0');
}

struct tree {
	int from;		/* the directory, O_PATH */
	int clone;		/* its idmapped copy, detached */
	bool cache;		/* mounted at VIEW_CACHE, not at its path */
	char path[PATH_MAX];
};

/* @path, still the directory checked; else the step says it changed. */
static int open_checked(const char *path, const struct git_id *id, int *step)
{
	int fd = git_open_checked(path, id);

	if (fd == -ESTALE)
		*step = VIEW_STEP_CHANGED;
	return fd;
}

/* The trees to map, each the directory view_prepare() checked: the start
 * directory, the cache, a worktree's common git directory (git/layout.h;
 * its own git directory lies below it). */
static int find_trees(const struct launch_view *v, struct tree *t, int *n, int *step)
{
	struct stat st;

	*step = VIEW_STEP_OWNER;
	*n = 0;
	for (int i = 0; i < VIEW_TREES; i++)
		t[i] = (struct tree){ .from = -1, .clone = -1 };
	t[0].from = open_checked(v->dir, &v->dir_id, step);
	if (t[0].from < 0)
		return t[0].from;
	*n = 1;
	if (fstat(t[0].from, &st) < 0)
		return -errno;
	if (st.st_uid != v->owner_uid)
		return -EPERM;
	if (v->cache) {
		t[1].from = open_checked(v->cache, &v->cache_id, step);
		if (t[1].from < 0)
			return t[1].from;
		t[(*n)++].cache = true;
		if (fstat(t[1].from, &st) < 0 || st.st_uid != v->owner_uid)
			return -EPERM;
	}
	if (v->git.kind == GIT_LAYOUT_WORKTREE) {
		t[*n].from = open_checked(v->git.common, &v->git.common_id, step);
		if (t[*n].from < 0)
			return t[*n].from;
		(*n)++;
	}
	return 0;
}

/* Each tree's idmapped copy; one inside an earlier tree comes with it. */
static int clone_trees(const struct launch_view *v, struct tree *t, int *n, int *step)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP,
				   .userns_fd = (__u64)v->userns_fd };
	struct statfs sfs;

	for (int i = 0; i < *n; i++) {
		*step = VIEW_STEP_IDMAP;
		t[i].clone = -1;
		if (fd_path(t[i].from, t[i].path, sizeof(t[i].path)) < 0)
			return -errno;
		for (int j = 0; j < i && !t[i].cache; j++)
			if (!t[j].cache && below(t[i].path, t[j].path))
				goto next;
		/* With what is mounted below it (a tmpfs for node_modules, a
		 * container's own mounts), all idmapped alike. */
		t[i].clone = open_tree(t[i].from, "", AT_EMPTY_PATH | AT_RECURSIVE |
				       OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (t[i].clone < 0)
			return -errno;
		if (mount_setattr(t[i].clone, "", AT_EMPTY_PATH | AT_RECURSIVE,
				  &attr, sizeof(attr)) < 0) {
			if (errno == EINVAL && fstatfs(t[i].from, &sfs) == 0 &&
			    sfs.f_type == OVERLAYFS_SUPER_MAGIC)
				*step = VIEW_STEP_OVERLAY;
			return -errno;
		}
next:;
	}
	return 0;
}

/* mkdir -p @path's components below @top (made fresh, root's, 0755). */
static int make_path(char *path, size_t top_len)
{
	for (char *p = path + top_len + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char saved = *p;

		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			*p = saved;
			return -errno;
		}
		*p = saved;
		if (!saved)
			return 0;
	}
}

/* Fresh places, and HOME (view_home.h: COMMAND's, 0700). */
static int make_places(const struct launch_view *v, bool *made, uid_t uid, gid_t gid,
		       int *step)
{
	struct stat st;

	*step = VIEW_STEP_PRIVATE;
	for (size_t i = 0; i < ARRAY_SIZE(private_places); i++) {
		made[i] = stat(private_places[i], &st) == 0 && S_ISDIR(st.st_mode);
		if (made[i] && mount("tmpfs", private_places[i], "tmpfs",
				     MS_NOSUID | MS_NODEV, "mode=1777") < 0)
			return -errno;
	}
	if (access("/dev/mqueue", F_OK) == 0 &&
	    mount("mqueue", "/dev/mqueue", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return -errno;
	*step = VIEW_STEP_HOME;
	return v->own_home ? view_home_make(v->home_from_fd, v->owner_uid, uid, gid) : 0;
}

/* Where tree @t goes: onto the very directory checked, through its fd
 * (no path walked again); in a fresh place, onto the path made for it
 * there; the cache at VIEW_CACHE. An fd to mount onto, or -errno. */
static int tree_target(struct tree *t, const bool *made)
{
	int fd;

	if (t->cache) {
		/* HOME's template may have one: the cache goes over it. */
		if (mkdir(VIEW_CACHE, 0700) < 0 && errno != EEXIST)
			return -errno;
		fd = open(VIEW_CACHE, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	for (size_t j = 0; j < ARRAY_SIZE(private_places); j++) {
		if (!made[j] || !below(t->path, private_places[j]))
			continue;
		/* Below a fresh tmpfs the directory checked is out of sight:
		 * its path is made anew there, by us, before COMMAND runs. */
		if (strcmp(t->path, private_places[j]) &&
		    make_path(t->path, strlen(private_places[j])) < 0)
			return -errno;
		fd = open(t->path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	fd = dup(t->from);
	return fd < 0 ? -errno : fd;
}

/* Each tree's clone onto its target. */
static int place_trees(struct tree *t, int n, const bool *made, int *step)
{
	*step = VIEW_STEP_IDMAP;
	for (int i = 0; i < n; i++) {
		_cleanup_close_ int at = -1;

		if (t[i].clone < 0)
			continue;
		at = tree_target(&t[i], made);
		if (at < 0)
			return at;
		if (move_mount(t[i].clone, "", at, "",
			       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
			return -errno;
	}
	return 0;
}

const char *const *view_writable(const struct launch_view *v, const char **ret)
{
	size_t n = 0;

	ret[n++] = v->dir;
	if (v->git.kind == GIT_LAYOUT_WORKTREE)
		ret[n++] = v->git.common;
	for (size_t i = 0; i < ARRAY_SIZE(private_places); i++)
		ret[n++] = private_places[i];
	if (v->own_home)
		ret[n++] = VIEW_HOME;
	ret[n] = NULL;
	return ret;
}
_Static_assert(3 + ARRAY_SIZE(private_places) <= VIEW_WRITABLE_MAX,
	       "view_writable() fills at most VIEW_WRITABLE_MAX places");

int view_apply_child(const struct launch_view *v, uid_t uid, gid_t gid, int *ret_step)
{
	struct tree t[VIEW_TREES];
	bool made[ARRAY_SIZE(private_places)];
	int n = 0, r;

	*ret_step = VIEW_STEP_NS;
	if (unshare(CLONE_NEWNS | CLONE_NEWIPC) < 0)
		return -errno;
	/* A child of the caller's mounts: nothing of ours goes back. */
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return -errno;
	r = find_trees(v, t, &n, ret_step);
	if (r == 0)
		r = clone_trees(v, t, &n, ret_step);
	if (r == 0)
		r = make_places(v, made, uid, gid, ret_step);
	if (r == 0)
		r = place_trees(t, n, made, ret_step);
	if (r == 0) {
		*ret_step = VIEW_STEP_GIT;
		r = view_git_guard(&(struct view_git){
			.dir = v->dir, .dir_id = v->dir_id, .git = &v->git,
			.owner_uid = v->owner_uid, .owner_gid = v->owner_gid,
			.start_orig = t[0].from,
			.common_orig = v->git.kind == GIT_LAYOUT_WORKTREE ? t[n - 1].from : -1 });
		if (r == -ESTALE)
			*ret_step = VIEW_STEP_CHANGED;
	}
	for (int i = 0; i < n; i++) {
		close(t[i].from);
		if (t[i].clone >= 0)
			close(t[i].clone);
	}
	return r;
}
