// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd/suggest.c - `egret suggest LOG... [--repo R]`: turn decision logs
 * (--log, ideally from an --audit run) into a policy fragment that allows
 * what the attempt was denied, for an operator to review.
 *
 * Names are kept exact - never collapsed into a wildcard, which could
 * cover a multi-tenant domain - with the ports seen; an address that no
 * name explains is listed bare, with a comment saying so.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/suggest.h"
#include "lib/exit.h"
#include "lib/log.h"
#include "lib/util.h"
#include "policy/policy.h"

#define SUGGEST_MAX	4096

struct wanted {
	char what[DNS_NAME_MAX + 1];	/* a name, or an address */
	bool is_name;
	bool v6;
	bool ports_known;
	struct port_range ports[EGRET_PORT_SLOTS];
	unsigned int nports;
	bool ports_overflow;		/* more ports than a rule holds */
	unsigned long count;
};

/* The value of "key":"..." or "key":N in one of our own JSON lines. */
static bool json_field(const char *line, const char *key, char *out, size_t len)
{
	char pat[40];
	const char *p, *end;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(line, pat);
	if (!p)
		return false;
	p += strlen(pat);
	if (*p == '"') {
		end = strchr(++p, '"');
	} else {
		end = p + strcspn(p, ",}");
		if (!strncmp(p, "null", 4))
			return false;
	}
	if (!end || (size_t)(end - p) >= len)
		return false;
	memcpy(out, p, (size_t)(end - p));
	out[end - p] = '\0';
	return true;
}

static struct wanted *find_or_add(struct wanted *w, size_t *n, const char *what,
				  bool is_name)
{
	for (size_t i = 0; i < *n; i++)
		if (w[i].is_name == is_name && !strcmp(w[i].what, what))
			return &w[i];
	if (*n == SUGGEST_MAX)
		return NULL;
	w[*n] = (struct wanted){ .is_name = is_name };
	snprintf(w[*n].what, sizeof(w[*n].what), "%s", what);
	return &w[(*n)++];
}

static void add_port(struct wanted *w, unsigned int port)
{
	w->ports_known = true;
	for (unsigned int i = 0; i < w->nports; i++)
		if (w->ports[i].lo == port)
			return;
	if (w->nports == EGRET_PORT_SLOTS) {
		w->ports_overflow = true;
		return;
	}
	w->ports[w->nports++] = (struct port_range){ (__u16)port, (__u16)port };
}

static int read_log(const char *path, struct wanted *w, size_t *n,
		    unsigned long *lines)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char kind[16], verdict[16], name[DNS_NAME_MAX + 1], addr[64], port[8];
		char repeats[24], reason[32];
		unsigned long decisions = 1;
		struct wanted *x;

		/* A line of repeats stands for that many (docs/EVENTS.md). */
		if (json_field(line, "repeats", repeats, sizeof(repeats)))
			decisions = strtoul(repeats, NULL, 10);
		*lines += decisions;
		if (!json_field(line, "kind", kind, sizeof(kind)) ||
		    !json_field(line, "verdict", verdict, sizeof(verdict)) ||
		    (strcmp(verdict, "deny") && strcmp(verdict, "would-deny")))
			continue;
		/* Refused for its upload budget: allowed already, a budget
		 * is no entry to add. An agent's known noise (quiet) is
		 * nothing to allow either. */
		if (json_field(line, "reason", reason, sizeof(reason)) &&
		    (!strcmp(reason, "budget") || !strcmp(reason, "uncounted") ||
		     !strcmp(reason, "quiet")))
			continue;
		if (!strcmp(kind, "dns")) {
			/* A name asked for; its ports come from connects. */
			if (json_field(line, "name", name, sizeof(name)) && name[0])
				if ((x = find_or_add(w, n, name, true)))
					x->count++;
			continue;
		}
		if (!json_field(line, "addr", addr, sizeof(addr)) ||
		    !json_field(line, "port", port, sizeof(port)))
			continue;	/* socket/option denials: not a destination */
		if (json_field(line, "name", name, sizeof(name)) && name[0])
			x = find_or_add(w, n, name, true);
		else
			x = find_or_add(w, n, addr, false);
		if (!x)
			continue;
		x->v6 = strchr(addr, ':') != NULL;
		x->count += decisions;
		if (atoi(port) > 0)
			add_port(x, (unsigned int)atoi(port));
	}
	return 0;
}

static void print_ports(const struct wanted *w)
{
	for (unsigned int i = 0; i < w->nports; i++)
		printf("%s%u", i ? "," : "", w->ports[i].lo);
}

static void print_list(const struct wanted *w, size_t n, bool names,
		       const char *indent)
{
	bool any = false;

	for (size_t i = 0; i < n; i++) {
		const struct wanted *x = &w[i];

		if (x->is_name != names)
			continue;
		if (!any)
			printf("%s%s:\n", indent, names ? "hosts" : "cidrs");
		any = true;
		if (!x->ports_known) {
			printf("%s  - \"%s\"   # only a DNS query was seen: ports are the policy's default\n",
			       indent, x->what);
			continue;
		}
		printf("%s  - \"%s%s%s:", indent, x->v6 && !names ? "[" : "", x->what,
		       x->v6 && !names ? "]" : "");
		print_ports(x);
		printf("\"");
		if (!names)
			printf("   # no name was seen for this address");
		if (x->ports_overflow)
			printf("   # more ports were seen than one entry holds");
		printf("   # %lu denied\n", x->count);
	}
}

int cmd_suggest(int argc, char **argv)
{
	static const struct option options[] = {
		{ "repo", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	_cleanup_free_ struct wanted *w = NULL;
	const char *repo = NULL;
	unsigned long lines = 0;
	size_t n = 0;
	int c, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, "r:h", options, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (!policy_repo_name_valid(optarg)) {
				log_error("--repo '%s': want owner/name", optarg);
				return EXIT_USAGE;
			}
			repo = optarg;
			break;
		case 'h':
			printf("Usage: egret suggest LOG... [--repo OWNER/NAME]\n\n"
			       "Print a policy fragment allowing what the logs show was denied\n"
			       "(or would have been, with --audit). Review it before use.\n");
			return 0;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		log_error("suggest: name at least one log (egret run --log FILE)");
		return EXIT_USAGE;
	}
	w = calloc(SUGGEST_MAX, sizeof(*w));
	if (!w)
		return EXIT_TROUBLE;
	for (int i = optind; i < argc; i++) {
		r = read_log(argv[i], w, &n, &lines);
		if (r < 0) {
			log_error_errno(r, "suggest: read %s", argv[i]);
			return EXIT_TROUBLE;
		}
	}
	printf("# egret suggest: %zu destinations from %lu logged decisions; review before use.\n"
	       "version: 1\n", n, lines);
	if (repo) {
		printf("repos:\n  %s:\n", repo);
		print_list(w, n, true, "    ");
		print_list(w, n, false, "    ");
	} else {
		print_list(w, n, true, "");
		print_list(w, n, false, "");
	}
	return 0;
}
