// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * launch/view_limits.c - the attempt's limits directory in a view made in
 * a caller's mounts (view.h: view_place_limits). egret wrote it in its
 * own /run; the caller's (a container's) is another: the directory comes
 * as a detached clone, placed on a tmpfs of the view's own, so COMMAND
 * sees its manifest, feed and request socket at the paths its
 * environment names, and no other attempt's.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launch/view.h"
#include "lib/paths.h"
#include "lib/util.h"

int view_place_limits(const struct launch_view *v)
{
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
	_cleanup_close_ int top = -1, fs = -1, mnt = -1;

	if (v->limits_tree < 0)
		return 0;
	/* Its mount point, in the caller's /run (made once, as VIEW_HOME's
	 * is); a symlink there is refused, never followed. */
	if (mkdir(EGRET_LIMITS_DIR, 0711) < 0 && errno != EEXIST)
		return -errno;
	top = open(EGRET_LIMITS_DIR, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (top < 0)
		return -errno;
	fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0 || fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0711", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "size", "64k", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return -errno;
	mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	if (mnt < 0 ||
	    move_mount(mnt, "", top, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0 ||
	    mkdirat(mnt, v->limits_id, 0755) < 0 ||
	    move_mount(v->limits_tree, "", mnt, v->limits_id, MOVE_MOUNT_F_EMPTY_PATH) < 0 ||
	    mount_setattr(mnt, "", AT_EMPTY_PATH, &ro, sizeof(ro)) < 0)
		return -errno;
	return 0;
}
