/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attempt/attempt_impl.h - what making an attempt's two files share:
 * attempt/attempt.c (its record, cgroup, pins, logs and DNS proxy, in
 * order, and their teardown) and attempt/programs.c (its programs, the
 * last step). Nothing else includes this.
 */
#ifndef EGRET_ATTEMPT_IMPL_H
#define EGRET_ATTEMPT_IMPL_H

struct attempt;
struct run_opts;

/* attempt/programs.c: get the set of programs, pin and fill the
 * attempt's maps, attach them to its cgroup and configure them;
 * *@ret_deny_errno: the errno refusals fail with. Logs its one-line
 * failure. */
int attempt_programs_attach(struct attempt *a, const struct run_opts *o,
			    int *ret_deny_errno);

/* attempt/programs.c: what a refusal of the kernel's (EPERM, EACCES) most likely means; any
 * other error says what it says (a full /run is not a missing privilege):
 * a text to append to a failure's line. */
const char *attempt_priv_hint(int r);

#endif
