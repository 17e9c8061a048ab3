// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attempt/programs.c - an attempt's programs: their settings from its
 * options, the set of programs got (loaded or the pinned one), the
 * attempt's maps pinned and filled, attached to its cgroup, configured
 * last. Each step fails closed with one line naming it.
 */
#include <errno.h>
#include <limits.h>

#include "attempt/attempt.h"
#include "attempt/cgroup.h"
#include "attempt/effective.h"
#include "attempt/attempt_impl.h"
#include "attempt/options.h"
#include "dns/proxy.h"
#include "enforce/allow.h"
#include "enforce/shared.h"
#include "enforce/sockkill.h"
#include "enforce/unix_filter.h"
#include "lib/log.h"
#include "policy/spec.h"

const char *attempt_priv_hint(int r)
{
	return r == -EPERM || r == -EACCES ?
		" (needs root, or CAP_BPF, CAP_NET_ADMIN and CAP_SYS_ADMIN)" : "";
}

/*
 * The errno refused connects fail with (docs/CLIENTS.md): the operator's,
 * or the default where this kernel lets the programs choose it. An errno
 * asked for that this kernel cannot give is refused, not silently EPERM.
 */
static int pick_deny_errno(const struct run_opts *o)
{
	int can = loader_can_set_errno();

	if (can < 0)
		return log_error_errno(can, "probe the kernel's BPF helpers%s", attempt_priv_hint(can));
	if (o->deny_errno && o->deny_errno != EPERM && !can) {
		log_error("--deny-errno %s: this kernel can only refuse with EPERM (bpf_set_retval needs Linux 5.18)",
			  run_deny_errno_name(o->deny_errno));
		return -EOPNOTSUPP;
	}
	if (o->deny_errno)
		return o->deny_errno;
	if (!can)
		log_info("this kernel cannot choose the errno of a refused connect (bpf_set_retval, Linux 5.18): EPERM");
	return can ? RUN_DEFAULT_DENY_ERRNO : EPERM;
}

/* The programs' settings for @o: the proxy's port, the errno refusals
 * fail with (*@ret_deny_errno), the pinned ports. */
static int attempt_loader_opts(const struct attempt *a, const struct run_opts *o,
			       struct loader_opts *lo, int *ret_deny_errno)
{
	int r, deny_errno = pick_deny_errno(o);

	if (deny_errno < 0)
		return deny_errno;
	*lo = (struct loader_opts){
		.max_entries = (__u32)o->max_entries,
		.max_cidrs = (__u32)o->max_cidrs,
		.dns_port = dns_proxy_port(a->dns),
		.dns_ip6_loopback = dns_proxy_ip6_loopback(a->dns),
		.log_allowed = o->log_allowed, .audit = o->audit,
		.deny_errno = deny_errno == EPERM ? 0 : deny_errno,
	};
	for (unsigned int i = 0; !o->no_pinning && i < o->policy.npin_ports &&
			       i < EGRET_PIN_PORTS; i++)
		lo->pin_ports[i] = o->policy.pin_ports[i];
	for (unsigned int i = 0; !o->no_pinning && i < o->policy.nhttp_ports &&
			       i < EGRET_PIN_PORTS; i++)
		lo->http_ports[i] = o->policy.http_ports[i];
	/* A refused pinned connection may keep its hello or request queued:
	 * teardown must destroy it before the programs go (enforce/sockkill.h). */
	if ((lo->pin_ports[0] || lo->http_ports[0]) && (r = sockets_destroy_probe()) < 0)
		return log_error_errno(r, "SNI pinning needs a kernel that can destroy sockets (CONFIG_INET_DIAG_DESTROY); --no-pinning turns pinning off");
	*ret_deny_errno = deny_errno;
	return 0;
}

/* What the attempt's maps hold before its programs are attached: the
 * host's addresses (sources allowed, destinations special), its
 * destinations' table, the policy's static entries, the abstract socket
 * names it may reach. */
static int attempt_write_entries(struct attempt *a, const struct run_opts *o)
{
	const struct allow_spec *bad = NULL;
	struct allow_maps maps;
	int r;

	r = hostaddr_open(&a->host, a->ld.maps[LOADER_HOST4], a->ld.maps[LOADER_HOST6],
			  a->ld.key);
	if (r < 0)
		return log_error_errno(r, "read this host's addresses (rtnetlink, local table)%s",
				       r == -ENOSPC ? ": more than egret keeps" : "");
	dests_init(&a->ld.dests, a->ld.maps[LOADER_DEST_COUNTS], a->ld.maps[LOADER_DEST_TALLY],
		   a->ld.key, EGRET_DESTS_DEFAULT, effective_upload_limit(o->upload_limit, &o->policy));
	maps = loader_allow_maps(&a->ld);
	r = allow_write_static(&maps, o->policy.specs, o->policy.nspecs, &bad);
	if (r < 0) {
		char text[128] = "?";

		spec_format(bad, text, sizeof(text));
		return log_error_errno(r, "write allow entry %s%s", text,
				       r == -ENOSPC || r == -E2BIG ? " (more than 8 port rules for one address, or too many entries: raise --max-entries/--max-cidrs)" : "");
	}
	if (o->unix_filter) {
		r = unix_filter_allow(a->ld.maps[LOADER_UNIX_ALLOW], a->ld.key,
				      o->unix_names, o->nunix_names);
		if (r < 0)
			return log_error_errno(r, "write the allowed abstract socket names");
	}
	return 0;
}

int attempt_programs_attach(struct attempt *a, const struct run_opts *o,
			    int *ret_deny_errno)
{
	const char *step = NULL;
	char keep[PATH_MAX];
	struct loader_opts lo;
	uint64_t t1;
	int r, deny_errno = 0;

	t1 = mono_us();
	cgroup_keep_path(keep, sizeof(keep));
	r = shared_get(&a->ld, o->no_shared, keep[0] ? keep : NULL, &step);
	a->load_us = mono_us() - t1;
	if (r < 0)
		return log_error_errno(r, "%s%s (-v shows libbpf's detail)",
				       step, attempt_priv_hint(r));
	/* After the set: a pinned set tells what the kernel's probe said
	 * when it was loaded (loader_note_rodata), sparing the probe. */
	r = attempt_loader_opts(a, o, &lo, &deny_errno);
	if (r < 0)
		return r;
	/* Its maps pinned in its directory before it has any entry: whoever
	 * removes the attempt finds all of them there (gc.c). */
	r = loader_attempt_begin(&a->ld, a->cgroup_fd, a->st.pins, &lo, &step);
	if (r < 0)
		return log_error_errno(r, "%s %s", step, a->st.pins);
	r = attempt_write_entries(a, o);
	if (r < 0)
		return r;
	r = loader_attach_pin(&a->ld, a->cgroup_fd, a->st.pins, o->unix_filter, &step);
	if (r < 0)
		return log_error_errno(r, "%s %s%s (the kernel needs cgroup BPF and bpf_link)",
				       step, a->st.cgroup, attempt_priv_hint(r));
	/* Nothing runs in the cgroup yet: until this, its programs refuse
	 * everything (an unwritten storage names no attempt). */
	r = loader_configure(&a->ld, &lo, &step);
	if (r < 0)
		return log_error_errno(r, "%s", step);
	*ret_deny_errno = deny_errno;
	return 0;
}
