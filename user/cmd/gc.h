/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef EGRET_CMD_GC_H
#define EGRET_CMD_GC_H

int cmd_gc(int argc, char **argv);

#endif
