// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dns/query.c - the proxy's decision, one query at a time: judge its
 * question by the host rules, forward an allowed one upstream as egret's
 * own query, learn the answer's addresses before releasing it, reply, and
 * tell the observer.
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "dns/names.h"
#include "dns/proxy_impl.h"
#include "dns/upstream.h"
#include "enforce/dests.h"
#include "lib/log.h"
#include "policy/host.h"

#define DNS_MAX_TTL		86400	/* a day: bounds what an answer can grant */

/* ---- replies ------------------------------------------------------ */

static void reply(struct query *qy, const uint8_t *msg, size_t len)
{
	if (!qy->conn) {
		listen_send(qy->p, qy->udp_fd, &qy->from, qy->fromlen, msg, len);
		return;
	}
	tcp_send(qy->conn, msg, len);
	if (!qy->conn->dead && tcp_flush(qy->conn) < 0)
		tcp_close(qy->conn);
}

/* A reply with no records: NXDOMAIN, SERVFAIL, or NOERROR "no data". */
static void reply_rcode(struct query *qy, int rcode)
{
	uint8_t buf[sizeof(qy->qraw)];
	int n = dns_build_reply(qy->qraw, &qy->q, rcode, buf, sizeof(buf));

	if (n > 0)
		reply(qy, buf, (size_t)n);
}

/* For queries too broken to echo their question: the id alone. */
static void reply_header_only(struct query *qy, const uint8_t *query,
			      size_t len, int rcode)
{
	uint8_t buf[DNS_HEADER_LEN] = {};

	if (len < 2)
		return;
	buf[0] = query[0];
	buf[1] = query[1];
	buf[2] = 0x80;
	buf[3] = (uint8_t)(0x80 | rcode);
	reply(qy, buf, sizeof(buf));
}

/* Tell the observer what became of @qy's question. */
static void decided(struct query *qy, enum dns_verdict verdict, enum dns_why why,
		    const struct dns_addr *addrs, int naddrs, uint32_t ttl)
{
	const struct dns_observer *o = &qy->p->cfg.observer;

	if (o->decided)
		o->decided(o->ctx, &(struct dns_decision){
			.name = qy->q.name, .qtype = qy->q.type, .verdict = verdict,
			.why = why, .addrs = addrs, .naddrs = naddrs, .ttl = ttl });
}

/* A refused question, with who asked (for the refused name's request):
 * before the reply frees the client to exit. */
static void decided_refused(struct query *qy, enum dns_why why)
{
	const struct dns_observer *o = &qy->p->cfg.observer;
	struct dns_decision d = { .name = qy->q.name, .qtype = qy->q.type,
				  .verdict = DNS_VERDICT_DENY, .why = why };
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);

	if (!o->decided)
		return;
	if (qy->udp_fd >= 0) {
		d.client = (struct sockaddr *)&qy->from;
	} else if (qy->conn && getpeername(qy->conn->src.fd, (struct sockaddr *)&peer, &len) == 0) {
		d.client = (struct sockaddr *)&peer;
		d.client_tcp = true;
	}
	o->decided(o->ctx, &d);
}

static void query_free(struct query *qy)
{
	struct tcp_conn *c = qy->conn;

	spares_put(&qy->p->spare, qy);
	if (c && --c->refs == 0 && !c->dead && c->eof && !c->out_head)
		tcp_close(c);
	else if (c && c->refs == 0 && c->dead)
		loop_release(c->p->loop, &c->src);
}

/* ---- answers ------------------------------------------------------ */

/*
 * Upstream answered egret's query (RD set, EDNS 1232): give the client an
 * answer to its own. RD as it asked; no OPT record if it sent none; and a
 * UDP answer larger than it takes becomes an empty one with TC set, so it
 * asks again over TCP, as a server would have made it.
 */
static void reply_answer(struct query *qy, uint8_t *msg, size_t len)
{
	uint8_t trunc[sizeof(qy->qraw)];
	long n;
	int t;

	msg[2] = (uint8_t)((msg[2] & ~0x01) | (qy->qraw[2] & 0x01));
	if (!qy->client_edns) {
		n = dns_strip_opt(msg, len);
		if (n > 0)
			len = (size_t)n;
	}
	if (len <= qy->client_limit) {
		reply(qy, msg, len);
		return;
	}
	t = dns_build_reply(qy->qraw, &qy->q, msg[3] & 0x0f, trunc, sizeof(trunc));
	if (t <= 0)
		return;
	trunc[2] |= 0x02;	/* TC */
	reply(qy, trunc, (size_t)t);
}

/* Why an answered question was allowed, or (--audit) would not be. */
static enum dns_why audit_why(const struct query *qy)
{
	if (!qy->audit_only)
		return DNS_WHY_NONE;
	return qy->quiet ? DNS_WHY_QUIET : DNS_WHY_NOT_ALLOWED;
}

/* Write every address of the answer into the maps, and log it. Special
 * addresses (loopback, link-local, metadata, multicast, broadcast, the
 * host's own) are never learned from DNS; an --audit answer for a name not
 * allowed is only attributed. */
static int learn_answer(struct query *qy, const uint8_t *msg, size_t len)
{
	struct dns_addr addrs[DNS_MAX_ADDRS];
	struct dns_proxy *p = qy->p;
	__u64 now = allow_now_ns();
	uint32_t min_seen = DNS_MAX_TTL;
	__u32 dest = 0;
	int n, i, r;

	n = dns_collect_addrs(msg, len, &qy->q, addrs, DNS_MAX_ADDRS);
	if (n < 0)
		return n;
	/* The name's destination (its wildcard's, if only a wildcard
	 * allows it), with its rules' budget, before any entry counts
	 * against it (enforce/dests.h): none, no answer. */
	if (!qy->audit_only && n > 0 && p->maps.dests) {
		char dname[DNS_NAME_MAX + 3];

		host_rules_dest_name(p->cfg.rules, p->cfg.nrules, qy->q.name, dname,
				     sizeof(dname));
		r = dests_id(p->maps.dests, dname, qy->upload_limit, &dest);
		if (r == -E2BIG)
			return -ENOSPC;
		if (r < 0)
			return r;
	}
	for (i = 0; i < n; i++) {
		uint32_t ttl = addrs[i].ttl;
		bool known;

		if (allow_special_addr(&p->maps, addrs[i].family, addrs[i].addr)) {
			log_debug("dns: %s: not learning a special address",
				  qy->q.name);
			continue;
		}
		if (ttl < p->cfg.min_ttl)
			ttl = p->cfg.min_ttl;
		if (ttl > DNS_MAX_TTL)
			ttl = DNS_MAX_TTL;
		if (ttl < min_seen)
			min_seen = ttl;
		/* Attribution only: a full names map never fails an answer. */
		known = names_get(p->names, addrs[i].family, addrs[i].addr) != NULL;
		if (names_put(p->names, addrs[i].family, addrs[i].addr, qy->q.name))
			allow_name(&p->maps, addrs[i].family, addrs[i].addr, qy->q.name,
				   known);
		if (qy->audit_only)
			continue;
		r = allow_learn_for(&p->maps, addrs[i].family, addrs[i].addr,
				    qy->q.name, dest, qy->pinned, qy->ports, qy->nports,
				    qy->any_port, now + (__u64)ttl * 1000000000ULL);
		/* The kernel says E2BIG for a full hash map: here that is the
		 * map, not the answer, so the caller reports it as such. */
		if (r == -E2BIG)
			return -ENOSPC;
		if (r < 0)
			return r;
		p->stats.learned++;
	}
	decided(qy, qy->audit_only ? DNS_VERDICT_WOULD_DENY : DNS_VERDICT_ALLOW,
		audit_why(qy), addrs, n, min_seen);
	return n;
}

static void on_answer(void *arg, enum dns_upstream_status status, const uint8_t *abuf,
		      size_t alen)
{
	static uint8_t buf[DNS_MAX_MSG];
	struct query *qy = arg;
	struct dns_proxy *p = qy->p;
	enum dns_why why;
	int r;

	p->inflight--;
	if (status == DNS_UPSTREAM_GONE)
		goto out;
	if (status != DNS_UPSTREAM_ANSWER || alen < DNS_HEADER_LEN || alen > DNS_MAX_MSG) {
		why = status == DNS_UPSTREAM_SILENT ? DNS_WHY_TIMEOUT :
		      status == DNS_UPSTREAM_ANSWER ? DNS_WHY_MALFORMED : DNS_WHY_UPSTREAM;
		log_info("dns: %s: %s: SERVFAIL", qy->q.name,
			 why == DNS_WHY_TIMEOUT ? "no upstream answered" :
			 why == DNS_WHY_MALFORMED ? "a malformed upstream answer" :
			 "the upstream query failed");
		goto servfail;
	}
	memcpy(buf, abuf, alen);
	buf[0] = (uint8_t)(qy->q.id >> 8);	/* the upstream query had its own id */
	buf[1] = (uint8_t)qy->q.id;

	/* Truncated: pass it on untouched; the client retries over TCP,
	 * where the whole answer is learned. Error answers teach nothing. */
	if ((buf[2] & 0x02) || (buf[3] & 0x0f) != DNS_RCODE_NOERROR) {
		decided(qy, qy->audit_only ? DNS_VERDICT_WOULD_DENY : DNS_VERDICT_ALLOW,
			audit_why(qy), NULL, 0, 0);
	} else {
		r = learn_answer(qy, buf, alen);
		if (r < 0) {
			why = r == -EBADMSG ? DNS_WHY_MALFORMED : r == -E2BIG ? DNS_WHY_TOO_MANY :
			      DNS_WHY_MAP_FULL;
			log_warn("dns: %s: %s: SERVFAIL", qy->q.name,
				 r == -EBADMSG ? "malformed upstream answer" :
				 r == -E2BIG ? "more addresses than egret learns from one answer" :
				 "allow map full (raise --max-entries)");
			goto servfail;
		}
		log_debug("dns: %s type %u: learned %d address(es)",
			  qy->q.name, qy->q.type, r);
	}
	reply_answer(qy, buf, alen);
	goto out;
servfail:
	p->stats.servfail++;
	decided(qy, DNS_VERDICT_SERVFAIL, why, NULL, 0, 0);
	reply_rcode(qy, DNS_RCODE_SERVFAIL);
out:
	query_free(qy);
}

/* ---- queries ------------------------------------------------------ */

/* Query ids from the kernel's random pool, a buffer at a time (a system
 * call per query was a measurable part of the proxy's cost). c-ares puts
 * its own random id on what it sends upstream. */
static uint16_t random_id(void)
{
	static uint16_t pool[256];
	static size_t left;
	uint16_t id = 0;

	if (!left) {
		if (getrandom(pool, sizeof(pool), GRND_NONBLOCK) != (ssize_t)sizeof(pool))
			return (uint16_t)(allow_now_ns() ^ (allow_now_ns() >> 17));
		left = sizeof(pool) / sizeof(pool[0]);
	}
	id = pool[--left];
	return id;
}

/* @tmpl says where the query came from; it is copied if forwarded. */
/* The question into @tmpl; false if it got an error answer (or none: a
 * message that is not a query gets nothing). */
static bool read_question(struct query *tmpl, const uint8_t *msg, size_t len)
{
	int r = tmpl->oversize ? -EMSGSIZE : dns_parse_query(msg, len, &tmpl->q);

	if (r == -EOPNOTSUPP) {
		reply_header_only(tmpl, msg, len, DNS_RCODE_NOTIMP);
		return false;
	}
	if (r < 0 || tmpl->q.end > sizeof(tmpl->qraw)) {
		if (len >= DNS_HEADER_LEN && !(msg[2] & 0x80))
			reply_header_only(tmpl, msg, len, DNS_RCODE_FORMERR);
		return false;
	}
	memcpy(tmpl->qraw, msg, tmpl->q.end);
	return true;
}

/* A name no rule allows gets NXDOMAIN (under --audit it goes on, marked);
 * true if it was answered. An agent's known noise (a quiet rule) the same,
 * said only with -v and told to the observer as quiet: never a request. */
static bool refuse_name(struct dns_proxy *p, struct query *tmpl)
{
	bool in = tmpl->q.qclass == DNS_CLASS_IN;

	if (in && host_rules_match(p->cfg.rules, p->cfg.nrules, tmpl->q.name,
			     tmpl->ports, &tmpl->nports, &tmpl->any_port) != 0) {
		/* An empty name (the root) has nothing to pin to. */
		tmpl->pinned = p->cfg.pinning && tmpl->q.name[0] &&
			       !host_rules_unpinned(p->cfg.rules, p->cfg.nrules,
						    tmpl->q.name);
		tmpl->upload_limit = host_rules_upload_limit(p->cfg.rules, p->cfg.nrules,
							     tmpl->q.name);
		return false;
	}
	p->stats.denied++;
	tmpl->quiet = in && host_rules_quiet(p->cfg.rules, p->cfg.nrules, tmpl->q.name);
	p->stats.quiet += tmpl->quiet;
	if (p->cfg.audit && in) {
		/* --audit asked to see everything: forwarded, and logged as
		 * would-deny when the answer comes. */
		tmpl->audit_only = true;
		return false;
	}
	/* Never forwarded: the name itself could carry data. */
	log_msg(tmpl->quiet ? LOG_DEBUG : LOG_INFO, "dns: %s %s (type %u): NXDOMAIN",
	       tmpl->quiet ? "quiet" : "denied", tmpl->q.name[0] ? tmpl->q.name : ".",
	       tmpl->q.type);
	decided_refused(tmpl, !in ? DNS_WHY_CLASS :
			      tmpl->quiet ? DNS_WHY_QUIET : DNS_WHY_NOT_ALLOWED);
	reply_rcode(tmpl, DNS_RCODE_NXDOMAIN);
	return true;
}

/* Only the types a connection needs go upstream; true if answered. */
static bool refuse_type(struct dns_proxy *p, struct query *tmpl)
{
	if (tmpl->q.type == DNS_TYPE_HTTPS || tmpl->q.type == DNS_TYPE_SVCB) {
		/* Their address hints would let a client connect to addresses
		 * we never learned: answer "no such data" instead. */
		p->stats.nodata++;
		reply_rcode(tmpl, DNS_RCODE_NOERROR);
		return true;
	}
	if (!dns_type_forwarded(tmpl->q.type)) {
		/* The type is the client's choice of 16 bits. */
		p->stats.notimp++;
		reply_rcode(tmpl, DNS_RCODE_NOTIMP);
		return true;
	}
	return false;
}

/* Upstream gets a query egret wrote (dns_build_query); the client gets an
 * answer sized for what it said it takes. */
static void forward(struct dns_proxy *p, struct query *tmpl, const uint8_t *msg,
		    size_t len)
{
	uint8_t fresh[DNS_BUILT_QUERY_MAX];
	uint16_t edns_size = 0;
	struct query *qy;
	int r, do_bit = 0;

	r = dns_query_edns(msg, len, &tmpl->q, &edns_size, &do_bit);
	if (r < 0) {
		reply_rcode(tmpl, DNS_RCODE_FORMERR);
		return;
	}
	tmpl->client_edns = r == 1;
	tmpl->client_limit = tmpl->conn ? DNS_MAX_MSG :
			     !tmpl->client_edns || edns_size < 512 ? 512 : edns_size;
	/* No allocation of egret's per query once as many were in flight. */
	if (p->inflight >= DNS_MAX_INFLIGHT || !(qy = spares_get(&p->spare, sizeof(*qy)))) {
		p->stats.servfail++;
		decided(tmpl, DNS_VERDICT_SERVFAIL, DNS_WHY_BUSY, NULL, 0, 0);
		reply_rcode(tmpl, DNS_RCODE_SERVFAIL);
		return;
	}
	*qy = *tmpl;
	r = dns_build_query(&qy->q, random_id(), fresh, sizeof(fresh));
	if (r < 0) {
		reply_rcode(tmpl, DNS_RCODE_FORMERR);
		spares_put(&p->spare, qy);
		return;
	}
	if (qy->conn)
		qy->conn->refs++;
	p->inflight++;
	p->stats.allowed++;
	if (dns_upstream_send(p->ups, qy->conn != NULL, fresh, (size_t)r, on_answer, qy) < 0)
		on_answer(qy, DNS_UPSTREAM_FAILED, NULL, 0);
}

void query_handle(struct dns_proxy *p, const uint8_t *msg, size_t len,
		  struct query *tmpl)
{
	p->stats.queries++;
	tmpl->p = p;
	if (read_question(tmpl, msg, len) && !refuse_name(p, tmpl) &&
	    !refuse_type(p, tmpl))
		forward(p, tmpl, msg, len);
}
