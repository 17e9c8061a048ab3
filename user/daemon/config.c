// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * daemon/config.c - egretd.yaml into a struct daemon_config: the file,
 * version, node, socket: and attempts:, and the readers of scalars;
 * callers: is config_caller.c's.
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
#include <string.h>
#include <sys/un.h>

#include "daemon/config_impl.h"
#include "lib/trust.h"
#include "lib/util.h"
#include "policy/yaml_util.h"

_Static_assert(DAEMON_SOCKET_PATH_MAX == sizeof(((struct sockaddr_un *)0)->sun_path),
	       "socket.path must fit a unix socket address");

#define NAME_LEN_MAX	256	/* a user or group name */

/* ---- the walker ----------------------------------------------------- */

int config_parse_keys(struct parser *ps, yaml_node_t *map, const struct key_rule *rules,
		      size_t n, const char *where, unsigned int *ret_seen)
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

bool config_all_digits(const char *t)
{
	return *t && strspn(t, "0123456789") == strlen(t);
}

int config_scalar_number(struct parser *ps, yaml_node_t *v, const char *what,
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
int config_scalar_bool(struct parser *ps, yaml_node_t *v, const char *what,
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
const char *config_scalar_name(struct parser *ps, yaml_node_t *v, const char *what)
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

int config_scalar_socket(struct parser *ps, yaml_node_t *v, const char *what, char *ret)
{
	const char *t = yaml_scalar(v);
	size_t n = t ? strlen(t) : 0;

	if (!t || t[0] != '/' || t[n - 1] == '/') {
		diag_add(ps->d, v, "%s: want an absolute path of a file", what);
		return -EINVAL;
	}
	if (n >= DAEMON_SOCKET_PATH_MAX) {
		diag_add(ps->d, v, "%s: longer than %d bytes (a unix socket's limit)",
			 what, DAEMON_SOCKET_PATH_MAX - 1);
		return -EINVAL;
	}
	memcpy(ret, t, n + 1);
	return 0;
}

/* bind() takes the path as it is: relative would mean egretd's cwd. */
static int socket_path(struct parser *ps, yaml_node_t *v)
{
	return config_scalar_socket(ps, v, "socket.path", ps->out->socket_path);
}

int config_scalar_group(struct parser *ps, yaml_node_t *v, const char *what, gid_t *ret)
{
	const char *t = config_scalar_name(ps, v, what);
	unsigned long long gid;
	struct group *g;

	if (!t)
		return -EINVAL;
	if (config_all_digits(t)) {
		if (config_scalar_number(ps, v, what, 0, DAEMON_UID_MAX, &gid) < 0)
			return -EINVAL;
		*ret = (gid_t)gid;
		return 0;
	}
	errno = 0;
	g = getgrnam(t);
	if (!g) {
		if (errno == ENOMEM)
			ps->oom = -ENOMEM;
		diag_add(ps->d, v, "%s: unknown group '%.64s' (groupadd --system %.64s)",
			 what, t, t);
		return -EINVAL;
	}
	*ret = g->gr_gid;
	return 0;
}

/* A gid, or a name resolved now: egretd chowns the socket to it. */
static int socket_group(struct parser *ps, yaml_node_t *v)
{
	return config_scalar_group(ps, v, "socket.group", &ps->out->socket_gid);
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

	if (config_scalar_number(ps, v, "attempts.max", 1, DAEMON_MAX_LIMIT, &n) < 0)
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

/* ---- the file ------------------------------------------------------- */

static int parse_root(struct parser *ps, yaml_node_t *root)
{
	static const struct key_rule rules[] = {
		{ "version", parse_version }, { "socket", parse_socket },
		{ "attempts", parse_attempts }, { "callers", config_parse_callers },
		{ "node", parse_node }, { "metrics", config_parse_metrics },
	};
	static const char *const missing[] = {
		"missing 'version: 1'",
		"missing 'socket:' (socket.group, the group that may connect, is required)",
		NULL,
		"missing 'callers:' (who may launch attempts)",
		NULL,
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
	if (config_check_callers(ps) < 0)
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
