// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_hostaddr.c - which rtnetlink route messages become host-map entries. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "egret.h"
#include "enforce/hostaddr.h"

/* One route message: header, rtmsg, then attributes. */
struct msg {
	union {
		struct nlmsghdr nh;
		uint8_t b[256];
	};
	size_t len;
};

static void route(struct msg *m, int type, int family, int table, int dstlen,
		  int nltype)
{
	struct rtmsg *rtm;

	memset(m, 0, sizeof(*m));
	m->len = NLMSG_LENGTH(sizeof(*rtm));
	m->nh.nlmsg_type = (uint16_t)nltype;
	rtm = NLMSG_DATA(&m->nh);
	rtm->rtm_family = (uint8_t)family;
	rtm->rtm_type = (uint8_t)type;
	rtm->rtm_table = (uint8_t)table;
	rtm->rtm_dst_len = (uint8_t)dstlen;
	m->nh.nlmsg_len = (uint32_t)m->len;
}

static void attr(struct msg *m, int type, const void *data, size_t n)
{
	struct rtattr *rta = (struct rtattr *)(m->b + NLMSG_ALIGN(m->len));

	rta->rta_type = (uint16_t)type;
	rta->rta_len = (uint16_t)RTA_LENGTH(n);
	memcpy(RTA_DATA(rta), data, n);
	m->len = NLMSG_ALIGN(m->len) + RTA_ALIGN(rta->rta_len);
	m->nh.nlmsg_len = (uint32_t)m->len;
}

static void local_routes(void **state)
{
	struct hostaddr_route r;
	uint8_t a4[4], a6[16];
	uint32_t oif = 3, table = RT_TABLE_LOCAL;
	struct msg m;

	inet_pton(AF_INET, "192.0.2.2", a4);
	route(&m, RTN_LOCAL, AF_INET, RT_TABLE_LOCAL, 32, RTM_NEWROUTE);
	attr(&m, RTA_DST, a4, 4);
	attr(&m, RTA_OIF, &oif, 4);
	assert_int_equal(hostaddr_parse_route(m.b, m.len, &r), 1);
	assert_int_equal(r.family, AF_INET);
	assert_int_equal(r.prefixlen, 32);
	assert_int_equal(r.type, RTN_LOCAL);
	assert_memory_equal(r.addr, a4, 4);
	assert_int_equal(r.oif, 3);
	assert_int_equal(hostaddr_flag(r.type), EGRET_HOST_LOCAL);

	/* A table number above 255 comes in RTA_TABLE; the local one too. */
	inet_pton(AF_INET6, "2001:db8:1::2", a6);
	route(&m, RTN_ANYCAST, AF_INET6, RT_TABLE_COMPAT, 128, RTM_DELROUTE);
	attr(&m, RTA_TABLE, &table, 4);
	attr(&m, RTA_DST, a6, 16);
	assert_int_equal(hostaddr_parse_route(m.b, m.len, &r), 1);
	assert_int_equal(r.family, AF_INET6);
	assert_memory_equal(r.addr, a6, 16);
	assert_int_equal(hostaddr_flag(r.type), EGRET_HOST_ANYCAST);
	assert_int_equal(hostaddr_flag(RTN_BROADCAST), EGRET_HOST_BROADCAST);
}

static void other_routes_ignored(void **state)
{
	struct hostaddr_route r;
	uint8_t a4[4] = { 203, 0, 113, 0 };
	uint32_t main_table = RT_TABLE_MAIN;
	struct msg m;

	route(&m, RTN_UNICAST, AF_INET, RT_TABLE_LOCAL, 24, RTM_NEWROUTE);
	attr(&m, RTA_DST, a4, 4);
	assert_int_equal(hostaddr_parse_route(m.b, m.len, &r), 0);	/* unicast */
	route(&m, RTN_LOCAL, AF_INET, RT_TABLE_MAIN, 24, RTM_NEWROUTE);
	attr(&m, RTA_DST, a4, 4);
	assert_int_equal(hostaddr_parse_route(m.b, m.len, &r), 0);	/* main table */
	route(&m, RTN_LOCAL, AF_INET, RT_TABLE_LOCAL, 24, RTM_NEWROUTE);
	attr(&m, RTA_TABLE, &main_table, 4);
	attr(&m, RTA_DST, a4, 4);
	assert_int_equal(hostaddr_parse_route(m.b, m.len, &r), 0);	/* RTA_TABLE wins */
	route(&m, RTN_MULTICAST, AF_INET6, RT_TABLE_LOCAL, 8, RTM_NEWROUTE);
	assert_int_equal(hostaddr_parse_route(m.b, m.len, &r), 0);
	route(&m, RTN_LOCAL, AF_INET, RT_TABLE_LOCAL, 32, RTM_NEWLINK);
	assert_int_equal(hostaddr_parse_route(m.b, m.len, &r), 0);
}

static void malformed(void **state)
{
	struct hostaddr_route r;
	uint8_t a4[4] = { 192, 0, 2, 2 };
	struct msg m;

	route(&m, RTN_LOCAL, AF_INET, RT_TABLE_LOCAL, 33, RTM_NEWROUTE);
	attr(&m, RTA_DST, a4, 4);
	assert_int_equal(hostaddr_parse_route(m.b, m.len, &r), -EBADMSG);	/* /33 */
	route(&m, RTN_LOCAL, AF_INET, RT_TABLE_LOCAL, 32, RTM_NEWROUTE);
	assert_int_equal(hostaddr_parse_route(m.b, m.len, &r), -EBADMSG);	/* no dst */
	route(&m, RTN_LOCAL, AF_INET, RT_TABLE_LOCAL, 32, RTM_NEWROUTE);
	attr(&m, RTA_DST, a4, 4);
	assert_int_equal(hostaddr_parse_route(m.b, m.len - 1, &r), -EBADMSG);	/* cut */
	assert_int_equal(hostaddr_parse_route(m.b, 8, &r), -EBADMSG);
	/* A v4 address in a v6 route is no destination at all. */
	route(&m, RTN_LOCAL, AF_INET6, RT_TABLE_LOCAL, 128, RTM_NEWROUTE);
	attr(&m, RTA_DST, a4, 4);
	assert_int_equal(hostaddr_parse_route(m.b, m.len, &r), -EBADMSG);
}

/* hostaddr_has() answers as egret_host4/6 would: inside a kept prefix or
 * not, bit by bit at the prefix's edge. */
static void has_prefixes(void **state)
{
	struct hostaddr_route routes[3] = {
		{ .family = AF_INET, .prefixlen = 8, .type = RTN_LOCAL },
		{ .family = AF_INET, .prefixlen = 32, .type = RTN_BROADCAST },
		{ .family = AF_INET6, .prefixlen = 128, .type = RTN_LOCAL },
	};
	struct hostaddr h = { .routes = routes, .nroutes = 3 };
	uint32_t a;
	uint8_t a6[16];

	(void)state;
	inet_pton(AF_INET, "127.0.0.0", &routes[0].addr[0]);
	inet_pton(AF_INET, "192.0.2.255", &routes[1].addr[0]);
	inet_pton(AF_INET6, "2001:db8:1::2", routes[2].addr);
	inet_pton(AF_INET, "127.200.1.1", &a);
	assert_true(hostaddr_has(&h, AF_INET, &a));
	inet_pton(AF_INET, "128.0.0.1", &a);
	assert_false(hostaddr_has(&h, AF_INET, &a));
	inet_pton(AF_INET, "192.0.2.255", &a);
	assert_true(hostaddr_has(&h, AF_INET, &a));
	inet_pton(AF_INET, "192.0.2.254", &a);
	assert_false(hostaddr_has(&h, AF_INET, &a));
	inet_pton(AF_INET6, "2001:db8:1::2", a6);
	assert_true(hostaddr_has(&h, AF_INET6, a6));
	inet_pton(AF_INET6, "2001:db8:1::3", a6);
	assert_false(hostaddr_has(&h, AF_INET6, a6));
	/* An IPv4 prefix never answers for IPv6, nor the other way. */
	memset(a6, 0, sizeof(a6));
	memcpy(a6, &routes[0].addr[0], 4);
	assert_false(hostaddr_has(&h, AF_INET6, a6));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(local_routes),
		cmocka_unit_test(has_prefixes),
		cmocka_unit_test(other_routes_ignored),
		cmocka_unit_test(malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
