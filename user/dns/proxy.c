// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dns/proxy.c - the proxy's life: its listeners bound (or taken over) and
 * its upstreams set up, served from the caller's loop, closed. Each query
 * the listeners read goes to query_handle() (dns/query.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "dns/names.h"
#include "dns/proxy_impl.h"
#include "dns/upstream.h"
#include "lib/util.h"

int dns_proxy_open(struct dns_proxy **ret, const struct dns_proxy_config *cfg,
		   const char **ret_step)
{
	struct dns_proxy *p = calloc(1, sizeof(*p));
	int r;

	*ret = NULL;
	*ret_step = "allocate the DNS proxy";
	if (!p) {
		for (int i = 0; cfg->adopt_fds && i < DNS_PROXY_LISTENERS; i++)
			if (cfg->adopt_fds[i] >= 0)
				close(TAKE_FD(cfg->adopt_fds[i]));
		return -ENOMEM;
	}
	p->cfg = *cfg;
	p->handle_query = query_handle;
	p->udp4.src.fd = p->udp6.src.fd = p->tcp4.src.fd = p->tcp6.src.fd = -1;
	p->names = calloc(1, sizeof(*p->names));
	p->out = malloc(sizeof(*p->out));
	r = p->names && p->out ? 0 : -ENOMEM;
	if (p->out)
		p->out->n = 0;
	if (r == 0) {
		*ret_step = "bind the DNS proxy on loopback";
		r = cfg->adopt_fds && listen_adopt(p, cfg->adopt_fds) == 0 ? 0 : listen_bind(p);
	}
	if (r == 0) {
		r = dns_upstreams_open(&p->ups, cfg->upstreams_csv, cfg->resolv_conf);
		*ret_step = r == -EINVAL ? (cfg->upstreams_csv ?
			"set the DNS upstreams (want ADDR[:PORT] or [V6]:PORT, at most 4)" :
			"read the DNS upstreams from /etc/resolv.conf (none usable: give --dns-upstream)") :
			"set up the DNS upstreams (c-ares)";
	}
	if (r < 0) {
		dns_proxy_close(p);
		return r;
	}
	/* Only worth saying when some name can go upstream. */
	if (cfg->nrules || cfg->audit)
		dns_upstreams_check(p->ups);
	*ret = p;
	return 0;
}

void dns_proxy_listen_fds(const struct dns_proxy *p, int fds[DNS_PROXY_LISTENERS])
{
	fds[0] = p->udp4.src.fd;
	fds[1] = p->udp6.src.fd;
	fds[2] = p->tcp4.src.fd;
	fds[3] = p->tcp6.src.fd;
}

uint16_t dns_proxy_port(const struct dns_proxy *p)
{
	return p->port;
}

bool dns_proxy_ip6_loopback(const struct dns_proxy *p)
{
	return p->ip6_loopback;
}

const struct names *dns_proxy_names(const struct dns_proxy *p)
{
	return p->names;
}

/* c-ares has run the callbacks of an event: their UDP answers leave. */
static void answers_made(void *arg)
{
	listen_flush(arg);
}

int dns_proxy_start(struct dns_proxy *p, struct loop *loop,
		    const struct allow_maps *maps)
{
	struct proxy_source *ls[] = { &p->udp4, &p->udp6, &p->tcp4, &p->tcp6 };
	int r;

	p->loop = loop;
	p->maps = *maps;
	for (size_t i = 0; i < sizeof(ls) / sizeof(ls[0]); i++) {
		if (ls[i]->src.fd < 0)
			continue;
		ls[i]->p = p;
		ls[i]->src.fn = i < 2 ? listen_on_udp : tcp_on_accept;
		r = loop_watch(loop, &ls[i]->src, EPOLLIN);
		if (r < 0)
			return r;
	}
	return dns_upstreams_start(p->ups, loop, answers_made, p);
}

void dns_proxy_set_rules(struct dns_proxy *p, const struct host_rule *rules,
			 size_t n)
{
	p->cfg.rules = rules;
	p->cfg.nrules = n;
}

void dns_proxy_close(struct dns_proxy *p)
{
	if (!p)
		return;
	/* Closing the upstreams fails their queries (DNS_UPSTREAM_GONE),
	 * which frees them while their TCP clients still exist. */
	dns_upstreams_close(p->ups);
	while (p->conns)
		tcp_close(p->conns);
	listen_close(p);
	spares_free(&p->spare);
	free(p->names);
	free(p->out);
	free(p);
}
