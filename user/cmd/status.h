/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef EGRET_STATUS_H
#define EGRET_STATUS_H

int cmd_status(int argc, char **argv);

#endif
