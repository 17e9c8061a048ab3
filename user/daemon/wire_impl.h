/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * daemon/wire_impl.h - the rules wire.c (decode) and wire_encode.c share:
 * one table of fields per message type, and the checks both apply.
 */
#ifndef EGRET_DAEMON_WIRE_IMPL_H
#define EGRET_DAEMON_WIRE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/wire.h"

enum wire_kind {
	WIRE_KIND_STR,			/* bytes without NUL, NUL-terminated when decoded */
	WIRE_KIND_FLAG,			/* present (length 0) or absent */
	WIRE_KIND_U32,			/* 4 bytes, network order */
};

/*
 * One field of one message type. @lo..@hi bound a string's length (@lo is
 * 0 or 1: may it be empty) or an integer's value. @nmax > 1 makes the
 * field repeated: its items are a char *[] at @off in struct wire_msg,
 * their count a size_t at @count_off. @check judges a string within its
 * bounds (item @i) and returns why not, or NULL.
 */
struct wire_field {
	enum wire_tag tag;
	enum wire_kind kind;
	bool required;
	uint16_t nmax;
	uint32_t lo, hi;
	size_t off, count_off;
	const char *(*check)(const char *v, size_t len, size_t i);
};

/* A message type: its fields in tag order, the only order on the wire. */
struct wire_layout {
	const char *name;
	const struct wire_field *fields;
	size_t nfields;
};

/* NULL for WIRE_NONE and unknown types. */
const struct wire_layout *wire_layout_get(uint32_t type);

/* Fill @err (when there is one) and return @r. */
int wire_fail(char *err, size_t errlen, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * String @v (@len bytes, no NUL, NUL-terminated) as item @i of @f: 0, or
 * -E2BIG past a limit and @bad for anything else, with the reason.
 */
int wire_str_check(const struct wire_field *f, const char *v, size_t len, size_t i,
		   int bad, char *err, size_t errlen);

/* Integer @v of @f within @f's range: 0, or @bad with the reason. */
int wire_u32_check(const struct wire_field *f, uint32_t v, int bad, char *err, size_t errlen);

/* "ARGV", ...; only for tags a table holds. */
const char *wire_tag_name(enum wire_tag tag);

#endif
