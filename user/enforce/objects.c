// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * enforce/objects.c - the set's BPF objects loaded (the main one, the
 * unix one and the task iterator where the kernel can), their programs
 * and maps taken as loader.c's tables name them, and the fingerprint
 * that names the set they make.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "egret.skel.h"
#include "egret_unix.skel.h"
#include "egret_tasks.skel.h"
#include "objects_hash.h"
#include "enforce/loader_impl.h"
#include "enforce/unix_filter.h"
#include "lib/log.h"
#include "lib/util.h"

/* Our own copy of an fd the skeleton owns: it outlives the skeleton. */
static int keep(int fd)
{
	if (fd < 0)
		return -EBADF;
	fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	return fd < 0 ? -errno : fd;
}

/*
 * The object's programs must be exactly loader_progs[@first, @first + @n),
 * each with its attach type: a program the table missed would load and
 * never be attached. Then the maps of @obj that the table names.
 */
static int take_fds(struct loader *ld, struct bpf_object *obj, int first, int n)
{
	struct bpf_program *prog;
	struct bpf_map *map;
	int count = 0;

	bpf_object__for_each_program(prog, obj)
		count++;
	if (count != n)
		return -EPROTO;
	for (int i = first; i < first + n; i++) {
		prog = bpf_object__find_program_by_name(obj, loader_progs[i].name);
		if (!prog || bpf_program__expected_attach_type(prog) != loader_progs[i].type)
			return -EPROTO;
		ld->progs[i] = keep(bpf_program__fd(prog));
		if (ld->progs[i] < 0)
			return ld->progs[i];
	}
	for (int i = 0; i < LOADER_NSHARED; i++) {
		if (ld->maps[i] >= 0)
			continue;
		map = bpf_object__find_map_by_name(obj, loader_map_names[i]);
		if (map && (ld->maps[i] = keep(bpf_map__fd(map))) < 0)
			return ld->maps[i];
	}
	return 0;
}

/*
 * Can a connect4 program call bpf_set_retval() (Linux 5.18)? Load the
 * smallest one that does: 1 yes, 0 no, negative when the load fails for
 * another reason (then egret could load nothing anyway).
 */
static int set_retval_known = -1;
#define RODATA_MAX	4096	/* the main object's .rodata: 1053 bytes */

static int probe_set_retval(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = -EPERM },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_set_retval },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = BPF_CGROUP_INET4_CONNECT);
	int fd;

	if (set_retval_known >= 0)
		return set_retval_known;
	fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, "egret_probe", "GPL",
			   insns, sizeof(insns) / sizeof(insns[0]), &opts);
	if (fd >= 0) {
		close(fd);
		return set_retval_known = 1;
	}
	if (errno == EINVAL)
		return set_retval_known = 0;
	return -errno;
}

/*
 * The probe's answer the set's programs were loaded with, from their
 * read-only data: the kernel does not change under a pinned set, and the
 * probe's load (with libbpf's own feature probes, 0.3-0.7 ms in a fresh
 * process) was part of every start (issue 42). Only the main object's
 * frozen .rodata, of its skeleton's size, is read; anything else leaves
 * the probe to run.
 */
void loader_note_rodata(int fd, const struct bpf_map_info *mi)
{
	/* The skeleton's struct is the section's start; its constants
	 * follow. */
	unsigned char ro[RODATA_MAX];
	const size_t at = offsetof(struct egret_bpf__rodata, have_set_retval);
	size_t n = strnlen(mi->name, sizeof(mi->name));
	__u32 key = 0;

	if (set_retval_known >= 0 || mi->type != BPF_MAP_TYPE_ARRAY ||
	    mi->key_size != sizeof(key) || mi->value_size < sizeof(struct egret_bpf__rodata) ||
	    mi->value_size > sizeof(ro) || mi->max_entries != 1 ||
	    !(mi->map_flags & BPF_F_RDONLY_PROG) ||
	    n < 7 || strcmp(mi->name + n - 7, ".rodata"))
		return;
	if (bpf_map_lookup_elem(fd, &key, ro) == 0)
		set_retval_known = ro[at] ? 1 : 0;
}

int loader_can_set_errno(void)
{
	return probe_set_retval();
}

/* The unix programs, sharing the main object's per-attempt maps. A
 * kernel without the hooks, or without the BTF their CO-RE reads need,
 * leaves them out: only an attempt that asks for them then fails. */
static int load_unix(struct loader *ld)
{
	struct egret_unix_bpf *skel;
	int r;

	if (!unix_filter_supported())
		return -EOPNOTSUPP;
	skel = egret_unix_bpf__open();
	if (!skel)
		return -errno;
	bpf_program__set_expected_attach_type(skel->progs.egret_unix_connect,
					      EGRET_CGROUP_UNIX_CONNECT);
	bpf_program__set_expected_attach_type(skel->progs.egret_unix_sendmsg,
					      EGRET_CGROUP_UNIX_SENDMSG);
	if (bpf_map__reuse_fd(skel->maps.egret_attempt, ld->maps[LOADER_ATTEMPT]) ||
	    bpf_map__reuse_fd(skel->maps.egret_counters, ld->maps[LOADER_COUNTERS]) ||
	    bpf_map__reuse_fd(skel->maps.egret_rings, ld->maps[LOADER_RINGS]) ||
	    bpf_map__reuse_fd(skel->maps.egret_repeat_of, ld->maps[LOADER_REPEAT_OF])) {
		r = -errno;
		goto out;
	}
	r = egret_unix_bpf__load(skel);
	if (r == 0)
		r = take_fds(ld, skel->obj, LOADER_UNIX_CONNECT, 2);
out:
	egret_unix_bpf__destroy(skel);
	return r;
}

/* The task iterator, where the kernel can load it (BTF): else the uid
 * check reads /proc (attempt/preflight.h). */
static int load_tasks(struct loader *ld)
{
	struct egret_tasks_bpf *skel;
	int r;

	/* Without it libbpf would say why at length: the scan is enough. */
	if (access("/sys/kernel/btf/vmlinux", R_OK) < 0)
		return -EOPNOTSUPP;
	skel = egret_tasks_bpf__open_and_load();
	if (!skel)
		return -errno;
	r = take_fds(ld, skel->obj, LOADER_TASKS, 1);
	egret_tasks_bpf__destroy(skel);
	return r;
}

int loader_load_set(struct loader *ld, bool with_tasks, const char **ret_step)
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
	skel->rodata->have_set_retval = (__u8)probe_set_retval();
	r = egret_bpf__load(skel);
	if (r < 0) {
		*ret_step = "load BPF programs";
		goto out;
	}
	r = take_fds(ld, skel->obj, 0, LOADER_NMAIN_PROGS);
	if (r < 0) {
		*ret_step = "take BPF programs and maps";
		goto out;
	}
	/* Attached to the map, not a cgroup: once, for as long as the set
	 * lives (the pinned sockhash holds it). */
	if (bpf_prog_attach(ld->progs[LOADER_TLS], ld->maps[LOADER_PIN_SOCKS],
			    BPF_SK_MSG_VERDICT, 0) < 0) {
		r = -errno;
		*ret_step = "attach the TLS program to its sockhash";
		goto out;
	}
	ld->loaded_now = true;
	r = load_unix(ld);
	if (r < 0)
		log_debug("the unix socket programs are not in this set: %s", strerror(-r));
	r = with_tasks ? load_tasks(ld) : -ECANCELED;
	if (r < 0) {
		log_debug("the task iterator is not in this set: %s", strerror(-r));
		r = 0;
	}
out:
	/* Our fds keep what we need; the skeleton's mappings go. */
	egret_bpf__destroy(skel);
	return r;
}

/* The objects and egret's version, hashed by the build (the Makefile's
 * objects_hash.h: a start does not read 360 KiB of objects to name its
 * set), and libbpf's version, which a shared libbpf may change under the
 * same binary: what made a set. */
void loader_object_tag(char *buf, size_t len)
{
	static char tag[17];

	if (!tag[0]) {
		const char *lib = libbpf_version_string();
		uint64_t h = fnv1a(FNV1A_INIT ^ EGRET_OBJECTS_HASH, lib, strlen(lib));

		snprintf(tag, sizeof(tag), "%016llx", (unsigned long long)h);
	}
	snprintf(buf, len, "%s", tag);
}
