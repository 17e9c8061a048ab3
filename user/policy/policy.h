/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * policy/policy.h - the operator's policy (docs/POLICY.md) and the effective
 * allowlist of one attempt.
 *
 * A policy document has default settings and a section per repository.
 * Resolving it for an attempt (repo, git remote) merges the repo's section
 * onto the defaults - lists add, scalars override - and expands catalog
 * names into hosts, giving a flat `struct policy`. Parsers do not log: they
 * collect one diagnostic per problem with file:line:column.
 */
#ifndef EGRET_POLICY_H
#define EGRET_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/diag.h"
#include "lib/names.h"
#include "policy/catalog.h"
#include "policy/gitremote.h"
#include "policy/host.h"
#include "policy/spec.h"

/* Anything a policy makes us allocate has a limit. */
#define POLICY_MAX_SPECS	4096
#define POLICY_MAX_FILE_SIZE	(1024 * 1024)
#define POLICY_MAX_REPOS	1024
#define POLICY_MAX_NAMES	32	/* os_registries / ecosystems / agents per section */
#define POLICY_DEFAULT_PATH	"/etc/egret/policy.yaml"
/* --policy none: no policy file, the command line alone. */
#define POLICY_FILE_NONE	"none"
#define POLICY_DEFAULT_MIN_TTL	300	/* seconds; docs/ARCHITECTURE.md */
#define POLICY_DEFAULT_PIN_PORT	443	/* SNI pinning's port (docs/POLICY.md) */
#define POLICY_DEFAULT_HTTP_PIN_PORT 80	/* Host pinning's port */

/* Marks an entry written without ports: it gets the effective `ports:`. */
#define PORTS_FROM_POLICY	(EGRET_PORT_SLOTS + 1)

/* The effective allowlist and settings of one attempt. */
struct policy {
	struct allow_spec *specs;	/* addresses and prefixes */
	size_t nspecs;
	size_t cap;
	struct host_rule *hosts;	/* names, learned through DNS */
	size_t nhosts;
	size_t hosts_cap;
	char upstreams_csv[1024];	/* "" = /etc/resolv.conf */
	long min_ttl;			/* -1: egret's default */
	long max_entries;		/* -1: egret's default */
	long max_cidrs;			/* -1: egret's default */
	/* `upload_limit:` bytes every destination may be sent (per
	 * attempt, docs/BUDGETS.md); 0: none. Where several apply, the
	 * smallest wins. */
	__u64 upload_limit;
	/* The effective `ports:`, for entries that name none (approvals). */
	struct port_range entry_ports[EGRET_PORT_SLOTS];
	unsigned int nentry_ports;	/* 0 = any port */
	/* SNI pinning's TCP ports (`pinning:`): 443 unless it says; none
	 * turns pinning off. */
	__u16 pin_ports[EGRET_PIN_PORTS];
	unsigned int npin_ports;
	/* Host pinning's (plain HTTP, `pinning: http_ports:`): 80 unless
	 * it says. */
	__u16 http_ports[EGRET_PIN_PORTS];
	unsigned int nhttp_ports;
	/* `nested_sandbox: true`: the attempt may make user namespaces (an
	 * agent's own sandbox: docs/SECURITY.md, "Nested sandboxes"). */
	bool nested_sandbox;
};

/* One section: the defaults, or a repository's additions. */
struct policy_section {
	struct policy lists;		/* hosts: and cidrs: as written */
	char os[POLICY_MAX_NAMES][CATALOG_NAME_MAX];
	size_t nos;
	char eco[POLICY_MAX_NAMES][CATALOG_NAME_MAX];
	size_t neco;
	char agents[POLICY_MAX_NAMES][CATALOG_NAME_MAX];	/* agent profiles */
	size_t nagents;
	int git_remote;			/* -1 unset, 0, 1 */
	int nested_sandbox;		/* -1 unset, 0, 1 */
	bool ports_set;			/* `ports:` given (nports 0 = any) */
	struct port_range ports[EGRET_PORT_SLOTS];
	unsigned int nports;
	bool pinning_set;		/* `pinning:` given */
	__u16 pin_ports[EGRET_PIN_PORTS];
	unsigned int npin_ports;	/* 0 with pinning_set: off */
	__u16 http_ports[EGRET_PIN_PORTS];
	unsigned int nhttp_ports;
	/* `upload_limits: {os_registries: SIZE, ecosystems: SIZE,
	 * git_remote: SIZE, agents: SIZE}`: the catalog categories' upload
	 * budgets (agents: every profile's, replacing each profile's own), by
	 * enum upload_category; 0: not given (the catalog's default),
	 * UPLOAD_LIMIT_NONE: `none`. */
	__u64 category_limits[UPLOAD_CATEGORIES];
	bool loopback_set;		/* `loopback:` given */
	bool loopback_any;
	struct port_range loopback[EGRET_PORT_SLOTS];
	unsigned int nloopback;		/* 0 with !loopback_any: none */
};

struct policy_repo {
	char name[POLICY_REPO_MAX];	/* owner/name */
	struct policy_section sec;
};

struct policy_doc {
	char file[256];			/* for origins and messages */
	struct policy_section base;
	struct policy_repo *repos;	/* grown as sections are parsed */
	size_t nrepos, repos_cap;
};

void policy_init(struct policy *p);
int policy_add_spec(struct policy *p, const struct allow_spec *spec);
int policy_add_host(struct policy *p, const struct host_rule *host);

/* `--allow TEXT`: an address spec or a host rule, origin "--allow". */
int policy_add_allow_text(struct policy *p, const char *text, char *err,
			  size_t errlen);

/* Is the same entry (ignoring its origin) in @p already? */
bool policy_has_host(const struct policy *p, const struct host_rule *h);
bool policy_has_spec(const struct policy *p, const struct allow_spec *s);

void policy_free(struct policy *p);

/* Give @rule/@spec written without ports (PORTS_FROM_POLICY) @p's
 * effective `ports:`. */
void policy_fill_ports(const struct policy *p, struct port_range *ports,
		       unsigned int *nports);

/*
 * The effective policy for @repo (NULL: defaults only) and @remote (NULL:
 * none given), appended to @out. Unknown repo sections are not an error:
 * the defaults apply. Returns 0 or -E2BIG (limits).
 */
int policy_resolve(const struct policy_doc *doc, const struct catalog *cat,
		   const char *repo, const struct git_remote *remote,
		   struct policy *out, struct diag *d);

void policy_doc_free(struct policy_doc *doc);

/* "Owner/Name" -> "owner__name", for files kept per repository (which
 * record their repository: two names can map to one file name). */
int policy_repo_file_name(const char *repo, char *buf, size_t len);

/* "owner/name" with [A-Za-z0-9._-] parts. */
bool policy_repo_name_valid(const char *name);

#endif
