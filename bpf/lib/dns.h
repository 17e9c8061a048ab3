/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dns.h - send every DNS query of the attempt to egret's proxy.
 *
 * connect and sendmsg to port 53, any address, UDP or TCP, are rewritten
 * to the proxy on loopback. The address the process asked for is kept in
 * socket-local storage, and recvmsg/getpeername put it back, so resolvers
 * that check where an answer came from (glibc, musl, dig, Go) accept it.
 * The storage dies with the socket: nothing to leak or expire.
 */
#ifndef EGRET_BPF_DNS_H
#define EGRET_BPF_DNS_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "egret.h"
#include "egret_match.h"
#include "lib/net.h"
#include "lib/attempt.h"

#define DNS_PORT_BE	bpf_htons(53)

/* Socket -> the resolver it asked for before the redirect; written by BPF (connect, sendmsg). */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct egret_dns_orig);
} egret_dns_orig SEC(".maps");

/* The attempt's proxy (struct egret_attempt): its port, network order
 * (0 until egret set it, and then nothing counts as DNS), and where IPv6
 * sockets are sent (::1, or ::ffff:127.0.0.1 without ::1). */
static __always_inline __u16 dns_proxy_port_be(void)
{
	return attempt_cfg()->dns_proxy_port_be;
}

static __always_inline int dns_is_proxy4(__u32 ip, __u16 port_be)
{
	__u16 proxy = dns_proxy_port_be();

	return proxy && ip == LOOPBACK4_BE && port_be == proxy;
}

static __always_inline int dns_is_proxy6(const __u32 ip[4], __u16 port_be)
{
	struct egret_attempt *cfg = attempt_cfg();

	if (!cfg->dns_proxy_port_be || port_be != cfg->dns_proxy_port_be)
		return 0;
	if (ip[0] == cfg->dns_proxy_ip6[0] && ip[1] == cfg->dns_proxy_ip6[1] &&
	    ip[2] == cfg->dns_proxy_ip6[2] && ip[3] == cfg->dns_proxy_ip6[3])
		return 1;
	/* A v6 socket that reached the v4 proxy sees ::ffff:127.0.0.1. */
	return egret_is_v4mapped(ip) && ip[3] == LOOPBACK4_BE;
}

static __always_inline struct egret_dns_orig *
dns_orig_get(struct bpf_sock_addr *ctx, __u64 flags)
{
	struct bpf_sock *sk = ctx->sk;

	if (!sk)
		return 0;
	return bpf_sk_storage_get(&egret_dns_orig, sk, 0, flags);
}

/*
 * Redirect an IPv4 destination on port 53 (connect4/sendmsg4). Returns 1
 * when redirected (the caller proceeds), 0 when not DNS, -1 when the
 * original cannot be kept (the caller denies: never a proxy answer the
 * process would reject, never an unredirected query).
 */
static __always_inline int dns_redirect4(struct bpf_sock_addr *ctx)
{
	__u16 proxy = dns_proxy_port_be();
	struct egret_dns_orig *orig;

	if (!proxy || (__u16)ctx->user_port != DNS_PORT_BE)
		return 0;
	orig = dns_orig_get(ctx, BPF_SK_STORAGE_GET_F_CREATE);
	if (!orig)
		return -1;
	orig->ip4 = ctx->user_ip4;
	/* The same address as a v6 socket would see it (::ffff:a.b.c.d). */
	orig->ip6[0] = 0;
	orig->ip6[1] = 0;
	orig->ip6[2] = bpf_htonl(0xffff);
	orig->ip6[3] = ctx->user_ip4;
	orig->port_be = DNS_PORT_BE;
	orig->valid = 1;
	ctx->user_ip4 = LOOPBACK4_BE;
	ctx->user_port = proxy;
	return 1;
}

static __always_inline int dns_redirect6(struct bpf_sock_addr *ctx)
{
	struct egret_attempt *cfg = attempt_cfg();
	struct egret_dns_orig *orig;

	if (!cfg->dns_proxy_port_be || (__u16)ctx->user_port != DNS_PORT_BE)
		return 0;
	orig = dns_orig_get(ctx, BPF_SK_STORAGE_GET_F_CREATE);
	if (!orig)
		return -1;
	orig->ip6[0] = ctx->user_ip6[0];
	orig->ip6[1] = ctx->user_ip6[1];
	orig->ip6[2] = ctx->user_ip6[2];
	orig->ip6[3] = ctx->user_ip6[3];
	orig->ip4 = orig->ip6[3];
	orig->port_be = DNS_PORT_BE;
	orig->valid = 1;
	ctx->user_ip6[0] = cfg->dns_proxy_ip6[0];
	ctx->user_ip6[1] = cfg->dns_proxy_ip6[1];
	ctx->user_ip6[2] = cfg->dns_proxy_ip6[2];
	ctx->user_ip6[3] = cfg->dns_proxy_ip6[3];
	ctx->user_port = cfg->dns_proxy_port_be;
	return 1;
}

/* recvmsg4/getpeername4: show the proxy as the resolver that was asked. */
static __always_inline void dns_restore4(struct bpf_sock_addr *ctx)
{
	struct egret_dns_orig *orig;

	if (!dns_is_proxy4(ctx->user_ip4, (__u16)ctx->user_port))
		return;
	orig = dns_orig_get(ctx, 0);
	if (!orig || !orig->valid)
		return;
	ctx->user_ip4 = orig->ip4;
	ctx->user_port = orig->port_be;
}

static __always_inline void dns_restore6(struct bpf_sock_addr *ctx)
{
	struct egret_dns_orig *orig;
	__u32 ip[4];

	ip[0] = ctx->user_ip6[0];
	ip[1] = ctx->user_ip6[1];
	ip[2] = ctx->user_ip6[2];
	ip[3] = ctx->user_ip6[3];
	if (!dns_is_proxy6(ip, (__u16)ctx->user_port))
		return;
	orig = dns_orig_get(ctx, 0);
	if (!orig || !orig->valid)
		return;
	ctx->user_ip6[0] = orig->ip6[0];
	ctx->user_ip6[1] = orig->ip6[1];
	ctx->user_ip6[2] = orig->ip6[2];
	ctx->user_ip6[3] = orig->ip6[3];
	ctx->user_port = orig->port_be;
}

#endif /* EGRET_BPF_DNS_H */
