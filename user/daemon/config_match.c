// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * daemon/config_match.c - what a parsed egretd configuration says about a
 * caller: which entry admits it, which repositories it may select; and the
 * grammar of cgroup prefixes and repo patterns the parser (config.c) holds
 * the file to, kept beside the code that matches them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon/config.h"
#include "policy/gitremote.h"
#include "policy/policy.h"

void daemon_config_free(struct daemon_config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->ncallers; i++) {
		free(c->callers[i].cgroup);
		free(c->callers[i].repos);
		free(c->callers[i].cache);
		free(c->callers[i].home);
		free(c->callers[i].remote_hosts);
	}
	free(c->callers);
	c->callers = NULL;
	c->ncallers = 0;
}

bool daemon_repo_pattern_valid(const char *p)
{
	char probe[POLICY_REPO_MAX];
	size_t n = strlen(p);

	if (!strcmp(p, "*"))
		return true;
	if (n >= sizeof(probe))
		return false;
	if (n >= 2 && !strcmp(p + n - 2, "/*")) {
		snprintf(probe, sizeof(probe), "%.*sx", (int)(n - 1), p);
		return policy_repo_name_valid(probe);
	}
	return policy_repo_name_valid(p);
}

bool daemon_cgroup_path_clean(const char *path, size_t len)
{
	size_t i = 1;

	if (!len || path[0] != '/')
		return false;
	for (size_t j = 0; j < len; j++)
		if ((unsigned char)path[j] < 0x20 || path[j] == 0x7f)
			return false;
	while (len > 1 && i <= len) {
		const char *c = path + i, *slash = memchr(c, '/', len - i);
		size_t n = slash ? (size_t)(slash - c) : len - i;

		if (!n || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		i += n + 1;
	}
	return true;
}

static bool cgroup_admits(const struct daemon_caller *k, const char *cgroup)
{
	size_t n;

	if (!k->cgroup)
		return true;
	if (!cgroup)
		return false;
	n = strlen(k->cgroup);
	if (strncmp(cgroup, k->cgroup, n))
		return false;
	/* The root "/" is the one component prefix ending in '/'. */
	return k->cgroup_literal || k->cgroup[n - 1] == '/' ||
	       cgroup[n] == '\0' || cgroup[n] == '/';
}

const struct daemon_caller *daemon_config_caller(const struct daemon_config *c,
						 uid_t uid, const char *cgroup)
{
	/* "/a/../b" starts with "/a" and is not below it: egretd hands us the
	 * kernel's path, but a prefix test must not rely on that. */
	if (cgroup && !daemon_cgroup_path_clean(cgroup, strlen(cgroup)))
		return NULL;
	for (size_t i = 0; i < c->ncallers; i++)
		if (c->callers[i].uid == uid)
			return cgroup_admits(&c->callers[i], cgroup) ? &c->callers[i] : NULL;
	return NULL;
}

bool daemon_caller_may_repo(const struct daemon_caller *k, const char *repo)
{
	if (!repo)
		return true;
	if (!policy_repo_name_valid(repo))
		return false;
	for (size_t i = 0; i < k->nrepos; i++) {
		const char *p = k->repos[i];
		size_t n = strlen(p);

		/* OWNER's star pattern is matched by its text before the
		 * "*", which holds the "/": "octo/" is no prefix of "octopus/x". */
		if (!strcmp(p, "*") ||
		    (p[n - 1] == '*' ? !strncasecmp(p, repo, n - 1) : !strcasecmp(p, repo)))
			return true;
	}
	return false;
}

/* --git-remote URL: a remote egret run will take, on a host @k may name. */
static const char *may_git_remote(const struct daemon_caller *k, const char *url)
{
	struct git_remote remote;
	char err[128];

	if (!k->git_remote)
		return "this caller may not name its git remote (egretd.yaml: callers.git_remote)";
	if (!url || git_remote_parse(url, &remote, err, sizeof(err)) < 0)
		return "--git-remote: not a remote egret takes (https://, http://, ssh://, git:// or HOST:PATH)";
	if (k->nremote_hosts && remote.is_ip)
		return "--git-remote: this caller's remotes are named hosts (egretd.yaml: callers.git_remote)";
	for (size_t i = 0; i < k->nremote_hosts; i++)
		if (host_rule_matches(&k->remote_hosts[i], remote.host))
			return NULL;
	return k->nremote_hosts ?
	       "--git-remote: its host is not one of this caller's (egretd.yaml: callers.git_remote)" :
	       NULL;
}

const char *daemon_caller_may_option(const struct daemon_caller *k, const char *name,
				     const char *value)
{
	if (!strcmp(name, "git-remote"))
		return may_git_remote(k, value);
	if (!strcmp(name, "nested-sandbox"))
		return k->nested_sandbox ? NULL :
		       "this caller may not use --nested-sandbox (egretd.yaml: callers.nested_sandbox)";
	/* A gated row this table does not know: nobody may. */
	return "egretd does not know who may pass this option";
}
