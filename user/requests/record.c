// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * requests/record.c - the text of the request store's files
 * (requests/store.h): a file's first line, and one request per line,
 * tab-separated, every string escaped so that nothing the sandbox named
 * can split a line. No file is opened here.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/paths.h"
#include "lib/util.h"
#include "policy/policy.h"
#include "requests/store.h"

#define HEADER		"# egret requests v1 repo="
#define NFIELDS		17	/* 15 before the commands, 16 before the reasons */
#define LINE_MAX_LEN	4096

static const char *const status_names[] = { "pending", "approved", "denied" };
static const char *const kind_names[] = { "name", "addr" };

const char *request_status_name(enum request_status st)
{
	return (unsigned int)st < ARRAY_SIZE(status_names) ? status_names[st] : "?";
}

void request_target_text(const struct request *r, char *buf, size_t len)
{
	if (r->kind == REQUEST_NAME && !r->port)
		snprintf(buf, len, "%s (lookup)", r->target);
	else if (strchr(r->target, ':'))
		snprintf(buf, len, "[%s]:%u", r->target, r->port);
	else
		snprintf(buf, len, "%s:%u", r->target, r->port);
}

/*
 * A record line under construction. Every append is bounded; one that does
 * not fit marks the line truncated, and the line is refused.
 */
struct line {
	char *buf;
	size_t off, len;
	bool truncated;
};

static void put(struct line *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->truncated)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->off, l->len - l->off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= l->len - l->off)
		l->truncated = true;
	else
		l->off += (size_t)n;
}

/* Strings come from the sandbox (names, comm): nothing may split a line.
 * An empty field is "-", so a literal "-" is written escaped. */
static void put_escaped(struct line *l, const char *s)
{
	bool lone_dash = !strcmp(s, "-");

	if (!s[0])
		put(l, "-");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\\')
			put(l, "\\\\");
		else if (c <= 0x20 || c >= 0x7f || lone_dash)
			put(l, "\\x%02x", c);
		else
			put(l, "%c", c);
	}
}

static int unescape(const char *in, char *out, size_t len)
{
	size_t o = 0;

	if (!strcmp(in, "-")) {
		out[0] = '\0';
		return 0;
	}
	for (; *in; in++) {
		unsigned int c = (unsigned char)*in;

		if (*in == '\\' && in[1] == '\\') {
			in++;
		} else if (*in == '\\' && in[1] == 'x' && isxdigit((unsigned char)in[2]) &&
			   isxdigit((unsigned char)in[3])) {
			char hex[3] = { in[2], in[3], 0 };

			c = (unsigned int)strtoul(hex, NULL, 16);
			in += 3;
		} else if (*in == '\\') {
			return -EBADMSG;
		}
		if (o + 1 >= len)
			return -EBADMSG;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

void request_add_command(struct request *r, const char *comm)
{
	if (!comm || !comm[0])
		return;
	for (unsigned int i = 0; i < r->ncommands; i++)
		if (!strcmp(r->commands[i], comm))
			return;
	if (r->ncommands < REQUEST_COMMANDS)
		snprintf(r->commands[r->ncommands++], sizeof(r->commands[0]), "%s", comm);
}

int request_format(const struct request *r, char *buf, size_t len)
{
	struct line l = { .buf = buf, .len = len };

	put(&l, "%lu\t%s\t%s\t", r->id, request_status_name(r->status),
	    kind_names[r->kind]);
	put_escaped(&l, r->target);
	put(&l, "\t%u\t", r->port);
	put_escaped(&l, r->proto);
	put(&l, "\t%" PRIu64 "\t%" PRIu64 "\t%" PRId64 "\t%" PRId64 "\t",
	    r->count, r->nattempts, r->first, r->last);
	for (unsigned int i = 0; i < r->nrecent; i++) {
		if (i)
			put(&l, ",");
		put_escaped(&l, r->attempts[i]);
	}
	if (!r->nrecent)
		put(&l, "-");
	put(&l, "\t%u\t", r->pid);
	put_escaped(&l, r->comm);
	put(&l, "\t");
	put_escaped(&l, r->decided_by);
	put(&l, "\t%" PRId64 "\t", r->decided_at);
	/* The commands, comma-separated: a comma in one is escaped too. */
	for (unsigned int i = 0; i < r->ncommands; i++) {
		if (i)
			put(&l, ",");
		for (const char *c = r->commands[i]; *c; c++) {
			if (*c == ',')
				put(&l, "\\x2c");
			else {
				char one[2] = { *c, 0 };

				put_escaped(&l, one);
			}
		}
	}
	if (!r->ncommands)
		put(&l, "-");
	put(&l, "\t");
	put_escaped(&l, r->why);
	return l.truncated ? -ENOSPC : 0;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *ret)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EBADMSG;
	errno = 0;
	*ret = strtoull(s, &end, 10);
	return errno || *end || *ret > max ? -EBADMSG : 0;
}

static int parse_enum(const char *s, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return (int)i;
	return -EBADMSG;
}

int request_parse(const char *line, struct request *r)
{
	char copy[LINE_MAX_LEN], *f[NFIELDS], *save = NULL, *tok;
	uint64_t v[6];
	int n = 0, st, kind;

	memset(r, 0, sizeof(*r));
	if (strlen(line) >= sizeof(copy))
		return -EBADMSG;
	strcpy(copy, line);
	for (tok = strtok_r(copy, "\t", &save); tok && n < NFIELDS;
	     tok = strtok_r(NULL, "\t", &save))
		f[n++] = tok;
	if (n < NFIELDS - 2 || tok)
		return -EBADMSG;
	st = parse_enum(f[1], status_names, ARRAY_SIZE(status_names));
	kind = parse_enum(f[2], kind_names, ARRAY_SIZE(kind_names));
	if (st < 0 || kind < 0 ||
	    parse_u64(f[0], ULONG_MAX, &v[0]) < 0 || v[0] == 0 ||
	    unescape(f[3], r->target, sizeof(r->target)) < 0 || !r->target[0] ||
	    parse_u64(f[4], 65535, &v[1]) < 0 ||
	    unescape(f[5], r->proto, sizeof(r->proto)) < 0 ||
	    parse_u64(f[6], UINT64_MAX, &r->count) < 0 ||
	    parse_u64(f[7], UINT64_MAX, &r->nattempts) < 0 ||
	    parse_u64(f[8], INT64_MAX, &v[2]) < 0 ||
	    parse_u64(f[9], INT64_MAX, &v[3]) < 0 ||
	    parse_u64(f[11], UINT32_MAX, &v[4]) < 0 ||
	    unescape(f[12], r->comm, sizeof(r->comm)) < 0 ||
	    unescape(f[13], r->decided_by, sizeof(r->decided_by)) < 0 ||
	    parse_u64(f[14], INT64_MAX, &v[5]) < 0)
		return -EBADMSG;
	r->id = (unsigned long)v[0];
	r->status = (enum request_status)st;
	r->kind = (enum request_kind)kind;
	r->port = (uint16_t)v[1];
	r->first = (int64_t)v[2];
	r->last = (int64_t)v[3];
	r->pid = (uint32_t)v[4];
	r->decided_at = (int64_t)v[5];
	if (strcmp(f[10], "-")) {
		save = NULL;
		for (tok = strtok_r(f[10], ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			if (r->nrecent == REQUEST_ATTEMPTS || !attempt_id_valid(tok))
				return -EBADMSG;
			strcpy(r->attempts[r->nrecent++], tok);
		}
	}
	if (n == NFIELDS - 2) {		/* an older line: its one example */
		request_add_command(r, r->comm);
		return 0;
	}
	if (n == NFIELDS && unescape(f[16], r->why, sizeof(r->why)) < 0)
		return -EBADMSG;
	if (strcmp(f[15], "-")) {
		save = NULL;
		for (tok = strtok_r(f[15], ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			char one[REQUEST_COMM_MAX + 1];

			if (r->ncommands == REQUEST_COMMANDS ||
			    unescape(tok, one, sizeof(one)) < 0)
				return -EBADMSG;
			request_add_command(r, one);
		}
	}
	return 0;
}

/* ---- a file's first line ----------------------------------------- */

void request_header_format(const struct request_file *f, char *buf, size_t len)
{
	snprintf(buf, len, HEADER "%s dropped=%" PRIu64, f->repo, f->dropped);
}

int request_header_parse(const char *text, char *repo, size_t repolen,
			 uint64_t *dropped)
{
	char line[LINE_MAX_LEN], *p, *sp;

	if (strncmp(text, HEADER, strlen(HEADER)) || strlen(text) >= sizeof(line))
		return -EBADMSG;
	strcpy(line, text);
	line[strcspn(line, "\n")] = '\0';
	p = line + strlen(HEADER);
	sp = strchr(p, ' ');
	if (!sp || strncmp(sp, " dropped=", 9) || parse_u64(sp + 9, UINT64_MAX, dropped) < 0)
		return -EBADMSG;
	*sp = '\0';
	if (!policy_repo_name_valid(p) || strlen(p) >= repolen)
		return -EBADMSG;
	strcpy(repo, p);
	return 0;
}
