// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * enforce/loader.c - the tables of egret's programs and maps, and one
 * attempt's use of the set: its maps pinned, its programs attached, its
 * settings written, its entries forgotten. Loading the set is
 * objects.c's, the attempt's slot slots.c's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "enforce/loader_impl.h"
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
	[LOADER_DEST_TALLY] = "egret_dest_tally", [LOADER_ADDR_DEST] = "egret_addr_dest",
	[LOADER_PIN_BUFS] = "egret_pin_bufs", [LOADER_PIN_BUF_SOCK] = "egret_pin_buf_sock",
	[LOADER_EVENTS] = "egret_events", [LOADER_REPEATS] = "egret_repeats",
};

void loader_init(struct loader *ld)
{
	memset(ld, 0, sizeof(*ld));
	ld->set_lock = -1;
	dests_init(&ld->dests, -1, -1, 0, 0, 0);
	for (int i = 0; i < LOADER_NPROGS; i++)
		ld->progs[i] = ld->links[i] = -1;
	for (int i = 0; i < LOADER_NMAPS; i++)
		ld->maps[i] = -1;
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
	/* Counted from here, before the attempt's first entry. */
	ld->quota = (struct allow_quota){ .max_entries = opts->max_entries,
					  .max_cidrs = opts->max_cidrs, .counted = true };
	/* The set's maps first: a teardown that finds them gives back a
	 * slot claimed after them, even before its own maps are pinned. */
	r = pin_maps(ld, pin_dir, 0, LOADER_NSHARED);
	if (r < 0) {
		*ret_step = "pin BPF map";
		return r;
	}
	r = loader_slot_claim(ld);
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
		.dest_tally = ld->maps[LOADER_DEST_TALLY],
		.addr_dest = ld->maps[LOADER_ADDR_DEST],
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
		*ret_step = "attach the unix socket programs "
			    "(not loaded: Linux 6.7+ and kernel BTF needed)";
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
		/* Absent: the unix names of a set without them; the pin
		 * buffers of an attempt an older egret made (no user space
		 * reads them); the slot's maps of an attempt cut short before
		 * it had one (its users fail on the fd then). */
		if (ld->maps[i] < 0 && !((i == LOADER_UNIX_ALLOW || i == LOADER_PIN_BUFS ||
					  i == LOADER_PIN_BUF_SOCK || i >= LOADER_NSHARED) &&
					 errno == ENOENT))
			return -errno;
	}
	return 0;
}

int loader_forget(struct loader *ld, bool no_sockets)
{
	struct allow_maps maps = loader_allow_maps(ld);
	int r, n;

	if (no_sockets)
		maps.addr_dest = -1;
	r = allow_purge(&maps);

	n = allow_keyed_walk(ld->maps[LOADER_UNIX_ALLOW], sizeof(struct egret_unix_key),
			     0, ld->key, false);
	if (n < 0 && !r)
		r = n;
	/* Its ring and counts stay made, for the next holder to empty. */
	n = loader_slots_release(ld->maps[LOADER_SLOTS], ld->key);
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
