// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * daemon/adopt_hub.c - where a caller comes back to its re-adopted
 * attempt (daemon/adopt.h): <id>.sock, which the re-adopter listens on
 * and a connection's process hands the caller's connection and stdio to,
 * once the attempt's record says the caller is the one that started it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "attempt/state.h"
#include "daemon/adopt.h"
#include "daemon/adopt_impl.h"
#include "daemon/reply.h"
#include "lib/fdpass.h"
#include "lib/log.h"
#include "lib/paths.h"
#include "lib/util.h"

#define HAND_OVER_WAIT_MS	10000	/* a re-adopter just forked may not listen yet */

static int hub_address(const char *id, struct sockaddr_un *sun)
{
	*sun = (struct sockaddr_un){ .sun_family = AF_UNIX };
	return state_file_path(id, "sock", sun->sun_path, sizeof(sun->sun_path));
}

int adopt_record_open(const char *id, int flags)
{
	char path[PATH_MAX];
	int fd;

	if (!attempt_id_valid(id) ||
	    path_fmt(path, sizeof(path), EGRET_RUN_DIR "/%s", id) < 0)
		return -EINVAL;
	fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW);
	return fd < 0 ? -errno : fd;
}

/* The record of @id, read (not locked): for checks only. */
static int read_record(const char *id, struct attempt_state *st)
{
	_cleanup_close_ int fd = adopt_record_open(id, O_RDONLY);

	if (fd < 0)
		return fd;
	return state_read_fd(fd, st);
}

int daemon_adopt_hand_over(int conn, uid_t uid, const char *id, int stdio[3])
{
	struct attempt_state st;
	struct sockaddr_un sun;
	_cleanup_close_ int hub = -1;
	char text[160];
	int r;

	/* Only the caller that started it: the record says whose it is. */
	if (read_record(id, &st) < 0 || !st.daemon || st.caller != uid ||
	    hub_address(st.id, &sun) < 0) {
		snprintf(text, sizeof(text), "egretd: no attempt %.64s of uid %u to attach to (it may have ended while egretd was down)",
			 id, (unsigned int)uid);
		return daemon_refuse(conn, text);
	}
	for (int waited = 0; waited < HAND_OVER_WAIT_MS; waited += 100) {
		hub = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (hub >= 0 && connect(hub, (struct sockaddr *)&sun, sizeof(sun)) == 0)
			break;
		if (hub >= 0)
			close(hub);
		hub = -1;
		poll(NULL, 0, 100);
	}
	int with[1 + 3] = { conn, stdio[0], stdio[1], stdio[2] };

	r = hub < 0 ? -ECONNREFUSED : fds_send(hub, with, stdio[0] >= 0 ? 4 : 1);
	for (int i = 0; i < 3; i++)
		if (stdio[i] >= 0)
			close(TAKE_FD(stdio[i]));
	if (r < 0) {
		snprintf(text, sizeof(text), "egretd: attempt %s is not being re-adopted (yet?)", st.id);
		return daemon_refuse(conn, text);
	}
	log_info("uid %u attached again to attempt %s", (unsigned int)uid, st.id);
	close(conn);
	return 0;
}

int adopt_hub_listen(const char *id)
{
	struct sockaddr_un sun;
	int fd, r;
	mode_t old;

	r = hub_address(id, &sun);
	if (r < 0)
		return r;
	unlink(sun.sun_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	old = umask(0177);
	r = bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 || listen(fd, 8) < 0 ? -errno : 0;
	umask(old);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}
