/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * enforce/loader_impl.h - what the loader's three files share: loader.c
 * (the tables of programs and maps, an attempt's pins, attach and
 * settings), objects.c (loading the set's objects) and slots.c (an
 * attempt's slot: its ring buffer and repeat counts).
 */
#ifndef EGRET_LOADER_IMPL_H
#define EGRET_LOADER_IMPL_H

#include "enforce/loader.h"

/* Not in Debian 12's uapi headers (Linux 6.7). */
#define EGRET_CGROUP_UNIX_CONNECT	49
#define EGRET_CGROUP_UNIX_SENDMSG	50

/* A free slot claimed for the attempt ld->key, into ld->slot and its two
 * maps into ld->maps: 0, -EBUSY when every slot is held, or -errno. */
int loader_slot_claim(struct loader *ld);

/* Give back the slots (one, unless something went wrong) @key holds in
 * egret_slots (@slots; -1: none). 0 or the first -errno. */
int loader_slots_release(int slots, __u64 key);

/* A read-only data map (@fd, its info @mi) of one of the pinned set's
 * main programs: the kernel probe's answer the set was loaded with, kept for
 * loader_can_set_errno() when it is the main object's .rodata
 * (objects.c; shared.c calls it as it checks the set). */
struct bpf_map_info;
void loader_note_rodata(int fd, const struct bpf_map_info *mi);

#endif
