/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attempt/limits.h - the limits manifest: what COMMAND may reach and how a
 * refusal looks, for the agent inside the attempt to read (docs/AGENTS.md).
 * EGRET_LIMITS_DIR/<id>/limits.txt (plain text, $EGRET_LIMITS) and
 * limits.json ($EGRET_LIMITS_JSON), written by egret before COMMAND
 * starts, root's and read-only, in a directory only root can write:
 * COMMAND can read them, never change or replace them. Beside them the
 * denial feed, denials.jsonl ($EGRET_DENIALS, observe/feed.h): made empty
 * here, written through the fd made with it.
 */
#ifndef EGRET_ATTEMPT_LIMITS_H
#define EGRET_ATTEMPT_LIMITS_H

#include <limits.h>
#include <stdbool.h>

struct run_opts;

struct limits {
	char txt[PATH_MAX];		/* "": not written */
	char json[PATH_MAX];
	char denials[PATH_MAX];
	int feed_fd;			/* denials.jsonl, to append to; -1: none */
	/* The directory cloned (open_tree) for a view in a caller's mounts
	 * of its own (launch/view.h: limits_tree); -1: none. */
	int tree_fd;
};

/* What the manifest says besides the policy. */
struct limits_in {
	const char *id;			/* the attempt's */
	int deny_errno;			/* what a refused connect() fails with */
	bool requests;			/* refused names become requests (--repo) */
};

/* Write attempt @in->id's manifest for @o's effective policy: 0, or a
 * negative errno (the attempt then does not start). */
int limits_write(struct limits *l, const struct limits_in *in, const struct run_opts *o);

/* The denial feed of attempt @id, made by an earlier egret (egretd's
 * re-adoption), to append to: an fd, or a negative errno. */
int limits_feed_reopen(const char *id);

/* Remove attempt @id's manifest, whatever of it exists. */
void limits_remove(const char *id);

#endif
