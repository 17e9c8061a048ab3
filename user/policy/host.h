/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * policy/host.h - hostname allow rules: `github.com`, `*.githubusercontent.com:443`.
 *
 * Names are compared case-insensitively with the trailing dot ignored.
 * `*.example.com` matches every name below example.com at any depth, never
 * example.com itself. Pure: callers log.
 */
#ifndef EGRET_HOST_H
#define EGRET_HOST_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/names.h"
#include "policy/spec.h"

struct host_rule {
	char name[DNS_NAME_MAX + 1];	/* lower case; the suffix for wildcards */
	bool wildcard;
	unsigned int nports;		/* 0 = any port */
	struct port_range ports[EGRET_PORT_SLOTS];
	/* `pin: false`: its addresses are allowed by address alone, SNI
	 * pinning off for them (docs/POLICY.md). */
	bool no_pin;
	/* `upload_limit:` of the entry, or of its catalog category: its
	 * names' upload budget (docs/POLICY.md); 0: none of its own. */
	__u64 upload_limit;
	/* An agent profile's noise (`quiet:` in the catalog): the name is
	 * refused at once and never becomes a request; no rule allows
	 * anything by it (docs/POLICY.md, "Agent profiles"). */
	bool quiet;
	char origin[64];		/* where it came from, for egret check */
};

/* Does @text look like a hostname rather than an address? (No digits-only
 * labels at the end, no colons before the port part.) */
bool host_text_is_name(const char *text);

/* "NAME", "NAME:PORTS", "*.NAME[:PORTS]". -EINVAL with a reason in @err. */
int host_rule_parse(const char *text, struct host_rule *ret, char *err,
		    size_t errlen);

/* Check a bare name (no ports, optional "*."), normalising into @ret. */
int host_name_parse(const char *text, struct host_rule *ret, char *err,
		    size_t errlen);

/* Does @rule match @name (lower case, no trailing dot)? */
/* The same rule: name, wildcard and ports (a rule whose ports come from the
 * policy equals only another such rule). */
bool host_rule_equal(const struct host_rule *x, const struct host_rule *y);

bool host_rule_matches(const struct host_rule *rule, const char *name);

/*
 * The union of the ports of every rule matching @name (quiet rules
 * never do), as rules for allow_add_rule: *@ret_any when some rule allows any port. Returns the
 * number of matching rules (0 = the name is not allowed).
 */
int host_rules_match(const struct host_rule *rules, size_t n, const char *name,
		     struct port_range *ret_ports, unsigned int *ret_nports,
		     bool *ret_any);

/* Does a rule matching @name say `pin: false`? */
/*
 * The destination @name counts against (docs/POLICY.md, "Upload budgets"),
 * into @out: @name itself when an exact rule allows it, else the
 * wildcard that does ("*.example.com", the narrowest) - every name below
 * it shares one count and one budget, or a COMMAND that can make up names
 * would get a budget per name.
 */
void host_rules_dest_name(const struct host_rule *rules, size_t n, const char *name,
			  char *out, size_t len);

/* The smallest upload_limit of the rules matching @name; 0: none. */
__u64 host_rules_upload_limit(const struct host_rule *rules, size_t n, const char *name);

bool host_rules_unpinned(const struct host_rule *rules, size_t n, const char *name);

/*
 * The quiet rule @name matches (the first), when no rule allows @name:
 * an agent's known noise, to refuse without making it a request. NULL
 * when no quiet rule matches, or when another rule allows the name (the
 * git remote, a host the operator listed, an approval, another
 * profile's work: an allow always wins).
 */
const struct host_rule *host_rules_quiet(const struct host_rule *rules, size_t n,
					 const char *name);

#endif
