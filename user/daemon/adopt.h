/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * daemon/adopt.h - egretd's attempts outlive the process that served them.
 *
 * If that process dies (egretd killed, its unit restarted), COMMAND runs
 * on under its keeper (launch/keeper.h) and the pinned programs keep
 * enforcing; DNS fails closed, nothing listening on the proxy's port. A
 * (re)started egretd finds such attempts by their records (daemon=1, its
 * own instance: attempt/instance.h; the lock free) and re-adopts each in a
 * process of its own: the options
 * egretd wrote at the start (<id>.argv), the pinned maps, a DNS proxy on
 * the same port in the caller's network namespace (found through the
 * keeper), COMMAND's status from the keeper's file. The caller's client,
 * its connection lost, connects again with ATTACH <id>; the connection is
 * handed to the re-adopter over <id>.sock, which only root can reach. A
 * client that does not come back within ADOPT_CLIENT_GRACE_S ends the
 * attempt: nobody would hear how it ended.
 */
#ifndef EGRET_DAEMON_ADOPT_H
#define EGRET_DAEMON_ADOPT_H

#include <stddef.h>
#include <sys/types.h>

#include "daemon/wire.h"
#include "lib/paths.h"

#define ADOPT_CLIENT_GRACE_S	WIRE_REATTACH_S
/* How long a re-adopter keeps an ended attempt's status for its client. */
#define ADOPT_STATUS_GRACE_S	10

/* Keep @argv (the options egretd wrote for attempt @id). 0 or -errno. */
int daemon_adopt_save_argv(const char *id, int argc, char *const *argv);

/* In a connection's process: hand @conn, whose caller (uid @uid) asked
 * ATTACH @id, with its @stdio (or -1s; taken) for COMMAND's pty, to the
 * attempt's re-adopter; or refuse it. The status this
 * process exits with. */
int daemon_adopt_hand_over(int conn, uid_t uid, const char *id, int stdio[3]);

/* An attempt to re-adopt: its id and its caller. */
struct adopt_candidate {
	char id[EGRET_ID_MAX + 1];
	uid_t caller;
};

/* The records of egretd @instance's attempts that nobody serves, up to
 * @max of them, into @ret. Their number, or -errno. */
int daemon_adopt_find(const char *instance, struct adopt_candidate *ret, size_t max);

/* Re-adopt attempt @id of egretd @instance, in a process of its own, to
 * its end, its figures reported on @report_fd (daemon/metrics.h; -1:
 * none); or remove it, killed during its set-up. The status it ended
 * with (also sent to a client that attached). */
int daemon_adopt(const char *instance, const char *id, int report_fd);

#endif
