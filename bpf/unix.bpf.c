// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unix.bpf.c - abstract unix sockets an attempt may reach: only those the
 * operator named (--allow-unix @NAME).
 *
 * COMMAND's Landlock domain keeps it to the attempt's own abstract
 * sockets (user/attempt/landlock.h), but that scope has no exceptions. When the
 * operator names some outside ones, or the kernel has no such scope
 * (Linux 6.7-6.11), these cgroup/connect_unix and sendmsg_unix programs
 * judge instead: an abstract destination passes only if its name is in
 * egret_unix_allow (the attempt's own abstract sockets are then refused
 * too, as any other name). Path-based sockets are left to their file
 * permissions: a path can be reached through symlinks and bind mounts a
 * name check would not see. A separate object, loaded into the set of
 * programs where the kernel can and attached only when needed: reading the
 * address takes kfuncs and CO-RE (Linux 6.7+, kernel BTF), which the main
 * object avoids. It shares the main object's per-attempt maps
 * (lib/attempt.h), so one attempt's names are its own.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "egret.h"
#include "lib/verdict.h"
#include "lib/net.h"
#include "lib/events.h"

/* offsetof(struct sockaddr_un, sun_path) */
#define SUN_PATH_OFF	2

char LICENSE[] SEC("license") = "Dual BSD/GPL";

extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

/* (Attempt, abstract name the operator allows) -> 1; written by egret before the attach.
 * Read only here. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EGRET_SHARED_UNIX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct egret_unix_key);
	__type(value, __u32);
} egret_unix_allow SEC(".maps");

/* The destination's abstract name into @key; 0 if it is not abstract. */
static __always_inline int unix_abstract_name(struct bpf_sock_addr *ctx,
					      struct egret_unix_key *key)
{
	struct bpf_sock_addr_kern *sa = bpf_cast_to_kern_ctx(ctx);
	struct sockaddr_un *un;
	__u32 len = sa->uaddrlen;

	if (len <= SUN_PATH_OFF)
		return 0;	/* no name at all: not a destination */
	key->attempt = attempt_key();
	un = bpf_rdonly_cast(sa->uaddr, bpf_core_type_id_kernel(struct sockaddr_un));
	if (un->sun_path[0] != 0)
		return 0;	/* a path */
	len -= SUN_PATH_OFF + 1;
	if (len > EGRET_UNIX_NAME_MAX)
		len = EGRET_UNIX_NAME_MAX;
	key->len = len;
	for (__u32 i = 0; i < EGRET_UNIX_NAME_MAX; i++) {
		if (i >= len)
			break;
		key->name[i] = un->sun_path[i + 1];
	}
	return 1;
}

static __always_inline int unix_judge(struct bpf_sock_addr *ctx)
{
	struct egret_unix_key key = {};
	struct event_info in = {
		.hook = EGRET_HOOK_UNIX, .reason = EGRET_REASON_NO_ENTRY,
		.sock_type = (__u8)ctx->type,
	};

	if (ctx->user_family != AF_UNIX_ || !unix_abstract_name(ctx, &key)) {
		counter_add(EGRET_COUNTER(EGRET_HOOK_UNIX, EGRET_VERDICT_ALLOW));
		return SYS_PROCEED;
	}
	if (bpf_map_lookup_elem(&egret_unix_allow, &key))
		in.reason = EGRET_REASON_ALLOWED;
	return event_decide(&in) ? SYS_PROCEED : SYS_REJECT;
}

/* libbpf 1.1 knows no cgroup/connect_unix section: the loader sets the
 * attach types (BPF_CGROUP_UNIX_CONNECT, _SENDMSG) before load. */
SEC("cgroup/connect4")
int egret_unix_connect(struct bpf_sock_addr *ctx)
{
	return unix_judge(ctx);
}

SEC("cgroup/sendmsg4")
int egret_unix_sendmsg(struct bpf_sock_addr *ctx)
{
	return unix_judge(ctx);
}
