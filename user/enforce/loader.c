// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "egret.skel.h"
#include "enforce/loader.h"
#include "lib/log.h"
#include "lib/paths.h"

const struct loader_prog_def loader_progs[LOADER_NPROGS] = {
	{ "egret_connect4", BPF_CGROUP_INET4_CONNECT },
	{ "egret_connect6", BPF_CGROUP_INET6_CONNECT },
	{ "egret_sendmsg4", BPF_CGROUP_UDP4_SENDMSG },
	{ "egret_sendmsg6", BPF_CGROUP_UDP6_SENDMSG },
	{ "egret_recvmsg4", BPF_CGROUP_UDP4_RECVMSG },
	{ "egret_recvmsg6", BPF_CGROUP_UDP6_RECVMSG },
	{ "egret_getpeer4", BPF_CGROUP_INET4_GETPEERNAME },
	{ "egret_getpeer6", BPF_CGROUP_INET6_GETPEERNAME },
	{ "egret_socket", BPF_CGROUP_INET_SOCK_CREATE },
	{ "egret_sockopt", BPF_CGROUP_SETSOCKOPT },
	{ "egret_egress", BPF_CGROUP_INET_EGRESS },
	{ "egret_bind4", BPF_CGROUP_INET4_BIND },
	{ "egret_bind6", BPF_CGROUP_INET6_BIND },
	{ "egret_listen", BPF_CGROUP_SOCK_OPS },
};

const char *const loader_map_names[LOADER_NMAPS] = {
	[LOADER_ALLOW4] = "egret_allow4", [LOADER_ALLOW6] = "egret_allow6",
	[LOADER_CIDR4] = "egret_cidr4", [LOADER_CIDR6] = "egret_cidr6",
	[LOADER_NAMES] = "egret_names", [LOADER_EVENTS] = "egret_events",
	[LOADER_COUNTERS] = "egret_counters", [LOADER_DNS_ORIG] = "egret_dns_orig",
	[LOADER_CONN] = "egret_conn", [LOADER_HOST4] = "egret_host4",
	[LOADER_HOST6] = "egret_host6", [LOADER_REPEATS] = "egret_repeats",
	[LOADER_BSS] = "bss",
};

void loader_init(struct loader *ld)
{
	memset(ld, 0, sizeof(*ld));
	for (int i = 0; i < LOADER_NPROGS; i++)
		ld->progs[i] = ld->links[i] = -1;
	for (int i = 0; i < LOADER_NMAPS; i++)
		ld->maps[i] = -1;
}

/* Our own copy of an fd the skeleton owns: it outlives the skeleton. */
static int keep(int fd)
{
	if (fd < 0)
		return -EBADF;
	fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	return fd < 0 ? -errno : fd;
}

/*
 * The object's programs must be exactly loader_progs, each with its attach
 * type: a program the table missed would load and never be attached.
 */
static int take_fds(struct loader *ld, struct egret_bpf *skel)
{
	struct bpf_program *prog;
	struct bpf_map *map;
	int n = 0;

	bpf_object__for_each_program(prog, skel->obj)
		n++;
	if (n != LOADER_NPROGS)
		return -EPROTO;
	for (int i = 0; i < LOADER_NPROGS; i++) {
		prog = bpf_object__find_program_by_name(skel->obj, loader_progs[i].name);
		if (!prog || bpf_program__expected_attach_type(prog) != loader_progs[i].type)
			return -EPROTO;
		ld->progs[i] = keep(bpf_program__fd(prog));
		if (ld->progs[i] < 0)
			return ld->progs[i];
	}
	for (int i = 0; i < LOADER_NMAPS; i++) {
		map = i == LOADER_BSS ? skel->maps.bss :
		      bpf_object__find_map_by_name(skel->obj, loader_map_names[i]);
		if (!map)
			return -EPROTO;
		ld->maps[i] = keep(bpf_map__fd(map));
		if (ld->maps[i] < 0)
			return ld->maps[i];
	}
	return 0;
}

/*
 * Can a connect4 program call bpf_set_retval() (Linux 5.18)? Load the
 * smallest one that does: 1 yes, 0 no, negative when the load fails for
 * another reason (then egret could load nothing anyway).
 */
static int probe_set_retval(void)
{
	static int known = -1;
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = -EPERM },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_set_retval },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = BPF_CGROUP_INET4_CONNECT);
	int fd;

	if (known >= 0)
		return known;
	fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, "egret_probe", "GPL",
			   insns, sizeof(insns) / sizeof(insns[0]), &opts);
	if (fd >= 0) {
		close(fd);
		return known = 1;
	}
	if (errno == EINVAL)
		return known = 0;
	return -errno;
}

int loader_can_set_errno(void)
{
	return probe_set_retval();
}

int loader_load_fresh(struct loader *ld, __u32 max_entries, __u32 max_cidrs,
		      const char **ret_step)
{
	struct egret_bpf *skel;
	int r;

	r = probe_set_retval();
	if (r < 0) {
		*ret_step = "probe the kernel's BPF helpers";
		return r;
	}

	skel = egret_bpf__open();
	if (!skel) {
		*ret_step = "open BPF object";
		return -errno;
	}
	if (bpf_map__set_max_entries(skel->maps.egret_allow4, max_entries) ||
	    bpf_map__set_max_entries(skel->maps.egret_allow6, max_entries) ||
	    bpf_map__set_max_entries(skel->maps.egret_cidr4, max_cidrs) ||
	    bpf_map__set_max_entries(skel->maps.egret_cidr6, max_cidrs) ||
	    bpf_map__set_max_entries(skel->maps.egret_names,
				     EGRET_NAMES_PER_ENTRY * max_entries)) {
		*ret_step = "size BPF maps";
		r = -EINVAL;
		goto out;
	}
	skel->rodata->have_set_retval = (__u8)probe_set_retval();
	r = egret_bpf__load(skel);
	if (r < 0) {
		*ret_step = "load BPF programs";
		goto out;
	}
	r = take_fds(ld, skel);
	if (r < 0)
		*ret_step = "take BPF programs and maps";
out:
	/* Our fds keep what we need; the skeleton's mappings go. */
	egret_bpf__destroy(skel);
	return r;
}

/* Where the programs send DNS, and what they log: before any attach. */
int loader_configure(struct loader *ld, const struct loader_opts *opts,
		     const char **ret_step)
{
	struct egret_bpf__bss bss = {};
	__u32 zero = 0;

	bss.dns_proxy_port_be = htons(opts->dns_port);
	if (opts->dns_ip6_loopback) {
		bss.dns_proxy_ip6[3] = htonl(1);		/* ::1 */
	} else {
		bss.dns_proxy_ip6[2] = htonl(0xffff);	/* ::ffff:127.0.0.1 */
		bss.dns_proxy_ip6[3] = htonl(0x7f000001);
	}
	bss.log_allowed = opts->log_allowed;
	bss.audit = opts->audit;
	bss.deny_errno = opts->deny_errno;
	if (bpf_map_update_elem(ld->maps[LOADER_BSS], &zero, &bss, BPF_ANY) < 0) {
		*ret_step = "configure BPF programs";
		return -errno;
	}
	return 0;
}

struct allow_maps loader_allow_maps(const struct loader *ld)
{
	return (struct allow_maps){
		.allow4 = ld->maps[LOADER_ALLOW4],
		.allow6 = ld->maps[LOADER_ALLOW6],
		.cidr4 = ld->maps[LOADER_CIDR4],
		.cidr6 = ld->maps[LOADER_CIDR6],
		.names = ld->maps[LOADER_NAMES],
		.host4 = ld->maps[LOADER_HOST4],
		.host6 = ld->maps[LOADER_HOST6],
	};
}

int loader_events_fd(const struct loader *ld)
{
	return ld->maps[LOADER_EVENTS];
}

int loader_counters_fd(const struct loader *ld)
{
	return ld->maps[LOADER_COUNTERS];
}

int loader_repeats_fd(const struct loader *ld)
{
	return ld->maps[LOADER_REPEATS];
}

int loader_attach_pin(struct loader *ld, int cgroup_fd, const char *pin_dir,
		      const char **ret_step)
{
	char path[PATH_MAX];

	/* Links first: if egret dies from here on, the pins keep every
	 * attached program enforcing until `egret gc` removes the cgroup. */
	for (int i = 0; i < LOADER_NPROGS; i++) {
		int fd = bpf_link_create(ld->progs[i], cgroup_fd, loader_progs[i].type, NULL);

		if (fd < 0) {
			*ret_step = "attach BPF program to cgroup";
			return -errno;
		}
		ld->links[ld->nlinks++] = fd;
		if (path_fmt(path, sizeof(path), "%s/link_%s", pin_dir,
			     loader_progs[i].name) < 0) {
			*ret_step = "pin BPF link";
			return -ENAMETOOLONG;
		}
		if (bpf_obj_pin(fd, path) < 0) {
			*ret_step = "pin BPF link";
			return -errno;
		}
	}
	/* The settings stay egret's: not pinned. */
	for (int i = 0; i < LOADER_NMAPS; i++) {
		if (i == LOADER_BSS)
			continue;
		if (path_fmt(path, sizeof(path), "%s/%s", pin_dir,
			     loader_map_names[i]) < 0) {
			*ret_step = "pin BPF map";
			return -ENAMETOOLONG;
		}
		if (bpf_obj_pin(ld->maps[i], path) < 0) {
			*ret_step = "pin BPF map";
			return -errno;
		}
	}
	return 0;
}

int loader_open_pins(struct loader *ld, const char *pin_dir)
{
	char path[PATH_MAX];

	for (int i = 0; i < LOADER_NMAPS; i++) {
		if (i == LOADER_BSS)
			continue;
		if (path_fmt(path, sizeof(path), "%s/%s", pin_dir, loader_map_names[i]) < 0)
			return -ENAMETOOLONG;
		ld->maps[i] = bpf_obj_get(path);
		if (ld->maps[i] < 0)
			return -errno;
	}
	return 0;
}

void loader_destroy(struct loader *ld)
{
	for (int i = 0; i < LOADER_NPROGS; i++) {
		if (ld->links[i] >= 0)
			close(ld->links[i]);
		if (ld->progs[i] >= 0)
			close(ld->progs[i]);
	}
	for (int i = 0; i < LOADER_NMAPS; i++)
		if (ld->maps[i] >= 0)
			close(ld->maps[i]);
	loader_init(ld);
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* The object, egret's version and libbpf's: what made a spare. Hashed
 * once per process (gc, take and make all ask). */
void loader_object_tag(char *buf, size_t len)
{
	static char tag[17];

	if (!tag[0]) {
		size_t sz = 0;
		const void *obj = egret_bpf__elf_bytes(&sz);
		const char *lib = libbpf_version_string();
		uint64_t h = 1469598103934665603ULL;

		h = fnv1a(h, obj, sz);
		h = fnv1a(h, EGRET_VERSION, strlen(EGRET_VERSION));
		h = fnv1a(h, lib, strlen(lib));
		snprintf(tag, sizeof(tag), "%016llx", (unsigned long long)h);
	}
	snprintf(buf, len, "%s", tag);
}
