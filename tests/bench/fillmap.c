/* fillmap.c - grow an attempt's pinned IPv6 exact-address allow map.
 * Usage: fillmap PINNED_MAP TARGET_V6 TOTAL
 * Copies TARGET_V6's value into TOTAL-1 filler keys 2001:db8:ff:H::L
 * (documentation prefix, never contacted), so the map then holds TOTAL
 * entries. egret's own command line takes at most 4096 static specs, so the
 * bench fills the map from outside, the same way egret's DNS proxy writes it. */
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	unsigned char key[16], val[4096];
	struct bpf_map_info info = {0};
	__u32 ilen = sizeof(info);
	long i, total;
	int fd;

	if (argc != 4)
		return 2;
	total = atol(argv[3]);
	fd = bpf_obj_get(argv[1]);
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &ilen) ||
	    info.key_size != 16 || info.value_size > sizeof(val) ||
	    inet_pton(AF_INET6, argv[2], key) != 1 ||
	    bpf_map_lookup_elem(fd, key, val)) {
		perror("fillmap");
		return 1;
	}
	for (i = 0; i < total - 1; i++) {
		memset(key, 0, sizeof(key));
		key[0] = 0x20; key[1] = 0x01; key[2] = 0x0d; key[3] = 0xb8;
		key[4] = 0x00; key[5] = 0xff;
		key[6] = (i >> 24) & 0xff; key[7] = (i >> 16) & 0xff;
		key[14] = (i >> 8) & 0xff; key[15] = i & 0xff;
		if (bpf_map_update_elem(fd, key, val, BPF_NOEXIST)) {
			fprintf(stderr, "fillmap: entry %ld of %ld: ", i + 2, total);
			perror("");
			return 1;
		}
	}
	printf("filled %ld (max_entries %u)\n", total, info.max_entries);
	return 0;
}
