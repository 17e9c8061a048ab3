/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef EGRET_CMD_DAEMON_H
#define EGRET_CMD_DAEMON_H

/* egretd's main (argv[0] "egretd"). */
int cmd_daemon(int argc, char **argv);

#endif
