// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * daemon/config.c - egretd.yaml into a struct daemon_config.
 *
 * As strict as the policy (policy/yaml.c), for the same reason: an ignored
 * key is a restriction the operator believes in and egretd does not apply.
 * Unknown keys (with a "did you mean"), duplicate keys, wrong types, values
 * out of range and duplicate callers are each reported at their position
 * and the file is refused whole. Every mapping is read through one walker
 * over a table of its keys, so no mapping can forget one of these checks.
 */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#include "daemon/config.h"
#include "lib/text.h"
#include "lib/trust.h"
#include "lib/util.h"
#include "policy/policy.h"
#include "policy/yaml_util.h"

_Static_assert(DAEMON_SOCKET_PATH_MAX == sizeof(((struct sockaddr_un *)0)->sun_path),
	       "socket.path must fit a unix socket address");

#define NAME_LEN_MAX	256	/* a user or group name */

struct parser {
	yaml_document_t *doc;
	struct diag *d;
	struct daemon_config *out;
	int oom;			/* -ENOMEM once an allocation failed */
	yaml_node_t *uids, *max;	/* attempts.uids and .max, if given */
	bool attempts_bad;		/* then the callers are not held to them */
	/* Per caller, for the checks that need the whole file (its uid
	 * against attempts.uids, its max against attempts.max): the node
	 * that named its uid (NULL: none, or named twice) and its max:. */
	yaml_node_t *who[DAEMON_CALLERS_MAX], *kmax[DAEMON_CALLERS_MAX];
};

static yaml_node_t *node_at(struct parser *ps, int index)
{
	return yaml_node(ps->doc, index);
}

static struct daemon_caller *caller_cur(struct parser *ps)
{
	return &ps->out->callers[ps->out->ncallers];
}

/* ---- the walker ----------------------------------------------------- */

struct key_rule {
	const char *name;
	int (*parse)(struct parser *ps, yaml_node_t *v);
};

/*
 * Each pair of the mapping @map through its rule, every other key
 * reported on the way (policy/yaml_util.h: yaml_walk). *@ret_seen: bit i
 * set when @rules[i]'s key is present.
 */
static int parse_keys(struct parser *ps, yaml_node_t *map,
		      const struct key_rule *rules, size_t n, const char *where,
		      unsigned int *ret_seen)
{
	const char *names[YAML_KEYS_MAX];
	const struct yaml_keys keys = { .where = where, .names = names, .n = n };
	struct yaml_walk w = { .doc = ps->doc, .d = ps->d, .keys = &keys };
	int i;

	for (size_t j = 0; j < n; j++)
		names[j] = rules[j].name;
	yaml_walk_start(&w, map);
	while ((i = yaml_walk_next(&w)) >= 0)
		if (rules[i].parse(ps, w.value) < 0)
			w.r = -EINVAL;
	*ret_seen = w.seen;
	return w.r;
}

/* parse_keys() for a table whose size the compiler checks. */
#define parse_mapping(ps, map, rules, where, ret_seen) ({			\
	_Static_assert(ARRAY_SIZE(rules) <= YAML_KEYS_MAX, "more keys than YAML_KEYS_MAX"); \
	parse_keys(ps, map, rules, ARRAY_SIZE(rules), where, ret_seen);		\
})

/* ---- scalars -------------------------------------------------------- */

/*
 * @len decimal digits, no sign or space, at most @max. No leading zero:
 * YAML 1.1 reads 0660 as octal, and this file must mean one thing.
 */
static bool digits_value(const char *t, size_t len, unsigned long long max,
			 unsigned long long *ret)
{
	unsigned long long v = 0;

	/* 10 digits hold DAEMON_UID_MAX and cannot overflow */
	if (!len || len > 10 || (len > 1 && t[0] == '0'))
		return false;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)t[i]))
			return false;
		v = v * 10 + (unsigned long long)(t[i] - '0');
	}
	if (v > max)
		return false;
	*ret = v;
	return true;
}

static bool all_digits(const char *t)
{
	return *t && strspn(t, "0123456789") == strlen(t);
}

static int scalar_number(struct parser *ps, yaml_node_t *v, const char *what,
			 unsigned long long lo, unsigned long long hi,
			 unsigned long long *ret)
{
	const char *t = yaml_scalar(v);

	if (!t || !digits_value(t, strlen(t), hi, ret) || *ret < lo) {
		diag_add(ps->d, v, "%s: want a number from %llu to %llu", what, lo, hi);
		return -EINVAL;
	}
	return 0;
}

/* The spellings the policy accepts (policy/yaml.c). */
static int scalar_bool(struct parser *ps, yaml_node_t *v, const char *what,
		       bool *ret)
{
	const char *t = yaml_scalar(v);

	if (t && (!strcmp(t, "true") || !strcmp(t, "yes"))) {
		*ret = true;
	} else if (t && (!strcmp(t, "false") || !strcmp(t, "no"))) {
		*ret = false;
	} else {
		diag_add(ps->d, v, "%s: want true or false", what);
		return -EINVAL;
	}
	return 0;
}

/* A user or group name for NSS, which decides what a name may hold. */
static const char *scalar_name(struct parser *ps, yaml_node_t *v, const char *what)
{
	const char *t = yaml_scalar(v);

	if (!t || !*t || strlen(t) >= NAME_LEN_MAX) {
		diag_add(ps->d, v, "%s: want a name", what);
		return NULL;
	}
	return t;
}

/* ---- version, socket, attempts -------------------------------------- */

static int parse_version(struct parser *ps, yaml_node_t *v)
{
	const char *t = yaml_scalar(v);

	if (!t || strcmp(t, "1")) {
		diag_add(ps->d, v, "unsupported version (want 1)");
		return -EINVAL;
	}
	return 0;
}

/* `node: NAME`: letters, digits, '.', '-', '_', at most 63. */
static int parse_node(struct parser *ps, yaml_node_t *v)
{
	const char *t = yaml_scalar(v);
	size_t n = t ? strlen(t) : 0;

	for (size_t i = 0; t && i < n; i++)
		if (!isalnum((unsigned char)t[i]) && !strchr(".-_", t[i]))
			n = 0;
	if (!t || n == 0 || n >= sizeof(ps->out->node)) {
		diag_add(ps->d, v, "node: want a name of letters, digits, '.', '-' or '_' (at most 63)");
		return -EINVAL;
	}
	memcpy(ps->out->node, t, n + 1);
	return 0;
}

/* bind() takes the path as it is: relative would mean egretd's cwd. */
static int socket_path(struct parser *ps, yaml_node_t *v)
{
	const char *t = yaml_scalar(v);
	size_t n = t ? strlen(t) : 0;

	if (!t || t[0] != '/' || t[n - 1] == '/') {
		diag_add(ps->d, v, "socket.path: want an absolute path of a file");
		return -EINVAL;
	}
	if (n >= sizeof(ps->out->socket_path)) {
		diag_add(ps->d, v, "socket.path: longer than %zu bytes (a unix socket's limit)",
			 sizeof(ps->out->socket_path) - 1);
		return -EINVAL;
	}
	memcpy(ps->out->socket_path, t, n + 1);
	return 0;
}

/* A gid, or a name resolved now: egretd chowns the socket to it. */
static int socket_group(struct parser *ps, yaml_node_t *v)
{
	const char *t = scalar_name(ps, v, "socket.group");
	unsigned long long gid;
	struct group *g;

	if (!t)
		return -EINVAL;
	if (all_digits(t)) {
		if (scalar_number(ps, v, "socket.group", 0, DAEMON_UID_MAX, &gid) < 0)
			return -EINVAL;
		ps->out->socket_gid = (gid_t)gid;
		return 0;
	}
	errno = 0;
	g = getgrnam(t);
	if (!g) {
		if (errno == ENOMEM)
			ps->oom = -ENOMEM;
		diag_add(ps->d, v, "socket.group: unknown group '%.64s' (groupadd --system %.64s)",
			 t, t);
		return -EINVAL;
	}
	ps->out->socket_gid = g->gr_gid;
	return 0;
}

static int parse_socket(struct parser *ps, yaml_node_t *v)
{
	static const struct key_rule rules[] = {
		{ "path", socket_path }, { "group", socket_group },
	};
	unsigned int seen;
	int r;

	r = parse_mapping(ps, v, rules, "socket", &seen);
	if (v->type == YAML_MAPPING_NODE && !(seen & 2)) {
		diag_add(ps->d, v, "socket: missing 'group:' (the group that may connect)");
		r = -EINVAL;
	}
	return r;
}

/* "FIRST-LAST" or one uid; checked against attempts.max once both are read. */
static int attempts_uids(struct parser *ps, yaml_node_t *v)
{
	const char *t = yaml_scalar(v), *dash = t ? strchr(t, '-') : NULL;
	unsigned long long first, last;

	if (!t || !digits_value(t, dash ? (size_t)(dash - t) : strlen(t),
				DAEMON_UID_MAX, &first) ||
	    !digits_value(dash ? dash + 1 : t, strlen(dash ? dash + 1 : t),
			  DAEMON_UID_MAX, &last)) {
		diag_add(ps->d, v, "attempts.uids: want FIRST-LAST, uids up to %u",
			 DAEMON_UID_MAX);
		return -EINVAL;
	}
	if (first == 0) {
		diag_add(ps->d, v, "attempts.uids: never 0 (attempts do not run as root)");
		return -EINVAL;
	}
	if (first > last) {
		diag_add(ps->d, v, "attempts.uids: FIRST %llu is above LAST %llu", first, last);
		return -EINVAL;
	}
	if (last - first + 1 > DAEMON_UIDS_MAX) {
		diag_add(ps->d, v, "attempts.uids: %llu uids, at most %d",
			 last - first + 1, DAEMON_UIDS_MAX);
		return -EINVAL;
	}
	ps->out->uid_first = (uid_t)first;
	ps->out->uid_last = (uid_t)last;
	ps->uids = v;
	return 0;
}

static int attempts_max(struct parser *ps, yaml_node_t *v)
{
	unsigned long long n;

	if (scalar_number(ps, v, "attempts.max", 1, DAEMON_MAX_LIMIT, &n) < 0)
		return -EINVAL;
	ps->out->max = (unsigned int)n;
	ps->max = v;
	return 0;
}

/* Where the attempts' denials become requests (egret run --state-dir). */
static int attempts_state_dir(struct parser *ps, yaml_node_t *v)
{
	const char *t = yaml_scalar(v);
	size_t n = t ? strlen(t) : 0;

	if (!t || t[0] != '/' || n >= sizeof(ps->out->state_dir) || strstr(t, "/../") ||
	    (n >= 3 && !strcmp(t + n - 3, "/.."))) {
		diag_add(ps->d, v, "attempts.state_dir: want an absolute path of a directory");
		return -EINVAL;
	}
	memcpy(ps->out->state_dir, t, n + 1);
	return 0;
}

static int parse_attempts(struct parser *ps, yaml_node_t *v)
{
	static const struct key_rule rules[] = {
		{ "uids", attempts_uids }, { "max", attempts_max },
		{ "state_dir", attempts_state_dir },
	};
	struct daemon_config *c = ps->out;
	unsigned long long nuids;
	unsigned int seen;
	int r;

	r = parse_mapping(ps, v, rules, "attempts", &seen);
	nuids = (unsigned long long)c->uid_last - c->uid_first + 1;
	/* Each live attempt has a uid of its own: more at once cannot start. */
	if (r == 0 && c->max > nuids) {
		diag_add(ps->d, ps->max ? ps->max : ps->uids,
			 "attempts.max: %u attempts at once need %u uids, attempts.uids has %llu",
			 c->max, c->max, nuids);
		r = -EINVAL;
	}
	ps->attempts_bad = r < 0;
	return r;
}

/* ---- callers -------------------------------------------------------- */

static int caller_uid(struct parser *ps, yaml_node_t *v)
{
	unsigned long long uid;

	if (scalar_number(ps, v, "uid", 0, DAEMON_UID_MAX, &uid) < 0)
		return -EINVAL;
	caller_cur(ps)->uid = (uid_t)uid;
	ps->who[ps->out->ncallers] = v;
	return 0;
}

static int caller_user(struct parser *ps, yaml_node_t *v)
{
	const char *t = scalar_name(ps, v, "user");
	struct passwd *pw;

	if (!t)
		return -EINVAL;
	errno = 0;
	pw = getpwnam(t);
	if (!pw) {
		if (errno == ENOMEM)
			ps->oom = -ENOMEM;
		diag_add(ps->d, v, "user: unknown user '%.64s'%s", t,
			 all_digits(t) ? " (a number goes in uid:)" : "");
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
	return scalar_bool(ps, v, "allow", &caller_cur(ps)->allow);
}

static int caller_audit(struct parser *ps, yaml_node_t *v)
{
	return scalar_bool(ps, v, "audit", &caller_cur(ps)->audit);
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
	return scalar_bool(ps, v, "nested_sandbox", &caller_cur(ps)->nested_sandbox);
}

/* true, false, or the hosts (names, *.DOMAIN) a remote may be on. */
static int caller_git_remote(struct parser *ps, yaml_node_t *v)
{
	struct daemon_caller *k = caller_cur(ps);
	yaml_node_item_t *it;
	size_t n;
	int r = 0;

	if (v->type != YAML_SEQUENCE_NODE)
		return scalar_bool(ps, v, "git_remote", &k->git_remote);
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

	if (scalar_number(ps, v, "max", 1, DAEMON_MAX_LIMIT, &n) < 0)
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

static int parse_callers(struct parser *ps, yaml_node_t *v)
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

/* ---- the file ------------------------------------------------------- */

/* What needs the whole file: caller uids outside attempts.uids, caller
 * maxima within attempts.max (and defaulted to it). */
static int check_callers(struct parser *ps)
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

static int parse_root(struct parser *ps, yaml_node_t *root)
{
	static const struct key_rule rules[] = {
		{ "version", parse_version }, { "socket", parse_socket },
		{ "attempts", parse_attempts }, { "callers", parse_callers },
		{ "node", parse_node },
	};
	static const char *const missing[] = {
		"missing 'version: 1'",
		"missing 'socket:' (socket.group, the group that may connect, is required)",
		NULL,
		"missing 'callers:' (who may launch attempts)",
		NULL,
	};
	unsigned int seen;
	int r;

	r = parse_mapping(ps, root, rules, "the configuration", &seen);
	if (root->type != YAML_MAPPING_NODE)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(missing); i++) {
		if (missing[i] && !(seen & 1u << i)) {
			diag_add(ps->d, root, "%s", missing[i]);
			r = -EINVAL;
		}
	}
	if (check_callers(ps) < 0)
		r = -EINVAL;
	return r;
}

int daemon_config_parse(const char *text, size_t len, const char *name,
			struct daemon_config *ret, struct diag *d)
{
	struct daemon_config c = {
		.socket_path = DAEMON_SOCKET_DEFAULT,
		.state_dir = DAEMON_STATE_DIR_DEFAULT,
		.uid_first = DAEMON_UID_FIRST_DEFAULT,
		.uid_last = DAEMON_UID_LAST_DEFAULT,
		.max = DAEMON_MAX_DEFAULT,
	};
	struct parser ps = { .d = d, .out = &c };
	yaml_document_t doc;
	yaml_node_t *root;
	int n0 = d->n, r;

	d->file = name;
	if (len > DAEMON_CONFIG_MAX_SIZE) {
		diag_say(d, "larger than %d bytes", DAEMON_CONFIG_MAX_SIZE);
		return -EINVAL;
	}
	r = yaml_load_text(&doc, text, len, d);
	if (r < 0)
		return r;
	ps.doc = &doc;
	root = yaml_document_get_root_node(&doc);
	if (!root) {
		diag_say(d, "empty (want version, socket and callers: docs/EGRETD.md)");
		r = -EINVAL;
	} else {
		r = parse_root(&ps, root);
	}
	yaml_document_delete(&doc);
	if (ps.oom)
		r = ps.oom;
	else if (r < 0 || d->n > n0)
		r = -EINVAL;
	if (r < 0) {
		daemon_config_free(&c);
		return r;
	}
	*ret = c;
	return 0;
}

int daemon_config_load(const char *path, struct daemon_config *ret,
		       struct diag *d)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r;

	r = trusted_file_read(path, "egretd configuration", DAEMON_CONFIG_MAX_SIZE,
			      &text, &len, d);
	if (r < 0)
		return r;
	return daemon_config_parse(text, len, path, ret, d);
}
