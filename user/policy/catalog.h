/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * policy/catalog.h - the registry catalog compiled into egret (user/policy/catalog.yaml):
 * OS package registries, git forges, language ecosystems and agent
 * profiles, each a list of exact hosts with ports and the source the list
 * comes from. An agent profile also names its CLI's known noise (`quiet`:
 * answered NXDOMAIN at once, never a request) and the upload budget its
 * hosts get, both measured on the CLI versions it states.
 */
#ifndef EGRET_CATALOG_H
#define EGRET_CATALOG_H

#include <stddef.h>

#include "lib/names.h"
#include "policy/spec.h"

enum catalog_section {
	CATALOG_OS = 0,		/* os_registries */
	CATALOG_FORGE,		/* forges */
	CATALOG_ECOSYSTEM,	/* ecosystems */
	CATALOG_AGENT,		/* agents */
	CATALOG_NSECTIONS,
};

#define CATALOG_MAX_ENTRIES	64
#define CATALOG_MAX_HOSTS	16
#define CATALOG_NAME_MAX	32
#define CATALOG_MAX_QUIET	8	/* an agent profile's quiet names */

struct catalog_entry {
	char name[CATALOG_NAME_MAX];
	char source[320];
	struct port_range ports[EGRET_PORT_SLOTS];
	unsigned int nports;
	char hosts[CATALOG_MAX_HOSTS][DNS_NAME_MAX + 1];
	size_t nhosts;
	char remote_hosts[4][DNS_NAME_MAX + 1];	/* forges only */
	size_t nremote_hosts;
	/* Of @hosts, those whose ports carry something other than TLS (SSH
	 * on 443): never SNI-pinned (`not_tls:`). */
	char not_tls[4][DNS_NAME_MAX + 1];
	size_t nnot_tls;
	/* Agent profiles only: the CLI's noise, answered NXDOMAIN and never
	 * a request (`quiet:`); its hosts' upload budget (`upload_limit:`,
	 * sized for its work and its telemetry together; 0: none); what it
	 * was measured on (`measured:`, the CLI's version and the date). */
	char quiet[CATALOG_MAX_QUIET][DNS_NAME_MAX + 1];
	size_t nquiet;
	__u64 upload_limit;
	char measured[160];
};

/* Is @host one of @e's not_tls hosts? */
bool catalog_not_tls(const struct catalog_entry *e, const char *host);

/* What an upload budget can be given for as a whole (`upload_limits:`
 * in the catalog, as its defaults, and in a policy). */
enum upload_category {
	UPLOAD_OS = 0,		/* os_registries */
	UPLOAD_ECOSYSTEMS,	/* ecosystems */
	UPLOAD_GIT_REMOTE,	/* git_remote: the remote's host and its forge's */
	UPLOAD_AGENTS,		/* agents: every profile's hosts (each profile
				 * has a budget of its own unless given) */
	UPLOAD_CATEGORIES,
};

/* Their keys, "os_registries", "ecosystems", "git_remote", "agents". */
extern const char *const upload_category_keys[UPLOAD_CATEGORIES];

/* An `upload_limits:` value of `none`: no budget, the default's neither. */
#define UPLOAD_LIMIT_NONE	(~0ULL)

struct catalog {
	/* The budgets a category's hosts get unless the policy says
	 * otherwise (measured: docs/POLICY.md, "Upload budgets"); 0: none. */
	__u64 upload_limits[UPLOAD_CATEGORIES];
	struct catalog_entry entries[CATALOG_NSECTIONS][CATALOG_MAX_ENTRIES];
	size_t n[CATALOG_NSECTIONS];
	const char *names[CATALOG_NSECTIONS][CATALOG_MAX_ENTRIES];	/* for hints */
};

/* The section's key in YAML ("os_registries", ...). */
const char *catalog_section_key(enum catalog_section s);

/* Parse the embedded catalog. Its problems are egret's bugs: -EINVAL and a
 * message in @err (the build parses it, so a bad catalog never ships). */
int catalog_load(struct catalog *c, char *err, size_t errlen);

/* The embedded catalog as catalog_load() parses it, parsed at build time
 * (tools/catalog_gen.c writes it as C): what egret uses, with no parse at
 * a start. */
extern const struct catalog egret_catalog_built;

/* Parse catalog text (for tests and the loader). */
int catalog_parse(struct catalog *c, const char *text, size_t len,
		  const char *name, char *err, size_t errlen);

const struct catalog_entry *catalog_find(const struct catalog *c,
					 enum catalog_section s,
					 const char *name);

/* The section (enum catalog_section) of the first entry whose hosts or
 * remote_hosts hold @host, or -ENOENT. */
int catalog_section_of(const struct catalog *c, const char *host);

/* The forge whose remote_hosts hold @host, or NULL. */
const struct catalog_entry *catalog_forge_for(const struct catalog *c,
					      const char *host);

/* The embedded texts (user/policy/embedded.S). */
extern const char egret_catalog_yaml[];
extern const char egret_default_policy_yaml[];

#endif
