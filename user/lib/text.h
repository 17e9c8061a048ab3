/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* lib/text.h - small text helpers for what egret prints. */
#ifndef EGRET_TEXT_H
#define EGRET_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* A value parser's refusal: the reason into @err (@errlen bytes; NULL or
 * 0: none wanted), and -EINVAL. */
int errbuf_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Append @item to the comma-separated list in @csv (@size bytes);
 * -E2BIG, with @csv unchanged, if it does not fit. */
int csv_append(char *csv, size_t size, const char *item);

/*
 * A size: plain bytes, or a number with K, M, G or T (binary: 1K is 1024
 * bytes; "KiB", "MB" and the like are taken too), whole numbers only, at
 * least 1 and at most 2^50. 0 into *@ret and -EINVAL otherwise.
 */
int size_parse(const char *text, uint64_t *ret);

/* What a refusal of a size says it wants (--upload-limit, upload_limit:). */
#define SIZE_WANT	"want a size: bytes, or a number with K, M or G (1M, 512K)"


/* "2026-11-30T08:31:02Z" */
void iso_utc(int64_t t, char *buf, size_t len);

/* Printable ASCII only, others '?' (process names come from the sandbox). */
void safe_text(const char *in, char *out, size_t len);

#endif
