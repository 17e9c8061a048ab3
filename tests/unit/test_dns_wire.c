// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_dns_wire.c - bounded DNS parsing and the replies egret builds. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "dns/wire.h"

/* A tiny message builder: header, names, records. */
struct msg {
	uint8_t b[1024];
	size_t len;
};

static void put8(struct msg *m, uint8_t v)
{
	m->b[m->len++] = v;
}

static void put16(struct msg *m, uint16_t v)
{
	put8(m, (uint8_t)(v >> 8));
	put8(m, (uint8_t)v);
}

static void put32(struct msg *m, uint32_t v)
{
	put16(m, (uint16_t)(v >> 16));
	put16(m, (uint16_t)v);
}

static void put_name(struct msg *m, const char *name)
{
	while (*name) {
		const char *dot = strchr(name, '.');
		size_t l = dot ? (size_t)(dot - name) : strlen(name);

		put8(m, (uint8_t)l);
		memcpy(m->b + m->len, name, l);
		m->len += l;
		name += l + (dot ? 1 : 0);
	}
	put8(m, 0);
}

static void header(struct msg *m, uint16_t id, uint16_t flags, uint16_t qd,
		   uint16_t an)
{
	m->len = 0;
	put16(m, id);
	put16(m, flags);
	put16(m, qd);
	put16(m, an);
	put16(m, 0);
	put16(m, 0);
}

static void question(struct msg *m, const char *name, uint16_t type)
{
	put_name(m, name);
	put16(m, type);
	put16(m, DNS_CLASS_IN);
}

/* A record whose owner is a pointer to offset 12 (the question's name). */
static void rr_ptr(struct msg *m, uint16_t type, uint32_t ttl,
		   const void *rdata, uint16_t rdlen)
{
	put16(m, 0xc00c);
	put16(m, type);
	put16(m, DNS_CLASS_IN);
	put32(m, ttl);
	put16(m, rdlen);
	memcpy(m->b + m->len, rdata, rdlen);
	m->len += rdlen;
}

static void rr_named(struct msg *m, const char *owner, uint16_t type,
		     uint32_t ttl, const void *rdata, uint16_t rdlen)
{
	put_name(m, owner);
	put16(m, type);
	put16(m, DNS_CLASS_IN);
	put32(m, ttl);
	put16(m, rdlen);
	memcpy(m->b + m->len, rdata, rdlen);
	m->len += rdlen;
}

/* An EDNS OPT record: root owner, payload @size, TTL word @ttl (DO). */
static void opt_rr(struct msg *m, uint16_t size, uint32_t ttl)
{
	put8(m, 0);
	put16(m, DNS_TYPE_OPT);
	put16(m, size);
	put32(m, ttl);
	put16(m, 0);
}

static struct dns_question query_of(const char *name, uint16_t type)
{
	struct dns_question q;
	struct msg m;

	header(&m, 0xbeef, 0x0100, 1, 0);
	question(&m, name, type);
	assert_int_equal(dns_parse_query(m.b, m.len, &q), 0);
	return q;
}

static void parse_query(void **state)
{
	struct dns_question q;
	struct msg m;

	header(&m, 0x1234, 0x0100, 1, 0);
	question(&m, "GitHub.COM", DNS_TYPE_AAAA);
	assert_int_equal(dns_parse_query(m.b, m.len, &q), 0);
	assert_int_equal(q.id, 0x1234);
	assert_string_equal(q.name, "github.com");	/* lower-cased */
	assert_int_equal(q.type, DNS_TYPE_AAAA);
	assert_int_equal(q.qclass, DNS_CLASS_IN);
	assert_int_equal(q.end, m.len);

	/* Root name. */
	header(&m, 1, 0x0100, 1, 0);
	question(&m, "", 2);
	assert_int_equal(dns_parse_query(m.b, m.len, &q), 0);
	assert_string_equal(q.name, "");
}

static void reject_queries(void **state)
{
	struct dns_question q;
	struct msg m;

	/* Too short, a response, two questions, another opcode. */
	header(&m, 1, 0x0100, 1, 0);
	assert_int_equal(dns_parse_query(m.b, 11, &q), -EBADMSG);
	header(&m, 1, 0x8100, 1, 0);
	question(&m, "a.test", 1);
	assert_int_equal(dns_parse_query(m.b, m.len, &q), -EBADMSG);
	header(&m, 1, 0x0100, 2, 0);
	question(&m, "a.test", 1);
	question(&m, "b.test", 1);
	assert_int_equal(dns_parse_query(m.b, m.len, &q), -EOPNOTSUPP);
	header(&m, 1, 0x2900, 1, 0);	/* opcode UPDATE */
	question(&m, "a.test", 1);
	assert_int_equal(dns_parse_query(m.b, m.len, &q), -EOPNOTSUPP);

	/* Truncated question: name, then type/class cut off. */
	header(&m, 1, 0x0100, 1, 0);
	question(&m, "a.test", 1);
	assert_int_equal(dns_parse_query(m.b, m.len - 1, &q), -EBADMSG);
	assert_int_equal(dns_parse_query(m.b, 14, &q), -EBADMSG);

	/* A label with a dot or binary inside would print as another name. */
	header(&m, 1, 0x0100, 1, 0);
	put8(&m, 10);
	memcpy(m.b + m.len, "github.com", 10);
	m.len += 10;
	put8(&m, 0);
	put16(&m, 1);
	put16(&m, 1);
	assert_int_equal(dns_parse_query(m.b, m.len, &q), -EBADMSG);

	/* Label types 0x40/0x80 are obsolete. */
	header(&m, 1, 0x0100, 1, 0);
	put8(&m, 0x41);
	put8(&m, 0);
	assert_int_equal(dns_parse_query(m.b, m.len, &q), -EBADMSG);
}

static void name_limits(void **state)
{
	char name[DNS_NAME_MAX + 1], big[300];
	struct msg m;
	size_t next;

	/* 253 characters is the longest name; 255 is too long. */
	memset(big, 'a', sizeof(big));
	for (int i = 63; i < 300; i += 64)
		big[i] = '.';
	big[253] = '\0';
	header(&m, 1, 0x0100, 1, 0);
	put_name(&m, big);
	assert_int_equal(dns_read_name(m.b, m.len, 12, name, &next), 0);
	assert_int_equal(strlen(name), 253);
	big[253] = 'a';
	big[255] = '\0';
	header(&m, 1, 0x0100, 1, 0);
	put_name(&m, big);
	assert_int_equal(dns_read_name(m.b, m.len, 12, name, &next), -EBADMSG);
}

static void compression_pointers(void **state)
{
	char name[DNS_NAME_MAX + 1];
	struct msg m;
	size_t next;

	/* A pointer to itself, and a forward pointer: both refused. */
	header(&m, 1, 0x0100, 1, 0);
	put16(&m, 0xc00c);
	assert_int_equal(dns_read_name(m.b, m.len, 12, name, &next), -EBADMSG);
	header(&m, 1, 0x0100, 1, 0);
	put16(&m, 0xc00e);
	put8(&m, 0);
	assert_int_equal(dns_read_name(m.b, m.len, 12, name, &next), -EBADMSG);
	/* A pointer into the header. */
	header(&m, 1, 0x0100, 1, 0);
	put16(&m, 0xc002);
	assert_int_equal(dns_read_name(m.b, m.len, 12, name, &next), -EBADMSG);
	/* A backward pointer is followed; next is after the pointer. */
	header(&m, 1, 0x0100, 1, 0);
	put_name(&m, "example.net");		/* at 12 */
	put8(&m, 3);
	memcpy(m.b + m.len, "cdn", 3);
	m.len += 3;
	put16(&m, 0xc00c);
	assert_int_equal(dns_read_name(m.b, m.len, 25, name, &next), 0);
	assert_string_equal(name, "cdn.example.net");
	assert_int_equal(next, m.len);
	/* A truncated pointer. */
	assert_int_equal(dns_read_name(m.b, m.len - 1, 25, name, &next), -EBADMSG);
}

static void collect_a_and_cname_chain(void **state)
{
	struct dns_question q = query_of("www.github.com", DNS_TYPE_A);
	struct dns_addr addrs[DNS_MAX_ADDRS];
	uint8_t a1[4] = { 203, 0, 113, 10 }, a2[4] = { 203, 0, 113, 11 };
	uint8_t other[4] = { 198, 51, 100, 7 };
	uint8_t target[64];
	struct msg m, t;

	/* Records out of order: the address first, the CNAME last; plus an
	 * address owned by a name off the chain, which must not count. */
	header(&m, 0xbeef, 0x8180, 1, 4);
	question(&m, "www.github.com", DNS_TYPE_A);
	rr_named(&m, "GitHub.com", DNS_TYPE_A, 60, a1, 4);
	rr_named(&m, "evil.test", DNS_TYPE_A, 60, other, 4);
	rr_named(&m, "github.com", DNS_TYPE_A, 30, a2, 4);
	t.len = 0;
	put_name(&t, "github.com");
	memcpy(target, t.b, t.len);
	rr_ptr(&m, DNS_TYPE_CNAME, 300, target, (uint16_t)t.len);

	assert_int_equal(dns_collect_addrs(m.b, m.len, &q, addrs, DNS_MAX_ADDRS), 2);
	assert_int_equal(addrs[0].family, AF_INET);
	assert_memory_equal(addrs[0].addr, a1, 4);
	assert_int_equal(addrs[0].ttl, 60);
	assert_memory_equal(addrs[1].addr, a2, 4);
	assert_int_equal(addrs[1].ttl, 30);
	/* More addresses than @max: refused whole, never a partial list. */
	assert_int_equal(dns_collect_addrs(m.b, m.len, &q, addrs, 1), -E2BIG);
	assert_int_equal(dns_collect_addrs(m.b, m.len, &q, addrs, 2), 2);
}

static void collect_aaaa_and_classes(void **state)
{
	struct dns_question q = query_of("github.com", DNS_TYPE_AAAA);
	struct dns_addr addrs[4];
	uint8_t v6[16];
	struct msg m;

	inet_pton(AF_INET6, "2001:db8:2::10", v6);
	header(&m, 0xbeef, 0x8180, 1, 2);
	question(&m, "github.com", DNS_TYPE_AAAA);
	rr_ptr(&m, DNS_TYPE_AAAA, 120, v6, 16);
	/* The same owner in class CH never counts. */
	put16(&m, 0xc00c);
	put16(&m, DNS_TYPE_AAAA);
	put16(&m, 3);
	put32(&m, 120);
	put16(&m, 16);
	memcpy(m.b + m.len, v6, 16);
	m.len += 16;
	assert_int_equal(dns_collect_addrs(m.b, m.len, &q, addrs, 4), 1);
	assert_int_equal(addrs[0].family, AF_INET6);
	assert_memory_equal(addrs[0].addr, v6, 16);
}

static void collect_rejects_lies(void **state)
{
	struct dns_question q = query_of("github.com", DNS_TYPE_A);
	struct dns_addr addrs[4];
	uint8_t a[4] = { 203, 0, 113, 10 };
	struct msg m;

	/* An answer to another question. */
	header(&m, 0xbeef, 0x8180, 1, 1);
	question(&m, "evil.test", DNS_TYPE_A);
	rr_ptr(&m, DNS_TYPE_A, 60, a, 4);
	assert_int_equal(dns_collect_addrs(m.b, m.len, &q, addrs, 4), -EBADMSG);
	/* Same name, other type. */
	header(&m, 0xbeef, 0x8180, 1, 1);
	question(&m, "github.com", DNS_TYPE_AAAA);
	assert_int_equal(dns_collect_addrs(m.b, m.len, &q, addrs, 4), -EBADMSG);
	/* Not a response. */
	header(&m, 0xbeef, 0x0100, 1, 0);
	question(&m, "github.com", DNS_TYPE_A);
	assert_int_equal(dns_collect_addrs(m.b, m.len, &q, addrs, 4), -EBADMSG);
	/* An answer count that lies (2 claimed, 1 present). */
	header(&m, 0xbeef, 0x8180, 1, 2);
	question(&m, "github.com", DNS_TYPE_A);
	rr_ptr(&m, DNS_TYPE_A, 60, a, 4);
	assert_int_equal(dns_collect_addrs(m.b, m.len, &q, addrs, 4), -EBADMSG);
	/* rdlength past the end. */
	header(&m, 0xbeef, 0x8180, 1, 1);
	question(&m, "github.com", DNS_TYPE_A);
	rr_ptr(&m, DNS_TYPE_A, 60, a, 4);
	assert_int_equal(dns_collect_addrs(m.b, m.len - 1, &q, addrs, 4), -EBADMSG);
	/* An A record of the wrong size. */
	header(&m, 0xbeef, 0x8180, 1, 1);
	question(&m, "github.com", DNS_TYPE_A);
	rr_ptr(&m, DNS_TYPE_A, 60, a, 3);
	assert_int_equal(dns_collect_addrs(m.b, m.len, &q, addrs, 4), -EBADMSG);
	/* More answer records than we read: refused, as too many. */
	header(&m, 0xbeef, 0x8180, 1, DNS_MAX_ANSWER_RRS + 1);
	question(&m, "github.com", DNS_TYPE_A);
	assert_int_equal(dns_collect_addrs(m.b, m.len, &q, addrs, 4), -E2BIG);
}

static void cname_loop_terminates(void **state)
{
	struct dns_question q = query_of("a.test", DNS_TYPE_A);
	struct dns_addr addrs[4];
	struct msg m, t1, t2;

	/* a.test -> b.test -> a.test: no address, no hang. */
	t1.len = 0;
	put_name(&t1, "b.test");
	t2.len = 0;
	put_name(&t2, "a.test");
	header(&m, 0xbeef, 0x8180, 1, 2);
	question(&m, "a.test", DNS_TYPE_A);
	rr_named(&m, "a.test", DNS_TYPE_CNAME, 60, t1.b, (uint16_t)t1.len);
	rr_named(&m, "b.test", DNS_TYPE_CNAME, 60, t2.b, (uint16_t)t2.len);
	assert_int_equal(dns_collect_addrs(m.b, m.len, &q, addrs, 4), 0);
}

static void build_reply(void **state)
{
	struct dns_question q;
	uint8_t out[512];
	struct msg m;
	int n;

	header(&m, 0x4242, 0x0100, 1, 0);
	question(&m, "Denied.TEST", DNS_TYPE_A);
	/* An EDNS OPT record in the additional section is not echoed. */
	m.b[11] = 1;
	opt_rr(&m, 1232, 0);
	assert_int_equal(dns_parse_query(m.b, m.len, &q), 0);
	n = dns_build_reply(m.b, &q, DNS_RCODE_NXDOMAIN, out, sizeof(out));
	assert_int_equal(n, (int)q.end);
	assert_int_equal(out[0], 0x42);
	assert_int_equal(out[1], 0x42);
	assert_int_equal(out[2], 0x81);		/* QR, RD echoed */
	assert_int_equal(out[3], 0x80 | DNS_RCODE_NXDOMAIN);	/* RA */
	assert_int_equal(out[5], 1);		/* one question */
	assert_int_equal(out[7] | out[9] | out[11], 0);	/* no records */
	/* The question is echoed byte for byte (case kept). */
	assert_memory_equal(out + 12, m.b + 12, q.end - 12);
	assert_int_equal(dns_build_reply(m.b, &q, 2, out, 12), -ENOSPC);
}

/* Whatever the client's query held, egret's upstream query is the same
 * bytes but for the id and the question: RD only, EDNS 1232, DO clear,
 * no options. */
static void build_query_fixed(void **state)
{
	static const uint8_t want_tail[] = {
		0, 0, 1, 0, 1,			/* root name, type A, class IN */
		0, 0, 41, 0x04, 0xd0,		/* OPT, payload 1232 */
		0, 0, 0, 0, 0, 0,		/* rcode/version/DO 0, no rdata */
	};
	struct dns_question q;
	uint8_t out[512];
	struct msg m;
	int n;

	/* CD, AD, RD clear, an EDNS size of 777 with DO: none survives. */
	header(&m, 0x1111, 0x0030, 1, 0);
	question(&m, "GitHub.com", DNS_TYPE_A);
	m.b[11] = 1;
	opt_rr(&m, 777, 0x8000);
	assert_int_equal(dns_parse_query(m.b, m.len, &q), 0);
	n = dns_build_query(&q, 0xabcd, out, sizeof(out));
	assert_int_equal(n, 12 + 12 + sizeof(want_tail) - 1);
	assert_int_equal(out[0], 0xab);
	assert_int_equal(out[1], 0xcd);
	assert_int_equal(out[2], 0x01);		/* RD, nothing else */
	assert_int_equal(out[3], 0x00);		/* no AD, no CD */
	assert_int_equal(out[5], 1);
	assert_int_equal(out[7] | out[9], 0);
	assert_int_equal(out[11], 1);		/* our OPT */
	assert_memory_equal(out + 12, "\6github\3com", 11);
	assert_memory_equal(out + 23, want_tail, sizeof(want_tail));
	assert_int_equal(dns_build_query(&q, 1, out, 16), -ENOSPC);
}

static void forwarded_types(void **state)
{
	assert_true(dns_type_forwarded(DNS_TYPE_A));
	assert_true(dns_type_forwarded(DNS_TYPE_AAAA));
	assert_true(dns_type_forwarded(DNS_TYPE_CNAME));
	for (unsigned int t = 0; t < 65536; t++)
		if (t != DNS_TYPE_A && t != DNS_TYPE_AAAA && t != DNS_TYPE_CNAME)
			assert_false(dns_type_forwarded((uint16_t)t));
}

static void strip_opt(void **state)
{
	uint8_t a[4] = { 203, 0, 113, 10 };
	struct msg m;
	size_t with;
	long n;

	header(&m, 7, 0x8180, 1, 1);
	question(&m, "github.com", DNS_TYPE_A);
	rr_ptr(&m, DNS_TYPE_A, 60, a, 4);
	with = m.len;
	assert_int_equal(dns_strip_opt(m.b, m.len), (long)m.len);	/* none */
	m.b[11] = 1;
	opt_rr(&m, 1232, 0);
	n = dns_strip_opt(m.b, m.len);
	assert_int_equal(n, (long)with);
	assert_int_equal(m.b[11], 0);
	/* Not last: left alone (later pointers would move). */
	header(&m, 7, 0x8180, 1, 0);
	question(&m, "github.com", DNS_TYPE_A);
	m.b[11] = 2;
	opt_rr(&m, 1232, 0);
	rr_ptr(&m, DNS_TYPE_A, 60, a, 4);
	assert_int_equal(dns_strip_opt(m.b, m.len), (long)m.len);
	assert_int_equal(m.b[11], 2);
	/* Lying counts: malformed. */
	m.b[11] = 9;
	assert_int_equal(dns_strip_opt(m.b, m.len), -EBADMSG);
	assert_int_equal(dns_strip_opt(m.b, 5), -EBADMSG);
}

static void normalize(void **state)
{
	char out[DNS_NAME_MAX + 1];

	assert_int_equal(dns_name_normalize("GitHub.Com.", out, sizeof(out)), 0);
	assert_string_equal(out, "github.com");
	assert_int_equal(dns_name_normalize(".", out, sizeof(out)), -EINVAL);
	assert_int_equal(dns_name_normalize("", out, sizeof(out)), -EINVAL);
	assert_int_equal(dns_name_normalize("a.b", out, 3), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse_query),
		cmocka_unit_test(reject_queries),
		cmocka_unit_test(name_limits),
		cmocka_unit_test(compression_pointers),
		cmocka_unit_test(collect_a_and_cname_chain),
		cmocka_unit_test(collect_aaaa_and_classes),
		cmocka_unit_test(collect_rejects_lies),
		cmocka_unit_test(cname_loop_terminates),
		cmocka_unit_test(build_reply),
		cmocka_unit_test(build_query_fixed),
		cmocka_unit_test(forwarded_types),
		cmocka_unit_test(strip_opt),
		cmocka_unit_test(normalize),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
