// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * daemon/wire.c - the rules of egret run <-> egretd messages, and decoding.
 *
 * Both directions walk the same tables: each message type lists its fields
 * in tag order with their kind, bounds, count and checker, so the encoder
 * (wire_encode.c) cannot write what the decoder refuses, and the decoder
 * accepts one spelling of each message (the fuzz target re-encodes what it
 * accepted and wants the input back, byte for byte).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "attempt/run_options.h"
#include "launch/environ.h"
#include "daemon/wire_impl.h"
#include "lib/util.h"
#include "policy/policy.h"

/* Every limit fits a field's u16 length and the arena holds every copy. */
_Static_assert(WIRE_ENV_LEN_MAX <= UINT16_MAX, "field length is a u16");
_Static_assert(WIRE_ARG_LEN_MAX <= WIRE_ENV_LEN_MAX && WIRE_CWD_MAX <= WIRE_ENV_LEN_MAX &&
	       WIRE_TEXT_MAX <= WIRE_ENV_LEN_MAX, "one field, one message");

static const char *const tag_names[] = {
	[WIRE_TAG_ARGV] = "ARGV",	[WIRE_TAG_ENV] = "ENV",
	[WIRE_TAG_CWD] = "CWD",		[WIRE_TAG_REPO] = "REPO",
	[WIRE_TAG_ALLOW] = "ALLOW",	[WIRE_TAG_AUDIT] = "AUDIT",
	[WIRE_TAG_PTY] = "PTY",		[WIRE_TAG_ID] = "ID",
	[WIRE_TAG_SIGNO] = "SIGNO",	[WIRE_TAG_STATUS] = "STATUS",
	[WIRE_TAG_TEXT] = "TEXT",
	[WIRE_TAG_OPTION] = "OPTION",	[WIRE_TAG_JSON] = "JSON",
	[WIRE_TAG_RECEIPT] = "RECEIPT",
};

static bool bytes_within(const char *v, size_t len, char lo, char hi)
{
	for (size_t i = 0; i < len; i++)
		if (v[i] < lo || v[i] > hi)
			return false;
	return true;
}

/* An empty argument is fine ("git commit -m ''"), an empty COMMAND is not. */
static const char *arg_check(const char *v, size_t len, size_t i)
{
	return i == 0 && len == 0 ? "empty (it names COMMAND)" : NULL;
}

/*
 * NAME as a shell would export it (the rule of --setenv). egretd's
 * environment filter judges variables by name; a name no shell sets
 * ("LD_PRELOAD.x", "A-B") has no business in COMMAND's environment, and no
 * rule of the filter should have to think about it. The value is free.
 */
static const char *env_check(const char *v, size_t len, size_t i)
{
	return environ_assignment_valid(v, true) ? NULL :
	       "not NAME=VALUE with NAME [A-Za-z_][A-Za-z0-9_]*";
}

static const char *cwd_check(const char *v, size_t len, size_t i)
{
	return v[0] == '/' ? NULL : "not an absolute path";
}

static const char *repo_check(const char *v, size_t len, size_t i)
{
	return policy_repo_name_valid(v) ? NULL : "not OWNER/NAME";
}

/* Only text: what it means is for egretd's policy code to judge. */
static const char *allow_check(const char *v, size_t len, size_t i)
{
	return bytes_within(v, len, '!', '~') ? NULL : "not printable ASCII";
}

bool wire_option_valid(const char *v, size_t len)
{
	const char *eq = memchr(v, '=', len);
	const struct run_option_row *row = run_option_find(v, eq ? (size_t)(eq - v) : len);

	if (!row || !(row->via & RUN_VIA_OPTION))
		return false;
	/* A value, not empty, exactly when the option takes one. */
	return row->metavar ? eq && eq + 1 < v + len : !eq;
}

/* "not an option egretd passes on (home=, ..., clean-env)": the table's. */
static const char *option_check(const char *v, size_t len, size_t i)
{
	static char names[384], why[448];

	if (wire_option_valid(v, len))
		return NULL;
	if (run_options_join(names, sizeof(names), RUN_VIA_OPTION, "", "=") < 0)
		snprintf(names, sizeof(names), "egret-client --help lists them");
	snprintf(why, sizeof(why), "not an option egretd passes on (%s)", names);
	return why;
}

static const char *id_check(const char *v, size_t len, size_t i)
{
	return attempt_id_valid(v) ? NULL : "not an attempt id ([A-Za-z0-9_.-], no leading . or -)";
}

/* The client prints it to a terminal: no escape sequences, no second line. */
static const char *text_check(const char *v, size_t len, size_t i)
{
	return bytes_within(v, len, ' ', '~') ? NULL : "not printable ASCII";
}

#define SLOT(member)	offsetof(struct wire_msg, member)

static const struct wire_field run_fields[] = {
	{ .tag = WIRE_TAG_ARGV, .kind = WIRE_KIND_STR, .required = true, .nmax = WIRE_ARGV_MAX,
	  .lo = 0, .hi = WIRE_ARG_LEN_MAX, .off = SLOT(run.argv), .count_off = SLOT(run.argc),
	  .check = arg_check },
	{ .tag = WIRE_TAG_ENV, .kind = WIRE_KIND_STR, .nmax = WIRE_ENV_MAX,
	  .lo = 1, .hi = WIRE_ENV_LEN_MAX, .off = SLOT(run.env), .count_off = SLOT(run.envc),
	  .check = env_check },
	{ .tag = WIRE_TAG_CWD, .kind = WIRE_KIND_STR, .required = true, .nmax = 1,
	  .lo = 1, .hi = WIRE_CWD_MAX, .off = SLOT(run.cwd), .check = cwd_check },
	{ .tag = WIRE_TAG_REPO, .kind = WIRE_KIND_STR, .nmax = 1,
	  .lo = 1, .hi = WIRE_REPO_MAX, .off = SLOT(run.repo), .check = repo_check },
	{ .tag = WIRE_TAG_ALLOW, .kind = WIRE_KIND_STR, .nmax = WIRE_ALLOW_MAX,
	  .lo = 1, .hi = WIRE_ALLOW_LEN_MAX, .off = SLOT(run.allow), .count_off = SLOT(run.nallow),
	  .check = allow_check },
	{ .tag = WIRE_TAG_AUDIT, .kind = WIRE_KIND_FLAG, .nmax = 1, .off = SLOT(run.audit) },
	{ .tag = WIRE_TAG_PTY, .kind = WIRE_KIND_FLAG, .nmax = 1, .off = SLOT(run.pty) },
	{ .tag = WIRE_TAG_OPTION, .kind = WIRE_KIND_STR, .nmax = WIRE_OPTION_MAX,
	  .lo = 1, .hi = WIRE_OPTION_LEN_MAX, .off = SLOT(run.option),
	  .count_off = SLOT(run.noption), .check = option_check },
	{ .tag = WIRE_TAG_RECEIPT, .kind = WIRE_KIND_FLAG, .nmax = 1, .off = SLOT(run.receipt) },
};

/* ATTACH and STARTED: the same one field (one struct type in the union). */
_Static_assert(SLOT(attach.id) == SLOT(started.id), "ATTACH and STARTED share a layout");

static const struct wire_field id_fields[] = {
	{ .tag = WIRE_TAG_ID, .kind = WIRE_KIND_STR, .required = true, .nmax = 1,
	  .lo = 1, .hi = WIRE_ID_MAX, .off = SLOT(attach.id), .check = id_check },
};

static const struct wire_field signal_fields[] = {
	{ .tag = WIRE_TAG_SIGNO, .kind = WIRE_KIND_U32, .required = true, .nmax = 1,
	  .lo = 1, .hi = WIRE_SIGNO_MAX, .off = SLOT(signal.signo) },
};

static const struct wire_field exit_fields[] = {
	{ .tag = WIRE_TAG_STATUS, .kind = WIRE_KIND_U32, .required = true, .nmax = 1,
	  .lo = 0, .hi = WIRE_STATUS_MAX, .off = SLOT(exit.status) },
};

static const struct wire_field error_fields[] = {
	{ .tag = WIRE_TAG_TEXT, .kind = WIRE_KIND_STR, .required = true, .nmax = 1,
	  .lo = 1, .hi = WIRE_TEXT_MAX, .off = SLOT(error.text), .check = text_check },
};

static const struct wire_field status_fields[] = {
	{ .tag = WIRE_TAG_ID, .kind = WIRE_KIND_STR, .nmax = 1,
	  .lo = 1, .hi = WIRE_ID_MAX, .off = SLOT(status.id), .check = id_check },
	{ .tag = WIRE_TAG_JSON, .kind = WIRE_KIND_FLAG, .nmax = 1, .off = SLOT(status.json) },
};

#define LAYOUT(n, f)	{ .name = n, .fields = f, .nfields = ARRAY_SIZE(f) }

static const struct wire_layout layouts[] = {
	[WIRE_RUN] = LAYOUT("RUN", run_fields),
	[WIRE_ATTACH] = LAYOUT("ATTACH", id_fields),
	[WIRE_SIGNAL] = LAYOUT("SIGNAL", signal_fields),
	[WIRE_STARTED] = LAYOUT("STARTED", id_fields),
	[WIRE_EXIT] = LAYOUT("EXIT", exit_fields),
	[WIRE_ERROR] = LAYOUT("ERROR", error_fields),
	[WIRE_STATUS] = LAYOUT("STATUS", status_fields),
};

const struct wire_layout *wire_layout_get(uint32_t type)
{
	return type > WIRE_NONE && type <= WIRE_TYPE_MAX ? &layouts[type] : NULL;
}

const char *wire_type_name(uint32_t type)
{
	const struct wire_layout *t = wire_layout_get(type);

	return t ? t->name : NULL;
}

const char *wire_tag_name(enum wire_tag tag)
{
	return tag_names[tag];
}

int wire_fail(char *err, size_t errlen, int r, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return r;
}

/* "ENV[3]" for an item of a repeated field, "CWD" for a singleton. */
static const char *label(const struct wire_field *f, size_t i, char *buf, size_t len)
{
	if (f->nmax == 1)
		return tag_names[f->tag];
	snprintf(buf, len, "%s[%zu]", tag_names[f->tag], i);
	return buf;
}

int wire_str_check(const struct wire_field *f, const char *v, size_t len, size_t i,
		   int bad, char *err, size_t errlen)
{
	char buf[32];
	const char *what = label(f, i, buf, sizeof(buf)), *why;

	if (len > f->hi)
		return wire_fail(err, errlen, -E2BIG, "%s: %zu bytes, at most %u", what, len, f->hi);
	if (len < f->lo)
		return wire_fail(err, errlen, bad, "%s: empty", what);
	why = f->check ? f->check(v, len, i) : NULL;
	if (why)
		return wire_fail(err, errlen, bad, "%s: %s", what, why);
	return 0;
}

int wire_u32_check(const struct wire_field *f, uint32_t v, int bad, char *err, size_t errlen)
{
	if (v < f->lo || v > f->hi)
		return wire_fail(err, errlen, bad, "%s %u out of range %u..%u", tag_names[f->tag],
				 v, f->lo, f->hi);
	return 0;
}

static void *slot(struct wire_msg *m, size_t off)
{
	return (char *)m + off;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Where a decode stands: the message it fills, how much of its arena the
 * copies took, where the reason goes. */
struct decoder {
	struct wire_msg *m;
	size_t used;
	char *err;
	size_t errlen;
};

_Static_assert(ARRAY_SIZE(run_fields) <= 32, "decode_fields() keeps a bit per field");

/* String @v of @len bytes, copied into the arena, checked, put in its slot. */
static int decode_str(struct decoder *d, const struct wire_field *f, const uint8_t *v,
		      size_t len)
{
	size_t *n = f->nmax > 1 ? slot(d->m, f->count_off) : NULL;
	size_t i = n ? *n : 0;
	char buf[32], *copy;
	int r;

	if (n && *n == f->nmax)
		return wire_fail(d->err, d->errlen, -E2BIG, "more than %u %s items", f->nmax,
				 tag_names[f->tag]);
	if (memchr(v, '\0', len))
		return wire_fail(d->err, d->errlen, -EBADMSG, "%s: holds a NUL byte",
				 label(f, i, buf, sizeof(buf)));
	/* A copy takes len + 1 bytes of a field's len + 4: this never fires,
	 * but an arena overrun must not rest on arithmetic alone. */
	if (len >= sizeof(d->m->arena) - d->used)
		return wire_fail(d->err, d->errlen, -E2BIG, "%s: no room left to copy it",
				 label(f, i, buf, sizeof(buf)));
	copy = d->m->arena + d->used;
	memcpy(copy, v, len);
	copy[len] = '\0';
	d->used += len + 1;
	r = wire_str_check(f, copy, len, i, -EBADMSG, d->err, d->errlen);
	if (r < 0)
		return r;
	if (n)
		((char **)slot(d->m, f->off))[(*n)++] = copy;
	else
		*(const char **)slot(d->m, f->off) = copy;
	return 0;
}

static int decode_value(struct decoder *d, const struct wire_field *f, const uint8_t *v,
			size_t len)
{
	uint32_t x;
	int r;

	switch (f->kind) {
	case WIRE_KIND_FLAG:
		if (len)
			return wire_fail(d->err, d->errlen, -EBADMSG, "%s: %zu bytes, a flag has none",
					 tag_names[f->tag], len);
		*(bool *)slot(d->m, f->off) = true;
		return 0;
	case WIRE_KIND_U32:
		if (len != 4)
			return wire_fail(d->err, d->errlen, -EBADMSG, "%s: %zu bytes, want 4",
					 tag_names[f->tag], len);
		x = get32(v);
		r = wire_u32_check(f, x, -EBADMSG, d->err, d->errlen);
		if (r < 0)
			return r;
		*(uint32_t *)slot(d->m, f->off) = x;
		return 0;
	case WIRE_KIND_STR:
		return decode_str(d, f, v, len);
	}
	return wire_fail(d->err, d->errlen, -EBADMSG, "%s: no such kind", tag_names[f->tag]);
}

/* @t's field with @tag and its index, or NULL. */
static const struct wire_field *field_find(const struct wire_layout *t, uint16_t tag,
					   size_t *ret_i)
{
	for (size_t i = 0; i < t->nfields; i++) {
		if (t->fields[i].tag == tag) {
			*ret_i = i;
			return &t->fields[i];
		}
	}
	return NULL;
}

/* Misplaced, twice, out of order: each refused before its value is read. */
static int decode_fields(struct decoder *d, const struct wire_layout *t, const uint8_t *p,
			 size_t len)
{
	uint32_t seen = 0;
	size_t off = 0, last = 0, i;

	while (off < len) {
		const struct wire_field *f;
		uint16_t tag, flen;
		int r;

		if (len - off < WIRE_FIELD_HEADER_LEN)
			return wire_fail(d->err, d->errlen, -EBADMSG,
					 "truncated field header at byte %zu", WIRE_HEADER_LEN + off);
		tag = get16(p + off);
		flen = get16(p + off + 2);
		off += WIRE_FIELD_HEADER_LEN;
		f = field_find(t, tag, &i);
		if (!f && tag >= 1 && tag <= WIRE_TAG_MAX)
			return wire_fail(d->err, d->errlen, -EBADMSG, "%s not allowed in %s",
					 tag_names[tag], t->name);
		if (!f)
			return wire_fail(d->err, d->errlen, -EBADMSG, "unknown tag %u", tag);
		if (flen > len - off)
			return wire_fail(d->err, d->errlen, -EBADMSG, "%s: %u bytes, only %zu left",
					 tag_names[tag], flen, len - off);
		if (f->nmax == 1 && seen & 1u << i)
			return wire_fail(d->err, d->errlen, -EBADMSG, "%s given twice",
					 tag_names[tag]);
		if (i < last)
			return wire_fail(d->err, d->errlen, -EBADMSG,
					 "%s after %s (fields go in tag order)", tag_names[tag],
					 tag_names[t->fields[last].tag]);
		r = decode_value(d, f, p + off, flen);
		if (r < 0)
			return r;
		seen |= 1u << i;
		last = i;
		off += flen;
	}
	for (i = 0; i < t->nfields; i++)
		if (t->fields[i].required && !(seen & 1u << i))
			return wire_fail(d->err, d->errlen, -EBADMSG, "%s without %s", t->name,
					 tag_names[t->fields[i].tag]);
	return 0;
}

int wire_decode(const uint8_t *buf, size_t len, struct wire_msg *m, char *err, size_t errlen)
{
	struct decoder d = { .m = m, .err = err, .errlen = errlen };
	const struct wire_layout *t;
	uint16_t version, type;
	uint32_t body;
	int r;

	/* Counts, flags and slots zeroed (argv and env end in NULL); the arena
	 * is written before it is read. */
	memset(m, 0, offsetof(struct wire_msg, arena));
	if (len > WIRE_MAX)
		return wire_fail(err, errlen, -E2BIG, "%zu bytes, more than %d", len, WIRE_MAX);
	if (len < WIRE_HEADER_LEN)
		return wire_fail(err, errlen, -EBADMSG, "truncated header: %zu of %d bytes", len,
				 WIRE_HEADER_LEN);
	if (memcmp(buf, WIRE_MAGIC, sizeof(WIRE_MAGIC) - 1))
		return wire_fail(err, errlen, -EBADMSG, "not an egret message (no \"%s\")",
				 WIRE_MAGIC);
	version = get16(buf + 4);
	if (version != WIRE_VERSION)
		return wire_fail(err, errlen, -EBADMSG, "version %u, want %d", version,
				 WIRE_VERSION);
	type = get16(buf + 6);
	t = wire_layout_get(type);
	if (!t)
		return wire_fail(err, errlen, -EBADMSG, "unknown type %u", type);
	body = get32(buf + 8);
	if (body != len - WIRE_HEADER_LEN)
		return wire_fail(err, errlen, -EBADMSG, "body length %u, but %zu bytes follow",
				 body, len - WIRE_HEADER_LEN);
	r = decode_fields(&d, t, buf + WIRE_HEADER_LEN, body);
	if (r < 0)
		return r;
	m->type = (enum wire_type)type;
	return 0;
}
