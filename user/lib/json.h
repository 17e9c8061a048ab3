/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* lib/json.h - the one JSON string writer of egret's --json outputs. */
#ifndef EGRET_JSON_H
#define EGRET_JSON_H

#include <stddef.h>
#include <stdio.h>

/* @s as a JSON string: quotes, backslashes and control bytes escaped,
 * bytes above 0x7e as \u00XX (names and comms are not UTF-8 promises). */
void json_fputs(FILE *out, const char *s);

/* The same, appended at @off of @buf (@len bytes), cut short rather than
 * overflow; the new offset. */
size_t json_append(char *buf, size_t off, size_t len, const char *s);

#endif
