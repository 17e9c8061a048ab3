// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * daemon/config_metrics.c - egretd.yaml's `metrics:` (docs/EGRETD.md,
 * "Metrics"): a unix socket, a TCP address, or both, and how many
 * repositories may be labels.
 *
 * The TCP address is a literal IP address and a port, never a name nor a
 * port alone: what egretd binds is what the file says. Only loopback
 * unless `expose: true` says, in the same file, that the address is meant
 * to be reached from elsewhere (a pod's own address, which Prometheus
 * scrapes in a cluster): the metrics name repositories and what attempts
 * were refused, which are not everyone's to read.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/config_impl.h"

#define M(ps)	(&(ps)->out->metrics)

static int metrics_socket(struct parser *ps, yaml_node_t *v)
{
	return config_scalar_socket(ps, v, "metrics.socket", M(ps)->socket);
}

static int metrics_group(struct parser *ps, yaml_node_t *v)
{
	int r = config_scalar_group(ps, v, "metrics.group", &M(ps)->group);

	M(ps)->group_set = r == 0;
	return r;
}

/* "A.B.C.D:PORT" or "[V6]:PORT" into @m's address: 0, or -EINVAL. */
static int listen_address(const char *t, struct daemon_metrics_config *m)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon = strrchr(t, ':'), *h = t;
	size_t hlen = colon ? (size_t)(colon - t) : 0;
	unsigned long port;
	char *end;

	if (!colon || !colon[1] || colon[1] == '0' || hlen == 0 || hlen >= sizeof(host))
		return -EINVAL;
	port = strtoul(colon + 1, &end, 10);
	if (*end || port == 0 || port > 65535 || strspn(colon + 1, "0123456789") != strlen(colon + 1))
		return -EINVAL;
	if (t[0] == '[') {
		if (hlen < 3 || t[hlen - 1] != ']')
			return -EINVAL;
		h = t + 1;
		hlen -= 2;
	}
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	memset(&m->addr, 0, sizeof(m->addr));
	if (t[0] != '[' && inet_pton(AF_INET, host, &m->addr.in.sin_addr) == 1) {
		m->addr.in.sin_family = AF_INET;
		m->addr.in.sin_port = htons((uint16_t)port);
		return 0;
	}
	if (t[0] == '[' && inet_pton(AF_INET6, host, &m->addr.in6.sin6_addr) == 1) {
		m->addr.in6.sin6_family = AF_INET6;
		m->addr.in6.sin6_port = htons((uint16_t)port);
		return 0;
	}
	return -EINVAL;
}

static int metrics_listen(struct parser *ps, yaml_node_t *v)
{
	const char *t = yaml_scalar(v);

	if (!t || strlen(t) >= sizeof(M(ps)->listen) || listen_address(t, M(ps)) < 0) {
		diag_add(ps->d, v, "metrics.listen: want ADDRESS:PORT, an IPv4 address or [IPv6] and a port (127.0.0.1:9464)");
		return -EINVAL;
	}
	snprintf(M(ps)->listen, sizeof(M(ps)->listen), "%s", t);
	return 0;
}

static int metrics_expose(struct parser *ps, yaml_node_t *v)
{
	return config_scalar_bool(ps, v, "metrics.expose", &M(ps)->expose);
}

static int metrics_repositories(struct parser *ps, yaml_node_t *v)
{
	unsigned long long n;

	if (config_scalar_number(ps, v, "metrics.repositories", 0, DAEMON_METRICS_REPOS_MAX,
				 &n) < 0)
		return -EINVAL;
	M(ps)->repositories = (unsigned int)n;
	return 0;
}

static bool loopback(const struct daemon_metrics_config *m)
{
	if (m->addr.sa.sa_family == AF_INET)
		return (ntohl(m->addr.in.sin_addr.s_addr) >> 24) == 127;
	return !memcmp(&m->addr.in6.sin6_addr, &in6addr_loopback, sizeof(in6addr_loopback));
}

int config_parse_metrics(struct parser *ps, yaml_node_t *v)
{
	static const struct key_rule rules[] = {
		{ "socket", metrics_socket }, { "group", metrics_group },
		{ "listen", metrics_listen }, { "expose", metrics_expose },
		{ "repositories", metrics_repositories },
	};
	struct daemon_metrics_config *m = M(ps);
	unsigned int seen;
	int r;

	r = parse_mapping(ps, v, rules, "metrics", &seen);
	if (r < 0 || v->type != YAML_MAPPING_NODE)
		return r;
	if (!m->socket[0] && !m->listen[0]) {
		diag_add(ps->d, v, "metrics: want socket: or listen: (or no metrics: at all)");
		r = -EINVAL;
	}
	if (m->group_set && !m->socket[0]) {
		diag_add(ps->d, v, "metrics.group: only with metrics.socket");
		r = -EINVAL;
	}
	if (m->listen[0] && !loopback(m) && !m->expose) {
		diag_add(ps->d, v, "metrics.listen: %s is not a loopback address: add 'expose: true' if it is meant to be reached from elsewhere",
			 m->listen);
		r = -EINVAL;
	}
	return r;
}
