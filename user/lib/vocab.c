// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stddef.h>

#include "lib/vocab.h"

static const char *const hook_names[EGRET_HOOK_MAX] = {
	[EGRET_HOOK_CONNECT] = "connect",
	[EGRET_HOOK_SENDMSG] = "sendmsg",
	[EGRET_HOOK_SOCKET] = "socket",
	[EGRET_HOOK_SOCKOPT] = "sockopt",
	[EGRET_HOOK_EGRESS] = "egress",
	[EGRET_HOOK_BIND] = "bind",
	[EGRET_HOOK_LISTEN] = "listen",
	[EGRET_HOOK_UNIX] = "unix",
	[EGRET_HOOK_TLS] = "tls",
	[EGRET_HOOK_HTTP] = "http",
};

static const char *const verdict_names[EGRET_VERDICT_MAX] = {
	[EGRET_VERDICT_DENY] = "deny",
	[EGRET_VERDICT_ALLOW] = "allow",
	[EGRET_VERDICT_WOULD_DENY] = "would-deny",
};

static const char *const reason_names[EGRET_REASON_MAX] = {
	[EGRET_REASON_ALLOWED] = "allowed",
	[EGRET_REASON_NO_ENTRY] = "no-entry",
	[EGRET_REASON_PORT] = "port",
	[EGRET_REASON_EXPIRED] = "expired",
	[EGRET_REASON_SPECIAL] = "special-address",
	[EGRET_REASON_SOCKET] = "socket-type",
	[EGRET_REASON_SOCKOPT] = "socket-option",
	[EGRET_REASON_PACKET] = "packet",
	[EGRET_REASON_SOURCE] = "source",
	[EGRET_REASON_LISTENER] = "listener",
	[EGRET_REASON_SNI] = "sni-not-learned",
	[EGRET_REASON_NOT_TLS] = "not-tls",
	[EGRET_REASON_NO_SNI] = "no-sni",
	[EGRET_REASON_ECH] = "ech",
	[EGRET_REASON_QUIC] = "quic",
	[EGRET_REASON_HOST] = "host-not-learned",
	[EGRET_REASON_NOT_HTTP] = "not-http",
	[EGRET_REASON_BUDGET] = "budget",
	[EGRET_REASON_UNCOUNTED] = "uncounted",
};

/* For people (the summary): why a destination was refused. */
static const char *const reason_texts[EGRET_REASON_MAX] = {
	[EGRET_REASON_NO_ENTRY] = "no rule allows this address",
	[EGRET_REASON_PORT] = "port not allowed",
	[EGRET_REASON_EXPIRED] = "expired: its name was not resolved again in time",
	[EGRET_REASON_SPECIAL] = "special address, not named",
	[EGRET_REASON_SOCKET] = "socket type",
	[EGRET_REASON_SOCKOPT] = "socket option",
	[EGRET_REASON_PACKET] = "packet refused on the wire",
	[EGRET_REASON_SOURCE] = "source address not the host's",
	[EGRET_REASON_LISTENER] = "listener",
	[EGRET_REASON_SNI] = "TLS name not allowed at this address (no DNS answer for it held the address)",
	[EGRET_REASON_NOT_TLS] = "pinned port: not one whole TLS ClientHello egret can read",
	[EGRET_REASON_NO_SNI] = "pinned port: a ClientHello without a server name",
	[EGRET_REASON_ECH] = "pinned port: an encrypted ClientHello (ECH)",
	[EGRET_REASON_QUIC] = "pinned port: QUIC (UDP) cannot be pinned, use TCP",
	[EGRET_REASON_HOST] = "HTTP host not allowed at this address (no DNS answer for it held the address)",
	[EGRET_REASON_NOT_HTTP] = "pinned HTTP port: a request egret cannot judge (docs/SECURITY.md, \"Host pinning\")",
	[EGRET_REASON_BUDGET] = "the destination's upload budget is spent (docs/POLICY.md, \"Upload budgets\")",
	[EGRET_REASON_UNCOUNTED] = "no accounting state for the connection (map full?): refused, never sent uncounted",
};

static const char *name_of(const char *const *names, size_t n, unsigned int i)
{
	return i < n && names[i] ? names[i] : "unknown";
}

bool egret_hook_named(unsigned int hook)
{
	return hook == EGRET_HOOK_TLS || hook == EGRET_HOOK_HTTP;
}

const char *egret_hook_name(unsigned int hook)
{
	return name_of(hook_names, EGRET_HOOK_MAX, hook);
}

const char *egret_verdict_name(unsigned int verdict)
{
	return name_of(verdict_names, EGRET_VERDICT_MAX, verdict);
}

const char *egret_reason_name(unsigned int reason)
{
	return name_of(reason_names, EGRET_REASON_MAX, reason);
}

const char *egret_reason_text(unsigned int reason)
{
	return name_of(reason_texts, EGRET_REASON_MAX, reason);
}

const char *egret_proto_name(unsigned int proto)
{
	switch (proto) {
	case 6: return "tcp";
	case 17: return "udp";
	case 262: return "mptcp";
	case 1: return "icmp";
	case 58: return "icmpv6";
	default: return NULL;
	}
}
