// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>

#include "launch/seccomp.h"
#include "lib/util.h"

#if defined(__x86_64__)
#define EGRET_AUDIT_ARCH	AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define EGRET_AUDIT_ARCH	AUDIT_ARCH_AARCH64
#else
#error "egret's seccomp filter knows x86_64 and aarch64; add the arch here"
#endif

#define LOAD_NR		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LOAD_ARCH	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch))
/* The low 32 bits of argument 0: where clone and unshare keep their flags. */
#define LOAD_ARG0	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]))
/* The low 32 bits of argument 1: ioctl's request (an unsigned int). */
#define LOAD_ARG1	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]))
#define RET(v)		BPF_STMT(BPF_RET | BPF_K, (v))
#define ERRNO(e)	RET(SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))
/* If A == nr, execute the next instruction, else skip it. */
#define IF_NR(nr)	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1)
/*
 * A syscall whose argument @arg is a mode: refused (EPERM) when the mode
 * carries one of @bits, allowed otherwise (no later rule concerns it).
 * The low 32 bits hold every mode bit.
 */
#define MODE_REFUSED(nr, arg, bits)					\
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 4),		\
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS,				\
		 offsetof(struct seccomp_data, args[arg])),		\
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, (bits), 0, 1),		\
	ERRNO(EPERM),							\
	RET(SECCOMP_RET_ALLOW)
/* A file's new mode: no set-id bit, and writable by others never. */
#define CHMOD_MODE(nr, arg)	MODE_REFUSED(nr, arg, S_ISUID | S_ISGID | S_IWOTH)
/* A created file's mode: no set-id bit (others' write goes with the
 * umask, which keeps S_IWOTH: see umask below). */
#define CREATE_MODE(nr, arg)	MODE_REFUSED(nr, arg, S_ISUID | S_ISGID)

#ifndef __NR_fchmodat2
#define __NR_fchmodat2	452	/* Linux 6.6; one number on every arch */
#endif
#ifndef __NR_openat2
#define __NR_openat2	437
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat	463	/* Linux 6.13; one number on every arch */
#endif

/*
 * The filter, one rule after another: everything it does not refuse is
 * allowed. Its last rule, the user-namespace one, is left out for
 * --nested-sandbox (seccomp_install).
 */
static const struct sock_filter filter_rules[] = {
	/* Another ABI (i386 via int 0x80, x32) has other numbers and
	 * would walk around every check below: refuse it whole. */
	LOAD_ARCH,
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, EGRET_AUDIT_ARCH, 1, 0),
	ERRNO(ENOSYS),
	LOAD_NR,
#ifdef __x86_64__
	BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000 /* x32 */, 0, 1),
	ERRNO(ENOSYS),
#endif
	/* clone3 passes its flags in memory, out of the filter's
	 * reach: ENOSYS makes libc fall back to clone, checked below. */
	IF_NR(__NR_clone3), ERRNO(ENOSYS),
	IF_NR(__NR_io_uring_setup), ERRNO(EPERM),
	IF_NR(__NR_io_uring_enter), ERRNO(EPERM),
	IF_NR(__NR_io_uring_register), ERRNO(EPERM),
	IF_NR(__NR_pidfd_getfd), ERRNO(EPERM),
	IF_NR(__NR_bpf), ERRNO(EPERM),
	IF_NR(__NR_setns), ERRNO(EPERM),
	/* No set-id file: COMMAND's no_new_privs does not bind whoever
	 * runs it next, and the attempt uid's caller (or anyone who
	 * can reach a world-writable place) could run a setuid copy
	 * as the attempt uid outside any attempt. Modes are read from
	 * registers; openat2's sits in memory, out of reach: ENOSYS,
	 * and libraries fall back to openat. */
	/* Nor anything others may write (S_IWOTH, sticky or not): any
	 * user could then write into the caller's tree, which the
	 * miner harvests. A chmod that asks for it is refused; a
	 * created file gets it only through a umask COMMAND cleared
	 * itself (it starts with S_IWOTH: launch.c), never through a
	 * POSIX ACL, which no setxattr sets. Reading the umask is
	 * umask(0) and back, so clearing it cannot be refused. */
	CHMOD_MODE(__NR_fchmod, 1),
	CHMOD_MODE(__NR_fchmodat, 2),
	CHMOD_MODE(__NR_fchmodat2, 2),
	CREATE_MODE(__NR_openat, 3),
	CREATE_MODE(__NR_mkdirat, 2),
	CREATE_MODE(__NR_mknodat, 2),
#ifdef __NR_chmod
	CHMOD_MODE(__NR_chmod, 1),
	CREATE_MODE(__NR_open, 2),
	CREATE_MODE(__NR_creat, 1),
	CREATE_MODE(__NR_mkdir, 1),
	CREATE_MODE(__NR_mknod, 1),
#endif
	IF_NR(__NR_openat2), ERRNO(ENOSYS),
	/* Extended attributes: a POSIX ACL grants what a mode does not
	 * (others' write), and a default ACL overrides the umask. As
	 * on a filesystem without them: EOPNOTSUPP. */
	IF_NR(__NR_setxattr), ERRNO(EOPNOTSUPP),
	IF_NR(__NR_lsetxattr), ERRNO(EOPNOTSUPP),
	IF_NR(__NR_fsetxattr), ERRNO(EOPNOTSUPP),
	IF_NR(__NR_setxattrat), ERRNO(EOPNOTSUPP),
	/* Sends that hand the kernel pages it does not copy - the page
	 * cache's (sendfile, splice) or COMMAND's own (vmsplice, tee
	 * into a pipe that is spliced on): what SNI pinning judged
	 * could be rewritten before the NIC or the peer reads it, or
	 * before a retransmission (docs/SECURITY.md). EINVAL is what
	 * libraries take for "not here" and fall back to read/write
	 * (Go, Python, libuv). MSG_ZEROCOPY needs SO_ZEROCOPY, refused
	 * by the setsockopt program. */
	IF_NR(__NR_sendfile), ERRNO(EINVAL),
	IF_NR(__NR_splice), ERRNO(EINVAL),
	IF_NR(__NR_vmsplice), ERRNO(EINVAL),
	IF_NR(__NR_tee), ERRNO(EINVAL),
	/* ioctl(fd, TIOCSTI | TIOCLINUX, ...): no typing into a
	 * terminal's input queue, not even COMMAND's own pty (the
	 * session of its own is the first wall: terminal.h). */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 5),
	LOAD_ARG1,
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 2, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCLINUX, 1, 0),
	RET(SECCOMP_RET_ALLOW),
	ERRNO(EPERM),
	/* socket(family, ...): the families the cgroup hooks judge
	 * (inet), plus unix and netlink. AF_VSOCK, AF_PACKET and the
	 * rest reach no hook of egret's (no BPF LSM is needed). */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 7),
	LOAD_ARG0,
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 4, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 3, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 2, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_NETLINK, 1, 0),
	ERRNO(EAFNOSUPPORT),
	RET(SECCOMP_RET_ALLOW),
	/* unshare(flags) and clone(flags, ...): no new user namespace
	 * (the last rule: --nested-sandbox leaves it out). */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_unshare, 1, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 3),
	LOAD_ARG0,
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER, 0, 1),
	ERRNO(EPERM),
	RET(SECCOMP_RET_ALLOW),
};
/* The user-namespace rule's instructions, from the end. */
enum { USERNS_RULE = 6 };

int seccomp_install(bool user_namespaces)
{
	struct sock_filter filter[ARRAY_SIZE(filter_rules)];
	struct sock_filter allow_all = RET(SECCOMP_RET_ALLOW);
	struct sock_fprog prog = {
		.len = (unsigned short)ARRAY_SIZE(filter),
		.filter = filter,
	};

	memcpy(filter, filter_rules, sizeof(filter));
	/* Without the rule: everything that reached it passes. */
	if (user_namespaces) {
		filter[ARRAY_SIZE(filter) - USERNS_RULE] = allow_all;
		prog.len = (unsigned short)(ARRAY_SIZE(filter) - USERNS_RULE + 1);
	}

	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		return -errno;
	return 0;
}
