/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * names.h - which name's DNS answer taught each learned address.
 *
 * Only for people: `egret status` (user/cmd/status.c) and bpftool show
 * the name beside an allow entry. egret's DNS proxy writes it
 * (user/dns/proxy.c, through allow_name() in user/enforce/allow.c) when it
 * learns an address; no program reads it, so nothing a name says can
 * change a verdict.
 */
#ifndef EGRET_BPF_NAMES_H
#define EGRET_BPF_NAMES_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "egret.h"

/* (Attempt, learned address) -> name; written by egret's DNS proxy.
 * One entry per address of egret_allow4 and egret_allow6, hence
 * EGRET_NAMES_PER_ENTRY times their size. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EGRET_NAMES_PER_ENTRY * EGRET_SHARED_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct egret_name_key);
	__type(value, struct egret_name);
} egret_names SEC(".maps");

#endif /* EGRET_BPF_NAMES_H */
