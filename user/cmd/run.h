/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef EGRET_CMD_RUN_H
#define EGRET_CMD_RUN_H

int cmd_run(int argc, char **argv);

#endif
