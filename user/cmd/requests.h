/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* cmd/requests.h - `egret requests`: list, approve and deny requests. */
#ifndef EGRET_REQUESTS_CMD_H
#define EGRET_REQUESTS_CMD_H

int cmd_requests(int argc, char **argv);

#endif
