/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * daemon/config.h - egretd's own configuration (docs/EGRETD.md): where it
 * listens and for whom, the uids attempts run as, and what each caller may
 * ask for. Root's file, read like the policy (lib/trust.h) and parsed as
 * strictly (every problem a "FILE:LINE:COL: message" in a struct diag).
 *
 * Authorization in egretd comes from here alone: a request names a repo,
 * --allow entries, --audit; daemon_config_caller() and the caller entry it
 * returns say whether this caller may. Whom the kernel says the caller is
 * (uid, cgroup) is egretd's to find out; the config only matches it.
 */
#ifndef EGRET_DAEMON_CONFIG_H
#define EGRET_DAEMON_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <netinet/in.h>

#include "lib/diag.h"
#include "lib/names.h"
#include "policy/host.h"

#define DAEMON_CONFIG_PATH	"/etc/egret/egretd.yaml"
#define DAEMON_CONFIG_MAX_SIZE	(64 * 1024)

#define DAEMON_SOCKET_DEFAULT	"/run/egretd/egret.sock"
#define DAEMON_STATE_DIR_DEFAULT	"/var/lib/egret"	/* egret run's too */
#define DAEMON_SOCKET_PATH_MAX	108	/* sizeof(sun_path), NUL included */

#define DAEMON_UID_FIRST_DEFAULT 200000
#define DAEMON_UID_LAST_DEFAULT	200999
#define DAEMON_UIDS_MAX		65536	/* uids in attempts.uids */
#define DAEMON_UID_MAX		4294967294U	/* uids and gids: -1 means "none" */

#define DAEMON_MAX_DEFAULT	16	/* attempts at once */
#define DAEMON_MAX_LIMIT	1024

#define DAEMON_CALLERS_MAX	256
#define DAEMON_REPOS_MAX	64	/* repo patterns of one caller */
#define DAEMON_REMOTE_HOSTS_MAX	64	/* git_remote: hosts of one caller */
#define DAEMON_CGROUP_MAX	4096	/* a cgroup prefix, NUL included */

#define DAEMON_METRICS_REPOS_MAX	1000	/* metrics.repositories */

/* `metrics:` where egretd serves its metrics (daemon/metrics.h), and
 * which labels it may grow. */
struct daemon_metrics_config {
	char socket[DAEMON_SOCKET_PATH_MAX];	/* "": none */
	gid_t group;		/* with @group_set: 0660 root:group, else 0600 */
	bool group_set;
	char listen[64];	/* ADDR:PORT as written; "": none */
	union {
		struct sockaddr sa;
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} addr;
	bool expose;		/* @listen may be other than loopback */
	/* How many repositories get a label value of their own in the
	 * bytes by repository (the rest: "_other"); 0: no such family. */
	unsigned int repositories;
};

/* Who may launch, and with what. */
struct daemon_caller {
	uid_t uid;
	/*
	 * NULL: any cgroup. Otherwise absolute, without a trailing '/' (but
	 * "/" itself): the caller's cgroup must be it or below it; with
	 * cgroup_literal ("PREFIX*" in the file) its path must start with it.
	 */
	char *cgroup;
	bool cgroup_literal;
	/* Patterns: OWNER/NAME, OWNER then a "/" and a "*" (any repo of
	 * OWNER), or "*" (any); none: only attempts without --repo. */
	char (*repos)[POLICY_REPO_MAX];
	size_t nrepos;
	bool allow;		/* may add --allow entries */
	bool audit;		/* may use --audit */
	unsigned int max;	/* its attempts at once, <= daemon_config.max */
	/* NULL, or an absolute directory of the caller's (in its mounts)
	 * that every attempt of its gets as HOME/.cache (launch/view.h). */
	char *cache;
	/* `upload_limit: SIZE`: the ceiling of every destination's upload
	 * budget in its attempts (docs/POLICY.md); 0: none of its own. A
	 * request's --upload-limit can only lower it. */
	uint64_t upload_limit;
	/* `git_remote:` may it name its repository's remote (--git-remote,
	 * whose host and forge companions its attempts then reach)? false;
	 * true: any remote; a list: one whose host is one of @remote_hosts
	 * (names, or *.DOMAIN). */
	bool git_remote;
	struct host_rule *remote_hosts;
	size_t nremote_hosts;
	/* `nested_sandbox: true`: may ask for --nested-sandbox. */
	bool nested_sandbox;
	/* `home: DIR`: a directory of the caller's (in its mounts) copied
	 * into each attempt's fresh HOME at start (--home-from); NULL. */
	char *home;
};

struct daemon_config {
	char socket_path[DAEMON_SOCKET_PATH_MAX];
	gid_t socket_gid;	/* the socket is 0660 root:socket_gid */
	uid_t uid_first, uid_last;	/* attempts' uids, 0 never among them */
	unsigned int max;	/* attempts at once, over all callers */
	char state_dir[PATH_MAX];	/* attempts.state_dir: the request store */
	/* `node:` the name its request lines carry, stable across
	 * container recreates; "": the host's name (daemon_host_name()). */
	char node[64];
	struct daemon_caller *callers;	/* one entry per uid */
	size_t ncallers;
	struct daemon_metrics_config metrics;
};

/*
 * Parse @text (@len bytes, named @name in messages) into *@ret, which is
 * written only on success. Users and groups are resolved now (getpwnam,
 * getgrnam), so an unknown one is an error at its position. -EINVAL with
 * every problem in @d; -ENOMEM.
 */
int daemon_config_parse(const char *text, size_t len, const char *name,
			struct daemon_config *ret, struct diag *d);

/* Read @path with trusted_file_read() (root's, not group/world-writable,
 * nor its directories), then parse it. -ENOENT when absent; -EPERM. */
int daemon_config_load(const char *path, struct daemon_config *ret,
		       struct diag *d);

void daemon_config_free(struct daemon_config *c);

/*
 * The entry of caller @uid if its cgroup prefix admits @cgroup (the
 * caller's cgroup as seen from the host's cgroup root; NULL: unknown, which
 * only an entry without a prefix admits). NULL: refused. A @cgroup with an
 * empty, "." or ".." component is refused, whatever the entry says.
 */
const struct daemon_caller *daemon_config_caller(const struct daemon_config *c,
						 uid_t uid, const char *cgroup);

/* May @k select @repo's policy section (--repo, OWNER/NAME; compared
 * case-insensitively like the policy's repos:)? NULL (no --repo): yes. */
bool daemon_caller_may_repo(const struct daemon_caller *k, const char *repo);

/*
 * May @k pass the gated option @name (attempt/run_options.h: RUN_VIA_GATED)
 * with @value (NULL: it takes none)? NULL, or why not (one phrase, naming
 * the egretd.yaml key that would allow it).
 */
const char *daemon_caller_may_option(const struct daemon_caller *k, const char *name,
				     const char *value);

/* The first @len bytes of @path are absolute, with no empty, "." or ".."
 * component and no control character ("/" is). A cgroup to compare. */
bool daemon_cgroup_path_clean(const char *path, size_t len);

/* A repos: pattern: "OWNER/NAME", OWNER and "/" and "*" (OWNER as in
 * an OWNER/NAME), or "*". */
bool daemon_repo_pattern_valid(const char *pattern);

#endif
