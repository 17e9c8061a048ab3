/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * conn.h - the connection memory: per UDP socket, the destination its
 * connect() was allowed to.
 *
 * connect4/6 write it when a rule that can expire allowed a UDP connect (a
 * rule that never expires outlives the flow, and creating the storage is
 * most of connect4's cost; a TCP connection needs none: the egress
 * backstop judges its SYN and passes the rest, lib/egress.h); in --audit
 * mode sendmsg4/6 write it for a datagram they let through. The egress
 * backstop and the sendmsg hooks (a connected UDP socket sending with a
 * cmsg) read it: the flow's datagrams pass even after the allow entry
 * expired, so established flows are not cut. The storage dies with the
 * socket: nothing to leak or expire.
 */
#ifndef EGRET_BPF_CONN_H
#define EGRET_BPF_CONN_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "egret.h"

/* UDP socket -> where its connect() was allowed to; written by BPF (connect, sendmsg). */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct egret_conn);
} egret_conn SEC(".maps");

/* An allowed connect (or, in audit mode, send): remember the destination
 * on the socket. */
static __always_inline void conn_remember(struct bpf_sock_addr *ctx, int family,
					  const __u32 addr[4], __u16 port_be, __u32 dest)
{
	struct bpf_sock *sk = ctx->sk;
	struct egret_conn *c;

	if (!sk)
		return;
	c = bpf_sk_storage_get(&egret_conn, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (!c)
		return;		/* the backstop then judges by the maps */
	c->addr[0] = addr[0];
	c->addr[1] = addr[1];
	c->addr[2] = addr[2];
	c->addr[3] = addr[3];
	c->port_be = port_be;
	c->family = (__u8)family;
	c->dest = dest;
	c->valid = 1;
}

/* A connect that needs no memory - a lasting rule allowed it, or a UDP
 * connect went through unjudged: the socket keeps no earlier peer (a
 * reconnected UDP socket must not carry its old destination's pass). */
static __always_inline void conn_forget(struct bpf_sock_addr *ctx)
{
	struct bpf_sock *sk = ctx->sk;
	struct egret_conn *c;

	if (!sk)
		return;
	c = bpf_sk_storage_get(&egret_conn, sk, 0, 0);
	if (c)
		c->valid = 0;
}

/* Was @sk's connect() allowed to exactly this destination? Its allow
 * entry's destination in *@dest (NULL: not asked). */
static __always_inline int conn_remembered(struct bpf_sock *sk, int family,
					   const __u32 dst[4], __u16 dport_be,
					   __u32 *dest)
{
	struct egret_conn *c;

	if (!sk)
		return 0;
	c = bpf_sk_storage_get(&egret_conn, sk, 0, 0);
	if (!c || !c->valid || c->family != family || c->port_be != dport_be)
		return 0;
	if (dest)
		*dest = c->dest;
	if (family == 4)
		return c->addr[0] == dst[0];
	return c->addr[0] == dst[0] && c->addr[1] == dst[1] &&
	       c->addr[2] == dst[2] && c->addr[3] == dst[3];
}

/* The same for the socket a packet leaves (the egress backstop). */
static __always_inline int conn_matches(struct __sk_buff *skb, int family,
					const __u32 dst[4], __u16 dport_be, __u32 *dest)
{
	struct bpf_sock *sk = skb->sk;

	if (!sk)
		return 0;
	return conn_remembered(bpf_sk_fullsock(sk), family, dst, dport_be, dest);
}

#endif /* EGRET_BPF_CONN_H */
