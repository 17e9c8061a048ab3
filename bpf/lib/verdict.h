/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * verdict.h - what the programs return to the kernel, by name.
 *
 * Every program of bpf/ returns one of these, never a bare 0 or 1, so a
 * reader sees which kind of hook a return is meant for.
 */
#ifndef EGRET_BPF_VERDICT_H
#define EGRET_BPF_VERDICT_H

/* cgroup sock_addr, sock_create and setsockopt programs: 0 makes the
 * system call fail (EPERM, unless bpf_set_retval() chose another errno);
 * recvmsg and getpeername programs must always proceed. */
#define SYS_REJECT	0
#define SYS_PROCEED	1

/* cgroup_skb programs: the packet is dropped, or goes on. */
#define SKB_DROP	0
#define SKB_PASS	1

#endif /* EGRET_BPF_VERDICT_H */
