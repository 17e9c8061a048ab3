// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * daemon/config_caller.c - egretd.yaml's callers: who may launch attempts
 * and with what (struct daemon_caller), each key of a caller read by its
 * rule, and the checks that need the whole file (config.c reads the rest).
 */
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon/config_impl.h"
#include "lib/text.h"
#include "lib/util.h"
#include "policy/host.h"

static int caller_uid(struct parser *ps, yaml_node_t *v)
{
	unsigned long long uid;

	if (config_scalar_number(ps, v, "uid", 0, DAEMON_UID_MAX, &uid) < 0)
		return -EINVAL;
	caller_cur(ps)->uid = (uid_t)uid;
	ps->who[ps->out->ncallers] = v;
	return 0;
}

static int caller_user(struct parser *ps, yaml_node_t *v)
{
	const char *t = config_scalar_name(ps, v, "user");
	struct passwd *pw;

	if (!t)
		return -EINVAL;
	errno = 0;
	pw = getpwnam(t);
	if (!pw) {
		if (errno == ENOMEM)
			ps->oom = -ENOMEM;
		diag_add(ps->d, v, "user: unknown user '%.64s'%s", t,
			 config_all_digits(t) ? " (a number goes in uid:)" : "");
		return -EINVAL;
	}
	caller_cur(ps)->uid = pw->pw_uid;
	ps->who[ps->out->ncallers] = v;
	return 0;
}

/*
 * "/a/b": the caller's cgroup is /a/b or below it (a component boundary:
 * /a/bc is not below /a/b). "/a/b*": its path starts with /a/b, as a
 * Docker scope's (/system.slice/docker-<id>.scope) only can be named.
 */
static int caller_cgroup(struct parser *ps, yaml_node_t *v)
{
	struct daemon_caller *k = caller_cur(ps);
	const char *t = yaml_scalar(v), *why = NULL;
	size_t len = t ? strlen(t) : 0, n;
	bool literal = len && t[len - 1] == '*';

	n = len - literal;
	if (!t || t[0] != '/')
		why = "want an absolute path (from the host's cgroup root)";
	else if (len >= DAEMON_CGROUP_MAX)
		why = "too long";
	else if (memchr(t, '*', n))
		why = "'*' may only end it (PREFIX*)";
	else if (!daemon_cgroup_path_clean(t, n > 1 && t[n - 1] == '/' ? n - 1 : n))
		why = "an empty, '.' or '..' component, or a control character";
	if (why) {
		diag_add(ps->d, v, "cgroup: %s", why);
		return -EINVAL;
	}
	/* Stored without '*', and without the trailing '/' of a component
	 * prefix ("/a/" is "/a"); a literal one keeps it (so "/a/" and "*"
	 * means strictly below /a). */
	if (!literal && n > 1 && t[n - 1] == '/')
		n--;
	k->cgroup = strndup(t, n);
	if (!k->cgroup) {
		ps->oom = -ENOMEM;
		return -ENOMEM;
	}
	k->cgroup_literal = literal;
	return 0;
}

static int caller_repos(struct parser *ps, yaml_node_t *v)
{
	struct daemon_caller *k = caller_cur(ps);
	yaml_node_item_t *it;
	size_t n;
	int r = 0;

	if (v->type != YAML_SEQUENCE_NODE) {
		diag_add(ps->d, v, "repos: want a list of OWNER/NAME, OWNER/* or *");
		return -EINVAL;
	}
	n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	if (n > DAEMON_REPOS_MAX) {
		diag_add(ps->d, v, "repos: more than %d patterns", DAEMON_REPOS_MAX);
		return -EINVAL;
	}
	if (!n)
		return 0;	/* []: attempts without --repo only */
	k->repos = calloc(n, sizeof(*k->repos));
	if (!k->repos) {
		ps->oom = -ENOMEM;
		return -ENOMEM;
	}
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *item = node_at(ps, *it);
		const char *t = yaml_scalar(item);
		size_t i = 0;

		if (!t || !daemon_repo_pattern_valid(t)) {
			diag_add(ps->d, item, "repos: '%.80s' is not OWNER/NAME, OWNER/* or *",
				 t ? t : "?");
			r = -EINVAL;
			continue;
		}
		while (i < k->nrepos && strcasecmp(k->repos[i], t))
			i++;
		if (i < k->nrepos) {
			diag_add(ps->d, item, "repos: '%s' given twice", t);
			r = -EINVAL;
			continue;
		}
		strcpy(k->repos[k->nrepos++], t);
	}
	return r;
}

static int caller_allow(struct parser *ps, yaml_node_t *v)
{
	return config_scalar_bool(ps, v, "allow", &caller_cur(ps)->allow);
}

static int caller_audit(struct parser *ps, yaml_node_t *v)
{
	return config_scalar_bool(ps, v, "audit", &caller_cur(ps)->audit);
}

static int caller_upload_limit(struct parser *ps, yaml_node_t *v)
{
	uint64_t n;

	if (size_parse(yaml_scalar(v), &n) < 0) {
		diag_add(ps->d, v, "upload_limit: " SIZE_WANT);
		return -EINVAL;
	}
	caller_cur(ps)->upload_limit = n;
	return 0;
}

/* An absolute path without "." or ".." components (cache:, home:): the
 * caller's, checked (and mapped) in its mounts at each attempt. */
static int caller_path(struct parser *ps, yaml_node_t *v, const char *what, char **ret)
{
	const char *t = yaml_scalar(v);
	size_t n = t ? strlen(t) : 0;

	if (!t || t[0] != '/' || n < 2 || n >= PATH_MAX ||
	    !daemon_cgroup_path_clean(t, t[n - 1] == '/' ? n - 1 : n)) {
		diag_add(ps->d, v, "%s: want an absolute path of a directory", what);
		return -EINVAL;
	}
	*ret = strdup(t);
	if (!*ret) {
		ps->oom = -ENOMEM;
		return -ENOMEM;
	}
	return 0;
}

static int caller_home(struct parser *ps, yaml_node_t *v)
{
	return caller_path(ps, v, "home", &caller_cur(ps)->home);
}

static int caller_nested_sandbox(struct parser *ps, yaml_node_t *v)
{
	return config_scalar_bool(ps, v, "nested_sandbox", &caller_cur(ps)->nested_sandbox);
}

/* true, false, or the hosts (names, *.DOMAIN) a remote may be on. */
static int caller_git_remote(struct parser *ps, yaml_node_t *v)
{
	struct daemon_caller *k = caller_cur(ps);
	yaml_node_item_t *it;
	size_t n;
	int r = 0;

	if (v->type != YAML_SEQUENCE_NODE)
		return config_scalar_bool(ps, v, "git_remote", &k->git_remote);
	n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
	if (n == 0 || n > DAEMON_REMOTE_HOSTS_MAX) {
		diag_add(ps->d, v, "git_remote: want true, false, or 1 to %d hosts (NAME or *.DOMAIN)",
			 DAEMON_REMOTE_HOSTS_MAX);
		return -EINVAL;
	}
	k->remote_hosts = calloc(n, sizeof(*k->remote_hosts));
	if (!k->remote_hosts) {
		ps->oom = -ENOMEM;
		return -ENOMEM;
	}
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *item = node_at(ps, *it);
		const char *t = yaml_scalar(item);
		char err[128];

		if (!t || host_rule_parse(t, &k->remote_hosts[k->nremote_hosts], err,
					  sizeof(err)) < 0 ||
		    k->remote_hosts[k->nremote_hosts].nports) {
			diag_add(ps->d, item, "git_remote: '%.80s' is not a host name or *.DOMAIN",
				 t ? t : "?");
			r = -EINVAL;
			continue;
		}
		k->nremote_hosts++;
	}
	k->git_remote = r == 0;
	return r;
}

static int caller_cache(struct parser *ps, yaml_node_t *v)
{
	return caller_path(ps, v, "cache", &caller_cur(ps)->cache);
}

/* Checked against attempts.max, and defaulted to it, once the file is read. */
static int caller_max(struct parser *ps, yaml_node_t *v)
{
	unsigned long long n;

	if (config_scalar_number(ps, v, "max", 1, DAEMON_MAX_LIMIT, &n) < 0)
		return -EINVAL;
	caller_cur(ps)->max = (unsigned int)n;
	ps->kmax[ps->out->ncallers] = v;
	return 0;
}

/* One item of callers:, into caller_cur(); its uid must be new. */
static int parse_caller(struct parser *ps, yaml_node_t *item)
{
	static const struct key_rule rules[] = {
		{ "uid", caller_uid }, { "user", caller_user },
		{ "cgroup", caller_cgroup }, { "repos", caller_repos },
		{ "allow", caller_allow }, { "audit", caller_audit },
		{ "max", caller_max }, { "cache", caller_cache },
		{ "upload_limit", caller_upload_limit },
		{ "git_remote", caller_git_remote }, { "nested_sandbox", caller_nested_sandbox },
		{ "home", caller_home },
	};
	size_t i = ps->out->ncallers;
	unsigned int seen;
	int r;

	r = parse_mapping(ps, item, rules, "a caller", &seen);
	if (item->type != YAML_MAPPING_NODE)
		return r;
	if ((seen & 3) == 3 || !(seen & 3)) {
		diag_add(ps->d, item, "a caller names one of uid: or user:%s",
			 seen & 3 ? ", not both" : "");
		ps->who[i] = NULL;
		return -EINVAL;
	}
	for (size_t j = 0; ps->who[i] && j < i; j++) {
		if (ps->who[j] && ps->out->callers[j].uid == ps->out->callers[i].uid) {
			diag_add(ps->d, ps->who[i], "caller uid %u is listed twice (first at line %zu)",
				 (unsigned int)ps->out->callers[i].uid,
				 ps->who[j]->start_mark.line + 1);
			ps->who[i] = NULL;
			return -EINVAL;
		}
	}
	return r;
}

int config_parse_callers(struct parser *ps, yaml_node_t *v)
{
	struct daemon_config *c = ps->out;
	size_t cap = 0;
	yaml_node_item_t *it;
	int r = 0;

	if (v->type != YAML_SEQUENCE_NODE) {
		diag_add(ps->d, v, "callers: want a list of callers");
		return -EINVAL;
	}
	if (v->data.sequence.items.start == v->data.sequence.items.top) {
		diag_add(ps->d, v, "callers: empty (name who may launch attempts)");
		return -EINVAL;
	}
	for (it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
		yaml_node_t *item = node_at(ps, *it);
		int rr = array_grow((void **)&c->callers, &cap, c->ncallers,
				    sizeof(*c->callers), DAEMON_CALLERS_MAX);

		if (rr == -E2BIG) {
			diag_add(ps->d, item, "callers: more than %d", DAEMON_CALLERS_MAX);
			return -EINVAL;
		}
		if (rr < 0) {
			ps->oom = rr;
			return rr;
		}
		memset(caller_cur(ps), 0, sizeof(*c->callers));
		if (parse_caller(ps, item) < 0)
			r = -EINVAL;
		/* Counted even when refused: what it allocated is freed. */
		c->ncallers++;
	}
	return r;
}

int config_check_callers(struct parser *ps)
{
	struct daemon_config *c = ps->out;
	int r = 0;

	for (size_t i = 0; i < c->ncallers; i++) {
		struct daemon_caller *k = &c->callers[i];

		if (!k->max)
			k->max = c->max;
		if (ps->attempts_bad)
			continue;	/* attempts: is reported; its defaults mislead */
		/* A caller with an attempt's uid could be an attempt. */
		if (ps->who[i] && k->uid >= c->uid_first && k->uid <= c->uid_last) {
			diag_add(ps->d, ps->who[i], "caller uid %u is in attempts.uids (%u-%u), which attempts run as",
				 (unsigned int)k->uid, (unsigned int)c->uid_first,
				 (unsigned int)c->uid_last);
			r = -EINVAL;
		}
		if (ps->kmax[i] && k->max > c->max) {
			diag_add(ps->d, ps->kmax[i], "max: %u is above attempts.max (%u)",
				 k->max, c->max);
			r = -EINVAL;
		}
	}
	return r;
}
