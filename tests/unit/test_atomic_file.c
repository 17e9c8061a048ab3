// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_atomic_file.c - files written whole (lib/atomic_file.h): the mode
 * exact, the old content or the new, nothing left by a failed fill or by
 * a writer killed while it fills, a created file never replacing one and
 * returned locked; the sweep removes what dead writers left and leaves
 * what live ones are writing. Everything twice: with O_TMPFILE, and as on
 * a filesystem without it (openat() is wrapped: the Makefile links this
 * test with -Wl,--wrap=openat).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/atomic_file.h"

static char dir[] = "/tmp/egret-unit-atomic-XXXXXX";
static char path[PATH_MAX];
static int no_tmpfile;		/* openat(O_TMPFILE) fails as without it */

int __real_openat(int dfd, const char *name, int flags, ...);

int __wrap_openat(int dfd, const char *name, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	if (flags & (O_CREAT | __O_TMPFILE)) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (no_tmpfile && (flags & O_TMPFILE) == O_TMPFILE) {
		errno = EOPNOTSUPP;
		return -1;
	}
	return __real_openat(dfd, name, flags, mode);
}

/* The names in dir, sorted, joined by spaces, into @buf. */
static const char *listing(char *buf, size_t len)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	size_t at = 0;

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, ".."))
			at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? " " : "",
					       names[i]->d_name);
		free(names[i]);
	}
	free(names);
	return buf;
}

static void read_file(const char *p, char *buf, size_t len)
{
	FILE *f = fopen(p, "re");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static int fill_text(FILE *f, const void *ctx)
{
	return fputs(ctx, f) < 0 ? -EIO : 0;
}

static int fill_fails(FILE *f, const void *ctx)
{
	fputs("half", f);
	fflush(f);
	return -ENOSPC;
}

/* The writer's death while it fills: what it wrote is on disk, never
 * renamed. */
static int fill_dies(FILE *f, const void *ctx)
{
	fputs("half", f);
	fflush(f);
	raise(SIGKILL);
	return 0;
}

static int fill_fd_text(int fd, const void *ctx)
{
	size_t n = strlen(ctx);

	return write(fd, ctx, n) == (ssize_t)n ? 0 : -EIO;
}

static int setup(void **state)
{
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/file", dir);
	no_tmpfile = 0;
	return 0;
}

static int setup_named(void **state)
{
	setup(state);
	no_tmpfile = 1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	strcpy(dir + strlen(dir) - 6, "XXXXXX");
	return 0;
}

static void written_whole(void **state)
{
	char text[64], names[256];
	struct stat st;

	umask(0077);
	assert_int_equal(atomic_file_write(path, 0644, fill_text, "one\n"), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	read_file(path, text, sizeof(text));
	assert_string_equal(text, "one\n");
	assert_int_equal(atomic_file_write(path, 0600, fill_text, "two\n"), 0);
	read_file(path, text, sizeof(text));
	assert_string_equal(text, "two\n");
	assert_string_equal(listing(names, sizeof(names)), "file");
}

static void failed_fill_leaves_old(void **state)
{
	char text[64], names[256];

	assert_int_equal(atomic_file_write(path, 0600, fill_text, "old\n"), 0);
	assert_int_equal(atomic_file_write(path, 0600, fill_fails, NULL), -ENOSPC);
	read_file(path, text, sizeof(text));
	assert_string_equal(text, "old\n");
	assert_string_equal(listing(names, sizeof(names)), "file");
}

/* Killed while it fills: with O_TMPFILE nothing of it is ever named;
 * without, its hidden name stays, unlocked, and one sweep removes it. */
static void killed_writer_swept(void **state)
{
	char text[64], names[256];
	int ws;
	pid_t pid;

	assert_int_equal(atomic_file_write(path, 0600, fill_text, "old\n"), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(atomic_file_write(path, 0600, fill_dies, NULL) ? 2 : 3);
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL);
	read_file(path, text, sizeof(text));
	assert_string_equal(text, "old\n");
	listing(names, sizeof(names));
	if (no_tmpfile) {
		assert_non_null(strstr(names, ".file.new-"));
		assert_int_equal(atomic_file_sweep(dir), 1);
	} else {
		assert_string_equal(names, "file");
		assert_int_equal(atomic_file_sweep(dir), 0);
	}
	assert_string_equal(listing(names, sizeof(names)), "file");
}

/* A hidden file still locked is a live writer's; an unlocked one a dead
 * writer's; what is not a hidden regular file is nobody's business. */
static void sweep_spares_the_living(void **state)
{
	char p[PATH_MAX], names[512];
	int held, fd;

	snprintf(p, sizeof(p), "%s/.a.new-1-0", dir);
	held = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(held >= 0);
	assert_int_equal(flock(held, LOCK_EX), 0);
	snprintf(p, sizeof(p), "%s/.b.new-2-0", dir);
	fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	snprintf(p, sizeof(p), "%s/.new-ID-3", dir);	/* the records' old name */
	fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	snprintf(p, sizeof(p), "%s/.c.new-4-0", dir);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/d.new-5-0", dir);
	fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);

	assert_int_equal(atomic_file_sweep(dir), 2);
	assert_string_equal(listing(names, sizeof(names)), ".a.new-1-0 .c.new-4-0 d.new-5-0");
	close(held);
	assert_int_equal(atomic_file_sweep(dir), 1);
	assert_string_equal(listing(names, sizeof(names)), ".c.new-4-0 d.new-5-0");
	assert_int_equal(atomic_file_sweep("/nonexistent/egret-unit"), 0);
}

/* A file being written stays through a sweep, and is published. */
static int fill_sweeps(FILE *f, const void *ctx)
{
	return atomic_file_sweep(dir) < 0 || fputs(ctx, f) < 0 ? -EIO : 0;
}

static void sweep_during_write(void **state)
{
	char text[64], names[256];

	assert_int_equal(atomic_file_write(path, 0600, fill_sweeps, "kept\n"), 0);
	read_file(path, text, sizeof(text));
	assert_string_equal(text, "kept\n");
	assert_string_equal(listing(names, sizeof(names)), "file");
}

static void created_never_replaces(void **state)
{
	char text[64], names[256];
	int fd = -1, other, ws;
	pid_t pid;

	assert_int_equal(atomic_file_create(path, 0600, fill_fd_text, "first\n", &fd), 0);
	assert_true(fd >= 0);
	/* Returned locked: another open file description is refused. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		other = open(path, O_RDONLY | O_CLOEXEC);
		_exit(other >= 0 && flock(other, LOCK_EX | LOCK_NB) < 0 &&
		      errno == EWOULDBLOCK ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	assert_int_equal(atomic_file_create(path, 0600, fill_fd_text, "second\n", &other),
			 -EEXIST);
	close(fd);
	read_file(path, text, sizeof(text));
	assert_string_equal(text, "first\n");
	assert_string_equal(listing(names, sizeof(names)), "file");
}

#define BOTH(t) { #t " (O_TMPFILE)", t, setup, teardown, NULL }, \
		{ #t " (named)", t, setup_named, teardown, NULL }

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(written_whole),
		BOTH(failed_fill_leaves_old),
		BOTH(killed_writer_swept),
		BOTH(sweep_spares_the_living),
		BOTH(sweep_during_write),
		BOTH(created_never_replaces),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
