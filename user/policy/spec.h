/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * policy/spec.h - allow specifications: `ADDR`, `CIDR`, `ADDR:PORTS`, `[V6]:PORTS`.
 *
 * Pure parsing, no I/O and no logging: callers report errors.
 */
#ifndef EGRET_SPEC_H
#define EGRET_SPEC_H

#include <stdbool.h>
#include <linux/types.h>
#include "egret.h"

struct port_range {
	__u16 lo;		/* inclusive, host order */
	__u16 hi;
};

struct allow_spec {
	int family;		/* AF_INET or AF_INET6 */
	__u32 addr[4];		/* network order; IPv4 in addr[0] */
	unsigned int prefixlen;	/* 32 or 128 for one address */
	unsigned int nports;	/* 0 = any port */
	struct port_range ports[EGRET_PORT_SLOTS];
	/* `pin: true`: TLS to it on a pinned port must name a host whose
	 * DNS answer held the address (docs/POLICY.md); else by address. */
	bool pin;
	/* `upload_limit:` of the item: its upload budget; 0: none of its own. */
	__u64 upload_limit;
	char origin[64];	/* where it came from: "--allow", "cidrs", ... */
};

/*
 * Parse @text into @ret. IPv4-mapped IPv6 (::ffff:a.b.c.d, ::ffff:0:0/96+)
 * becomes IPv4, since the kernel routes it as IPv4. Host bits set below the
 * prefix are an error (likely a typo for a wider or narrower range).
 * Returns 0, or -EINVAL (-E2BIG: more than EGRET_PORT_SLOTS port items)
 * with a short reason in @err.
 */
int allow_spec_parse(const char *text, struct allow_spec *ret,
		     char *err, size_t errlen);

/* "443,80,8000-8100" -> ranges. Returns the count (>0), or -EINVAL/-E2BIG. */
int ports_parse(const char *text, struct port_range *ret, unsigned int max,
		char *err, size_t errlen);

/*
 * "ADDR", "ADDR:PORT", "V6", "[V6]", "[V6]:PORT" -> "ADDR:PORT" or
 * "[V6]:PORT" in @canon, with @default_port when none is given.
 */
int endpoint_parse(const char *text, unsigned int default_port, char *canon,
		   size_t len, char *err, size_t errlen);

/* endpoint_parse(@text, port 53), appended to the upstream list @csv:
 * -EINVAL (reason in @err) or -E2BIG (too many for @size). */
int upstream_list_add(char *csv, size_t size, const char *text, char *err,
		      size_t errlen);

/* The same entry: family, prefix and ports (ports from the policy equal
 * only ports from the policy). */
bool allow_spec_equal(const struct allow_spec *x, const struct allow_spec *y);

/* Full length of the family's address: 32 or 128. */
unsigned int spec_addr_bits(const struct allow_spec *spec);

/* Does @outer's prefix contain @inner's (same family)? */
bool spec_contains(const struct allow_spec *outer,
		   const struct allow_spec *inner);

/* Did the operator name a special destination: does the spec lie entirely
 * inside a special range (loopback, unspecified, link-local, metadata,
 * multicast, limited broadcast), or name one address exactly (which may be
 * one of the host's own, or a subnet's broadcast: only the programs know)? */
bool spec_is_special(const struct allow_spec *spec);

/* "443,80,8000-8100" or "any" (@json: [443,80,"8000-8100"] or "any"). */
void ports_format(const struct port_range *p, unsigned int n, char *buf,
		  size_t len, bool json);

/* "203.0.113.0/24:443,80" - the canonical text, for messages and status. */
int spec_format(const struct allow_spec *spec, char *buf, size_t len);

#endif
