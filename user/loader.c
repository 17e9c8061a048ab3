// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader.h"
#include "egret.skel.h"

int loader_load(struct loader *ld, const struct loader_opts *opts)
{
	struct egret_bpf *skel;
	int r;

	skel = egret_bpf__open();
	if (!skel) {
		ld->failed_step = "open BPF object";
		return -errno;
	}
	ld->skel = skel;
	if (bpf_map__set_max_entries(skel->maps.egret_allow4, opts->max_entries) ||
	    bpf_map__set_max_entries(skel->maps.egret_allow6, opts->max_entries) ||
	    bpf_map__set_max_entries(skel->maps.egret_cidr4, opts->max_cidrs) ||
	    bpf_map__set_max_entries(skel->maps.egret_cidr6, opts->max_cidrs) ||
	    bpf_map__set_max_entries(skel->maps.egret_names, 2 * opts->max_entries)) {
		ld->failed_step = "size BPF maps";
		return -EINVAL;
	}
	/* Where the programs send DNS: read-only data, fixed at load. */
	skel->rodata->dns_proxy_port_be = htons(opts->dns_port);
	if (opts->dns_ip6_loopback) {
		skel->rodata->dns_proxy_ip6[3] = htonl(1);	/* ::1 */
	} else {
		skel->rodata->dns_proxy_ip6[2] = htonl(0xffff);	/* ::ffff:127.0.0.1 */
		skel->rodata->dns_proxy_ip6[3] = htonl(0x7f000001);
	}
	skel->rodata->log_allowed = opts->log_allowed;
	skel->rodata->audit = opts->audit;
	r = egret_bpf__load(skel);
	if (r < 0) {
		ld->failed_step = "load BPF programs";
		return r;
	}
	return 0;
}

struct allow_maps loader_allow_maps(const struct loader *ld)
{
	return (struct allow_maps){
		.allow4 = bpf_map__fd(ld->skel->maps.egret_allow4),
		.allow6 = bpf_map__fd(ld->skel->maps.egret_allow6),
		.cidr4 = bpf_map__fd(ld->skel->maps.egret_cidr4),
		.cidr6 = bpf_map__fd(ld->skel->maps.egret_cidr6),
		.names = bpf_map__fd(ld->skel->maps.egret_names),
	};
}

int loader_events_fd(const struct loader *ld)
{
	return bpf_map__fd(ld->skel->maps.egret_events);
}

int loader_counters_fd(const struct loader *ld)
{
	return bpf_map__fd(ld->skel->maps.egret_counters);
}

int loader_attach_pin(struct loader *ld, int cgroup_fd, const char *pin_dir)
{
	struct bpf_program *prog;
	struct bpf_map *map;
	char path[PATH_MAX];
	int r;

	/* Links first: if egret dies from here on, the pins keep every
	 * attached program enforcing until `egret gc` removes the cgroup. */
	bpf_object__for_each_program(prog, ld->skel->obj) {
		struct bpf_link *link;

		if (ld->nlinks == LOADER_MAX_LINKS) {
			ld->failed_step = "attach BPF programs";
			return -E2BIG;
		}
		link = bpf_program__attach_cgroup(prog, cgroup_fd);
		if (!link) {
			ld->failed_step = "attach BPF program to cgroup";
			return -errno;
		}
		ld->links[ld->nlinks++] = link;
		snprintf(path, sizeof(path), "%s/link_%s", pin_dir,
			 bpf_program__name(prog));
		r = bpf_link__pin(link, path);
		if (r < 0) {
			ld->failed_step = "pin BPF link";
			return r;
		}
	}
	bpf_object__for_each_map(map, ld->skel->obj) {
		/* Skip internal maps (.rodata, .bss): nothing to inspect. */
		if (strchr(bpf_map__name(map), '.'))
			continue;
		snprintf(path, sizeof(path), "%s/%s", pin_dir,
			 bpf_map__name(map));
		r = bpf_map__pin(map, path);
		if (r < 0) {
			ld->failed_step = "pin BPF map";
			return r;
		}
	}
	return 0;
}

void loader_destroy(struct loader *ld)
{
	int i;

	for (i = 0; i < ld->nlinks; i++)
		bpf_link__destroy(ld->links[i]);
	ld->nlinks = 0;
	egret_bpf__destroy(ld->skel);
	ld->skel = NULL;
}
