// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/sigsafe.h"

/* As the kernel writes them (linux_dirent64). */
struct getdents_entry {
	unsigned long long d_ino;
	long long d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

int dirents_each(int fd, int (*fn)(int fd, const char *name, void *ctx), void *ctx)
{
	char buf[4096];
	long n;

	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long at = 0; at < n;) {
			struct getdents_entry *d = (struct getdents_entry *)(buf + at);
			int r;

			at += d->d_reclen;
			if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
				continue;
			r = fn(fd, d->d_name, ctx);
			if (r)
				return r;
		}
	}
	return n < 0 ? -errno : 0;
}

char *put_uint(char *p, unsigned int v)
{
	char tmp[16];
	int n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*p++ = tmp[--n];
	*p = '\0';
	return p;
}
