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

#include "egret_unix.skel.h"
#include "enforce/unix_filter.h"
#include "lib/util.h"

/* Not in Debian 12's uapi headers (Linux 6.7). */
#define EGRET_CGROUP_UNIX_CONNECT	49
#define EGRET_CGROUP_UNIX_SENDMSG	50

static const struct {
	const char *pin;
	int type;
} unix_progs[2] = {
	{ "link_egret_unix_connect", EGRET_CGROUP_UNIX_CONNECT },
	{ "link_egret_unix_sendmsg", EGRET_CGROUP_UNIX_SENDMSG },
};

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

void unix_filter_init(struct unix_filter *f)
{
	*f = (struct unix_filter){ .links = { -1, -1 }, .allow_fd = -1 };
}

int unix_filter_attach(struct unix_filter *f, const struct unix_filter_opts *o,
		       const char **ret_step)
{
	struct egret_unix_bpf *skel;
	struct bpf_program *progs[2];
	char path[PATH_MAX];
	__u32 one = 1;
	int r = 0;

	skel = egret_unix_bpf__open();
	if (!skel) {
		*ret_step = "open the unix socket programs";
		return -errno;
	}
	progs[0] = skel->progs.egret_unix_connect;
	progs[1] = skel->progs.egret_unix_sendmsg;
	for (int i = 0; i < 2; i++)
		bpf_program__set_expected_attach_type(progs[i], unix_progs[i].type);
	/* One ring buffer and one set of counters per attempt. */
	if (bpf_map__reuse_fd(skel->maps.egret_events, o->events_fd) ||
	    bpf_map__reuse_fd(skel->maps.egret_counters, o->counters_fd) ||
	    bpf_map__reuse_fd(skel->maps.egret_repeats, o->repeats_fd)) {
		*ret_step = "share the event maps with the unix socket programs";
		r = -errno;
		goto out;
	}
	r = egret_unix_bpf__load(skel);
	if (r < 0) {
		*ret_step = "load the unix socket programs (Linux 6.7+, kernel BTF)";
		goto out;
	}
	skel->bss->audit = o->audit;
	skel->bss->log_allowed = o->log_allowed;
	f->allow_fd = fcntl(bpf_map__fd(skel->maps.egret_unix_allow), F_DUPFD_CLOEXEC, 3);
	for (size_t i = 0; i < o->nnames && f->allow_fd >= 0; i++)
		if (bpf_map_update_elem(f->allow_fd, &o->names[i], &one, BPF_ANY) < 0) {
			*ret_step = "write the allowed abstract socket names";
			r = -errno;
			goto out;
		}
	snprintf(path, sizeof(path), "%s/egret_unix_allow", o->pin_dir);
	if (f->allow_fd < 0 || bpf_obj_pin(f->allow_fd, path) < 0) {
		*ret_step = "pin the allowed abstract socket names";
		r = -errno;
		goto out;
	}
	for (int i = 0; i < 2; i++) {
		f->links[i] = bpf_link_create(bpf_program__fd(progs[i]), o->cgroup_fd,
					      unix_progs[i].type, NULL);
		if (f->links[i] < 0) {
			*ret_step = "attach the unix socket programs to the cgroup";
			r = -errno;
			goto out;
		}
		snprintf(path, sizeof(path), "%s/%s", o->pin_dir, unix_progs[i].pin);
		if (bpf_obj_pin(f->links[i], path) < 0) {
			*ret_step = "pin the unix socket programs' links";
			r = -errno;
			goto out;
		}
	}
	f->attached = true;
out:
	/* Links and pins hold the programs; the skeleton's fds go. */
	egret_unix_bpf__destroy(skel);
	return r;
}

void unix_filter_close(struct unix_filter *f)
{
	for (int i = 0; i < 2; i++)
		if (f->links[i] >= 0)
			close(f->links[i]);
	if (f->allow_fd >= 0)
		close(f->allow_fd);
	unix_filter_init(f);
}
