// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * dns/upstream_try.c - one query's way upstream: each try goes to the first
 * upstream not known dead and not tried yet, within the query's budget;
 * each outcome says whether its upstream answers (dns/upstream.h).
 */
#include <errno.h>
#include <string.h>

#include "dns/upstream_impl.h"
#include "dns/wire.h"
#include "lib/log.h"

/* One query on its way: where it has been, for where it goes next. */
struct up_query {
	struct dns_upstreams *ups;
	dns_upstream_done done;
	void *arg;
	bool tcp;
	struct chan *via;		/* the channel of the current try */
	uint64_t start_ms;
	unsigned int tries;
	uint32_t tried;			/* bit i: upstream i had a try */
	size_t at;			/* the upstream of the current try */
	size_t len;
	uint8_t msg[DNS_BUILT_QUERY_MAX];
};

/* The first upstream in order not known dead and not tried by this query;
 * else the first not tried; else the first alive, else the first. */
static size_t pick(const struct dns_upstreams *ups, uint32_t tried, uint64_t now)
{
	size_t i;

	for (i = 0; i < ups->n; i++)
		if (!(tried & (1U << i)) && ups->s[i].dead_until_ms <= now)
			return i;
	for (i = 0; i < ups->n; i++)
		if (!(tried & (1U << i)))
			return i;
	for (i = 0; i < ups->n; i++)
		if (ups->s[i].dead_until_ms <= now)
			return i;
	return 0;
}

/* A try that says the upstream is not there: no answer in time, or (an
 * ICMP error on the socket, a TCP connection refused) no resolver. */
static bool upstream_silent(int status)
{
	return status == ARES_ETIMEOUT || status == ARES_ECONNREFUSED;
}

/* An answer another upstream may improve on: SERVFAIL, NOTIMP, REFUSED.
 * The upstream is there; it is not shunned for it. */
static bool answer_failed(int status, const unsigned char *abuf, int alen)
{
	int rcode = status == ARES_SUCCESS && abuf && alen >= 4 ? abuf[3] & 0x0f : 0;

	return rcode == 2 || rcode == 4 || rcode == 5;
}

static bool all_tried(const struct dns_upstreams *ups, uint32_t tried)
{
	return tried == (ups->n >= 32 ? ~0U : (1U << ups->n) - 1);
}

static void mark(struct dns_upstreams *ups, size_t i, int status, uint64_t now)
{
	struct upstream *u = &ups->s[i];

	if (status == ARES_SUCCESS) {
		if (u->said_dead)
			log_warn("dns: upstream %s (%s) answers again", u->name, ups->origin);
		u->dead_until_ms = 0;
		u->said_dead = false;
		return;
	}
	if (!upstream_silent(status))
		return;
	u->dead_until_ms = now + DNS_UPSTREAM_DEAD_MS;
	if (!u->said_dead)
		log_warn("dns: upstream %s (%s) did not answer (%s)%s", u->name, ups->origin,
			 ares_strerror(status), ups->n > 1 ?
			 "; it goes last for 30 s" : "; allowed names get SERVFAIL while it is silent");
	u->said_dead = true;
}

static int try_next(struct up_query *uq);

/* c-ares' word for the outcome of a query, in ours. */
static enum dns_upstream_status status_of(int status)
{
	return status == ARES_SUCCESS ? DNS_UPSTREAM_ANSWER :
	       status == ARES_EDESTRUCTION ? DNS_UPSTREAM_GONE :
	       upstream_silent(status) ? DNS_UPSTREAM_SILENT : DNS_UPSTREAM_FAILED;
}

static void on_try(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
	struct up_query *uq = arg;
	struct dns_upstreams *ups = uq->ups;
	uint64_t now = now_ms();

	(void)timeouts;
	uq->via->pending--;
	if (status != ARES_EDESTRUCTION) {
		bool failed = status != ARES_SUCCESS || answer_failed(status, abuf, alen);

		mark(ups, uq->at, status, now);
		if (failed && uq->tries < DNS_UPSTREAM_MAX_TRIES &&
		    now - uq->start_ms < DNS_UPSTREAM_BUDGET_MS &&
		    (upstream_silent(status) || !all_tried(ups, uq->tried)) &&
		    try_next(uq) == 0)
			return;
	}
	if (status == ARES_SUCCESS && (!abuf || alen <= 0))
		status = ARES_EBADRESP;
	uq->done(uq->arg, status_of(status), abuf, status == ARES_SUCCESS ? (size_t)alen : 0);
	spares_put(&ups->spare, uq);
}

/* The next try of @uq; -ENOMEM if its channel could not be made (then
 * @uq is the caller's). */
static int try_next(struct up_query *uq)
{
	struct dns_upstreams *ups = uq->ups;
	struct upstream *u;
	struct chan *c;

	uq->at = pick(ups, uq->tried, now_ms());
	uq->tried |= 1U << uq->at;
	uq->tries++;
	u = &ups->s[uq->at];
	c = uq->tcp ? upstream_chan_tcp(ups, u) : upstream_chan_udp(ups, u);
	if (!c)
		return -ENOMEM;
	uq->via = c;
	c->sent++;
	c->pending++;
	ares_send(c->ch, uq->msg, (int)uq->len, on_try, uq);
	upstream_rearm(ups);
	return 0;
}

int dns_upstream_send(struct dns_upstreams *ups, bool tcp, const uint8_t *msg,
		      size_t len, dns_upstream_done done, void *arg)
{
	struct up_query *uq;

	if (len > sizeof(uq->msg))
		return -EMSGSIZE;
	/* No allocation of egret's per query once as many were in flight. */
	uq = spares_get(&ups->spare, sizeof(*uq));
	if (!uq)
		return -ENOMEM;
	*uq = (struct up_query){ .ups = ups, .done = done, .arg = arg, .tcp = tcp,
				 .start_ms = now_ms(), .len = len };
	memcpy(uq->msg, msg, len);
	if (try_next(uq) < 0) {
		spares_put(&ups->spare, uq);
		return -ENOMEM;
	}
	return 0;
}
