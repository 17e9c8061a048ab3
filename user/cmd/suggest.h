/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef EGRET_SUGGEST_H
#define EGRET_SUGGEST_H

int cmd_suggest(int argc, char **argv);

#endif
