// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util.h"
#include "requests/sockowner.h"

/*
 * /proc/net/udp prints each 32-bit word of the address as the CPU reads
 * it ("%08X"), and the port in host order. A socket that sent without
 * binding shows the wildcard address: the port alone then identifies it.
 */
static bool local_matches(const char *field, const struct sockaddr *peer)
{
	uint32_t want[4] = {}, got[4] = {};
	unsigned int port, nwords = peer->sa_family == AF_INET ? 1 : 4;
	uint16_t want_port;
	bool wildcard = true;
	const char *colon = strchr(field, ':');

	if (!colon || (size_t)(colon - field) != nwords * 8)
		return false;
	for (unsigned int i = 0; i < nwords; i++) {
		char word[9];

		memcpy(word, field + 8 * i, 8);
		word[8] = '\0';
		got[i] = (uint32_t)strtoul(word, NULL, 16);
		wildcard = wildcard && got[i] == 0;
	}
	if (sscanf(colon + 1, "%x", &port) != 1)
		return false;
	if (peer->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)peer;

		memcpy(want, &in->sin_addr, 4);
		want_port = ntohs(in->sin_port);
	} else {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)peer;

		memcpy(want, &in6->sin6_addr, 16);
		want_port = ntohs(in6->sin6_port);
	}
	return port == want_port &&
	       (wildcard || !memcmp(want, got, nwords * sizeof(uint32_t)));
}

static int find_inode(const struct sockaddr *peer, bool tcp, unsigned long *ret)
{
	char path[32], line[512], local[64];
	_cleanup_fclose_ FILE *f = NULL;
	unsigned long inode;

	snprintf(path, sizeof(path), "/proc/net/%s%s", tcp ? "tcp" : "udp",
		 peer->sa_family == AF_INET6 ? "6" : "");
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f))	/* the header */
		return -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		/* sl local rem st tx:rx tr:when retr uid timeout inode */
		if (sscanf(line, " %*s %63s %*s %*s %*s %*s %*s %*s %*s %lu",
			   local, &inode) != 2)
			continue;
		if (inode && local_matches(local, peer)) {
			*ret = inode;
			return 0;
		}
	}
	return -ENOENT;
}

static bool pid_holds(pid_t pid, const char *want, unsigned int *budget)
{
	char path[64], link[64];
	_cleanup_(closedirp) DIR *d = NULL;
	struct dirent *de;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	while (d && (de = readdir(d)) && *budget) {
		char fdpath[sizeof(path) + sizeof(de->d_name) + 1];
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		(*budget)--;
		snprintf(fdpath, sizeof(fdpath), "%s/%s", path, de->d_name);
		n = readlink(fdpath, link, sizeof(link) - 1);
		if (n > 0) {
			link[n] = '\0';
			if (!strcmp(link, want))
				return true;
		}
	}
	return false;
}

int sock_owner_find(const char *cgroup, const struct sockaddr *peer, bool tcp,
		    uint32_t *ret_pid, char *comm, size_t commlen)
{
	char path[4200], want[48];
	_cleanup_fclose_ FILE *procs = NULL;
	unsigned int budget = SOCKOWNER_MAX_FDS;
	unsigned long inode = 0;
	int pid, r;

	if (peer->sa_family != AF_INET && peer->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	r = find_inode(peer, tcp, &inode);
	if (r < 0)
		return r;
	snprintf(want, sizeof(want), "socket:[%lu]", inode);
	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
	procs = fopen(path, "re");
	if (!procs)
		return -errno;
	while (budget && fscanf(procs, "%d", &pid) == 1) {
		_cleanup_fclose_ FILE *c = NULL;

		budget--;	/* a pid costs an opendir even without fds */
		if (!pid_holds(pid, want, &budget))
			continue;
		*ret_pid = (uint32_t)pid;
		comm[0] = '\0';
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		c = fopen(path, "re");
		if (c && fgets(comm, (int)commlen, c))
			comm[strcspn(comm, "\n")] = '\0';
		return 0;
	}
	return -ENOENT;
}
