// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>
#include <sys/socket.h>

#include "dns/names.h"

static uint32_t addr_hash(int family, const uint8_t *addr)
{
	size_t len = family == AF_INET ? 4 : 16;
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ addr[i]) * 16777619u;
	return h ^ (uint32_t)family;
}

static int slot_is(const struct name_slot *s, int family, const uint8_t *addr)
{
	return s->stamp && s->family == family &&
	       !memcmp(s->addr, addr, family == AF_INET ? 4 : 16);
}

bool names_put(struct names *t, int family, const void *addr, const char *name)
{
	uint32_t h = addr_hash(family, addr);
	struct name_slot *victim = NULL;

	for (int i = 0; i < NAMES_PROBES; i++) {
		struct name_slot *s = &t->slots[(h + (uint32_t)i) & (NAMES_SLOTS - 1)];

		if (slot_is(s, family, addr)) {
			if (!strncmp(s->name, name, DNS_NAME_MAX))
				return false;
			victim = s;
			break;
		}
		if (!s->stamp) {
			victim = s;
			break;
		}
		if (!victim || s->stamp < victim->stamp)
			victim = s;
	}
	victim->stamp = ++t->clock;
	victim->family = (uint8_t)family;
	memset(victim->addr, 0, sizeof(victim->addr));
	memcpy(victim->addr, addr, family == AF_INET ? 4 : 16);
	strncpy(victim->name, name, DNS_NAME_MAX);
	victim->name[DNS_NAME_MAX] = '\0';
	return true;
}

const char *names_get(const struct names *t, int family, const void *addr)
{
	uint32_t h = addr_hash(family, addr);

	for (int i = 0; i < NAMES_PROBES; i++) {
		const struct name_slot *s =
			&t->slots[(h + (uint32_t)i) & (NAMES_SLOTS - 1)];

		if (slot_is(s, family, addr))
			return s->name;
	}
	return NULL;
}
