/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * dns/wire.h - bounded DNS message parsing and the few replies egret builds.
 *
 * Everything here reads untrusted bytes (the attempt's queries, upstream
 * answers): every read is bounds-checked, compression pointers may only
 * point backwards and are followed a bounded number of times, counts are
 * capped, and a short or lying message is an error, never a crash. Pure: no
 * I/O, no allocation. tests/fuzz/fuzz_dns.c drives it.
 */
#ifndef EGRET_DNS_WIRE_H
#define EGRET_DNS_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/names.h"

#define DNS_HEADER_LEN		12
#define DNS_MAX_MSG		65535
#define DNS_MAX_ANSWER_RRS	128	/* more answer records: refuse */
#define DNS_MAX_ADDRS		DNS_MAX_ANSWER_RRS	/* every address of an answer */
#define DNS_MAX_RRS		512	/* all sections of a message we edit */
#define DNS_UPSTREAM_EDNS_SIZE	1232	/* every query egret sends upstream */
/* The longest query dns_build_query() writes: header, name, type and
 * class, and its OPT record. */
#define DNS_BUILT_QUERY_MAX	(DNS_HEADER_LEN + DNS_NAME_MAX + 2 + 4 + 11)

enum {
	DNS_TYPE_A = 1,
	DNS_TYPE_CNAME = 5,
	DNS_TYPE_AAAA = 28,
	DNS_TYPE_OPT = 41,
	DNS_TYPE_SVCB = 64,
	DNS_TYPE_HTTPS = 65,
	DNS_CLASS_IN = 1,
};

enum {
	DNS_RCODE_NOERROR = 0,
	DNS_RCODE_FORMERR = 1,
	DNS_RCODE_SERVFAIL = 2,
	DNS_RCODE_NXDOMAIN = 3,
	DNS_RCODE_NOTIMP = 4,
	DNS_RCODE_REFUSED = 5,
};

struct dns_question {
	uint16_t id;
	uint16_t type;
	uint16_t qclass;
	char name[DNS_NAME_MAX + 1];	/* lower case, no trailing dot; "" = root */
	size_t end;			/* offset just past the question */
};

struct dns_addr {
	int family;			/* AF_INET or AF_INET6 */
	uint8_t addr[16];		/* network order */
	uint32_t ttl;
};

/*
 * Parse a query: a header with QR clear, opcode QUERY, exactly one
 * question. Returns 0 or -EBADMSG (malformed) / -EOPNOTSUPP (not a plain
 * query: the caller answers FORMERR or NOTIMP).
 */
int dns_parse_query(const uint8_t *msg, size_t len, struct dns_question *ret);

/*
 * Read the (possibly compressed) name at @off into @out as lower-case
 * presentation text. *@next receives the offset after the name in place.
 * Returns 0 or -EBADMSG.
 */
int dns_read_name(const uint8_t *msg, size_t len, size_t off, char *out,
		  size_t *next);

/*
 * From an answer to @q, collect the A and AAAA records owned by the queried
 * name or by a name its CNAME chain (in the answer section) leads to.
 * Returns the number of addresses (0..@max) or -EBADMSG; an answer whose
 * question is not @q's is -EBADMSG too. More addresses than @max is -E2BIG:
 * never a partial list, since the caller releases the whole answer.
 */
int dns_collect_addrs(const uint8_t *msg, size_t len,
		      const struct dns_question *q, struct dns_addr *ret,
		      size_t max);

/*
 * Build a header-and-question reply to @q (which came from @query) with
 * @rcode and no records: NXDOMAIN for denied names, SERVFAIL on failure,
 * NOERROR for "no data". Returns the length written or -ENOSPC.
 */
int dns_build_reply(const uint8_t *query, const struct dns_question *q,
		    int rcode, uint8_t *out, size_t outlen);

/*
 * The EDNS0 OPT record of a query, if any (scanning the additional
 * section): its UDP payload size and DO bit. Returns 1 if present, 0 if
 * not, -EBADMSG on a malformed section.
 */
int dns_query_edns(const uint8_t *msg, size_t len, const struct dns_question *q,
		   uint16_t *ret_size, int *ret_do);

/*
 * The query types egret forwards for an allowed name: A, AAAA and CNAME.
 * Any other value the client chose would reach the upstream resolver (and
 * the zone's servers) as 16 bits of its own; HTTPS/SVCB get "no data",
 * the rest NOTIMP.
 */
bool dns_type_forwarded(uint16_t type);

/*
 * A fresh query for @q alone, every field egret's choice: @id, RD set and
 * no other flag, the question as parsed (lower case), and an OPT record of
 * DNS_UPSTREAM_EDNS_SIZE with DO clear and no options. Nothing of the
 * client's message but its name and (forwarded) type survives: no
 * records, options, EDNS size, DO/CD/RD bits or trailing bytes ride along
 * to the upstream resolver. Returns the length or -ENOSPC/-EINVAL.
 */
int dns_build_query(const struct dns_question *q, uint16_t id, uint8_t *out,
		    size_t outlen);

/*
 * Remove the OPT record from a message whose last record it is (for a
 * client that sent no EDNS: egret's own query did). Returns the new
 * length (@len when there is no trailing OPT) or -EBADMSG.
 */
long dns_strip_opt(uint8_t *msg, size_t len);


#endif
