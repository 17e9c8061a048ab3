/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attempt/run_options.h - `egret run`'s options as everyone reads them:
 * name, argument, help and how each reaches an attempt of egretd's, from
 * the one table (attempt/run_options.def). egret run's usage, egret-client's
 * parser and usage, the wire's OPTION check and egretd's argv are derived
 * from these rows; egret run's parser (attempt/options.c) from the same
 * table. libc only: egret-client links it.
 */
#ifndef EGRET_RUN_OPTIONS_H
#define EGRET_RUN_OPTIONS_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

/*
 * How an option reaches the egret run that egretd starts for a caller
 * (docs/EGRETD.md, "Options through egretd"). Bits: --upload-limit is the
 * caller's (an OPTION word) and egretd's ceiling too.
 */
enum run_via {
	/* egret run's alone: refused through egretd (by the client, and
	 * by egretd, which never writes it). No other bit with it. */
	RUN_VIA_LOCAL = 1 << 0,
	/* The caller's, as a wire OPTION "NAME" or "NAME=VALUE" (a value
	 * exactly when it takes an argument), which egretd passes on as
	 * one word "--NAME[=VALUE]" for egret run to judge. */
	RUN_VIA_OPTION = 1 << 1,
	/* The caller's, in a wire field of its own (ALLOW, REPO, AUDIT,
	 * PTY; --chdir becomes CWD), which egretd checks against the
	 * caller's entry and writes as an option of its own. */
	RUN_VIA_FIELD = 1 << 2,
	/* egretd's: it writes it for every attempt (the user, the view,
	 * the cgroup, the state); the client refuses it. */
	RUN_VIA_EGRETD = 1 << 3,
	/* With RUN_VIA_OPTION: the caller's only where its egretd.yaml
	 * entry says so (daemon/config.h: daemon_caller_may_option()). */
	RUN_VIA_GATED = 1 << 4,
	RUN_VIA_ANY = RUN_VIA_LOCAL | RUN_VIA_OPTION | RUN_VIA_FIELD | RUN_VIA_EGRETD |
		      RUN_VIA_GATED,
};

/* What the caller may send: the client's options. */
#define RUN_VIA_CALLER	(RUN_VIA_OPTION | RUN_VIA_FIELD)

struct run_option_row {
	const char *name;	/* "allow": the long name, without "--" */
	char short_name;	/* 'v', or 0 */
	const char *metavar;	/* "SPEC"; NULL: takes no argument */
	unsigned int via;	/* enum run_via bits */
	const char *help;	/* lines apart by "\n" */
};

/* The rows, in the table's order (the usage's). */
extern const struct run_option_row run_option_rows[];
extern const size_t run_option_nrows;

/* The row named by @name's first @len bytes (no "--"), or NULL. */
const struct run_option_row *run_option_find(const char *name, size_t len);

/* What getopt_long answers for a row without a short letter: this plus
 * the row's index (past every char). */
#define RUN_OPTION_VAL_BASE	256

/*
 * The rows with any of @via's bits as getopt_long wants them, into @ret
 * (room for run_option_nrows + 1), then a zeroed entry: each answers with
 * its short letter, or RUN_OPTION_VAL_BASE + its index. Their short
 * letters into @shorts, each with ':' after it if it takes an argument
 * (NULL, or room for 2 * run_option_nrows + 1). How many rows.
 */
size_t run_options_getopt(struct option *ret, char *shorts, unsigned int via);

/* The index of the row getopt_long's answer @c stands for, or -1. */
int run_option_index(int c);

/* How many rows have any of @via's bits. */
size_t run_options_count(unsigned int via);

/* The usage lines of the rows with any of @via's bits ("  --allow SPEC
 * allow a destination..."). */
void run_options_usage(FILE *out, unsigned int via);

/*
 * The names of the rows with any of @via's bits into @buf, ", " apart:
 * each @prefix NAME, then @valued after the name of one that takes an
 * argument ("--repo, --audit"; "home=, clean-env"). The length, or
 * -E2BIG when @buf (@size bytes) cannot hold them all.
 */
int run_options_join(char *buf, size_t size, unsigned int via, const char *prefix,
		     const char *valued);

#endif
