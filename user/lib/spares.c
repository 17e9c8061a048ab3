// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>

#include "lib/spares.h"

void *spares_get(struct spares *s, size_t size)
{
	void *obj = s->head;

	if (!obj)
		return malloc(size < sizeof(void *) ? sizeof(void *) : size);
	memcpy(&s->head, obj, sizeof(void *));
	s->n--;
	return obj;
}

void spares_put(struct spares *s, void *obj)
{
	if (s->n >= SPARES_MAX) {
		free(obj);
		return;
	}
	memcpy(obj, &s->head, sizeof(void *));
	s->head = obj;
	s->n++;
}

void spares_free(struct spares *s)
{
	while (s->head) {
		void *obj = s->head;

		memcpy(&s->head, obj, sizeof(void *));
		free(obj);
	}
	s->n = 0;
}
