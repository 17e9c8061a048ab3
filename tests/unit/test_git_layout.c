// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_git_layout.c - a worktree's git directories taken only in git's two
 * shapes (git/layout.h): a clone and a `git worktree add`, each checked to
 * be what it claims; every pointer an attempt could rewrite refused with
 * its reason.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git/layout.h"

static char root[] = "/tmp/egret-unit-gitlayout-XXXXXX";

static int open_dir(void *ctx, const char *path)
{
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);

	(void)ctx;
	return fd < 0 ? -errno : fd;
}

static void put(const char *rel, const char *text)
{
	char p[2 * PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	assert_non_null(f = fopen(p, "w"));
	fputs(text, f);
	fclose(f);
}

static void dir(const char *rel)
{
	char p[2 * PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

/* A git directory at @rel: HEAD, objects/, refs/. */
static void gitdir(const char *rel)
{
	char p[256];

	dir(rel);
	snprintf(p, sizeof(p), "%s/HEAD", rel);
	put(p, "ref: refs/heads/main\n");
	snprintf(p, sizeof(p), "%s/objects", rel);
	dir(p);
	snprintf(p, sizeof(p), "%s/refs", rel);
	dir(p);
}

/* repo/.git a clone's; wt a worktree of it named "wt". */
static int setup(void **state)
{
	char line[PATH_MAX + 32];

	assert_non_null(mkdtemp(root));
	dir("repo");
	gitdir("repo/.git");
	dir("repo/.git/worktrees");
	gitdir("repo/.git/worktrees/wt");
	put("repo/.git/worktrees/wt/commondir", "../..\n");
	snprintf(line, sizeof(line), "%s/wt/.git\n", root);
	put("repo/.git/worktrees/wt/gitdir", line);
	dir("wt");
	snprintf(line, sizeof(line), "gitdir: %s/repo/.git/worktrees/wt\n", root);
	put("wt/.git", line);
	dir("home");
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
	strcpy(root + strlen(root) - 6, "XXXXXX");
	return 0;
}

/* The layout of @rel: its return, the layout in *@l, the reason in @err. */
static int find(const char *rel, struct git_layout *l, char *err, size_t errlen)
{
	char top[PATH_MAX], home[PATH_MAX];
	int topfd, homefd, r;

	snprintf(top, sizeof(top), "%s/%s", root, rel);
	snprintf(home, sizeof(home), "%s/home", root);
	topfd = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
	homefd = open(home, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(topfd >= 0 && homefd >= 0);
	r = git_layout_find(topfd, &(struct git_layout_rules){ .owner = getuid(), .top = top,
							       .home = homefd, .open_dir = open_dir },
			    l, err, errlen);
	close(topfd);
	close(homefd);
	return r;
}

static void clone_and_worktree(void **state)
{
	struct git_layout l;
	char err[512], want[PATH_MAX];

	assert_int_equal(find("repo", &l, err, sizeof(err)), 0);
	assert_int_equal(l.kind, GIT_LAYOUT_CLONE);
	assert_int_equal(find("wt", &l, err, sizeof(err)), 0);
	assert_int_equal(l.kind, GIT_LAYOUT_WORKTREE);
	snprintf(want, sizeof(want), "%s/repo/.git", root);
	assert_string_equal(l.common, want);
	assert_string_equal(l.name, "wt");
	assert_int_equal(find("home", &l, err, sizeof(err)), 0);
	assert_int_equal(l.kind, GIT_LAYOUT_NONE);
}

/* The .git file naming anything but COMMON/worktrees/NAME. */
static void gitdir_elsewhere(void **state)
{
	struct git_layout l;
	char err[512], line[PATH_MAX + 32];

	snprintf(line, sizeof(line), "gitdir: %s/home\n", root);
	put("wt/.git", line);
	assert_int_equal(find("wt", &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "worktrees/<name>"));
	put("wt/.git", "gitdir: ..\n");
	assert_int_equal(find("wt", &l, err, sizeof(err)), -EINVAL);
	/* A real git directory of the caller's, named as a worktree of a
	 * fake common one: its back-pointer names another worktree. */
	dir("fake");
	gitdir("fake/.git");
	dir("fake/.git/worktrees");
	gitdir("fake/.git/worktrees/x");
	put("fake/.git/worktrees/x/commondir", "../..\n");
	put("fake/.git/worktrees/x/gitdir", "/elsewhere/.git\n");
	snprintf(line, sizeof(line), "gitdir: %s/fake/.git/worktrees/x\n", root);
	put("wt/.git", line);
	assert_int_equal(find("wt", &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "does not name"));
	assert_non_null(strstr(err, "back"));
}

/* The worktree's commondir naming another directory than COMMON. */
static void commondir_elsewhere(void **state)
{
	struct git_layout l;
	char err[512], line[PATH_MAX + 32];

	snprintf(line, sizeof(line), "%s/home\n", root);
	put("repo/.git/worktrees/wt/commondir", line);
	assert_int_equal(find("wt", &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "commondir"));
}

/* worktrees/NAME a symlink to a git directory elsewhere. */
static void worktree_dir_symlink(void **state)
{
	struct git_layout l;
	char err[512], target[PATH_MAX], link[PATH_MAX];

	snprintf(target, sizeof(target), "%s/repo/.git/worktrees/wt", root);
	snprintf(link, sizeof(link), "%s/repo/.git/worktrees/wt.real", root);
	assert_int_equal(rename(target, link), 0);
	assert_int_equal(symlink("wt.real", target), 0);
	assert_int_equal(find("wt", &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "symlink"));
}

/* A clone's .git that names another (commondir), is a symlink, or is
 * not a git directory. */
static void clone_refusals(void **state)
{
	struct git_layout l;
	char err[512], p[PATH_MAX + 64];

	put("repo/.git/commondir", "../../home\n");
	assert_int_equal(find("repo", &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "commondir"));
	snprintf(p, sizeof(p), "%s/repo/.git/commondir", root);
	unlink(p);
	dir("other");
	assert_int_equal(symlink("../repo/.git", strcat(strcpy(p, root), "/other/.git")), 0);
	assert_int_equal(find("other", &l, err, sizeof(err)), -EINVAL);
	dir("empty");
	dir("empty/.git");
	assert_int_equal(find("empty", &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a git directory"));
}

/* COMMON at or above the worktree, or the home (made to look the part). */
static void common_in_the_wrong_place(void **state)
{
	struct git_layout l;
	char err[512], line[PATH_MAX + 32];

	/* home/.git/... shaped as a repository whose worktree is home/wt. */
	gitdir("home/worktrees");
	gitdir("home/worktrees/w");
	put("home/HEAD", "ref: refs/heads/main\n");
	dir("home/objects");
	dir("home/refs");
	put("home/worktrees/w/commondir", "../..\n");
	dir("home/wt");
	snprintf(line, sizeof(line), "%s/home/wt/.git\n", root);
	put("home/worktrees/w/gitdir", line);
	snprintf(line, sizeof(line), "gitdir: %s/home/worktrees/w\n", root);
	put("home/wt/.git", line);
	assert_int_equal(find("home/wt", &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, " or a directory above it"));
	/* The same common directory for a worktree outside it: the home. */
	gitdir("home/worktrees/w2");
	put("home/worktrees/w2/commondir", "../..\n");
	dir("wt2");
	snprintf(line, sizeof(line), "%s/wt2/.git\n", root);
	put("home/worktrees/w2/gitdir", line);
	snprintf(line, sizeof(line), "gitdir: %s/home/worktrees/w2\n", root);
	put("wt2/.git", line);
	assert_int_equal(find("wt2", &l, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "the caller's home"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(clone_and_worktree, setup, teardown),
		cmocka_unit_test_setup_teardown(gitdir_elsewhere, setup, teardown),
		cmocka_unit_test_setup_teardown(commondir_elsewhere, setup, teardown),
		cmocka_unit_test_setup_teardown(worktree_dir_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(clone_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(common_in_the_wrong_place, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
