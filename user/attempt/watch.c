// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "attempt/watch.h"
#include "dns/proxy.h"
#include "lib/log.h"
#include "requests/approvals.h"

static void apply_new(struct approvals_watch *w)
{
	struct approvals a = {};
	struct diag d = {};
	struct policy add;
	int nhosts = 0, nspecs = 0, r;

	policy_init(&add);
	memcpy(add.entry_ports, w->rules.entry_ports, sizeof(add.entry_ports));
	add.nentry_ports = w->rules.nentry_ports;
	r = approvals_load(&a, w->path, w->repo, &d);
	if (r == 0)
		r = approvals_apply(&a, &add);
	if (r < 0) {
		log_warn("approvals: %s; not applied to this attempt",
			 d.n ? d.msg[0] : strerror(-r));
		goto out;
	}
	for (size_t i = 0; i < add.nhosts; i++) {
		if (policy_has_host(&w->rules, &add.hosts[i]))
			continue;
		if (policy_add_host(&w->rules, &add.hosts[i]) < 0)
			break;
		nhosts++;
	}
	for (size_t i = 0; i < add.nspecs; i++) {
		if (policy_has_spec(&w->rules, &add.specs[i]))
			continue;
		if (policy_add_spec(&w->rules, &add.specs[i]) < 0)
			break;
		nspecs++;
	}
	/* All of them again: a prefix entry holds the rules of the prefixes
	 * that cover it, so a new one can change entries written before
	 * (exact entries merge, prefixes are rewritten whole). */
	if (nspecs) {
		const struct allow_spec *bad = NULL;
		char text[96] = "?";

		r = allow_write_static(&w->maps, w->rules.specs, w->rules.nspecs, &bad);
		if (r < 0) {
			if (bad)
				spec_format(bad, text, sizeof(text));
			log_warn("approvals: cannot write %s: %s", text, strerror(-r));
		}
	}
	/* rules.hosts may have moved: the proxy always gets the current array. */
	dns_proxy_set_rules(w->dns, w->rules.hosts, w->rules.nhosts);
	if (nhosts || nspecs)
		log_info("approvals: %d hosts and %d addresses added from %s",
			 nhosts, nspecs, w->path);
out:
	approvals_free(&a);
	policy_free(&add);
}

static void on_timer(struct loop_source *src, uint32_t events)
{
	struct approvals_watch *w = container_of(src, struct approvals_watch, timer);
	uint64_t ticks;

	(void)events;
	if (read(src->fd, &ticks, sizeof(ticks)) < 0)
		return;
	if (approvals_changed(w->path, &w->stamp))
		apply_new(w);
}

int approvals_watch_start(struct approvals_watch *w, struct loop *loop,
			  const char *path, const char *repo,
			  const struct stat *stamp, const struct policy *base,
			  struct dns_proxy *dns, const struct allow_maps *maps)
{
	int r = 0;

	*w = (struct approvals_watch){ .path = path, .repo = repo,
				       .stamp = *stamp, .dns = dns,
				       .maps = *maps, .loop = loop,
				       .timer = { .fd = -1, .fn = on_timer } };
	policy_init(&w->rules);
	memcpy(w->rules.entry_ports, base->entry_ports, sizeof(base->entry_ports));
	w->rules.nentry_ports = base->nentry_ports;
	for (size_t i = 0; i < base->nhosts && r == 0; i++)
		r = policy_add_host(&w->rules, &base->hosts[i]);
	for (size_t i = 0; i < base->nspecs && r == 0; i++)
		r = policy_add_spec(&w->rules, &base->specs[i]);
	if (r < 0)
		return r;
	dns_proxy_set_rules(dns, w->rules.hosts, w->rules.nhosts);
	w->timer.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (w->timer.fd < 0)
		return -errno;
	r = timerfd_arm_ms(w->timer.fd, APPROVALS_POLL_MS, true);
	if (r == 0)
		r = loop_watch(loop, &w->timer, EPOLLIN);
	/* An approval may have landed between reading and watching. */
	if (r == 0 && approvals_changed(w->path, &w->stamp))
		apply_new(w);
	return r;
}

void approvals_watch_stop(struct approvals_watch *w)
{
	loop_source_close(w->loop, &w->timer);
	w->loop = NULL;
}

void approvals_watch_free(struct approvals_watch *w)
{
	approvals_watch_stop(w);
	policy_free(&w->rules);
}
