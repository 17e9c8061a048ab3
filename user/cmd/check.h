/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef EGRET_CHECK_H
#define EGRET_CHECK_H

int cmd_check(int argc, char **argv);

#endif
