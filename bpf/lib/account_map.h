/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * account_map.h - the maps of bytes per destination (account.h) and the
 * state they hold. Only the maps: the counting that reads and writes
 * them is account.h's, as pin_map.h keeps pinning's maps apart.
 */
#ifndef EGRET_BPF_ACCOUNT_MAP_H
#define EGRET_BPF_ACCOUNT_MAP_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "egret.h"

/* (Attempt, destination) -> its budget, the bytes reserved against it,
 * its name; egret makes each entry, BPF reserves and marks it over. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EGRET_SHARED_DESTS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct egret_dest_key);
	__type(value, struct egret_dest_count);
} egret_dest_counts SEC(".maps");

/* (Attempt, destination) -> per CPU, what no budget needs at the send:
 * connections, bytes received, bytes sent to a destination without a
 * budget; egret makes each entry with its counts entry, BPF adds. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, EGRET_SHARED_DESTS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct egret_dest_key);
	__type(value, struct egret_dest_tally);
} egret_dest_tally SEC(".maps");

/* (Attempt, peer address) -> the destination of the last connection
 * opened to it without socket storage (account.h, acct_open_bare);
 * written by BPF at such a connection's SYN, read at its segments and
 * its close, forgotten with the attempt's other entries. Never a
 * destination with a budget. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EGRET_SHARED_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct egret_name_key);
	__type(value, __u32);
} egret_addr_dest SEC(".maps");

/* Per TCP socket that needs one (a budget, a pinned port, a bare
 * connection that turned out to be an upload): what of it was counted,
 * where. */
struct egret_acct_sock {
	__u32 dest;
	__u32 isn;		/* its SYN's sequence number */
	__u32 sent_hi;		/* the sequence number past the last byte counted */
	__u32 over;		/* a send passed the budget: drop all it sends */
	__u64 received;		/* bytes_received already counted */
	/* dest has no budget (set from its counts entry, whose budget never
	 * changes): a send is added to this CPU's tally, the counts entry
	 * not read (account.h, acct_send). */
	__u32 no_budget;
	__u32 pad;
};

/* TCP socket it opened -> what of it was counted, where; written by BPF (egress). */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct egret_acct_sock);
} egret_acct_sock SEC(".maps");

#endif /* EGRET_BPF_ACCOUNT_MAP_H */
