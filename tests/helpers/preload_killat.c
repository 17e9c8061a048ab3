// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * killat.so - LD_PRELOADed into egret by the half-written-file tests: the
 * process SIGKILLs itself at the rename that would publish a file whose
 * hidden name (lib/atomic_file.h) contains $EGRET_T_KILL_AT. That is the
 * worst moment for such a write: the file is whole, named, unlocked once
 * its writer is dead, and not yet in place. With $EGRET_T_KILL_LOG, the
 * hidden file's path is appended there first, if it is there (the
 * tests' control that the kill left one). Nothing else changes.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* "/proc/self/fd/N" resolved: the directory the hidden name is in. */
static void log_hidden(int dfd, const char *old)
{
	const char *logp = getenv("EGRET_T_KILL_LOG");
	char link[64], dir[PATH_MAX] = ".", line[2 * PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd, len;

	if (!logp || fstatat(dfd, old, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (dfd != AT_FDCWD) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", dfd);
		n = readlink(link, dir, sizeof(dir) - 1);
		dir[n > 0 ? n : 0] = '\0';
	}
	len = snprintf(line, sizeof(line), "%s/%s\n", dir, old);
	fd = open(logp, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0 && len > 0 && write(fd, line, (size_t)len) == len)
		fsync(fd);
}

static void kill_at(int dfd, const char *old)
{
	const char *at = getenv("EGRET_T_KILL_AT");

	if (at && *at && old && strstr(old, at)) {
		log_hidden(dfd, old);
		kill(getpid(), SIGKILL);
	}
}

int renameat2(int olddfd, const char *old, int newdfd, const char *new, unsigned int flags)
{
	kill_at(olddfd, old);
	return (int)syscall(SYS_renameat2, olddfd, old, newdfd, new, flags);
}

int renameat(int olddfd, const char *old, int newdfd, const char *new)
{
	return renameat2(olddfd, old, newdfd, new, 0);
}

int rename(const char *old, const char *new)
{
	return renameat2(AT_FDCWD, old, AT_FDCWD, new, 0);
}
