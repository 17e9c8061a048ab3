// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "attempt/state.h"
#include "lib/atomic_file.h"
#include "lib/trust.h"
#include "lib/util.h"

/* A record's text at most: its paths, repo, instance and numbers. */
#define STATE_TEXT_MAX	(3 * PATH_MAX + 512)

static int fill_record(int fd, const void *ctx)
{
	return state_update(fd, ctx);
}

int state_create(const struct attempt_state *st, int *ret_fd)
{
	char path[PATH_MAX];
	int r;

	r = private_dir_ensure(EGRET_RUN_DIR);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), EGRET_RUN_DIR "/%s", st->id);
	/* Written and locked unnamed, then linked without replacing: gc
	 * never sees an unlocked, half-written record. */
	return atomic_file_create(path, 0600, fill_record, st, ret_fd);
}

int state_update(int fd, const struct attempt_state *st)
{
	char text[STATE_TEXT_MAX];
	int n;

	n = snprintf(text, sizeof(text),
		     "id=%s\ncgroup=%s\npins=%s\npid=%d\nstarted=%lld\nrepo=%s\nuid=%ld\n",
		     st->id, st->cgroup, st->pins, (int)st->pid,
		     (long long)st->started, st->repo, st->uid);
	if (st->daemon)
		n += snprintf(text + n, sizeof(text) - (size_t)n,
			      "daemon=1\ninstance=%s\ncaller=%u\nkeeper=%d\ncommand=%d\ndns_port=%u\nunserved=%lld\n",
			      st->instance, (unsigned int)st->caller, (int)st->keeper,
			      (int)st->command, st->dns_port, (long long)st->unserved);
	if (st->daemon)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "held=%d,%d,%d,%d,%d\n",
			      st->held_dns[0], st->held_dns[1], st->held_dns[2],
			      st->held_dns[3], st->held_pty);
	if (st->daemon && st->receipt)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "receipt=1\n");
	/* Written over, then cut: a reader never sees it empty. */
	if (pwrite(fd, text, (size_t)n, 0) != n || ftruncate(fd, n) < 0)
		return errno ? -errno : -EIO;
	return 0;
}

int state_file_path(const char *id, const char *suffix, char *buf, size_t len)
{
	return path_fmt(buf, len, EGRETD_ATTEMPT_DIR "/%s.%s", id, suffix);
}

int state_remove(const char *id)
{
	static const char *const sides[] = { "argv", "exit", "sock" };
	char path[PATH_MAX];

	/* egretd's files for it first: a record gone means nothing to
	 * re-adopt. */
	for (size_t i = 0; i < ARRAY_SIZE(sides); i++)
		if (state_file_path(id, sides[i], path, sizeof(path)) == 0)
			unlink(path);
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

/* A uid (never (uid_t)-1), or -1 for anything else. */
static long uid_field(const char *val)
{
	char *end;
	long v = strtol(val, &end, 10);

	return end != val && !*end && v >= 0 && v < (long)UINT32_MAX ? v : -1;
}

/* "U4,U6,T4,T6,PTY": fd numbers in the keeper, each 0 or 3..HELD_FD_MAX. */
#define HELD_FD_MAX	65535

static int held_field(struct attempt_state *st, const char *val)
{
	int v[STATE_HELD_DNS + 1], end = 0;

	if (sscanf(val, "%d,%d,%d,%d,%d%n", &v[0], &v[1], &v[2], &v[3], &v[4], &end) != 5 ||
	    val[end])
		return -EINVAL;
	for (int i = 0; i <= STATE_HELD_DNS; i++)
		if (v[i] != 0 && (v[i] < 3 || v[i] > HELD_FD_MAX))
			return -EINVAL;
	memcpy(st->held_dns, v, sizeof(st->held_dns));
	st->held_pty = v[STATE_HELD_DNS];
	return 0;
}

int state_parse(const char *text, struct attempt_state *ret)
{
	struct attempt_state st = { .uid = -1 };
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
		else if (!strcmp(buf, "uid"))
			st.uid = uid_field(eq);
		else if (!strcmp(buf, "daemon"))
			st.daemon = !strcmp(eq, "1");
		else if (!strcmp(buf, "instance"))
			r = copy_field(st.instance, sizeof(st.instance), eq);
		else if (!strcmp(buf, "unserved"))
			st.unserved = (time_t)strtoll(eq, NULL, 10);
		else if (!strcmp(buf, "caller"))
			st.caller = (uid_t)strtoul(eq, NULL, 10);
		else if (!strcmp(buf, "keeper"))
			st.keeper = (pid_t)strtol(eq, NULL, 10);
		else if (!strcmp(buf, "command"))
			st.command = (pid_t)strtol(eq, NULL, 10);
		else if (!strcmp(buf, "dns_port"))
			st.dns_port = (unsigned int)strtoul(eq, NULL, 10);
		else if (!strcmp(buf, "held"))
			r = held_field(&st, eq);
		else if (!strcmp(buf, "receipt"))
			st.receipt = !strcmp(eq, "1");
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
	char text[STATE_TEXT_MAX];
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
