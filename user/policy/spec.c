// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egret_match.h"
#include "lib/text.h"
#include "policy/spec.h"

#define MAX_SPEC_LEN 256

static int parse_u16(const char *s, const char *end, __u16 *ret)
{
	unsigned long v = 0;
	const char *p;

	if (s == end || end - s > 5)
		return -EINVAL;
	for (p = s; p < end; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (v == 0 || v > 65535)
		return -ERANGE;
	*ret = (__u16)v;
	return 0;
}

int ports_parse(const char *text, struct port_range *ret, unsigned int max,
		char *err, size_t errlen)
{
	const char *item = text;
	unsigned int n = 0;

	if (!*text)
		return errbuf_fail(err, errlen, "empty port list%s", "");
	for (;;) {
		const char *end = strchr(item, ',');
		const char *dash;
		struct port_range range;

		if (!end)
			end = item + strlen(item);
		dash = memchr(item, '-', (size_t)(end - item));
		if (parse_u16(item, dash ? dash : end, &range.lo) < 0 ||
		    parse_u16(dash ? dash + 1 : item, end, &range.hi) < 0)
			return errbuf_fail(err, errlen,
					   "bad port in '%s' (want 1-65535 or LO-HI)",
					   text);
		if (range.lo > range.hi)
			return errbuf_fail(err, errlen, "port range backwards in '%s'",
					   text);
		if (n == max) {
			if (err && errlen)
				snprintf(err, errlen,
					 "more than %u port items in '%s'", max,
					 text);
			return -E2BIG;
		}
		ret[n++] = range;
		if (!*end)
			break;
		item = end + 1;
	}
	return (int)n;
}

unsigned int spec_addr_bits(const struct allow_spec *spec)
{
	return spec->family == AF_INET ? 32 : 128;
}

/* Bit @i (0 = most significant on the wire) of a network-order address. */
static int addr_bit(const __u32 *addr, unsigned int i)
{
	const __u8 *bytes = (const __u8 *)addr;

	return (bytes[i / 8] >> (7 - i % 8)) & 1;
}

static bool host_bits_clear(const struct allow_spec *spec)
{
	unsigned int i;

	for (i = spec->prefixlen; i < spec_addr_bits(spec); i++)
		if (addr_bit(spec->addr, i))
			return false;
	return true;
}

bool spec_contains(const struct allow_spec *outer,
		   const struct allow_spec *inner)
{
	unsigned int i;

	if (outer->family != inner->family ||
	    outer->prefixlen > inner->prefixlen)
		return false;
	for (i = 0; i < outer->prefixlen; i++)
		if (addr_bit(outer->addr, i) != addr_bit(inner->addr, i))
			return false;
	return true;
}

bool spec_is_special(const struct allow_spec *spec)
{
	unsigned int need;

	if (spec->prefixlen == spec_addr_bits(spec))
		return true;
	if (spec->family == AF_INET) {
		switch (egret_classify4(spec->addr[0])) {
		case EGRET_ADDR_MULTICAST:
			need = 4;
			break;
		case EGRET_ADDR_UNSPECIFIED:
		case EGRET_ADDR_LOOPBACK:
			need = 8;
			break;
		case EGRET_ADDR_LINK_LOCAL:
		case EGRET_ADDR_METADATA:
			need = 16;
			break;
		default:
			return false;	/* 255.255.255.255 is exact, above */
		}
	} else {
		switch (egret_classify6(spec->addr)) {
		case EGRET_ADDR_MULTICAST:
			need = 8;
			break;
		case EGRET_ADDR_LINK_LOCAL:
			need = 10;
			break;
		default:
			return false;	/* ::, ::1 and fd00:ec2::254 are single */
		}
	}
	return spec->prefixlen >= need;
}

/* Parse "ADDR" or "ADDR/LEN" (no brackets, no ports) into @spec. */
static int parse_prefix(char *text, struct allow_spec *spec, char *err,
			size_t errlen)
{
	char *slash = strchr(text, '/');
	unsigned int bits;

	if (slash)
		*slash = '\0';
	if (inet_pton(AF_INET, text, &spec->addr[0]) == 1)
		spec->family = AF_INET;
	else if (inet_pton(AF_INET6, text, spec->addr) == 1)
		spec->family = AF_INET6;
	else
		return errbuf_fail(err, errlen,
				   "'%s' is not an IPv4 or IPv6 address", text);

	bits = spec->family == AF_INET ? 32 : 128;
	spec->prefixlen = bits;
	if (slash) {
		char *end;
		long len;

		errno = 0;
		len = strtol(slash + 1, &end, 10);
		if (slash[1] < '0' || slash[1] > '9' || errno || *end ||
		    len < 0 || (unsigned long)len > bits)
			return errbuf_fail(err, errlen, "bad prefix length '/%s'",
					   slash + 1);
		spec->prefixlen = (unsigned int)len;
	}

	/* The kernel routes ::ffff:a.b.c.d as IPv4; keep it in the v4 maps. */
	if (spec->family == AF_INET6 && egret_is_v4mapped(spec->addr)) {
		if (spec->prefixlen < 96)
			return errbuf_fail(err, errlen,
					   "prefix '%s' mixes IPv6 and IPv4-mapped space; list IPv4 ranges as IPv4",
					   text);
		spec->family = AF_INET;
		spec->addr[0] = spec->addr[3];
		spec->prefixlen -= 96;
	}
	if (spec->family == AF_INET)
		spec->addr[1] = spec->addr[2] = spec->addr[3] = 0;
	if (!host_bits_clear(spec))
		return errbuf_fail(err, errlen,
				   "'%s' has host bits set below its prefix length",
				   text);
	return 0;
}

/*
 * Split @buf in place into an address and what follows its colon:
 * "[V6]", "[V6]:TAIL", "V4:TAIL", or a bare IPv6 address (more than one
 * colon: no tail). *@ret_tail is NULL without one. -1: '[' without ']';
 * -2: something other than ':' after ']'.
 */
static int split_addr_tail(char *buf, char **ret_addr, char **ret_tail)
{
	*ret_addr = buf;
	*ret_tail = NULL;
	if (buf[0] == '[') {
		char *close = strchr(buf, ']');

		if (!close)
			return -1;
		if (close[1] && close[1] != ':')
			return -2;
		*close = '\0';
		*ret_addr = buf + 1;
		if (close[1])
			*ret_tail = close + 2;
		return 0;
	}
	char *colon = strchr(buf, ':');

	/* One colon: IPv4 with a tail; more: a bare IPv6 address. */
	if (colon && !strchr(colon + 1, ':')) {
		*colon = '\0';
		*ret_tail = colon + 1;
	}
	return 0;
}

int allow_spec_parse(const char *text, struct allow_spec *ret, char *err,
		     size_t errlen)
{
	char buf[MAX_SPEC_LEN];
	struct allow_spec spec = {};
	char *addr, *ports;
	int r;

	if (strlen(text) >= sizeof(buf))
		return errbuf_fail(err, errlen, "allow spec too long%s", "");
	strcpy(buf, text);

	r = split_addr_tail(buf, &addr, &ports);
	if (r == -1)
		return errbuf_fail(err, errlen, "missing ']' in '%s'", text);
	if (r == -2)
		return errbuf_fail(err, errlen, "expected ':PORTS' after ']' in '%s'", text);

	r = parse_prefix(addr, &spec, err, errlen);
	if (r < 0)
		return r;
	if (buf[0] == '[' && spec.family == AF_INET &&
	    !strchr(addr, ':'))
		return errbuf_fail(err, errlen,
				   "brackets are for IPv6; write IPv4 as ADDR:PORTS in '%s'",
				   text);
	if (ports) {
		r = ports_parse(ports, spec.ports, EGRET_PORT_SLOTS, err,
				errlen);
		if (r < 0)
			return r;
		spec.nports = (unsigned int)r;
	}
	*ret = spec;
	return 0;
}

int spec_format(const struct allow_spec *spec, char *buf, size_t len)
{
	char addr[INET6_ADDRSTRLEN];
	size_t off;
	unsigned int i;
	int n;

	inet_ntop(spec->family, spec->addr, addr, sizeof(addr));
	if (spec->prefixlen == spec_addr_bits(spec))
		n = snprintf(buf, len, spec->family == AF_INET6 && spec->nports ?
			     "[%s]" : "%s", addr);
	else
		n = snprintf(buf, len, spec->family == AF_INET6 && spec->nports ?
			     "[%s/%u]" : "%s/%u", addr, spec->prefixlen);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	off = (size_t)n;
	for (i = 0; i < spec->nports; i++) {
		const struct port_range *p = &spec->ports[i];

		if (p->lo == p->hi)
			n = snprintf(buf + off, len - off, "%c%u",
				     i ? ',' : ':', p->lo);
		else
			n = snprintf(buf + off, len - off, "%c%u-%u",
				     i ? ',' : ':', p->lo, p->hi);
		if (n < 0 || (size_t)n >= len - off)
			return -ENOSPC;
		off += (size_t)n;
	}
	return 0;
}

int endpoint_parse(const char *text, unsigned int default_port, char *canon,
		   size_t len, char *err, size_t errlen)
{
	char buf[MAX_SPEC_LEN], addr_text[INET6_ADDRSTRLEN];
	unsigned char addr[16];
	char *host, *port;
	__u16 portnum = (__u16)default_port;
	int family, n;

	if (strlen(text) >= sizeof(buf))
		return errbuf_fail(err, errlen, "too long%s", "");
	strcpy(buf, text);
	if (split_addr_tail(buf, &host, &port) < 0)
		return errbuf_fail(err, errlen, "want [V6ADDR] or [V6ADDR]:PORT, not '%s'", text);
	if (inet_pton(AF_INET, host, addr) == 1)
		family = AF_INET;
	else if (inet_pton(AF_INET6, host, addr) == 1)
		family = AF_INET6;
	else
		return errbuf_fail(err, errlen, "'%s' is not an IPv4 or IPv6 address", host);
	if (port && parse_u16(port, port + strlen(port), &portnum) < 0)
		return errbuf_fail(err, errlen, "bad port '%s'", port);
	inet_ntop(family, addr, addr_text, sizeof(addr_text));
	n = snprintf(canon, len, family == AF_INET ? "%s:%u" : "[%s]:%u",
		     addr_text, portnum);
	if (n < 0 || (size_t)n >= len)
		return errbuf_fail(err, errlen, "too long%s", "");
	return 0;
}

void ports_format(const struct port_range *p, unsigned int n, char *buf,
		  size_t len, bool json)
{
	size_t off = 0;

	if (n == 0) {
		snprintf(buf, len, json ? "\"any\"" : "any");
		return;
	}
	if (json)
		off += (size_t)snprintf(buf + off, len - off, "[");
	for (unsigned int i = 0; i < n && off < len; i++) {
		const char *sep = i ? "," : "";

		if (p[i].lo == p[i].hi)
			off += (size_t)snprintf(buf + off, len - off, "%s%u", sep, p[i].lo);
		else
			off += (size_t)snprintf(buf + off, len - off,
						json ? "%s\"%u-%u\"" : "%s%u-%u", sep,
						p[i].lo, p[i].hi);
	}
	if (json && off < len)
		snprintf(buf + off, len - off, "]");
}

int upstream_list_add(char *csv, size_t size, const char *text, char *err,
		      size_t errlen)
{
	char canon[INET6_ADDRSTRLEN + 8];
	int r = endpoint_parse(text, 53, canon, sizeof(canon), err, errlen);

	if (r == 0 && (r = csv_append(csv, size, canon)) < 0)
		snprintf(err, errlen, "too many upstreams");
	return r;
}

bool allow_spec_equal(const struct allow_spec *x, const struct allow_spec *y)
{
	return x->family == y->family && x->prefixlen == y->prefixlen &&
	       x->nports == y->nports && x->pin == y->pin &&
	       x->upload_limit == y->upload_limit &&
	       !memcmp(x->addr, y->addr, sizeof(x->addr)) &&
	       !memcmp(x->ports, y->ports, sizeof(x->ports[0]) *
		       (x->nports <= EGRET_PORT_SLOTS ? x->nports : 0));
}
