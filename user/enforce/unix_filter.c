// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "enforce/unix_filter.h"
#include "lib/util.h"

/* Not in Debian 12's uapi headers (Linux 6.7). */
#define EGRET_CGROUP_UNIX_CONNECT	49
#define EGRET_CGROUP_UNIX_SENDMSG	50

bool unix_filter_supported(void)
{
	static int known = -1;
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = EGRET_CGROUP_UNIX_CONNECT);
	int fd;

	if (known >= 0)
		return known;
	fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, "egret_probe", "GPL",
			   insns, ARRAY_SIZE(insns), &opts);
	known = fd >= 0;
	if (fd >= 0)
		close(fd);
	return known;
}

int unix_name_parse(const char *text, struct egret_unix_key *ret)
{
	size_t n;

	if (text[0] != '@')
		return -EINVAL;
	n = strlen(text + 1);
	if (n == 0 || n > EGRET_UNIX_NAME_MAX)
		return -EINVAL;
	memset(ret, 0, sizeof(*ret));
	ret->len = (__u32)n;
	memcpy(ret->name, text + 1, n);
	return 0;
}

int unix_filter_allow(int fd, __u64 attempt, const struct egret_unix_key *names,
		      size_t n)
{
	__u32 one = 1;

	if (n > EGRET_UNIX_ALLOW_MAX)
		return -E2BIG;
	if (n && fd < 0)
		return -EBADF;
	for (size_t i = 0; i < n; i++) {
		struct egret_unix_key key = names[i];

		key.attempt = attempt;
		if (bpf_map_update_elem(fd, &key, &one, BPF_ANY) < 0)
			return -errno;
	}
	return 0;
}
