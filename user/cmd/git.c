// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd/git.c - `egret git [-C DIR] COMMAND [ARGS...]`: the caller's own
 * git over a worktree an attempt wrote, with everything the worktree
 * could make it run switched off (git/harvest.h). In egret and in
 * egret-client (libc only): a miner's image harvests with either.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/git.h"
#include "git/harvest.h"
#include "git/layout.h"
#include "lib/exit.h"
#include "lib/log.h"
#include "lib/util.h"

/* What `git config --list` may print before egret gives up on it. */
#define CONFIG_LIST_MAX	(1 << 20)

static void git_usage(FILE *out)
{
	char cmds[512];

	git_harvest_cmd_list(cmds, sizeof(cmds));
	fprintf(out,
		"Usage: egret git [-C DIR] COMMAND [ARGS...]\n\n"
		"Run your own git, as you, over a worktree an attempt wrote: harvest\n"
		"the agent's work (status, diff, add, commit, push) without running\n"
		"anything the worktree planted. Whatever else reads the worktree after\n"
		"an attempt (a test runner, a linter, a build) reads data the attempt\n"
		"controls: run it in an attempt of its own (docs/SECURITY.md, \"What the\n"
		"miner runs afterwards\").\n\n"
		"%s\n"
		"Commands: %s.\n"
		"Exit status: git's; %d when egret git refuses the worktree (one line\n"
		"says why), %d for a bad command line.\n",
		git_harvest_help, cmds, EXIT_SETUP, EXIT_USAGE);
}

static int refuse(const char *why)
{
	log_error("git: refusing to run git: %s", why);
	return EXIT_SETUP;
}

/* The worktree's top: @start or the first directory above it with a
 * .git, on the same filesystem (as git's discovery stops), in @top. */
static int find_top(char *top, size_t len)
{
	struct stat st, here;
	dev_t dev;

	if (!getcwd(top, len))
		return -errno;
	if (stat(top, &st) < 0)
		return -errno;
	dev = st.st_dev;
	for (;;) {
		char probe[PATH_MAX + 8];
		char *slash;

		snprintf(probe, sizeof(probe), "%s/.git", strcmp(top, "/") ? top : "");
		if (lstat(probe, &st) == 0)
			return 0;
		slash = strrchr(top, '/');
		if (!slash || !strcmp(top, "/"))
			return -ENOENT;
		if (slash == top)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (stat(top, &here) < 0 || here.st_dev != dev)
			return -ENOENT;
	}
}

static int open_dir(void *ctx, const char *path)
{
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);

	(void)ctx;
	return fd < 0 ? -errno : fd;
}

/* PATH without its relative entries (the worktree's own directories, as
 * the cwd would have them), into @buf. */
static void absolute_path(char *buf, size_t len)
{
	const char *path = getenv("PATH");
	size_t at = 0;

	buf[0] = '\0';
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		if (path[0] == '/' && at + n + 2 < len) {
			at += (size_t)snprintf(buf + at, len - at, "%s%.*s", at ? ":" : "", (int)n,
					       path);
		}
		path += n + (path[n] == ':');
	}
}

/* The first executable "git" along @path (absolute entries only). */
static int find_git(const char *path, char *git, size_t len)
{
	while (*path) {
		size_t n = strcspn(path, ":");

		if ((size_t)snprintf(git, len, "%.*s/git", (int)n, path) < len &&
		    access(git, X_OK) == 0)
			return 0;
		path += n + (path[n] == ':');
	}
	return -ENOENT;
}

/* GIT_DIR, GIT_COMMON_DIR, GIT_WORK_TREE: what the layout says, and
 * nothing a pointer file could change; no editor, no pager. */
static int pin_environment(const char *top, const struct git_layout *l, const char *path)
{
	char gitdir[PATH_MAX + 16], common[PATH_MAX + 8];

	if (l->kind == GIT_LAYOUT_WORKTREE) {
		snprintf(common, sizeof(common), "%s", l->common);
		if ((size_t)snprintf(gitdir, sizeof(gitdir), "%s/worktrees/%s",
				     strcmp(l->common, "/") ? l->common : "", l->name) >= sizeof(gitdir))
			return -ENAMETOOLONG;
	} else {
		snprintf(gitdir, sizeof(gitdir), "%s/.git", strcmp(top, "/") ? top : "");
		snprintf(common, sizeof(common), "%s/.git", strcmp(top, "/") ? top : "");
	}
	if (setenv("GIT_DIR", gitdir, 1) < 0 || setenv("GIT_COMMON_DIR", common, 1) < 0 ||
	    setenv("GIT_WORK_TREE", top, 1) < 0 || setenv("GIT_EDITOR", ":", 1) < 0 ||
	    setenv("GIT_SEQUENCE_EDITOR", ":", 1) < 0 || setenv("GIT_PAGER", "cat", 1) < 0 ||
	    setenv("PATH", path, 1) < 0)
		return -errno;
	return 0;
}

/* `git config --list --show-scope -z`, with the base options: its output
 * (NUL-terminated, @ret_len bytes) in *@ret, or -errno. */
static int list_config(const char *git, char **ret, size_t *ret_len)
{
	_cleanup_(git_harvest_free) struct git_harvest h = {};
	_cleanup_free_ char *text = NULL;
	size_t n = 0;
	int fds[2], status, r;
	pid_t pid;

	git_harvest_init(&h, git);
	r = git_harvest_base(&h);
	if (r == 0)
		r = git_harvest_push(&h, "config");
	for (const char *const *w = (const char *const[]){ "--list", "--show-scope", "-z", NULL };
	     r == 0 && *w; w++)
		r = git_harvest_push(&h, *w);
	if (r == 0 && !(text = malloc(CONFIG_LIST_MAX + 1)))
		r = -ENOMEM;
	if (r == 0 && pipe2(fds, O_CLOEXEC) < 0)
		r = -errno;
	if (r < 0)
		return r;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		execv(git, (char *const *)h.argv);
		_exit(127);
	}
	r = pid < 0 ? -errno : 0;
	close(fds[1]);
	while (r == 0) {
		ssize_t got = read(fds[0], text + n, CONFIG_LIST_MAX + 1 - n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0 || (n += (size_t)got) > CONFIG_LIST_MAX)
			break;
	}
	close(fds[0]);
	if (r < 0)
		return r;
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	if (n > CONFIG_LIST_MAX)
		return -EFBIG;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return -EIO;
	text[n] = '\0';
	*ret = TAKE_PTR(text);
	*ret_len = n;
	return 0;
}

/* git's argv for @cmd @args over the layout found: base, overrides of the
 * repository's configuration, the command and what it adds, the args. */
static int build(struct git_harvest *h, const char *git, const struct git_harvest_cmd *cmd,
		 char **args, int nargs)
{
	_cleanup_free_ char *text = NULL;
	char err[512];
	size_t len = 0;
	int r;

	r = list_config(git, &text, &len);
	if (r < 0) {
		snprintf(err, sizeof(err), "git config --list failed (%s): the configuration git would read cannot be checked",
			 strerror(-r));
		return refuse(err);
	}
	git_harvest_init(h, git);
	r = git_harvest_base(h);
	if (r == 0 && (r = git_harvest_scan(h, text, len, err, sizeof(err))) == -EPERM)
		return refuse(err);
	if (r == 0)
		r = git_harvest_push(h, cmd->name);
	for (const char *const *a = cmd->adds; r == 0 && a && *a; a++)
		r = git_harvest_push(h, *a);
	for (int i = 0; r == 0 && i < nargs; i++)
		r = git_harvest_push(h, args[i]);
	if (r < 0) {
		log_error_errno(r, "git: %s", r == -E2BIG ? "too many arguments" : "git's command line");
		return EXIT_SETUP;
	}
	return 0;
}

int cmd_git(int argc, char **argv)
{
	char top[PATH_MAX], path[8192], git[PATH_MAX], err[PATH_MAX + 256];
	const struct git_harvest_cmd *cmd;
	struct git_layout layout;
	_cleanup_close_ int topfd = -1;
	struct git_harvest h;
	int i = 1, r;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			git_usage(stdout);
			return 0;
		}
		if (strcmp(argv[i], "-C") || i + 1 >= argc) {
			log_error("git: %s: egret git takes -C DIR only before the git command ('egret git --help')",
				  argv[i]);
			return EXIT_USAGE;
		}
		if (chdir(argv[++i]) < 0) {
			log_error_errno(-errno, "git: -C %s", argv[i]);
			return EXIT_USAGE;
		}
	}
	if (i >= argc) {
		git_usage(stderr);
		return EXIT_USAGE;
	}
	cmd = git_harvest_cmd(argv[i]);
	if (!cmd) {
		git_harvest_cmd_list(path, sizeof(path));
		log_error("git: %s: not a command egret git runs (no aliases, no git-* commands from PATH); it runs %s",
			  argv[i], path);
		return EXIT_USAGE;
	}
	r = find_top(top, sizeof(top));
	if (r < 0)
		return refuse(r == -ENOENT ? "not inside a git worktree (no .git here or above, on this filesystem)"
					   : strerror(-r));
	topfd = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (topfd < 0)
		return refuse(strerror(errno));
	r = git_layout_find(topfd, &(struct git_layout_rules){ .owner = geteuid(), .top = top,
							       .home = -1, .open_dir = open_dir },
			    &layout, err, sizeof(err));
	if (r < 0)
		return refuse(err);
	absolute_path(path, sizeof(path));
	if (find_git(path, git, sizeof(git)) < 0)
		return refuse("no git along PATH's absolute directories");
	r = pin_environment(top, &layout, path);
	if (r < 0)
		return refuse(strerror(-r));
	r = build(&h, git, cmd, argv + i + 1, argc - i - 1);
	if (r)
		return r;
	fflush(NULL);
	execv(git, (char *const *)h.argv);
	log_error_errno(-errno, "git: run %s", git);
	git_harvest_free(&h);
	return EXIT_CANNOT_EXEC;
}
