// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "attempt/state.h"
#include "lib/trust.h"
#include "lib/util.h"

int state_create(const struct attempt_state *st, int *ret_fd)
{
	char tmp[PATH_MAX], path[PATH_MAX], text[3 * PATH_MAX];
	_cleanup_close_ int fd = -1;
	int n, r;

	r = private_dir_ensure(EGRET_RUN_DIR);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), EGRET_RUN_DIR "/%s", st->id);
	snprintf(tmp, sizeof(tmp), EGRET_RUN_DIR "/.new-%s-%d", st->id,
		 (int)getpid());

	/* Write and lock under a hidden name, then move into place without
	 * replacing: gc never sees an unlocked, half-written record. */
	fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		r = -errno;
		goto fail;
	}
	n = snprintf(text, sizeof(text),
		     "id=%s\ncgroup=%s\npins=%s\npid=%d\nstarted=%lld\nrepo=%s\n",
		     st->id, st->cgroup, st->pins, (int)st->pid,
		     (long long)st->started, st->repo);
	if (write(fd, text, (size_t)n) != n) {
		r = errno ? -errno : -EIO;
		goto fail;
	}
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) < 0) {
		r = -errno;
		goto fail;
	}
	*ret_fd = TAKE_FD(fd);
	return 0;
fail:
	unlink(tmp);
	return r;
}

int state_remove(const char *id)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), EGRET_RUN_DIR "/%s", id);
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/* Does @path have a "." or ".." component (which could climb out of
 * where egret puts attempts)? */
static bool has_dot_component(const char *path)
{
	const char *p = path;

	while ((p = strchr(p, '/'))) {
		p++;
		if (p[0] == '.' && (p[1] == '/' || p[1] == '\0'))
			return true;
		if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || p[2] == '\0'))
			return true;
	}
	return false;
}

static int copy_field(char *dst, size_t len, const char *val)
{
	if (strlen(val) >= len)
		return -ENAMETOOLONG;
	strcpy(dst, val);
	return 0;
}

int state_parse(const char *text, struct attempt_state *ret)
{
	struct attempt_state st = {};
	const char *line = text;
	int r = 0;

	while (*line && r == 0) {
		const char *end = strchrnul(line, '\n');
		char buf[PATH_MAX + 16];
		char *eq;

		if ((size_t)(end - line) >= sizeof(buf))
			return -EINVAL;
		memcpy(buf, line, (size_t)(end - line));
		buf[end - line] = '\0';
		line = *end ? end + 1 : end;
		eq = strchr(buf, '=');
		if (!eq)
			continue;
		*eq++ = '\0';
		if (!strcmp(buf, "id"))
			r = copy_field(st.id, sizeof(st.id), eq);
		else if (!strcmp(buf, "cgroup"))
			r = copy_field(st.cgroup, sizeof(st.cgroup), eq);
		else if (!strcmp(buf, "pins"))
			r = copy_field(st.pins, sizeof(st.pins), eq);
		else if (!strcmp(buf, "pid"))
			st.pid = (pid_t)strtol(eq, NULL, 10);
		else if (!strcmp(buf, "started"))
			st.started = (time_t)strtoll(eq, NULL, 10);
		else if (!strcmp(buf, "repo"))
			r = copy_field(st.repo, sizeof(st.repo), eq);
	}
	if (r < 0)
		return r;
	/* Paths from a record are acted on (killed, removed): insist they
	 * are where egret puts things. */
	if (!attempt_id_valid(st.id) || st.cgroup[0] != '/' ||
	    strncmp(st.pins, EGRET_PIN_ROOT "/", strlen(EGRET_PIN_ROOT "/")) ||
	    strcmp(st.pins + strlen(EGRET_PIN_ROOT "/"), st.id) ||
	    has_dot_component(st.cgroup))
		return -EINVAL;
	*ret = st;
	return 0;
}

int state_read_fd(int fd, struct attempt_state *ret)
{
	char text[3 * PATH_MAX + 128];
	ssize_t n;

	n = pread(fd, text, sizeof(text) - 1, 0);
	if (n < 0)
		return -errno;
	text[n] = '\0';
	return state_parse(text, ret);
}

int state_is_live(int fd)
{
	/* A shared lock is refused while the owner holds its exclusive one;
	 * taking it briefly never blocks the owner (it only ever locks once). */
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		flock(fd, LOCK_UN);
		return 0;
	}
	return errno == EWOULDBLOCK ? 1 : -errno;
}
