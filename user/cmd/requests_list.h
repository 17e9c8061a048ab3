/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* cmd/requests_list.h - `egret requests list`. */
#ifndef EGRET_REQUESTS_LIST_H
#define EGRET_REQUESTS_LIST_H

#include <stdbool.h>

int requests_list(const char *dir, const char *repo, bool all, bool json);

#endif
