// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "lib/paths.h"
#include "lib/util.h"

bool attempt_id_valid(const char *id)
{
	size_t i, len = strlen(id);

	if (len == 0 || len > EGRET_ID_MAX || id[0] == '.' || id[0] == '-')
		return false;
	for (i = 0; i < len; i++) {
		char c = id[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		      c == '-'))
			return false;
	}
	return true;
}

int attempt_id_random(char *ret, size_t len)
{
	unsigned char bytes[8];
	size_t i;

	if (len < 2 * sizeof(bytes) + 1)
		return -ENOSPC;
	if (getrandom(bytes, sizeof(bytes), 0) != sizeof(bytes))
		return -errno;
	for (i = 0; i < sizeof(bytes); i++)
		snprintf(ret + 2 * i, 3, "%02x", bytes[i]);
	return 0;
}

int bpffs_ensure(void)
{
	struct statfs sfs;

	if (statfs(EGRET_BPFFS, &sfs) == 0 && sfs.f_type == BPF_FS_MAGIC)
		return 0;
	if (mount("bpf", EGRET_BPFFS, "bpf", 0, "mode=0700") < 0)
		return -errno;
	return 0;
}

int flat_dir_remove(const char *path)
{
	_cleanup_close_ int dfd = -1;
	struct dirent *de;
	DIR *dir;
	int r = 0;

	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd < 0)
		return -errno;
	dir = fdopendir(dfd);
	if (!dir)
		return -errno;
	TAKE_FD(dfd);
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(dirfd(dir), de->d_name, 0) < 0 && errno != ENOENT)
			r = -errno;
	}
	closedir(dir);
	if (rmdir(path) < 0 && r == 0)
		r = -errno;
	return r;
}

int path_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}
