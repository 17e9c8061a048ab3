/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lib/names.h - the vocabulary of names every layer shares: how long a
 * host name or a repository name may be, and the one way a host name is
 * written down (lower case, no trailing dot) before it is compared.
 */
#ifndef EGRET_LIB_NAMES_H
#define EGRET_LIB_NAMES_H

#include <stddef.h>

#define DNS_NAME_MAX		253	/* presentation form, no trailing dot */
#define POLICY_REPO_MAX		128	/* "owner/name" and its NUL */

/* @in lower-cased, without a trailing dot, into @out: -EINVAL when empty
 * or longer than DNS_NAME_MAX (or @outlen). */
int dns_name_normalize(const char *in, char *out, size_t outlen);

#endif
