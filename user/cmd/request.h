/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cmd/request.h - `egret request NAME[:PORTS] --why TEXT`: run inside an
 * attempt, asks for a host on the attempt's request socket
 * ($EGRET_REQUEST, attempt/inbox.h). Prints egret's answer; exits 0 when
 * the request is pending review, 1 when refused. libc only: egret-client
 * has it too.
 */
#ifndef EGRET_CMD_REQUEST_H
#define EGRET_CMD_REQUEST_H

int cmd_request(int argc, char **argv);

#endif
