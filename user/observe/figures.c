// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * observe/figures.c - an attempt's figures for egretd's metrics
 * (observe/figures.h).
 */
#include "observe/figures.h"

static const char *const proto_names[FIG_PROTO_MAX] = {
	[FIG_TCP] = "tcp", [FIG_UDP] = "udp", [FIG_MPTCP] = "mptcp", [FIG_ICMP] = "icmp",
	[FIG_ICMPV6] = "icmpv6", [FIG_TLS] = "tls", [FIG_HTTP] = "http",
	[FIG_UNIX] = "unix", [FIG_OTHER] = "other",
};

static const char *const dns_names[FIG_DNS_MAX] = {
	[FIG_DNS_ANSWERED] = "answered", [FIG_DNS_DENIED] = "denied",
	[FIG_DNS_FAILED] = "failed",
};

/* The catalog's section keys, and one for the rest. */
static const char *const category_names[FIG_CAT_MAX] = {
	[FIG_CAT_OS] = "os_registries", [FIG_CAT_FORGE] = "forges",
	[FIG_CAT_ECOSYSTEM] = "ecosystems", [FIG_CAT_AGENT] = "agents",
	[FIG_CAT_OTHER] = "other",
};

const char *fig_proto_name(unsigned int p)
{
	return p < FIG_PROTO_MAX ? proto_names[p] : "other";
}

const char *fig_dns_name(unsigned int d)
{
	return d < FIG_DNS_MAX ? dns_names[d] : "failed";
}

const char *fig_category_name(unsigned int c)
{
	return c < FIG_CAT_MAX ? category_names[c] : "other";
}

enum fig_proto fig_proto_of(unsigned int hook, unsigned int proto)
{
	if (hook == EGRET_HOOK_TLS)
		return FIG_TLS;
	if (hook == EGRET_HOOK_HTTP)
		return FIG_HTTP;
	if (hook == EGRET_HOOK_UNIX)
		return FIG_UNIX;
	switch (proto) {
	case 6: return FIG_TCP;
	case 17: return FIG_UDP;
	case 262: return FIG_MPTCP;
	case 1: return FIG_ICMP;
	case 58: return FIG_ICMPV6;
	default: return FIG_OTHER;
	}
}

void figures_add(struct figures *to, const struct figures *from)
{
	uint64_t *t = (uint64_t *)to;
	const uint64_t *f = (const uint64_t *)from;

	for (size_t i = 0; i < sizeof(*to) / sizeof(uint64_t); i++)
		t[i] += f[i];
}
