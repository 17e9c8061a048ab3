/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dns/names.h - which name's answer taught egret each learned address.
 *
 * A bounded table (NAMES_SLOTS) for attributing connections and denials to
 * names in logs and status; it never decides anything. When full, the
 * oldest of a few neighbouring slots is overwritten.
 */
#ifndef EGRET_NAMES_H
#define EGRET_NAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/names.h"


#define NAMES_SLOTS	8192	/* power of two */
#define NAMES_PROBES	8

struct name_slot {
	uint64_t stamp;		/* insertion order; 0 = empty */
	uint8_t family;
	uint8_t addr[16];
	char name[DNS_NAME_MAX + 1];
};

struct names {
	struct name_slot slots[NAMES_SLOTS];
	uint64_t clock;
};

/* Remember that @addr (network order) came from @name's answer (a later
 * answer of another name re-attributes it). True unless the table said so
 * already: then the kernel's copy, egret_names, needs no write either. */
bool names_put(struct names *t, int family, const void *addr, const char *name);

/* The name that taught @addr, or NULL. */
const char *names_get(const struct names *t, int family, const void *addr);

#endif
