/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cmd/receipt.h - `egret receipt verify FILE [--key PUBKEY]` and `egret
 * receipt key`: check an attempt's signed egress receipt, print the host
 * key to publish (docs/RECEIPTS.md).
 */
#ifndef EGRET_CMD_RECEIPT_H
#define EGRET_CMD_RECEIPT_H

int cmd_receipt(int argc, char **argv);

#endif
