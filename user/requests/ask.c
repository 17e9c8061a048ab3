// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * requests/ask.c - reading an agent's request (requests/ask.h): its target
 * checked as the policy checks a host or an address, its reason made
 * harmless to store and to show. No I/O.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "lib/text.h"
#include "policy/host.h"
#include "policy/spec.h"
#include "requests/ask.h"

void ask_sanitize(const char *in, size_t n, char *out, size_t outlen)
{
	size_t o = 0;
	bool space = false;

	if (!outlen)
		return;
	for (size_t i = 0; i < n && in[i]; i++) {
		unsigned char c = (unsigned char)in[i];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			space = o > 0;
			continue;
		}
		if (space && o + 1 < outlen)
			out[o++] = ' ';
		space = false;
		if (o + 1 >= outlen)
			break;
		out[o++] = c > 0x20 && c < 0x7f ? (char)c : '?';
	}
	out[o] = '\0';
}

/* PORTS: single ports only, each one request. */
static int ports_take(const struct port_range *pr, unsigned int n, struct ask *a,
		      char *err, size_t errlen)
{
	for (unsigned int i = 0; i < n; i++) {
		if (pr[i].lo != pr[i].hi)
			return errbuf_fail(err, errlen, "ask for single ports, not the range %u-%u",
					   pr[i].lo, pr[i].hi);
		if (a->nports == ASK_PORTS_MAX)
			return errbuf_fail(err, errlen, "at most %d ports in one request",
					   ASK_PORTS_MAX);
		a->ports[a->nports++] = pr[i].lo;
	}
	return 0;
}

static int parse_name(const char *text, struct ask *a, char *err, size_t errlen)
{
	struct host_rule rule;
	int r = host_rule_parse(text, &rule, err, errlen);

	if (r < 0)
		return -EINVAL;
	if (rule.wildcard)
		return errbuf_fail(err, errlen, "ask for a name, not a wildcard ('%s')", text);
	a->kind = REQUEST_NAME;
	memcpy(a->target, rule.name, sizeof(a->target));
	return ports_take(rule.ports, rule.nports, a, err, errlen);
}

static int parse_addr(const char *text, struct ask *a, char *err, size_t errlen)
{
	struct allow_spec spec;

	if (allow_spec_parse(text, &spec, err, errlen) < 0)
		return -EINVAL;
	if (spec.prefixlen != (spec.family == AF_INET ? 32u : 128u))
		return errbuf_fail(err, errlen, "ask for one address, not the range '%s'", text);
	a->kind = REQUEST_ADDR;
	if (!inet_ntop(spec.family, spec.addr, a->target, sizeof(a->target)))
		return -errno;
	return ports_take(spec.ports, spec.nports, a, err, errlen);
}

int ask_parse(const void *msg, size_t len, struct ask *ret, char *err, size_t errlen)
{
	const char *m = msg, *nul = memchr(msg, '\0', len);
	char target[DNS_NAME_MAX + 64];
	struct ask a = {};
	size_t tlen;
	int r;

	if (len > ASK_MSG_MAX)
		return errbuf_fail(err, errlen, "the request is over %d bytes", ASK_MSG_MAX);
	if (!nul)
		return errbuf_fail(err, errlen, "no reason: egret request NAME[:PORTS] --why TEXT%s", "");
	tlen = (size_t)(nul - m);
	if (!tlen || tlen >= sizeof(target))
		return errbuf_fail(err, errlen, "the target is %s", tlen ? "too long" : "empty");
	memcpy(target, m, tlen);
	target[tlen] = '\0';
	for (size_t i = 0; i < tlen; i++)
		if ((unsigned char)target[i] <= 0x20 || (unsigned char)target[i] >= 0x7f)
			return errbuf_fail(err, errlen, "the target has a character no host or address has%s", "");
	r = host_text_is_name(target) ? parse_name(target, &a, err, errlen) :
					parse_addr(target, &a, err, errlen);
	if (r < 0)
		return r;
	/* Up to the end or a second NUL: the reason, at most its length. */
	ask_sanitize(nul + 1, len - tlen - 1, a.why, sizeof(a.why));
	if (!a.why[0])
		return errbuf_fail(err, errlen, "say why: --why TEXT is required%s", "");
	*ret = a;
	return 0;
}
