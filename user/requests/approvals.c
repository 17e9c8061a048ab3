// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/atomic_file.h"
#include "lib/trust.h"
#include "lib/util.h"
#include "policy/yaml_util.h"
#include "requests/approvals.h"

int approvals_dir(const char *policy_file, char *buf, size_t len)
{
	char copy[4096];

	if (snprintf(copy, sizeof(copy), "%s",
		     policy_file ? policy_file : POLICY_DEFAULT_PATH) >= (int)sizeof(copy))
		return -ENAMETOOLONG;
	if ((size_t)snprintf(buf, len, "%s/" APPROVALS_DIR_NAME, dirname(copy)) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int approvals_path(const char *policy_file, const char *repo, char *buf,
		   size_t len)
{
	char dir[4096], file[2 * POLICY_REPO_MAX];
	int r;

	r = approvals_dir(policy_file, dir, sizeof(dir));
	if (r == 0)
		r = policy_repo_file_name(repo, file, sizeof(file));
	if (r < 0)
		return r;
	if ((size_t)snprintf(buf, len, "%s/%s.yaml", dir, file) >= len)
		return -ENAMETOOLONG;
	return 0;
}

static bool same_target(const struct approval *x, const struct approval *y)
{
	if (x->is_host != y->is_host)
		return false;
	return x->is_host ? host_rule_equal(&x->host, &y->host) :
			    allow_spec_equal(&x->spec, &y->spec);
}

int approvals_add(struct approvals *a, const struct approval *ap)
{
	int r;

	for (size_t i = 0; i < a->n; i++)
		if (same_target(&a->items[i], ap))
			return 1;
	r = array_grow((void **)&a->items, &a->cap, a->n, sizeof(*a->items),
		       APPROVALS_MAX);
	if (r < 0)
		return r;
	a->items[a->n++] = *ap;
	return 0;
}

/* ---- parsing ------------------------------------------------------ */

enum entry_key { ENTRY_HOST, ENTRY_CIDR, ENTRY_PORTS, ENTRY_REQUEST, ENTRY_BY, ENTRY_AT };

static const char *const entry_names[] = {
	[ENTRY_HOST] = "host", [ENTRY_CIDR] = "cidr", [ENTRY_PORTS] = "ports",
	[ENTRY_REQUEST] = "request", [ENTRY_BY] = "approved_by", [ENTRY_AT] = "approved_at",
};

static const struct yaml_keys entry_keys =
	YAML_KEYS("an approval", entry_names, .refuse = yaml_refuse_unknown);

/* An entry's target and ports nodes, kept until every key is read:
 * `ports:` may come before `host:` or `cidr:`, which decides where they go. */
struct entry_nodes {
	yaml_node_t *target;	/* host: or cidr: */
	yaml_node_t *ports;
};

/* `request: 12`: the request the approval answered. */
static int entry_request(yaml_node_t *v, struct approval *ap, struct diag *d)
{
	const char *val = yaml_scalar(v);
	char *end;

	errno = 0;
	ap->request = val && isdigit((unsigned char)*val) ?
		      strtoul(val, &end, 10) : 0;
	if (!val || !isdigit((unsigned char)*val) || errno || *end) {
		diag_add(d, v, "request: want a number");
		return -EINVAL;
	}
	return 0;
}

/* `approved_by:` and `approved_at:`: a string that fits @dst (@max bytes). */
static int entry_string(yaml_node_t *v, const char *key, char *dst, size_t max,
			struct diag *d)
{
	const char *val = yaml_scalar(v);

	if (!val || strlen(val) >= max) {
		diag_add(d, v, "%s: want a string shorter than %zu", key, max);
		return -EINVAL;
	}
	strcpy(dst, val);
	return 0;
}

/* The value @v (its key @k) of key @key of an entry. */
static int entry_key(enum entry_key key, yaml_node_t *k, yaml_node_t *v,
		     struct approval *ap, struct entry_nodes *n, struct diag *d)
{
	switch (key) {
	case ENTRY_HOST:
	case ENTRY_CIDR:
		ap->is_host = key == ENTRY_HOST;
		if (n->target) {
			diag_add(d, k, "an approval names one host or one cidr");
			n->target = v;
			return -EINVAL;
		}
		n->target = v;
		return 0;
	case ENTRY_PORTS:
		n->ports = v;
		return 0;
	case ENTRY_REQUEST:
		return entry_request(v, ap, d);
	case ENTRY_BY:
		return entry_string(v, entry_names[key], ap->by, sizeof(ap->by), d);
	case ENTRY_AT:
		return entry_string(v, entry_names[key], ap->at, sizeof(ap->at), d);
	}
	return -EINVAL;
}

/* `host:` as a host rule, `cidr:` as an address or prefix. */
static int entry_target(yaml_node_t *item, const struct entry_nodes *n,
			struct approval *ap, struct diag *d)
{
	const char *text = n->target ? yaml_scalar(n->target) : NULL;
	char msg[192];

	if (!text) {
		diag_add(d, item, "an approval needs 'host:' or 'cidr:'");
		return -EINVAL;
	}
	if (ap->is_host ? host_rule_parse(text, &ap->host, msg, sizeof(msg)) :
			  allow_spec_parse(text, &ap->spec, msg, sizeof(msg))) {
		diag_add(d, n->target, "%s", msg);
		return -EINVAL;
	}
	return 0;
}

/*
 * The ports: the target's own ("host: x:443") or `ports:`, never both;
 * with neither, the policy's (PORTS_FROM_POLICY: filled in when applied).
 */
static int entry_ports(yaml_document_t *doc, const struct entry_nodes *n,
		       struct approval *ap, struct diag *d)
{
	unsigned int *nports = ap->is_host ? &ap->host.nports : &ap->spec.nports;
	struct port_range *pr = ap->is_host ? ap->host.ports : ap->spec.ports;
	bool any;

	if (!n->ports) {
		if (!*nports)
			*nports = PORTS_FROM_POLICY;
		return 0;
	}
	if (*nports) {
		diag_add(d, n->target, "'%s' names ports twice", yaml_scalar(n->target));
		return -EINVAL;
	}
	if (policy_yaml_ports(doc, n->ports, d, pr, nports, &any) < 0)
		return -EINVAL;
	return 0;
}

static int parse_entry(yaml_document_t *doc, yaml_node_t *item,
		       struct approval *ap, struct diag *d)
{
	struct yaml_walk w = { .doc = doc, .d = d, .keys = &entry_keys };
	struct entry_nodes n = {};
	int k, r = 0;

	memset(ap, 0, sizeof(*ap));
	if (item->type != YAML_MAPPING_NODE) {
		diag_add(d, item, "approvals: items are mappings (host or cidr, ports, ...)");
		return -EINVAL;
	}
	/* Every bad key is reported, not only the first. */
	yaml_walk_start(&w, item);
	while ((k = yaml_walk_next(&w)) >= 0)
		if (entry_key((enum entry_key)k, w.key, w.value, ap, &n, d) < 0)
			r = -EINVAL;
	r |= w.r;
	if (entry_target(item, &n, ap, d) < 0 || entry_ports(doc, &n, ap, d) < 0)
		return -EINVAL;
	return r;
}

/* `approvals:` into @a: every bad entry is reported; too many stop it. */
static int parse_list(yaml_document_t *doc, yaml_node_t *list,
		      struct approvals *a, struct diag *d)
{
	int r = 0;

	if (list->type != YAML_SEQUENCE_NODE) {
		diag_add(d, list, "approvals: want a list");
		return -EINVAL;
	}
	for (yaml_node_item_t *it = list->data.sequence.items.start;
	     it < list->data.sequence.items.top; it++) {
		struct approval ap;
		int rr = parse_entry(doc, yaml_node(doc, *it), &ap, d);

		if (rr == 0 && (rr = approvals_add(a, &ap)) == -E2BIG) {
			diag_add(d, yaml_node(doc, *it), "more than %d approvals", APPROVALS_MAX);
			return -E2BIG;
		}
		if (rr < 0)
			r = -EINVAL;
	}
	return r;
}

/* `version: 1`, `repo: OWNER/NAME` (@repo's), `approvals: [...]` */
static int parse_root(yaml_document_t *doc, struct approvals *a,
		      const char *repo, struct diag *d)
{
	enum { ROOT_VERSION, ROOT_REPO, ROOT_APPROVALS };
	static const char *const names[] = { "version", "repo", "approvals" };
	static const struct yaml_keys keys =
		YAML_KEYS("an approvals file", names, .refuse = yaml_refuse_unknown);
	yaml_node_t *root = yaml_document_get_root_node(doc), *list = NULL;
	struct yaml_walk w = { .doc = doc, .d = d, .keys = &keys };
	int k, r = 0, rr;

	if (!root)
		return 0;	/* empty file: no approvals */
	if (root->type != YAML_MAPPING_NODE) {
		diag_add(d, root, "want a mapping with version, repo and approvals");
		return -EINVAL;
	}
	yaml_walk_start(&w, root);
	while ((k = yaml_walk_next(&w)) >= 0) {
		const char *val = yaml_scalar(w.value);

		if (k == ROOT_VERSION && (!val || strcmp(val, "1"))) {
			diag_add(d, w.value, "unsupported version (want 1)");
			r = -EINVAL;
		} else if (k == ROOT_REPO && (!val || strcasecmp(val, repo))) {
			diag_add(d, w.value, "this file holds approvals for '%s', not '%s'",
				 val ? val : "?", repo);
			r = -EINVAL;
		} else if (k == ROOT_APPROVALS) {
			list = w.value;
		}
	}
	if (!(w.seen & 1u << ROOT_REPO)) {
		diag_add(d, root, "missing 'repo: %s'", repo);
		r = -EINVAL;
	}
	r |= w.r;
	rr = list ? parse_list(doc, list, a, d) : 0;
	if (rr == -E2BIG)
		return rr;
	return rr < 0 ? -EINVAL : r;
}

int approvals_parse(struct approvals *a, const char *text, size_t len,
		    const char *file, const char *repo, struct diag *d)
{
	yaml_document_t doc;
	int r;

	memset(a, 0, sizeof(*a));
	snprintf(a->repo, sizeof(a->repo), "%s", repo);
	d->file = file;
	if (yaml_load_text(&doc, text, len, d) < 0)
		return -EINVAL;
	r = yaml_refuse_duplicate_keys(&doc, d);
	if (r == 0)
		r = parse_root(&doc, a, repo, d);
	yaml_document_delete(&doc);
	return r < 0 || d->n ? -EINVAL : 0;
}

int approvals_load(struct approvals *a, const char *path, const char *repo,
		   struct diag *d)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	int r;

	memset(a, 0, sizeof(*a));
	snprintf(a->repo, sizeof(a->repo), "%s", repo);
	if (access(path, F_OK) < 0 && errno == ENOENT)
		return 0;
	r = trusted_file_read(path, "approvals file", POLICY_MAX_FILE_SIZE,
			      &text, &len, d);
	if (r < 0)
		return r;
	return approvals_parse(a, text, len, path, repo, d);
}

/* ---- writing ------------------------------------------------------ */

/* A YAML double-quoted scalar: nothing in it can end the string. Bytes
 * above 0x7e pass as they are (UTF-8 read back the same; \xNN would be
 * read as U+00NN). */
static void yaml_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void write_ports(FILE *f, const struct port_range *pr, unsigned int n)
{
	char text[128];

	if (n == PORTS_FROM_POLICY)
		return;
	ports_format(pr, n, text, sizeof(text), false);
	fprintf(f, "    ports: \"%s\"\n", text);
}

static int write_all(const struct approvals *a, FILE *f)
{
	fprintf(f, "# egret approvals for %s, merged into its effective policy.\n"
		   "# Written by `egret requests approve`; entries may be edited or\n"
		   "# removed by hand (comments are not kept).\n"
		   "version: 1\nrepo: ", a->repo);
	yaml_quoted(f, a->repo);
	fprintf(f, "\napprovals:%s\n", a->n ? "" : " []");
	for (size_t i = 0; i < a->n; i++) {
		const struct approval *ap = &a->items[i];
		char text[DNS_NAME_MAX + 8];

		if (ap->is_host) {
			snprintf(text, sizeof(text), "%s%s", ap->host.wildcard ? "*." : "",
				 ap->host.name);
		} else {
			struct allow_spec s = ap->spec;

			s.nports = 0;
			spec_format(&s, text, sizeof(text));
		}
		fprintf(f, "  - %s: ", ap->is_host ? "host" : "cidr");
		yaml_quoted(f, text);
		fputc('\n', f);
		if (ap->is_host)
			write_ports(f, ap->host.ports, ap->host.nports);
		else
			write_ports(f, ap->spec.ports, ap->spec.nports);
		if (ap->request)
			fprintf(f, "    request: %lu\n", ap->request);
		if (ap->by[0]) {
			fprintf(f, "    approved_by: ");
			yaml_quoted(f, ap->by);
			fputc('\n', f);
		}
		if (ap->at[0]) {
			fprintf(f, "    approved_at: ");
			yaml_quoted(f, ap->at);
			fputc('\n', f);
		}
	}
	return ferror(f) ? -EIO : 0;
}

static int fill(FILE *f, const void *ctx)
{
	return write_all(ctx, f);
}

int approvals_save(const struct approvals *a, const char *path)
{
	/* What an approver killed mid-write left beside it goes first. */
	atomic_file_sweep_beside(path);
	return atomic_file_write(path, 0644, fill, a);
}

int approvals_apply(const struct approvals *a, struct policy *out)
{
	int r = 0;

	for (size_t i = 0; i < a->n && r == 0; i++) {
		const struct approval *ap = &a->items[i];
		char origin[64];

		if (ap->request)
			snprintf(origin, sizeof(origin), "approval #%lu, %.18s, %.10s",
				 ap->request, ap->by[0] ? ap->by : "?",
				 ap->at[0] ? ap->at : "?");
		else
			snprintf(origin, sizeof(origin), "approval, %.32s, %.10s",
				 ap->by[0] ? ap->by : "?", ap->at[0] ? ap->at : "?");
		if (ap->is_host) {
			struct host_rule h = ap->host;

			policy_fill_ports(out, h.ports, &h.nports);
			memcpy(h.origin, origin, sizeof(h.origin));
			r = policy_add_host(out, &h);
		} else {
			struct allow_spec s = ap->spec;

			policy_fill_ports(out, s.ports, &s.nports);
			memcpy(s.origin, origin, sizeof(s.origin));
			r = policy_add_spec(out, &s);
		}
	}
	return r;
}

bool approvals_changed(const char *path, struct stat *stamp)
{
	struct stat st = {};

	if (stat(path, &st) < 0)
		memset(&st, 0, sizeof(st));
	if (st.st_ino == stamp->st_ino && st.st_dev == stamp->st_dev &&
	    st.st_size == stamp->st_size &&
	    st.st_mtim.tv_sec == stamp->st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == stamp->st_mtim.tv_nsec &&
	    st.st_ctim.tv_sec == stamp->st_ctim.tv_sec &&
	    st.st_ctim.tv_nsec == stamp->st_ctim.tv_nsec)
		return false;
	*stamp = st;
	return true;
}

void approvals_free(struct approvals *a)
{
	free(a->items);
	a->items = NULL;
	a->n = a->cap = 0;
}
