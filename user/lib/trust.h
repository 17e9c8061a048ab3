/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lib/trust.h - reading a file whose author decides what attempts reach.
 */
#ifndef EGRET_TRUST_H
#define EGRET_TRUST_H

#include <stddef.h>

#include "lib/diag.h"

/*
 * Read a file whose author decides what attempts reach (the policy, an
 * approvals file): refused (-EPERM) unless it and the directories above its
 * real path are owned by root or egret's uid and not writable by group or
 * others (sshd's StrictModes). -ENOENT when absent. @what names the file
 * in messages ("policy", "approvals file").
 */
int trusted_file_read(const char *path, const char *what, size_t max,
		      char **ret_text, size_t *ret_len, struct diag *d);

#endif
