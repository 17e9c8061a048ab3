/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef EGRET_CMD_GIT_H
#define EGRET_CMD_GIT_H

int cmd_git(int argc, char **argv);

#endif
