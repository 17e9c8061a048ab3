/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * account_ops.h - what a TCP connection received, counted by sock_ops at
 * its close (the sending side and the rest are account.h's).
 */
#ifndef EGRET_BPF_ACCOUNT_OPS_H
#define EGRET_BPF_ACCOUNT_OPS_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "egret.h"
#include "egret_match.h"
#include "lib/account_map.h"
#include "lib/account.h"

/*
 * An active open is established (sock_ops' ACTIVE_ESTABLISHED_CB): its
 * close is to be told (BPF_SOCK_OPS_STATE_CB_FLAG), where acct_close()
 * reads what it received - one state callback fewer than from its
 * connect, and one that never got this far received nothing. Not a
 * connection to egret's DNS proxy (@proxy): it counts against no
 * destination.
 */
static __always_inline void acct_established(struct bpf_sock_ops *ctx, int proxy)
{
	if (!proxy)
		bpf_sock_ops_cb_flags_set(ctx, ctx->bpf_sock_ops_cb_flags |
					       BPF_SOCK_OPS_STATE_CB_FLAG);
}

/* The key of sock_ops' peer in egret_addr_dest (a v4-mapped IPv6 peer
 * is IPv4, as its packets are). */
static __always_inline void acct_ops_key(struct bpf_sock_ops *ctx, struct egret_name_key *key)
{
	__u32 addr[4] = { ctx->remote_ip4 };

	if (ctx->family == AF_INET6) {
		addr[0] = ctx->remote_ip6[0];
		addr[1] = ctx->remote_ip6[1];
		addr[2] = ctx->remote_ip6[2];
		addr[3] = ctx->remote_ip6[3];
		if (egret_is_v4mapped(addr)) {
			acct_addr_key(key, 4, &addr[3]);
			return;
		}
		acct_addr_key(key, 6, addr);
		return;
	}
	acct_addr_key(key, 4, addr);
}

/*
 * A connection acct_established() marked closed (its state is TCP_CLOSE):
 * what TCP received and no segment counted goes to its destination - all
 * of it for a bare connection, the rest since its last counted segment
 * for one with storage (a far side's RST can end a connection after its
 * data with no segment of ours).
 */
static __always_inline void acct_close(struct bpf_sock_ops *ctx)
{
	struct egret_name_key key = {};
	struct egret_acct_sock *as = NULL;
	struct egret_dest_tally *t;
	__u64 got = ctx->bytes_received;
	struct bpf_sock *sk = ctx->sk;
	__u32 *dest;

	/* Nothing received, nothing left to count, storage or not: the
	 * common end of a connection refused or reset before any reply. */
	if (!got)
		return;
	if (sk)
		as = bpf_sk_storage_get(&egret_acct_sock, sk, 0, 0);
	if (as) {
		if (got <= as->received)
			return;
		t = acct_tally(as->dest);
		got -= as->received;
		as->received += got;
	} else {
		acct_ops_key(ctx, &key);
		dest = bpf_map_lookup_elem(&egret_addr_dest, &key);
		if (!dest)
			return;
		t = acct_tally(*dest);
	}
	if (t)
		acct_add(&t->received, got);
}

#endif /* EGRET_BPF_ACCOUNT_OPS_H */
