// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * enforce/sockkill.c - destroying an attempt's TCP sockets before its
 * programs are detached.
 *
 * A socket outlives the process that closed it while it still has data to
 * send, and its segments go out with whatever programs are attached then.
 * A pinned connection whose first record the backstop refused keeps that
 * record in its send queue and retransmits it; detached, the next try
 * would leave unjudged (bpf/lib/pin.h). So teardown asks the kernel to
 * destroy (SOCK_DESTROY, as `ss -K` does) every TCP socket whose cgroup is
 * the attempt's, first.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>

#include "enforce/sockkill.h"
#include "lib/util.h"

#ifndef INET_DIAG_CGROUP_ID
#define INET_DIAG_CGROUP_ID	21	/* Linux 5.10 */
#endif

struct diag_req {
	struct nlmsghdr nlh;
	struct inet_diag_req_v2 req;
};

static int diag_send(int fd, __u16 type, __u16 flags, const struct inet_diag_req_v2 *req)
{
	struct diag_req msg = {
		.nlh = { .nlmsg_len = sizeof(msg), .nlmsg_type = type,
			 .nlmsg_flags = (__u16)(NLM_F_REQUEST | flags) },
		.req = *req,
	};

	return send(fd, &msg, sizeof(msg), 0) < 0 ? -errno : 0;
}

/* The cgroup id the dump gave @m, or 0 (an attribute-less kernel). */
static __u64 msg_cgroup(const struct nlmsghdr *h)
{
	const struct inet_diag_msg *m = NLMSG_DATA(h);
	int len = (int)h->nlmsg_len - NLMSG_LENGTH(sizeof(*m));
	const struct nlattr *a = (const struct nlattr *)(m + 1);
	__u64 id = 0;

	while (len >= (int)sizeof(*a) && a->nla_len >= sizeof(*a) && a->nla_len <= len) {
		if ((a->nla_type & NLA_TYPE_MASK) == INET_DIAG_CGROUP_ID &&
		    a->nla_len >= NLA_HDRLEN + sizeof(id))
			memcpy(&id, (const char *)a + NLA_HDRLEN, sizeof(id));
		len -= NLA_ALIGN(a->nla_len);
		a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
	return id;
}

static __u64 id_cookie(const struct inet_diag_sockid *id)
{
	return (__u64)id->idiag_cookie[1] << 32 | id->idiag_cookie[0];
}

/* The sockets of one family whose cgroup is @cgroup_id (and, unless 0,
 * whose cookie is @cookie), by their ids: the first @max, the whole dump
 * read (*@more: there were others). */
static int dump_family(int fd, int family, __u64 cgroup_id, __u64 cookie,
		       struct inet_diag_sockid *ids, int max, int *n, bool *more)
{
	struct inet_diag_req_v2 req = { .sdiag_family = (__u8)family,
					.sdiag_protocol = IPPROTO_TCP, .idiag_states = ~0U };
	char buf[16384];
	int r;

	r = diag_send(fd, SOCK_DIAG_BY_FAMILY, NLM_F_DUMP, &req);
	if (r < 0)
		return r;
	for (;;) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		if (len < 0)
			return -errno;
		for (; NLMSG_OK(h, (size_t)len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				return e->error ? e->error : -EPROTO;
			}
			if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
			    msg_cgroup(h) != cgroup_id ||
			    (cookie && id_cookie(&((const struct inet_diag_msg *)
						   NLMSG_DATA(h))->id) != cookie))
				continue;
			if (*n == max) {
				*more = true;
				continue;
			}
			ids[(*n)++] = ((const struct inet_diag_msg *)NLMSG_DATA(h))->id;
		}
	}
}

static int destroy_one(int fd, int family, const struct inet_diag_sockid *id)
{
	struct inet_diag_req_v2 req = { .sdiag_family = (__u8)family,
					.sdiag_protocol = IPPROTO_TCP, .idiag_states = ~0U,
					.id = *id };
	struct {
		struct nlmsghdr nlh;
		struct nlmsgerr err;
	} ack;
	int r = diag_send(fd, SOCK_DESTROY, NLM_F_ACK, &req);

	if (r < 0)
		return r;
	if (recv(fd, &ack, sizeof(ack), 0) < (ssize_t)sizeof(ack.nlh))
		return -EPROTO;
	/* Gone meanwhile is as good as destroyed. */
	if (ack.nlh.nlmsg_type == NLMSG_ERROR && ack.err.error && ack.err.error != -ENOENT)
		return ack.err.error;
	return 0;
}

#define SOCKKILL_MAX	4096	/* per family and pass */

int sockets_destroy_cgroup(__u64 cgroup_id)
{
	static struct inet_diag_sockid ids[SOCKKILL_MAX];
	static const int families[] = { AF_INET, AF_INET6 };
	_cleanup_close_ int fd = -1;
	int total = 0, first = 0;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	for (size_t f = 0; f < ARRAY_SIZE(families); f++) {
		bool more;
		int done;

		/* More than one pass holds: again, while passes destroy some. */
		do {
			int n = 0, r;

			more = false;
			done = 0;
			r = dump_family(fd, families[f], cgroup_id, 0, ids, SOCKKILL_MAX,
					&n, &more);
			if (r < 0)
				return r;
			for (int i = 0; i < n; i++) {
				int d = destroy_one(fd, families[f], &ids[i]);

				if (d < 0 && !first)
					first = d;
				else if (d == 0)
					done++;
			}
			total += done;
		} while (more && done > 0);
	}
	return first ? first : total;
}

int sockets_destroy_cookie(__u64 cgroup_id, __u64 cookie)
{
	static const int families[] = { AF_INET, AF_INET6 };
	struct inet_diag_sockid id;
	_cleanup_close_ int fd = -1;
	bool more = false;
	int r;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	for (size_t f = 0; f < ARRAY_SIZE(families); f++) {
		int n = 0;

		r = dump_family(fd, families[f], cgroup_id, cookie, &id, 1, &n, &more);
		if (r < 0)
			return r;
		if (n) {
			r = destroy_one(fd, families[f], &id);
			return r < 0 ? r : 1;
		}
	}
	return 0;
}

int sockets_destroy_probe(void)
{
	static int known = 1;
	struct inet_diag_sockid none = { .idiag_cookie = { INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE } };
	_cleanup_close_ int fd = -1;
	int r;

	if (known <= 0)
		return known;
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return known = -errno;
	/* No socket has that id: ENOENT (taken as done) where the kernel
	 * can destroy sockets, EOPNOTSUPP where it cannot. */
	r = destroy_one(fd, AF_INET, &none);
	return known = r;
}
