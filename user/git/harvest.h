/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * git/harvest.h - the miner's own git over a worktree an attempt wrote
 * (`egret git`), with every way the repository can make git run a program
 * of its choosing switched off.
 *
 * After an attempt the miner harvests its work: git status, diff, add,
 * commit, push. Plain git there runs what the worktree says: a
 * core.fsmonitor in a nested repository the agent committed as a gitlink,
 * hooks, filters named in .gitattributes, a pager, an external diff, a
 * textconv, an ssh command or a credential helper from the repository's
 * configuration. `egret git` runs git with:
 *  - its git directories pinned (GIT_DIR, GIT_COMMON_DIR, GIT_WORK_TREE)
 *    to what git/layout.h found and checked, so no pointer file the
 *    attempt wrote chooses another configuration or work tree;
 *  - command-line configuration that wins over the repository's: no
 *    fsmonitor, no hooks, no pager, no editor, no submodule recursion
 *    (a nested repository's configuration is never read), no ext::
 *    transport and file:// only as the user's own;
 *  - the diff commands' --no-ext-diff and --no-textconv; fetch's and
 *    push's --upload-pack and --receive-pack (of remote.*.uploadpack the
 *    first value git reads wins: the repository's, before any -c);
 *  - for every key of a known kind the repository's own configuration
 *    (local, worktree, and what they include) sets - filter drivers,
 *    credential helpers, ssh and askpass programs, proxies, signing
 *    programs - the miner's own value (system,
 *    global) or a neutral one; keys git takes in a way no later value
 *    undoes (url.*.insteadOf, core.gitProxy, hook.*, diff.external, ...)
 *    make it refuse, saying which;
 *  - only the git commands of GIT_HARVEST_COMMANDS (aliases and external
 *    git-* commands are the repository's, or PATH's, to plant);
 *  - PATH without relative entries, so neither git nor a helper is found
 *    in the worktree.
 */
#ifndef EGRET_GIT_HARVEST_H
#define EGRET_GIT_HARVEST_H

#include <stdbool.h>
#include <stddef.h>

/* The lines `egret git --help` prints about what it switches off. */
extern const char git_harvest_help[];

/* A git command egret git runs, and what it adds after its name. */
struct git_harvest_cmd {
	const char *name;
	const char *const *adds;	/* NULL-terminated, or NULL */
};

/* The command @name, or NULL when egret git does not run it. */
const struct git_harvest_cmd *git_harvest_cmd(const char *name);

/* "add, blame, ..." (for messages and help). */
void git_harvest_cmd_list(char *buf, size_t len);

/* git's argv, built by checked appends (-E2BIG when full). */
#define GIT_HARVEST_ARGS_MAX	512

struct git_harvest {
	const char *argv[GIT_HARVEST_ARGS_MAX + 1];
	size_t argc;
	/* The "-c" values egret made, freed with it. */
	char *owned[GIT_HARVEST_ARGS_MAX];
	size_t nowned;
};

void git_harvest_init(struct git_harvest *h, const char *git);
void git_harvest_free(struct git_harvest *h);

/* Append @word (not copied): 0 or -E2BIG. */
int git_harvest_push(struct git_harvest *h, const char *word);

/* "-c KEY=VALUE" appended (copied): 0, -E2BIG, -ENOMEM, or -EINVAL for a
 * key -c cannot carry (one with '='). */
int git_harvest_config(struct git_harvest *h, const char *key, const char *value);

/* The options before any command: --no-pager and the "-c" pairs every
 * run gets. */
int git_harvest_base(struct git_harvest *h);

/*
 * What the configuration that `git config --list --show-scope -z` printed
 * (@text, @len bytes) needs: for each key the repository's own scopes set
 * that can make git run a program, its override appended as "-c" pairs.
 * 0; -EPERM with the key in @err when one cannot be overridden; -EINVAL
 * when @text is not that listing.
 */
int git_harvest_scan(struct git_harvest *h, const char *text, size_t len,
		     char *err, size_t errlen);

#endif
