// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/child.h"

/* Enough for what children do here: paths, a few hundred bytes of
 * locals, snprintf. Its end is a guard page: an overflow faults. */
#define CHILD_STACK	(256 * 1024)

void *child_stack_new(size_t size)
{
	void *s = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);

	if (s == MAP_FAILED)
		return NULL;
	if (mprotect(s, (size_t)sysconf(_SC_PAGESIZE), PROT_NONE) < 0) {
		munmap(s, size);
		return NULL;
	}
	return s;
}

static int reap(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -ECHILD;
}

int child_start(struct child *c, int flags, int (*fn)(void *), void *arg)
{
	c->stack_size = CHILD_STACK;
	c->stack = child_stack_new(CHILD_STACK);
	if (!c->stack)
		return -ENOMEM;
	/* glibc's clone() ends the child with the exit system call when
	 * @fn returns: no atexit handlers, no stdio flush of ours. */
	c->pid = clone(fn, (char *)c->stack + CHILD_STACK, CLONE_VM | flags | SIGCHLD, arg);
	if (c->pid < 0) {
		int r = -errno;

		munmap(c->stack, CHILD_STACK);
		c->stack = NULL;
		return r;
	}
	return c->pid;
}

int child_reap(struct child *c)
{
	int r = reap(c->pid);

	/* Only once it is gone: until then the stack is its. */
	munmap(c->stack, c->stack_size);
	c->stack = NULL;
	return r;
}

int child_run(int (*fn)(void *), void *arg)
{
	struct child c;
	int r = child_start(&c, CLONE_VFORK, fn, arg);

	return r < 0 ? r : child_reap(&c);
}

/* Does a change of ids leave shared memory to root alone? 0: not
 * dumpable; 2: dumpable by root only. 1, or no answer: no. */
bool child_ids_change_keeps_memory_ours(void)
{
	char c = 0;
	int fd = open("/proc/sys/fs/suid_dumpable", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c == '0' || c == '2';
}

int child_run_as(int (*fn)(void *), void *arg)
{
	pid_t pid;

	if (child_ids_change_keeps_memory_ours())
		return child_run(fn, arg);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(fn(arg));
	return reap(pid);
}

int child_become(uid_t uid, gid_t gid, size_t ngroups, const gid_t *groups)
{
	if (syscall(SYS_setgroups, ngroups, ngroups ? groups : NULL) < 0 ||
	    syscall(SYS_setresgid, gid, gid, gid) < 0 ||
	    syscall(SYS_setresuid, uid, uid, uid) < 0)
		return -errno;
	return 0;
}

#if defined(__x86_64__)
/*
 * clone3 leaves the child on @args->stack with nothing to return to, so
 * the call is made here: the child calls @fn(@arg) from the new stack
 * (@fn and @arg kept in callee-saved registers across the system call)
 * and, should @fn ever return, exits with 127.
 */
static long clone3_call(struct clone_args *args, void (*fn)(void *), void *arg)
{
	register long rax __asm__("rax") = SYS_clone3;
	register void (*r12)(void *) __asm__("r12") = fn;
	register void *r13 __asm__("r13") = arg;

	__asm__ volatile("syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 "xor %%ebp, %%ebp\n\t"
			 "mov %%r13, %%rdi\n\t"
			 "call *%%r12\n\t"
			 "mov $60, %%eax\n\t"
			 "mov $127, %%edi\n\t"
			 "syscall\n\t"
			 "ud2\n"
			 "1:"
			 : "+a"(rax)
			 : "D"(args), "S"(sizeof(*args)), "r"(r12), "r"(r13)
			 : "rcx", "r11", "memory");
	return rax;
}

pid_t child_clone3_vfork(struct clone_args *args, void *stack, size_t size,
			 void (*fn)(void *), void *arg)
{
	args->flags |= CLONE_VM | CLONE_VFORK;
	args->stack = (__u64)(unsigned long)stack;
	/* Its top 16-byte aligned, as the ABI wants at the call. */
	args->stack_size = (((unsigned long)stack + size) & ~15UL) - (unsigned long)stack;
	/* The raw system call: -errno itself on failure. */
	return (pid_t)clone3_call(args, fn, arg);
}
#else
pid_t child_clone3_vfork(struct clone_args *args, void *stack, size_t size,
			 void (*fn)(void *), void *arg)
{
	return -ENOSYS;
}
#endif
