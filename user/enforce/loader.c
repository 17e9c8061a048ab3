// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "egret.skel.h"
#include "egret_unix.skel.h"
#include "egret_tasks.skel.h"
#include "enforce/loader.h"
#include "enforce/unix_filter.h"
#include "lib/log.h"
#include "lib/paths.h"
#include "lib/util.h"

/* Not in Debian 12's uapi headers (Linux 6.7). */
#define EGRET_CGROUP_UNIX_CONNECT	49
#define EGRET_CGROUP_UNIX_SENDMSG	50

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
	{ "egret_sockops", BPF_CGROUP_SOCK_OPS },
	[LOADER_TLS] = { "egret_tls", BPF_SK_MSG_VERDICT },
	[LOADER_UNIX_CONNECT] = { "egret_unix_connect", EGRET_CGROUP_UNIX_CONNECT },
	[LOADER_UNIX_SENDMSG] = { "egret_unix_sendmsg", EGRET_CGROUP_UNIX_SENDMSG },
	[LOADER_TASKS] = { "egret_tasks", BPF_TRACE_ITER },
};

const char *const loader_map_names[LOADER_NMAPS] = {
	[LOADER_ALLOW4] = "egret_allow4", [LOADER_ALLOW6] = "egret_allow6",
	[LOADER_CIDR4] = "egret_cidr4", [LOADER_CIDR6] = "egret_cidr6",
	[LOADER_NAMES] = "egret_names", [LOADER_HOST4] = "egret_host4",
	[LOADER_HOST6] = "egret_host6", [LOADER_UNIX_ALLOW] = "egret_unix_allow",
	[LOADER_CONN] = "egret_conn", [LOADER_DNS_ORIG] = "egret_dns_orig",
	[LOADER_ATTEMPT] = "egret_attempt", [LOADER_COUNTERS] = "egret_counters",
	[LOADER_RINGS] = "egret_rings", [LOADER_REPEAT_OF] = "egret_repeat_of",
	[LOADER_SLOTS] = "egret_slots", [LOADER_PINS] = "egret_pins",
	[LOADER_PIN_SOCK] = "egret_pin_sock", [LOADER_PIN_SOCKS] = "egret_pin_socks",
	[LOADER_TLS_COUNTS] = "egret_tls_counts", [LOADER_HTTP_SOCK] = "egret_http_sock",
	[LOADER_DEST_COUNTS] = "egret_dest_counts", [LOADER_ACCT_SOCK] = "egret_acct_sock",
	[LOADER_EVENTS] = "egret_events", [LOADER_REPEATS] = "egret_repeats",
};

void loader_init(struct loader *ld)
{
	memset(ld, 0, sizeof(*ld));
	ld->set_lock = -1;
	dests_init(&ld->dests, -1, 0, 0, 0);
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

int loader_cgroup_key(int cgroup_fd, __u64 *ret)
{
	struct stat st;

	/* A cgroup's id is its kernfs node's, which is its inode number. */
	if (fstat(cgroup_fd, &st) < 0)
		return -errno;
	if (!st.st_ino)
		return -EINVAL;
	*ret = (__u64)st.st_ino;
	return 0;
}

/* A slot's ring buffer and repeat counts, made as the set's templates
 * (bpf/lib/attempt.h) require: same type, sizes and flags. */
static int new_slot_maps(int *ret_ring, int *ret_repeats)
{
	LIBBPF_OPTS(bpf_map_create_opts, hash, .map_flags = BPF_F_NO_PREALLOC);
	_cleanup_close_ int ring = -1, repeats = -1;

	ring = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "egret_events", 0, 0,
			      EGRET_RING_BYTES, NULL);
	repeats = bpf_map_create(BPF_MAP_TYPE_HASH, "egret_repeats",
				 sizeof(struct egret_repeat_key), sizeof(__u64),
				 EGRET_REPEATS_MAX, &hash);
	if (ring < 0 || repeats < 0)
		return -errno;
	*ret_ring = TAKE_FD(ring);
	*ret_repeats = TAKE_FD(repeats);
	return 0;
}

/* Register @n slots' maps at once: a batch waits for one RCU grace
 * period, not one per slot. Where the kernel has no batch for
 * map-in-maps, one by one. */
static int register_slots(int outer, __u32 *slots, int *fds, __u32 n)
{
	__u32 count = n;

	if (n == 0)
		return 0;
	if (bpf_map_update_batch(outer, slots, fds, &count, NULL) == 0 && count == n)
		return 0;
	for (__u32 i = 0; i < n; i++)
		if (bpf_map_update_elem(outer, &slots[i], &fds[i], BPF_ANY) < 0)
			return -errno;
	return 0;
}

/* The inner map at @slot of map-in-map @outer, or -ENOENT. */
static int slot_map(int outer, __u32 slot)
{
	__u32 id;
	int fd;

	if (bpf_map_lookup_elem(outer, &slot, &id) < 0)
		return -errno;
	fd = bpf_map_get_fd_by_id(id);
	return fd < 0 ? -errno : fd;
}

static int discard(void *ctx, void *data, size_t size)
{
	(void)ctx, (void)data, (void)size;
	return 0;
}

/* What the slot's last holder left: records it never read, counts. */
static int empty_slot(int ring, int repeats)
{
	struct ring_buffer *rb = ring_buffer__new(ring, discard, NULL, NULL);
	unsigned char key[sizeof(struct egret_repeat_key)];
	int r;

	if (!rb)
		return -errno;
	r = ring_buffer__consume(rb);
	ring_buffer__free(rb);
	if (r < 0)
		return r;
	while (bpf_map_get_next_key(repeats, NULL, key) == 0)
		if (bpf_map_delete_elem(repeats, key) < 0)
			return -errno;
	return 0;
}

/*
 * A free slot, claimed for the attempt: an insert into egret_slots fails
 * for a slot another attempt holds, so two egrets never share one. The
 * slot's maps are its last holder's, emptied, or made now.
 */
static int claim_slot(struct loader *ld)
{
	int r;

	for (__u32 slot = 1; slot < EGRET_SLOTS_MAX; slot++) {
		if (bpf_map_update_elem(ld->maps[LOADER_SLOTS], &slot, &ld->key,
					BPF_NOEXIST) < 0) {
			if (errno == EEXIST)
				continue;
			return -errno;
		}
		ld->slot = slot;
		/* Its TLS counts start at zero, whoever held it before. */
		if (ld->maps[LOADER_TLS_COUNTS] >= 0 &&
		    bpf_map_update_elem(ld->maps[LOADER_TLS_COUNTS], &slot,
					&(struct egret_tls_count){ 0 }, BPF_ANY) < 0)
			return -errno;
		ld->maps[LOADER_EVENTS] = slot_map(ld->maps[LOADER_RINGS], slot);
		ld->maps[LOADER_REPEATS] = slot_map(ld->maps[LOADER_REPEAT_OF], slot);
		if (ld->maps[LOADER_EVENTS] >= 0 && ld->maps[LOADER_REPEATS] >= 0)
			return empty_slot(ld->maps[LOADER_EVENTS], ld->maps[LOADER_REPEATS]);
		for (int i = LOADER_EVENTS; i <= LOADER_REPEATS; i++) {
			if (ld->maps[i] >= 0)
				close(ld->maps[i]);
			ld->maps[i] = -1;
		}
		r = new_slot_maps(&ld->maps[LOADER_EVENTS], &ld->maps[LOADER_REPEATS]);
		if (r == 0)
			r = register_slots(ld->maps[LOADER_RINGS], &slot,
					   &ld->maps[LOADER_EVENTS], 1);
		if (r == 0)
			r = register_slots(ld->maps[LOADER_REPEAT_OF], &slot,
					   &ld->maps[LOADER_REPEATS], 1);
		return r;
	}
	return -EBUSY;
}

int loader_make_slots(struct loader *ld, __u32 n)
{
	_cleanup_free_ __u32 *slots = NULL;
	_cleanup_free_ int *rings = NULL, *repeats = NULL;
	__u32 k = 0;
	int r = 0;

	if (n >= EGRET_SLOTS_MAX)
		n = EGRET_SLOTS_MAX - 1;
	slots = calloc(n + 1, sizeof(*slots));
	rings = calloc(n + 1, sizeof(*rings));
	repeats = calloc(n + 1, sizeof(*repeats));
	if (!slots || !rings || !repeats)
		return -ENOMEM;
	for (__u32 slot = 1; slot <= n && r == 0; slot++) {
		int fd = slot_map(ld->maps[LOADER_RINGS], slot);

		if (fd >= 0) {
			close(fd);
			continue;
		}
		r = new_slot_maps(&rings[k], &repeats[k]);
		if (r == 0)
			slots[k++] = slot;
	}
	if (r == 0)
		r = register_slots(ld->maps[LOADER_RINGS], slots, rings, k);
	if (r == 0)
		r = register_slots(ld->maps[LOADER_REPEAT_OF], slots, repeats, k);
	for (__u32 i = 0; i < k; i++) {
		close(rings[i]);
		close(repeats[i]);
	}
	return r;
}

/* Pin maps [@from, @to) that @ld holds in @pin_dir. */
static int pin_maps(struct loader *ld, const char *pin_dir, int from, int to)
{
	char path[PATH_MAX];

	for (int i = from; i < to; i++) {
		if (ld->maps[i] < 0)
			continue;	/* the unix names, in a set without them */
		if (path_fmt(path, sizeof(path), "%s/%s", pin_dir, loader_map_names[i]) < 0)
			return -ENAMETOOLONG;
		if (bpf_obj_pin(ld->maps[i], path) < 0)
			return -errno;
	}
	return 0;
}

int loader_attempt_begin(struct loader *ld, int cgroup_fd, const char *pin_dir,
			 const struct loader_opts *opts, const char **ret_step)
{
	int r = loader_cgroup_key(cgroup_fd, &ld->key);

	if (r < 0) {
		*ret_step = "read the attempt cgroup's id";
		return r;
	}
	ld->quota = (struct allow_quota){ .max_entries = opts->max_entries,
					  .max_cidrs = opts->max_cidrs };
	/* The set's maps first: a teardown that finds them gives back a
	 * slot claimed after them, even before its own maps are pinned. */
	r = pin_maps(ld, pin_dir, 0, LOADER_NSHARED);
	if (r < 0) {
		*ret_step = "pin BPF map";
		return r;
	}
	r = claim_slot(ld);
	if (r < 0) {
		*ret_step = r == -EBUSY ? "find a free slot (EGRET_SLOTS_MAX attempts at once)" :
			    "claim a slot (ring buffer and repeat counts)";
		return r;
	}
	r = pin_maps(ld, pin_dir, LOADER_NSHARED, LOADER_NMAPS);
	if (r < 0)
		*ret_step = "pin BPF map";
	return r;
}

/* Where the programs send DNS, what they log, how they refuse. */
int loader_configure(struct loader *ld, const struct loader_opts *opts,
		     const char **ret_step)
{
	struct egret_attempt cfg = {
		.key = ld->key, .dns_proxy_port_be = htons(opts->dns_port),
		.log_allowed = opts->log_allowed, .audit = opts->audit,
		.deny_errno = opts->deny_errno, .slot = ld->slot,
	};

	memcpy(cfg.pin_ports, opts->pin_ports, sizeof(cfg.pin_ports));
	memcpy(cfg.http_ports, opts->http_ports, sizeof(cfg.http_ports));

	if (opts->dns_ip6_loopback) {
		cfg.dns_proxy_ip6[3] = htonl(1);		/* ::1 */
	} else {
		cfg.dns_proxy_ip6[2] = htonl(0xffff);	/* ::ffff:127.0.0.1 */
		cfg.dns_proxy_ip6[3] = htonl(0x7f000001);
	}
	if (bpf_map_update_elem(ld->maps[LOADER_ATTEMPT], &ld->key, &cfg, BPF_ANY) < 0) {
		*ret_step = "configure BPF programs (the attempt's cgroup storage)";
		return -errno;
	}
	return 0;
}

struct allow_maps loader_allow_maps(struct loader *ld)
{
	return (struct allow_maps){
		.attempt = ld->key,
		.quota = &ld->quota,
		.allow4 = ld->maps[LOADER_ALLOW4],
		.allow6 = ld->maps[LOADER_ALLOW6],
		.cidr4 = ld->maps[LOADER_CIDR4],
		.cidr6 = ld->maps[LOADER_CIDR6],
		.names = ld->maps[LOADER_NAMES],
		.pins = ld->maps[LOADER_PINS],
		.dest_counts = ld->maps[LOADER_DEST_COUNTS],
		.dests = &ld->dests,
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
		      bool with_unix, const char **ret_step)
{
	int n = with_unix ? LOADER_NPROGS : LOADER_NMAIN_PROGS;
	char path[PATH_MAX];

	if (with_unix && ld->progs[LOADER_UNIX_CONNECT] < 0) {
		*ret_step = "attach the unix socket programs (not loaded: Linux 6.7+ and kernel BTF needed)";
		return -EOPNOTSUPP;
	}
	/* Links first: if egret dies from here on, the pins keep every
	 * attached program enforcing until `egret gc` removes the cgroup. */
	for (int i = 0; i < n; i++) {
		int fd;

		if (!loader_prog_per_cgroup(i))
			continue;
		fd = bpf_link_create(ld->progs[i], cgroup_fd, loader_progs[i].type, NULL);
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
	return 0;
}

int loader_open_pins(struct loader *ld, const char *pin_dir, __u64 key)
{
	char path[PATH_MAX];

	ld->key = key;
	for (int i = 0; i < LOADER_NMAPS; i++) {
		if (path_fmt(path, sizeof(path), "%s/%s", pin_dir, loader_map_names[i]) < 0)
			return -ENAMETOOLONG;
		ld->maps[i] = bpf_obj_get(path);
		/* Absent: the unix names of a set without them; the slot's
		 * maps of an attempt cut short before it had one (its users
		 * fail on the fd then). */
		if (ld->maps[i] < 0 && !((i == LOADER_UNIX_ALLOW || i >= LOADER_NSHARED) &&
					 errno == ENOENT))
			return -errno;
	}
	return 0;
}

/* Give back the slots (one, unless something went wrong) @key holds. */
static int release_slots(int slots, __u64 key)
{
	__u32 cur, next;
	__u64 holder;
	int more, r = 0;

	if (slots < 0)
		return 0;
	more = bpf_map_get_next_key(slots, NULL, &cur) == 0;
	while (more) {
		more = bpf_map_get_next_key(slots, &cur, &next) == 0;
		if (bpf_map_lookup_elem(slots, &cur, &holder) == 0 && holder == key &&
		    bpf_map_delete_elem(slots, &cur) < 0 && errno != ENOENT && !r)
			r = -errno;
		cur = next;
	}
	return r;
}

int loader_forget(struct loader *ld)
{
	struct allow_maps maps = loader_allow_maps(ld);
	int r = allow_purge(&maps), n;

	n = allow_keyed_walk(ld->maps[LOADER_UNIX_ALLOW], sizeof(struct egret_unix_key),
			     0, ld->key, false);
	if (n < 0 && !r)
		r = n;
	/* Its ring and counts stay made, for the next holder to empty. */
	n = release_slots(ld->maps[LOADER_SLOTS], ld->key);
	if (n < 0 && !r)
		r = n;
	return r;
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
	if (ld->set_lock >= 0)
		close(ld->set_lock);
	dests_free(&ld->dests);
	loader_init(ld);
}

/* The objects, egret's version and libbpf's: what made a set. Hashed
 * once per process. */
void loader_object_tag(char *buf, size_t len)
{
	static char tag[17];

	if (!tag[0]) {
		size_t sz = 0, usz = 0, tsz = 0;
		const void *obj = egret_bpf__elf_bytes(&sz);
		const void *uobj = egret_unix_bpf__elf_bytes(&usz);
		const void *tobj = egret_tasks_bpf__elf_bytes(&tsz);
		const char *lib = libbpf_version_string();
		uint64_t h = FNV1A_INIT;

		h = fnv1a(h, obj, sz);
		h = fnv1a(h, uobj, usz);
		h = fnv1a(h, tobj, tsz);
		h = fnv1a(h, EGRET_VERSION, strlen(EGRET_VERSION));
		h = fnv1a(h, lib, strlen(lib));
		snprintf(tag, sizeof(tag), "%016llx", (unsigned long long)h);
	}
	snprintf(buf, len, "%s", tag);
}
