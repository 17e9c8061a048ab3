/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attempt/command.h - `egret run [options] -- COMMAND` as root: the whole
 * attempt, from its options to COMMAND's exit status.
 */
#ifndef EGRET_ATTEMPT_COMMAND_H
#define EGRET_ATTEMPT_COMMAND_H

#include "attempt/run.h"
#include "attempt/supervise.h"

/* @argv as `egret run` takes it (argv[0] "run"). Returns the exit status
 * egret run ends with (COMMAND's, or EXIT_SETUP/EXIT_POLICY after one
 * line saying why). @control: egretd's client, or NULL. */
int attempt_command(int argc, char **argv, struct attempt_control *control);

/* The same for an attempt egretd re-adopts: @argv as egretd wrote it
 * for the attempt's start (EGRETD_ATTEMPT_DIR/<id>.argv), @who what it
 * found of the attempt (run.h). */
int attempt_command_readopt(int argc, char **argv, struct attempt_adoptee *who,
			    struct attempt_control *control);

#endif
