// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attempt/limits.c - the limits manifest (attempt/limits.h): the effective
 * policy as `egret check` shows it, how each refusal looks from inside,
 * and what egret refuses whatever the policy says.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attempt/effective.h"
#include "attempt/limits.h"
#include "attempt/options.h"
#include "lib/json.h"
#include "lib/paths.h"
#include "lib/trust.h"
#include "lib/util.h"
#include "policy/show.h"
#include "requests/ask.h"

/* Refused whatever the policy says (docs/SECURITY.md): one line each. */
static const char *const by_design[] = {
	"sockets other than TCP, MPTCP and UDP over IPv4 and IPv6: no raw or packet sockets, no ping, SCTP or UDP-Lite",
	"IPv4 options and IPv6 routing headers, IP_TRANSPARENT and IP_FREEBIND, binding a socket to a device",
	"binding an address that is not the host's; TCP listeners answer on loopback only",
	"abstract unix sockets the policy does not name",
	"new privileges: set-uid and set-gid programs run without them",
};

static void ports_text(FILE *f, const struct port_range *ports, unsigned int n)
{
	char buf[128];

	ports_format(ports, n, buf, sizeof(buf), false);
	fprintf(f, "%s", strcmp(buf, "*") ? buf : "any port");
}

static void write_allowed(FILE *f, const struct policy *p)
{
	char net[64];
	size_t n = 0;

	fprintf(f, "\nAllowed by name (a *. name: the names below it):\n");
	for (size_t i = 0; i < p->nhosts; i++) {
		const struct host_rule *h = &p->hosts[i];

		if (h->quiet)
			continue;
		fprintf(f, "  %s%s, ports ", h->wildcard ? "*." : "", h->name);
		ports_text(f, h->ports, h->nports);
		if (h->upload_limit)
			fprintf(f, ", uploads at most %llu bytes",
				(unsigned long long)h->upload_limit);
		fprintf(f, "\n");
		n++;
	}
	if (!n)
		fprintf(f, "  none\n");
	fprintf(f, "Allowed by address:\n");
	for (size_t i = 0; i < p->nspecs; i++) {
		struct allow_spec a = p->specs[i];

		a.nports = 0;
		spec_format(&a, net, sizeof(net));
		fprintf(f, "  %s, ports ", net);
		ports_text(f, p->specs[i].ports, p->specs[i].nports);
		fprintf(f, "\n");
	}
	if (!p->nspecs)
		fprintf(f, "  none\n");
}

static void write_text(FILE *f, const struct limits *l, const struct limits_in *in,
		       const struct run_opts *o)
{
	const struct policy *p = &o->policy;
	bool pinning = !o->no_pinning && (p->npin_ports || p->nhttp_ports);
	__u64 upload = effective_upload_limit(o->upload_limit, p);

	fprintf(f, "This command runs under egret: its network access is denied unless the\n"
		   "operator's policy allows it. Attempt %s%s%s.\n",
		in->id, o->repo ? ", repository " : "", o->repo ? o->repo : "");
	write_allowed(f, p);
	if (pinning) {
		fprintf(f, "\nTLS to ports");
		for (unsigned int i = 0; i < p->npin_ports; i++)
			fprintf(f, "%s%u", i ? "," : " ", p->pin_ports[i]);
		fprintf(f, " of an address learned from a name must name an allowed host (SNI);\n"
			   "plain HTTP to ports");
		for (unsigned int i = 0; i < p->nhttp_ports; i++)
			fprintf(f, "%s%u", i ? "," : " ", p->http_ports[i]);
		fprintf(f, " must name one (Host).\n");
	}
	if (upload)
		fprintf(f, "\nUploads: at most %llu bytes to each destination, unless a rule above says less.\n",
			(unsigned long long)upload);
	fprintf(f, "\nWhat a refusal looks like:\n"
		   "  a name not allowed: NXDOMAIN (\"could not resolve host\")\n"
		   "  an address or port not allowed: connect() and sendto() fail with %s\n"
		   "  TLS or HTTP naming a host not allowed: the send fails (EACCES) or the\n"
		   "    connection is reset\n"
		   "  an upload over its budget: the send fails and the connection is reset\n"
		   "Retrying a refused destination does not help: it stays refused for this attempt.\n",
		run_deny_errno_name(in->deny_errno));
	fprintf(f, "\nRefused whatever the policy says:\n");
	for (size_t i = 0; i < ARRAY_SIZE(by_design); i++)
		fprintf(f, "  %s\n", by_design[i]);
	if (in->requests)
		fprintf(f, "\nTo reach something else, ask, saying what it is for:\n"
			   "  egret request NAME[:PORTS] --why \"what you need it for\"\n"
			   "(the socket: $%s). The operator reviews each request: it stays refused\n"
			   "unless they approve it, which takes effect at once, in this attempt too.\n"
			   "At most %d a minute and %d per attempt. egret also records each refused\n"
			   "name as a request.\n", ASK_ENV, ASK_PER_MINUTE,
			ASK_PER_ATTEMPT);
	else
		fprintf(f, "\nTo reach something else, say so in your answer: the operator decides\n"
			   "what this policy allows.\n");
	fprintf(f, "\nThe same, as JSON: %s\n", l->json);
}

static void write_json(FILE *f, const struct limits_in *in, const struct run_opts *o)
{
	const struct policy *p = &o->policy;
	__u64 upload = effective_upload_limit(o->upload_limit, p);

	fprintf(f, "{\"version\":1,\"attempt\":");
	json_fputs(f, in->id);
	fprintf(f, ",\"repo\":");
	if (o->repo)
		json_fputs(f, o->repo);
	else
		fprintf(f, "null");
	fprintf(f, ",\"policy\":");
	policy_show_json(f, p, effective_source(o), o->builtin_policy, o->repo, o->max_entries,
			 o->max_cidrs, o->dns_min_ttl);
	fprintf(f, ",\"pinning\":%s,\"upload_limit\":",
		!o->no_pinning && (p->npin_ports || p->nhttp_ports) ? "true" : "false");
	fprintf(f, upload ? "%llu" : "null", (unsigned long long)upload);
	fprintf(f, ",\"refusals\":{\"name\":\"NXDOMAIN\",\"address\":");
	json_fputs(f, run_deny_errno_name(in->deny_errno));
	fprintf(f, ",\"pinned_name\":\"EACCES or reset\",\"budget\":\"EACCES or reset\"}"
		   ",\"requests\":%s,\"request\":", in->requests ? "true" : "false");
	if (in->requests)
		fprintf(f, "{\"command\":\"egret request NAME[:PORTS] --why TEXT\",\"env\":\"%s\","
			   "\"per_minute\":%d,\"per_attempt\":%d,\"why_max\":%d}",
			ASK_ENV, ASK_PER_MINUTE, ASK_PER_ATTEMPT, ASK_WHY_MAX);
	else
		fprintf(f, "null");
	fprintf(f, ",\"refused_by_design\":[");
	for (size_t i = 0; i < ARRAY_SIZE(by_design); i++) {
		fprintf(f, "%s", i ? "," : "");
		json_fputs(f, by_design[i]);
	}
	fprintf(f, "]}\n");
}

/* @name in @dir, made now (never one that was there), root's and 0444. */
static int write_file(int dir, const char *name, const struct limits *l,
		      const struct limits_in *in, const struct run_opts *o, bool json)
{
	_cleanup_fclose_ FILE *f = NULL;
	int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);

	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return -errno;
	}
	if (json)
		write_json(f, in, o);
	else
		write_text(f, l, in, o);
	if (fflush(f) != 0 || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}

/* EGRET_LIMITS_DIR: root's, searchable and not listable (0711): an
 * attempt reads its own manifest by the path it is given, and lists no
 * other's. */
static int limits_dir_ensure(void)
{
	struct stat st;

	if (mkdir(EGRET_LIMITS_DIR, 0711) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(EGRET_LIMITS_DIR, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || !stat_trusted(&st))
		return -EPERM;
	if ((st.st_mode & 07777) != 0711 && chmod(EGRET_LIMITS_DIR, 0711) < 0)
		return -errno;
	return 0;
}

int limits_write(struct limits *l, const struct limits_in *in, const struct run_opts *o)
{
	_cleanup_close_ int dir = -1;
	char path[PATH_MAX];
	int r;

	r = limits_dir_ensure();
	if (r < 0)
		return r;
	r = path_fmt(path, sizeof(path), "%s/%s", EGRET_LIMITS_DIR, in->id);
	if (r < 0)
		return r;
	if (mkdir(path, 0755) < 0)
		return -errno;
	dir = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	if (path_fmt(l->txt, sizeof(l->txt), "%s/limits.txt", path) < 0 ||
	    path_fmt(l->json, sizeof(l->json), "%s/limits.json", path) < 0 ||
	    path_fmt(l->denials, sizeof(l->denials), "%s/denials.jsonl", path) < 0)
		return -ENAMETOOLONG;
	r = write_file(dir, "limits.json", l, in, o, true);
	if (r == 0)
		r = write_file(dir, "limits.txt", l, in, o, false);
	if (r == 0) {
		l->feed_fd = openat(dir, "denials.jsonl", O_WRONLY | O_APPEND | O_CREAT | O_EXCL |
				    O_NOFOLLOW | O_CLOEXEC, 0444);
		r = l->feed_fd < 0 ? -errno : 0;
	}
	if (r < 0)
		l->txt[0] = l->json[0] = l->denials[0] = '\0';
	return r;
}

int limits_feed_reopen(const char *id)
{
	char path[PATH_MAX];
	int fd;

	if (path_fmt(path, sizeof(path), "%s/%s/denials.jsonl", EGRET_LIMITS_DIR, id) < 0)
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

void limits_remove(const char *id)
{
	char path[PATH_MAX];

	if (!id[0] || path_fmt(path, sizeof(path), "%s/%s", EGRET_LIMITS_DIR, id) < 0)
		return;
	(void)flat_dir_remove(path);
}
