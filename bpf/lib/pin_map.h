/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * pin_map.h - the maps of SNI pinning (pin.h) and the state they hold;
 * Host pinning (http.h) reads egret_pins too. Only the maps: the
 * judgement that reads and writes them is pin.h's, as cilium keeps
 * conntrack_map.h apart from conntrack.h.
 */
#ifndef EGRET_BPF_PIN_MAP_H
#define EGRET_BPF_PIN_MAP_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "egret.h"
#include "egret_tls.h"

/* (Attempt, address, name) -> the name's learned rules; written by egret's DNS proxy. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EGRET_NAMES_PER_ENTRY * EGRET_SHARED_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct egret_pin_key);
	__type(value, struct egret_allow);
} egret_pins SEC(".maps");

enum pin_state {
	PIN_PENDING = 1,	/* its first record not yet judged on the wire */
	PIN_DENIED,		/* refused: everything it sends is dropped */
	PIN_PASSED,		/* allowed (or, --audit, let through) */
};

/* A pinned connection, until it has passed. The key's attempt, family and
 * address are set at connect, its name by each judgement. Its first
 * record is judged in a struct egret_pin_buf (below), not here: storage
 * of 8 KiB made at every pinned connect was most of sock_ops' cost. */
struct egret_pin_sock {
	struct egret_pin_key key;
	__u32 slot;		/* the attempt's events (egret_attempt.slot) */
	__u32 isn;		/* its SYN's sequence number */
	__u16 port;		/* host order */
	__u8 state;		/* enum pin_state */
	__u8 audit;
	__u8 log_allowed;
	__u8 have_isn;
	__u8 msg_passed;	/* sk_msg allowed its first record */
	__u8 in_hash;
	__u64 name_hash;	/* of key.name (pin_judge) */
	__u32 dest;		/* the allowed name's destination (lib/account.h) */
};

/* Pinned TCP socket -> its judgement; written by BPF (sock_ops, sk_msg, egress). */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct egret_pin_sock);
} egret_pin_sock SEC(".maps");

/* A first record while one program run judges it (pin.h, pin_buf_claim). */
struct egret_pin_buf {
	__u64 busy;		/* enum pin_buf_owner (64 bits: BPF's compare-and-swap) */
	__u8 buf[EGRET_HELLO_MAX];	/* the record, copied */
};

enum pin_buf_owner {
	PIN_BUF_FREE = 0,
	PIN_BUF_CPU,		/* a slot of egret_pin_bufs, claimed */
	PIN_BUF_SOCK,		/* egret_pin_buf_sock, deleted after */
};

/* Slots per CPU: a run that judges may be preempted, or interrupted by a
 * softirq's run, on its CPU, and the next run takes another slot. */
#define EGRET_PIN_BUFS		4

/* Per CPU, slot -> a buffer for one judgement; written by BPF (sk_msg,
 * egress), each slot claimed by a compare-and-swap and freed after. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EGRET_PIN_BUFS);
	__type(key, __u32);
	__type(value, struct egret_pin_buf);
} egret_pin_bufs SEC(".maps");

/* Pinned socket -> its record's buffer when every slot of its CPU was
 * taken; written by BPF (sk_msg, egress), deleted after the judgement. */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct egret_pin_buf);
} egret_pin_buf_sock SEC(".maps");

/* Pinned connections between connect and their first record's verdict,
 * by socket cookie: egret_tls (sk_msg) is attached to it. */
#define EGRET_PIN_SOCKS		65536

/* Cookie -> pinned socket until its verdict; written by BPF (sock_ops adds and removes). */
struct {
	__uint(type, BPF_MAP_TYPE_SOCKHASH);
	__uint(max_entries, EGRET_PIN_SOCKS);
	__type(key, __u64);
	__type(value, __u64);
} egret_pin_socks SEC(".maps");

/* Slot -> TLS verdicts, lost events; written by BPF, zeroed by egret when it claims the slot.
 * (sk_msg programs have no cgroup storage to count in.) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, EGRET_SLOTS_MAX);
	__type(key, __u32);
	__type(value, struct egret_tls_count);
} egret_tls_counts SEC(".maps");

#endif /* EGRET_BPF_PIN_MAP_H */
