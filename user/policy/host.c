// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/text.h"
#include "policy/host.h"

bool host_text_is_name(const char *text)
{
	const char *colon = strchr(text, ':'), *end, *label;

	if (text[0] == '[' || strchr(text, '/'))
		return false;
	if (text[0] == '*')
		return true;
	if (colon && strchr(colon + 1, ':'))
		return false;			/* two colons: IPv6 */
	/* An IPv4 address ends in a numeric label; a name never does
	 * (top-level domains are not all digits). */
	end = colon ? colon : text + strlen(text);
	if (end > text && end[-1] == '.')
		end--;
	for (label = end; label > text && label[-1] != '.'; label--)
		;
	for (; label < end; label++)
		if (*label < '0' || *label > '9')
			return true;
	return false;
}

int host_name_parse(const char *text, struct host_rule *ret, char *err,
		    size_t errlen)
{
	struct host_rule rule = {};
	const char *name = text;
	size_t label = 0, labels = 1, i;

	if (!strncmp(text, "*.", 2)) {
		rule.wildcard = true;
		name = text + 2;
	}
	if (dns_name_normalize(name, rule.name, sizeof(rule.name)) < 0)
		return errbuf_fail(err, errlen, "'%s' is not a valid hostname", text);
	for (i = 0; rule.name[i]; i++) {
		char c = rule.name[i];

		if (c == '.') {
			if (label == 0)
				return errbuf_fail(err, errlen, "empty label in '%s'", text);
			label = 0;
			labels++;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_'))
			return errbuf_fail(err, errlen,
					   "'%s': hostnames use letters, digits, '-' and '_' ('*.' only as a prefix)",
					   text);
		if (++label > 63)
			return errbuf_fail(err, errlen, "label longer than 63 in '%s'", text);
	}
	if (label == 0)
		return errbuf_fail(err, errlen, "empty label in '%s'", text);
	/* "*.com" would allow a whole top-level domain. */
	if (rule.wildcard && labels < 2)
		return errbuf_fail(err, errlen,
				   "'%s': a wildcard needs at least two labels after '*.'",
				   text);
	*ret = rule;
	return 0;
}

int host_rule_parse(const char *text, struct host_rule *ret, char *err,
		    size_t errlen)
{
	char name[DNS_NAME_MAX + 8];
	const char *colon = strchr(text, ':');
	struct host_rule rule;
	size_t n = colon ? (size_t)(colon - text) : strlen(text);
	int r;

	if (n >= sizeof(name))
		return errbuf_fail(err, errlen, "hostname too long%s", "");
	memcpy(name, text, n);
	name[n] = '\0';
	r = host_name_parse(name, &rule, err, errlen);
	if (r < 0)
		return r;
	if (colon) {
		r = ports_parse(colon + 1, rule.ports, EGRET_PORT_SLOTS, err,
				errlen);
		if (r < 0)
			return r;
		rule.nports = (unsigned int)r;
	}
	*ret = rule;
	return 0;
}

bool host_rule_matches(const struct host_rule *rule, const char *name)
{
	size_t n, s;

	if (!rule->wildcard)
		return !strcmp(rule->name, name);
	n = strlen(name);
	s = strlen(rule->name);
	return n > s + 1 && name[n - s - 1] == '.' &&
	       !strcmp(name + n - s, rule->name);
}

/* A quiet rule matches a name only to refuse it (host_rules_quiet). */
static bool rule_allows(const struct host_rule *rule, const char *name)
{
	return !rule->quiet && host_rule_matches(rule, name);
}

int host_rules_match(const struct host_rule *rules, size_t n, const char *name,
		     struct port_range *ret_ports, unsigned int *ret_nports,
		     bool *ret_any)
{
	unsigned int nports = 0, i, j;
	bool any = false;
	int matched = 0;
	size_t k;

	for (k = 0; k < n; k++) {
		const struct host_rule *rule = &rules[k];

		if (!rule_allows(rule, name))
			continue;
		matched++;
		if (rule->nports == 0)
			any = true;
		for (i = 0; i < rule->nports; i++) {
			for (j = 0; j < nports; j++)
				if (ret_ports[j].lo == rule->ports[i].lo &&
				    ret_ports[j].hi == rule->ports[i].hi)
					break;
			if (j == nports && nports < EGRET_PORT_SLOTS)
				ret_ports[nports++] = rule->ports[i];
		}
	}
	*ret_nports = nports;
	*ret_any = any;
	return matched;
}

bool host_rule_equal(const struct host_rule *x, const struct host_rule *y)
{
	return x->wildcard == y->wildcard && x->nports == y->nports &&
	       x->no_pin == y->no_pin && x->upload_limit == y->upload_limit &&
	       x->quiet == y->quiet &&
	       !strcmp(x->name, y->name) &&
	       !memcmp(x->ports, y->ports, sizeof(x->ports[0]) *
		       (x->nports <= EGRET_PORT_SLOTS ? x->nports : 0));
}

void host_rules_dest_name(const struct host_rule *rules, size_t n, const char *name,
			  char *out, size_t len)
{
	const struct host_rule *wild = NULL;

	snprintf(out, len, "%s", name);
	for (size_t i = 0; i < n; i++) {
		if (!rule_allows(&rules[i], name))
			continue;
		if (!rules[i].wildcard)
			return;
		if (!wild || strlen(rules[i].name) > strlen(wild->name))
			wild = &rules[i];
	}
	if (wild)
		snprintf(out, len, "*.%s", wild->name);
}

__u64 host_rules_upload_limit(const struct host_rule *rules, size_t n, const char *name)
{
	__u64 min = 0;

	for (size_t i = 0; i < n; i++)
		if (rules[i].upload_limit && rule_allows(&rules[i], name) &&
		    (!min || rules[i].upload_limit < min))
			min = rules[i].upload_limit;
	return min;
}

bool host_rules_unpinned(const struct host_rule *rules, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (rules[i].no_pin && rule_allows(&rules[i], name))
			return true;
	return false;
}

const struct host_rule *host_rules_quiet(const struct host_rule *rules, size_t n,
					 const char *name)
{
	const struct host_rule *quiet = NULL;

	for (size_t i = 0; i < n; i++) {
		if (!host_rule_matches(&rules[i], name))
			continue;
		if (!rules[i].quiet)
			return NULL;	/* work wins: an allow is never quieted */
		quiet = quiet ? quiet : &rules[i];
	}
	return quiet;
}
