// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/json.h"
#include "lib/paths.h"
#include "policy/policy.h"
#include "requests/ask.h"
#include "requests/export.h"

#define MARK	"{\"egret\":\"request\""

static char export_node[REQUEST_NODE_MAX + 1];

void request_export_set_node(const char *node)
{
	snprintf(export_node, sizeof(export_node), "%s", node ? node : "");
}

int request_export_format(const char *repo, const char *attempt,
			  const struct request *d, bool new_attempt,
			  char *buf, size_t len)
{
	char node[256] = "";
	size_t at = 0;
	int n;

	if (export_node[0])
		snprintf(node, sizeof(node), "%s", export_node);
	else
		gethostname(node, sizeof(node) - 1);
#define PUT(...) do { \
		n = snprintf(buf + at, len - at, __VA_ARGS__); \
		if (n < 0 || (size_t)n >= len - at) \
			return -ENOSPC; \
		at += (size_t)n; \
	} while (0)
#define STR(key, s) do { \
		PUT(",\"%s\":", key); \
		at = json_append(buf, at, len, s); \
		if (at >= len - 1) \
			return -ENOSPC; \
	} while (0)
	PUT(MARK);
	STR("repo", repo);
	STR("attempt", attempt);
	STR("kind", d->kind == REQUEST_NAME ? "name" : "address");
	STR("target", d->target);
	PUT(",\"port\":%u", (unsigned int)d->port);
	STR("proto", d->proto);
	PUT(",\"count\":%" PRIu64 ",\"new_attempt\":%s,\"first\":%" PRId64 ",\"last\":%" PRId64,
	    d->count, new_attempt ? "true" : "false", d->first, d->last);
	PUT(",\"pid\":%u", (unsigned int)d->pid);
	STR("comm", d->comm);
	PUT(",\"commands\":[");
	for (unsigned int i = 0; i < d->ncommands; i++) {
		if (i)
			PUT(",");
		at = json_append(buf, at, len, d->commands[i]);
		if (at >= len - 1)
			return -ENOSPC;
	}
	PUT("]");
	if (d->why[0])
		STR("why", d->why);
	STR("node", node);
	PUT("}\n");
#undef STR
#undef PUT
	return (int)at;
}

/* ---- parsing: the flat object egretd writes, and nothing else ------ */

struct cursor {
	const char *start, *p;
	char *err;
	size_t errlen;
};

static int fail(struct cursor *c, const char *why)
{
	snprintf(c->err, c->errlen, "%s at byte %zu of the request line", why,
		 (size_t)(c->p - c->start));
	return -EBADMSG;
}

/* A JSON string into @out (at most @len - 1 bytes): the escapes
 * json_append writes. */
static int parse_string(struct cursor *c, char *out, size_t len)
{
	size_t n = 0;

	if (*c->p++ != '"')
		return fail(c, "want a string");
	while (*c->p != '"') {
		unsigned char ch = (unsigned char)*c->p++;

		if (ch == '\0' || ch < 0x20)
			return fail(c, "a string cut short or with a control byte");
		if (ch == '\\') {
			char e = *c->p++;
			unsigned int u;

			switch (e) {
			case '"': case '\\': case '/': ch = (unsigned char)e; break;
			case 'n': ch = '\n'; break;
			case 't': ch = '\t'; break;
			case 'r': ch = '\r'; break;
			case 'b': ch = '\b'; break;
			case 'f': ch = '\f'; break;
			case 'u':
				if (sscanf(c->p, "%4x", &u) != 1 || u > 0xff || u == 0 ||
				    strspn(c->p, "0123456789abcdefABCDEF") < 4)
					return fail(c, "a \\u escape egret does not write");
				c->p += 4;
				ch = (unsigned char)u;
				break;
			default:
				return fail(c, "a bad escape");
			}
		}
		if (n + 1 >= len)
			return fail(c, "a string too long");
		out[n++] = (char)ch;
	}
	c->p++;
	out[n] = '\0';
	return 0;
}

static int parse_number(struct cursor *c, int64_t min, int64_t max, int64_t *ret)
{
	char *end;
	long long v;

	if (*c->p != '-' && (*c->p < '0' || *c->p > '9'))
		return fail(c, "want a number");
	errno = 0;
	v = strtoll(c->p, &end, 10);
	if (errno || v < min || v > max || end == c->p)
		return fail(c, "a number out of range");
	c->p = end;
	*ret = v;
	return 0;
}

enum { K_EGRET, K_REPO, K_ATTEMPT, K_KIND, K_TARGET, K_PORT, K_PROTO, K_COUNT,
       K_NEW, K_FIRST, K_LAST, K_PID, K_COMM, K_NODE, K_COMMANDS, K_WHY, K_N };
static const char *const keys[K_N] = {
	"egret", "repo", "attempt", "kind", "target", "port", "proto", "count",
	"new_attempt", "first", "last", "pid", "comm", "node", "commands", "why",
};

/* `["curl","npm"]`: the distinct commands, at most REQUEST_COMMANDS. */
static int parse_commands(struct cursor *c, struct request *r)
{
	char one[REQUEST_COMM_MAX + 1];
	int e;

	if (*c->p++ != '[')
		return fail(c, "want a list of commands");
	if (*c->p == ']') {
		c->p++;
		return 0;
	}
	for (;;) {
		e = parse_string(c, one, sizeof(one));
		if (e < 0)
			return e;
		if (r->ncommands == REQUEST_COMMANDS)
			return fail(c, "too many commands");
		request_add_command(r, one);
		if (*c->p == ']') {
			c->p++;
			return 0;
		}
		if (*c->p++ != ',')
			return fail(c, "want ',' or ']'");
	}
}

static int parse_value(struct cursor *c, int k, struct request_line *l)
{
	char text[DNS_NAME_MAX + 1];
	int64_t v = 0;
	int r = 0;

	switch (k) {
	case K_EGRET:
		r = parse_string(c, text, sizeof(text));
		return r < 0 ? r : strcmp(text, "request") ? fail(c, "not a request") : 0;
	case K_REPO:
		r = parse_string(c, l->repo, sizeof(l->repo));
		return r < 0 ? r : policy_repo_name_valid(l->repo) ? 0 : fail(c, "not a repository name");
	case K_ATTEMPT:
		r = parse_string(c, l->attempt, sizeof(l->attempt));
		return r < 0 ? r : attempt_id_valid(l->attempt) ? 0 : fail(c, "not an attempt id");
	case K_KIND:
		r = parse_string(c, text, sizeof(text));
		if (r == 0 && strcmp(text, "name") && strcmp(text, "address"))
			return fail(c, "kind is name or address");
		l->r.kind = !strcmp(text, "name") ? REQUEST_NAME : REQUEST_ADDR;
		return r;
	case K_TARGET:
		r = parse_string(c, l->r.target, sizeof(l->r.target));
		return r < 0 ? r : l->r.target[0] ? 0 : fail(c, "an empty target");
	case K_PROTO:
		return parse_string(c, l->r.proto, sizeof(l->r.proto));
	case K_COMM:
		return parse_string(c, l->r.comm, sizeof(l->r.comm));
	case K_NODE:
		return parse_string(c, text, sizeof(text));
	case K_COMMANDS:
		return parse_commands(c, &l->r);
	case K_WHY:	/* made printable again: the line came from a node */
		r = parse_string(c, text, sizeof(text));
		if (r == 0)
			ask_sanitize(text, strlen(text), l->r.why, sizeof(l->r.why));
		return r;
	case K_NEW:
		if (!strncmp(c->p, "true", 4) || !strncmp(c->p, "false", 5)) {
			l->new_attempt = c->p[0] == 't';
			c->p += l->new_attempt ? 4 : 5;
			return 0;
		}
		return fail(c, "want true or false");
	case K_PORT:
		r = parse_number(c, 0, 65535, &v);
		l->r.port = (uint16_t)v;
		return r;
	case K_PID:
		r = parse_number(c, 0, UINT32_MAX, &v);
		l->r.pid = (uint32_t)v;
		return r;
	case K_COUNT:	/* 0: an agent's ask, with its why */
		r = parse_number(c, 0, INT64_MAX, &v);
		l->r.count = (uint64_t)v;
		return r;
	default:	/* K_FIRST, K_LAST */
		r = parse_number(c, 0, INT64_MAX, &v);
		if (k == K_FIRST)
			l->r.first = v;
		else
			l->r.last = v;
		return r;
	}
}

int request_export_parse(const char *text, struct request_line *ret,
			 char *err, size_t errlen)
{
	const char *start = strstr(text, MARK);
	struct cursor c = { .start = start, .p = start, .err = err, .errlen = errlen };
	struct request_line l = {};
	unsigned int seen = 0;
	int r;

	if (!start)
		return 0;
	c.p++;
	for (;;) {
		char key[32];
		int k;

		r = parse_string(&c, key, sizeof(key));
		if (r < 0)
			return r;
		for (k = 0; k < K_N && strcmp(key, keys[k]); k++)
			;
		if (k == K_N) {
			snprintf(err, errlen, "unknown key '%s' in a request line", key);
			return -EBADMSG;
		}
		if (seen & (1u << k)) {
			snprintf(err, errlen, "key '%s' twice in a request line", key);
			return -EBADMSG;
		}
		seen |= 1u << k;
		if (*c.p++ != ':')
			return fail(&c, "want ':'");
		r = parse_value(&c, k, &l);
		if (r < 0)
			return r;
		if (*c.p == '}')
			break;
		if (*c.p++ != ',')
			return fail(&c, "want ',' or '}'");
	}
	c.p++;
	if (*c.p && *c.p != '\n' && *c.p != '\r')
		return fail(&c, "bytes after the request");
	for (int k = 0; k < K_N; k++)
		if (!(seen & (1u << k)) && k != K_PID && k != K_COMM && k != K_NODE &&
		    k != K_COMMANDS && k != K_WHY) {
			snprintf(err, errlen, "no '%s' in a request line", keys[k]);
			return -EBADMSG;
		}
	if (!l.r.count && !l.r.why[0]) {
		snprintf(err, errlen, "a request line with count 0 and no why");
		return -EBADMSG;
	}
	*ret = l;
	return 1;
}
