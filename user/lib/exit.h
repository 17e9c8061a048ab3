/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lib/exit.h - egret's exit statuses, one home (README, "Exit status").
 * `egret run` otherwise exits with COMMAND's status, as env(1) and
 * timeout(1) do; 126 and 127 are theirs too.
 */
#ifndef EGRET_EXIT_H
#define EGRET_EXIT_H

#define EXIT_TROUBLE		1	/* a command failed (gc, requests, suggest) */
#define EXIT_USAGE		2	/* bad command line */
#define EXIT_POLICY		2	/* a refused policy (syntax, values, ownership) */
#define EXIT_SETUP		125	/* egret could not enforce; COMMAND did not run */
#define EXIT_CANNOT_EXEC	126	/* COMMAND found but not executable */
#define EXIT_NOT_FOUND		127	/* COMMAND not found */
#define EXIT_SIGNAL_BASE	128	/* + N: COMMAND died of signal N */

#endif
