/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * requests/import.h - request lines that egretds of a fleet wrote
 * (requests/export.h), folded into one store, as each node's attempts
 * would have folded them into its own.
 */
#ifndef EGRET_REQUEST_IMPORT_H
#define EGRET_REQUEST_IMPORT_H

#include <stddef.h>
#include <stdio.h>

/*
 * Fold every request line of @in (named @name in messages) into the store
 * at @dir; other lines are skipped. All or nothing: a broken request line
 * refuses the whole input, -EBADMSG with "NAME:LINE: why" in @err, and
 * nothing is written. The lines taken in *@ret_n.
 */
int request_import(const char *dir, FILE *in, const char *name, size_t *ret_n,
		   char *err, size_t errlen);

#endif
