// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * daemon/wire_encode.c - a struct wire_msg into its one spelling on the
 * wire, by the tables and checks wire.c decodes with: a field the decoder
 * would refuse is never written.
 */
#include <errno.h>
#include <string.h>

#include "daemon/wire_impl.h"

struct encoder {
	uint8_t *buf;
	size_t size, len;
	char *err;
	size_t errlen;
};

static const void *cslot(const struct wire_msg *m, size_t off)
{
	return (const char *)m + off;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

/* One field, if the message and the buffer have room for it. */
static int put_field(struct encoder *e, enum wire_tag tag, const void *v, size_t len)
{
	size_t need = WIRE_FIELD_HEADER_LEN + len;

	if (need > WIRE_MAX - e->len)
		return wire_fail(e->err, e->errlen, -E2BIG, "%s: the message would pass %d bytes",
				 wire_tag_name(tag), WIRE_MAX);
	if (need > e->size - e->len)
		return wire_fail(e->err, e->errlen, -E2BIG,
				 "%s: the message would pass its buffer's %zu bytes",
				 wire_tag_name(tag), e->size);
	put16(e->buf + e->len, (uint16_t)tag);
	put16(e->buf + e->len + 2, (uint16_t)len);
	if (len)
		memcpy(e->buf + e->len + WIRE_FIELD_HEADER_LEN, v, len);
	e->len += need;
	return 0;
}

/* Item @i of @f (a singleton's i is 0); NULL: a singleton left out. */
static int encode_str(struct encoder *e, const struct wire_field *f, const char *s, size_t i,
		      const char *type)
{
	size_t len;
	int r;

	if (!s && f->nmax > 1)
		return wire_fail(e->err, e->errlen, -EINVAL, "%s[%zu]: NULL", wire_tag_name(f->tag), i);
	if (!s)
		return f->required ? wire_fail(e->err, e->errlen, -EINVAL, "%s without %s", type,
					       wire_tag_name(f->tag)) : 0;
	/* Never read past what the field could carry. */
	len = strnlen(s, (size_t)f->hi + 1);
	r = wire_str_check(f, s, len, i, -EINVAL, e->err, e->errlen);
	if (r < 0)
		return r;
	return put_field(e, f->tag, s, len);
}

static int encode_field(struct encoder *e, const struct wire_msg *m, const struct wire_field *f,
			const char *type)
{
	char *const *items;
	uint8_t v[4];
	size_t n;
	int r;

	switch (f->kind) {
	case WIRE_KIND_FLAG:
		return *(const bool *)cslot(m, f->off) ? put_field(e, f->tag, NULL, 0) : 0;
	case WIRE_KIND_U32:
		r = wire_u32_check(f, *(const uint32_t *)cslot(m, f->off), -EINVAL, e->err, e->errlen);
		if (r < 0)
			return r;
		put32(v, *(const uint32_t *)cslot(m, f->off));
		return put_field(e, f->tag, v, sizeof(v));
	case WIRE_KIND_STR:
		if (f->nmax == 1)
			return encode_str(e, f, *(const char *const *)cslot(m, f->off), 0, type);
		break;
	}
	items = (char *const *)cslot(m, f->off);
	n = *(const size_t *)cslot(m, f->count_off);
	if (n > f->nmax)
		return wire_fail(e->err, e->errlen, -E2BIG, "more than %u %s items", f->nmax,
				 wire_tag_name(f->tag));
	if (n == 0 && f->required)
		return wire_fail(e->err, e->errlen, -EINVAL, "%s without %s", type,
				 wire_tag_name(f->tag));
	for (size_t i = 0; i < n; i++) {
		r = encode_str(e, f, items[i], i, type);
		if (r < 0)
			return r;
	}
	return 0;
}

int wire_encode(const struct wire_msg *m, uint8_t *buf, size_t size, char *err, size_t errlen)
{
	const struct wire_layout *t = wire_layout_get(m->type);
	struct encoder e = { .buf = buf, .size = size, .len = WIRE_HEADER_LEN,
			     .err = err, .errlen = errlen };
	int r;

	if (!t)
		return wire_fail(err, errlen, -EINVAL, "unknown type %u", (unsigned int)m->type);
	if (size < WIRE_HEADER_LEN)
		return wire_fail(err, errlen, -E2BIG, "a buffer of %zu bytes holds no header", size);
	for (size_t i = 0; i < t->nfields; i++) {
		r = encode_field(&e, m, &t->fields[i], t->name);
		if (r < 0)
			return r;
	}
	memcpy(buf, WIRE_MAGIC, sizeof(WIRE_MAGIC) - 1);
	put16(buf + 4, WIRE_VERSION);
	put16(buf + 6, (uint16_t)m->type);
	put32(buf + 8, (uint32_t)(e.len - WIRE_HEADER_LEN));
	return (int)e.len;
}
