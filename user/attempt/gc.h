/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* attempt/gc.h - remove what attempts whose egret died left behind. */
#ifndef EGRET_GC_H
#define EGRET_GC_H

#include <stdbool.h>

/*
 * For every record in EGRET_RUN_DIR whose lock is free (its egret is gone):
 * kill the attempt's processes, remove its cgroup, its pins (detaching the
 * programs) and the record. Live attempts are never touched, and egretd's
 * (a record with daemon=1) only with @daemon_too: a restarted egretd
 * re-adopts those (daemon/adopt.h); `egret gc` removes them too. Returns
 * the number of attempts removed, or a negative errno if some could not be.
 */
int gc_stale_attempts(bool daemon_too);

/* Tear down one attempt: cgroup (killing what is inside), then pins. The
 * order matters: programs stay attached until nothing is left to police. */
int attempt_teardown(const char *cgroup, const char *pins);

#endif
