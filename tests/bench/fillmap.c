/* fillmap.c - grow an attempt's share of the pinned IPv6 exact-address
 * allow map.
 * Usage: fillmap PINNED_MAP CGROUP TARGET_V6 TOTAL
 * Copies the value of TARGET_V6's entry of the attempt of CGROUP (its key
 * is the cgroup's id, the directory's inode number: include/egret.h) into
 * TOTAL-1 filler keys 2001:db8:ff:H::L of that attempt (documentation
 * prefix, never contacted), so the attempt then holds TOTAL entries.
 * egret's own command line takes at most 4096 static specs, so the bench
 * fills the map from outside, the same way egret's DNS proxy writes it. */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct key6 {			/* struct egret_key6 */
	__u64 attempt;
	unsigned char addr[16];
};

int main(int argc, char **argv)
{
	struct bpf_map_info info = {0};
	__u32 ilen = sizeof(info);
	unsigned char val[4096];
	struct key6 key = {0};
	struct stat st;
	long i, total;
	int fd;

	if (argc != 5)
		return 2;
	total = atol(argv[4]);
	fd = bpf_obj_get(argv[1]);
	if (fd < 0 || stat(argv[2], &st) || bpf_obj_get_info_by_fd(fd, &info, &ilen) ||
	    info.key_size != sizeof(key) || info.value_size > sizeof(val) ||
	    inet_pton(AF_INET6, argv[3], key.addr) != 1) {
		perror("fillmap");
		return 1;
	}
	key.attempt = (__u64)st.st_ino;
	if (bpf_map_lookup_elem(fd, &key, val)) {
		perror("fillmap: the target's entry");
		return 1;
	}
	for (i = 0; i < total - 1; i++) {
		memset(key.addr, 0, sizeof(key.addr));
		key.addr[0] = 0x20; key.addr[1] = 0x01; key.addr[2] = 0x0d; key.addr[3] = 0xb8;
		key.addr[4] = 0x00; key.addr[5] = 0xff;
		key.addr[6] = (i >> 24) & 0xff; key.addr[7] = (i >> 16) & 0xff;
		key.addr[14] = (i >> 8) & 0xff; key.addr[15] = i & 0xff;
		if (bpf_map_update_elem(fd, &key, val, BPF_NOEXIST)) {
			fprintf(stderr, "fillmap: entry %ld of %ld: ", i + 2, total);
			perror("");
			return 1;
		}
	}
	printf("filled %ld (the map's max_entries %u)\n", total, info.max_entries);
	return 0;
}
