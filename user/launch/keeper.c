// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch/keeper.h"
#include "lib/fdpass.h"
#include "lib/util.h"

pid_t pidfd_pid(int pidfd)
{
	_cleanup_fclose_ FILE *f = NULL;
	char path[64], line[128];
	long pid = 0;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Pid: %ld", &pid) == 1)
			break;
	return pid > 0 ? (pid_t)pid : -ESRCH;
}

int keeper_take_pidfd(int sock, int *ret_pidfd, pid_t *ret_pid)
{
	int fd = fd_recv(sock);
	pid_t pid;

	if (fd < 0)
		return fd;
	/* The pid as our /proc numbers it, not the keeper's namespace. */
	pid = pidfd_pid(fd);
	if (pid < 0) {
		close(fd);
		return pid;
	}
	*ret_pidfd = fd;
	*ret_pid = pid;
	return 0;
}

int keeper_status_reserve(int fd)
{
	static const char placeholder[KEEPER_STATUS_LEN] = "---\n";
	ssize_t n = pwrite(fd, placeholder, sizeof(placeholder), 0);

	if (n == (ssize_t)sizeof(placeholder))
		return 0;
	return n < 0 ? -errno : -ENOSPC;
}

void keeper_status_format(int status, char *buf)
{
	/* By hand: snprintf is not async-signal-safe. */
	buf[0] = status >= 100 ? (char)('0' + status / 100) : ' ';
	buf[1] = status >= 10 ? (char)('0' + status / 10 % 10) : ' ';
	buf[2] = (char)('0' + status % 10);
	buf[3] = '\n';
	buf[4] = '\0';
}

int keeper_read_status(int exit_fd)
{
	char text[16] = "";
	ssize_t n = pread(exit_fd, text, sizeof(text) - 1, 0);
	char *end;
	long v;

	if (n <= 0)
		return -ENODATA;
	text[n] = '\0';
	v = strtol(text, &end, 10);
	if (end == text || *end != '\n' || v < 0 || v > 255)
		return -ENODATA;
	return (int)v;
}
