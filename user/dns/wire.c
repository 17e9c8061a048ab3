// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>

#include "dns/wire.h"

#define MAX_POINTER_HOPS	32
#define MAX_CNAME_HOPS		16

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* Hostname bytes only: a label with '.', spaces or binary could make one
 * name look like another once printed, so such names never match. */
static int label_char_ok(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '_';
}

int dns_read_name(const uint8_t *msg, size_t len, size_t off, char *out,
		  size_t *next)
{
	size_t pos = off, outlen = 0, after = 0;
	int hops = 0;

	for (;;) {
		uint8_t l;

		if (pos >= len)
			return -EBADMSG;
		l = msg[pos];
		if ((l & 0xc0) == 0xc0) {
			size_t target;

			if (pos + 1 >= len || ++hops > MAX_POINTER_HOPS)
				return -EBADMSG;
			target = (size_t)(l & 0x3f) << 8 | msg[pos + 1];
			/* Only backwards: a loop cannot be built. */
			if (target >= pos || target < DNS_HEADER_LEN)
				return -EBADMSG;
			if (!after)
				after = pos + 2;
			pos = target;
			continue;
		}
		if (l & 0xc0)
			return -EBADMSG;	/* 0x40/0x80: obsolete label types */
		if (l == 0) {
			pos++;
			break;
		}
		if (pos + 1 + l > len || outlen + l + 1 > DNS_NAME_MAX + 1)
			return -EBADMSG;
		if (outlen)
			out[outlen++] = '.';
		for (size_t i = 0; i < l; i++) {
			uint8_t c = msg[pos + 1 + i];

			if (!label_char_ok(c))
				return -EBADMSG;
			out[outlen++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
		}
		pos += 1 + (size_t)l;
	}
	if (outlen > DNS_NAME_MAX)
		return -EBADMSG;
	out[outlen] = '\0';
	*next = after ? after : pos;
	return 0;
}

int dns_parse_query(const uint8_t *msg, size_t len, struct dns_question *ret)
{
	size_t end;
	int r;

	if (len < DNS_HEADER_LEN || len > DNS_MAX_MSG)
		return -EBADMSG;
	if (msg[2] & 0x80)		/* QR: a response, not a query */
		return -EBADMSG;
	if (get16(msg + 4) != 1)	/* exactly one question */
		return -EOPNOTSUPP;
	ret->id = get16(msg);
	r = dns_read_name(msg, len, DNS_HEADER_LEN, ret->name, &end);
	if (r < 0)
		return r;
	if (end + 4 > len)
		return -EBADMSG;
	ret->type = get16(msg + end);
	ret->qclass = get16(msg + end + 2);
	ret->end = end + 4;
	if (((msg[2] >> 3) & 0x0f) != 0)	/* opcode other than QUERY */
		return -EOPNOTSUPP;
	return 0;
}

struct rr_view {
	uint16_t type;
	uint32_t ttl;
	size_t rdata;
	uint16_t rdlen;
	char owner[DNS_NAME_MAX + 1];
	char target[DNS_NAME_MAX + 1];	/* CNAME only */
};

static int name_in(const char (*set)[DNS_NAME_MAX + 1], int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(set[i], name))
			return 1;
	return 0;
}

/* The question (it must be @q's) and the answer records, into @rrs;
 * how many, or -EBADMSG / -E2BIG. */
static int read_answer(const uint8_t *msg, size_t len, const struct dns_question *q,
		       struct rr_view *rrs)
{
	char qname[DNS_NAME_MAX + 1];
	unsigned int ancount, i;
	size_t pos;
	int r;

	if (len < DNS_HEADER_LEN || !(msg[2] & 0x80) || get16(msg + 4) != 1)
		return -EBADMSG;
	ancount = get16(msg + 6);
	if (ancount > DNS_MAX_ANSWER_RRS)
		return -E2BIG;	/* well-formed perhaps, but more than we vet */
	r = dns_read_name(msg, len, DNS_HEADER_LEN, qname, &pos);
	if (r < 0)
		return r;
	if (pos + 4 > len || strcmp(qname, q->name) ||
	    get16(msg + pos) != q->type || get16(msg + pos + 2) != q->qclass)
		return -EBADMSG;
	pos += 4;

	for (i = 0; i < ancount; i++) {
		struct rr_view *rr = &rrs[i];

		r = dns_read_name(msg, len, pos, rr->owner, &pos);
		if (r < 0)
			return r;
		if (pos + 10 > len)
			return -EBADMSG;
		rr->type = get16(msg + pos);
		rr->ttl = get32(msg + pos + 4);
		rr->rdlen = get16(msg + pos + 8);
		rr->rdata = pos + 10;
		if (rr->rdata + rr->rdlen > len)
			return -EBADMSG;
		rr->target[0] = '\0';
		if (get16(msg + pos + 2) != DNS_CLASS_IN)
			rr->type = 0;	/* other classes never count */
		if (rr->type == DNS_TYPE_CNAME) {
			size_t end;

			if (dns_read_name(msg, len, rr->rdata, rr->target, &end) < 0 ||
			    end != rr->rdata + rr->rdlen)
				return -EBADMSG;
		}
		pos = rr->rdata + rr->rdlen;
	}
	return (int)ancount;
}

/* The chain: the queried name, then every CNAME target reachable from it,
 * whatever order the records came in. How many names. */
static int cname_chain(const struct rr_view *rrs, int n, const char *qname,
		       char (*chain)[DNS_NAME_MAX + 1])
{
	int nchain = 1, grew;

	strcpy(chain[0], qname);
	do {
		grew = 0;
		for (int i = 0; i < n && nchain <= MAX_CNAME_HOPS; i++) {
			if (rrs[i].type != DNS_TYPE_CNAME ||
			    !name_in(chain, nchain, rrs[i].owner) ||
			    name_in(chain, nchain, rrs[i].target))
				continue;
			strcpy(chain[nchain++], rrs[i].target);
			grew = 1;
		}
	} while (grew && nchain <= MAX_CNAME_HOPS);
	return nchain;
}

int dns_collect_addrs(const uint8_t *msg, size_t len,
		      const struct dns_question *q, struct dns_addr *ret,
		      size_t max)
{
	/* 66 KiB: static, not on the stack. Not __thread: egret has one
	 * thread, and a TLS block is zeroed at every process start (17
	 * page faults of each egret, DNS or not; issue 42), where .bss
	 * pages are only faulted in when an answer is read. */
	static struct rr_view rrs[DNS_MAX_ANSWER_RRS];
	char chain[MAX_CNAME_HOPS + 1][DNS_NAME_MAX + 1];
	int n = read_answer(msg, len, q, rrs), nchain;
	size_t found = 0;

	if (n < 0)
		return n;
	nchain = cname_chain(rrs, n, q->name, chain);
	for (int i = 0; i < n; i++) {
		const struct rr_view *rr = &rrs[i];
		struct dns_addr *a = &ret[found];

		if (!name_in(chain, nchain, rr->owner))
			continue;
		if ((rr->type == DNS_TYPE_A || rr->type == DNS_TYPE_AAAA) &&
		    found == max)
			return -E2BIG;
		if (rr->type == DNS_TYPE_A && rr->rdlen == 4)
			a->family = AF_INET;
		else if (rr->type == DNS_TYPE_AAAA && rr->rdlen == 16)
			a->family = AF_INET6;
		else if (rr->type == DNS_TYPE_A || rr->type == DNS_TYPE_AAAA)
			return -EBADMSG;
		else
			continue;
		memset(a->addr, 0, sizeof(a->addr));
		memcpy(a->addr, msg + rr->rdata, rr->rdlen);
		a->ttl = rr->ttl;
		found++;
	}
	return (int)found;
}

int dns_build_reply(const uint8_t *query, const struct dns_question *q,
		    int rcode, uint8_t *out, size_t outlen)
{
	if (q->end > outlen || q->end < DNS_HEADER_LEN)
		return -ENOSPC;
	memcpy(out, query, q->end);
	out[2] = (uint8_t)(0x80 | (query[2] & 0x01));	/* QR, RD as asked */
	out[3] = (uint8_t)(0x80 | (rcode & 0x0f));	/* RA, RCODE */
	out[4] = 0;
	out[5] = 1;
	memset(out + 6, 0, 6);				/* no records */
	return (int)q->end;
}

/* Step over one resource record at @pos; the new offset or -EBADMSG. */
static long skip_rr(const uint8_t *msg, size_t len, size_t pos, uint16_t *type,
		    uint16_t *rclass, uint32_t *ttl)
{
	char name[DNS_NAME_MAX + 1];
	size_t next;
	uint16_t rdlen;

	/* Names in the additional section of a query are root (OPT) or
	 * short; an unreadable one makes the message malformed. */
	if (dns_read_name(msg, len, pos, name, &next) < 0 || next + 10 > len)
		return -EBADMSG;
	*type = get16(msg + next);
	*rclass = get16(msg + next + 2);
	*ttl = get32(msg + next + 4);
	rdlen = get16(msg + next + 8);
	if (next + 10 + rdlen > len)
		return -EBADMSG;
	return (long)(next + 10 + rdlen);
}

int dns_query_edns(const uint8_t *msg, size_t len, const struct dns_question *q,
		   uint16_t *ret_size, int *ret_do)
{
	unsigned int records = (unsigned int)get16(msg + 6) + get16(msg + 8) +
			       get16(msg + 10);
	size_t pos = q->end;

	if (records > DNS_MAX_ANSWER_RRS)
		return -EBADMSG;
	for (unsigned int i = 0; i < records; i++) {
		uint16_t type, rclass;
		uint32_t ttl;
		long next = skip_rr(msg, len, pos, &type, &rclass, &ttl);

		if (next < 0)
			return -EBADMSG;
		if (type == DNS_TYPE_OPT) {
			*ret_size = rclass;
			*ret_do = (ttl >> 15) & 1;
			return 1;
		}
		pos = (size_t)next;
	}
	return 0;
}

bool dns_type_forwarded(uint16_t type)
{
	return type == DNS_TYPE_A || type == DNS_TYPE_AAAA || type == DNS_TYPE_CNAME;
}

int dns_build_query(const struct dns_question *q, uint16_t id, uint8_t *out,
		    size_t outlen)
{
	size_t pos = DNS_HEADER_LEN;
	const char *label = q->name;

	if (outlen < DNS_HEADER_LEN + DNS_NAME_MAX + 2 + 4 + 11)
		return -ENOSPC;
	memset(out, 0, DNS_HEADER_LEN);
	out[0] = (uint8_t)(id >> 8);
	out[1] = (uint8_t)id;
	out[2] = 0x01;		/* RD, and no other flag */
	out[5] = 1;
	out[11] = 1;
	while (*label) {
		const char *dot = strchr(label, '.');
		size_t l = dot ? (size_t)(dot - label) : strlen(label);

		if (l == 0 || l > 63)
			return -EINVAL;
		out[pos++] = (uint8_t)l;
		memcpy(out + pos, label, l);
		pos += l;
		label += l + (dot ? 1 : 0);
	}
	out[pos++] = 0;
	out[pos++] = (uint8_t)(q->type >> 8);
	out[pos++] = (uint8_t)q->type;
	out[pos++] = (uint8_t)(q->qclass >> 8);
	out[pos++] = (uint8_t)q->qclass;
	/* OPT: root name, type 41, class = payload size, TTL 0 (extended
	 * rcode, version 0, DO clear), no options (no cookies, no client
	 * subnet). */
	out[pos++] = 0;
	out[pos++] = 0;
	out[pos++] = DNS_TYPE_OPT;
	out[pos++] = (uint8_t)(DNS_UPSTREAM_EDNS_SIZE >> 8);
	out[pos++] = (uint8_t)DNS_UPSTREAM_EDNS_SIZE;
	memset(out + pos, 0, 6);
	pos += 6;
	return (int)pos;
}

long dns_strip_opt(uint8_t *msg, size_t len)
{
	size_t pos = DNS_HEADER_LEN, last = 0;
	unsigned int an, ns, ar;
	uint16_t type = 0, rclass;
	uint32_t ttl;
	long next;

	if (len < DNS_HEADER_LEN || get16(msg + 4) != 1)
		return -EBADMSG;
	an = get16(msg + 6);
	ns = get16(msg + 8);
	ar = get16(msg + 10);
	if (an + ns + ar > DNS_MAX_RRS)
		return -EBADMSG;
	if (dns_read_name(msg, len, pos, (char[DNS_NAME_MAX + 1]){ 0 }, &pos) < 0 ||
	    pos + 4 > len)
		return -EBADMSG;
	pos += 4;
	for (unsigned int i = 0; i < an + ns + ar; i++) {
		last = pos;
		next = skip_rr(msg, len, pos, &type, &rclass, &ttl);
		if (next < 0)
			return -EBADMSG;
		pos = (size_t)next;
	}
	/* Only a trailing OPT: cutting one out of the middle would move
	 * what later compression pointers point at. */
	if (!ar || type != DNS_TYPE_OPT || pos != len)
		return (long)len;
	ar--;
	msg[10] = (uint8_t)(ar >> 8);
	msg[11] = (uint8_t)ar;
	return (long)last;
}
