// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * attempt/show.c - what `egret status` prints: the live attempts, their
 * counters, and what each may reach right now, read from the records in
 * EGRET_RUN_DIR and the maps pinned under EGRET_PIN_ROOT/<id>/; as root,
 * or by egretd for a caller, of that caller's attempts alone.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "attempt/state.h"
#include "attempt/show.h"
#include "enforce/allow.h"
#include "enforce/loader.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/paths.h"
#include "lib/percpu.h"
#include "lib/util.h"
#include "lib/vocab.h"

struct out {
	bool json;
	bool first_entry;
};

static int pinned(const char *pins, enum loader_map map)
{
	char path[PATH_MAX];
	int r = path_fmt(path, sizeof(path), "%s/%s", pins, loader_map_names[map]);

	return r < 0 ? r : bpf_obj_get(path);
}

static int count_pids(const char *cgroup)
{
	char path[PATH_MAX], line[32];
	_cleanup_fclose_ FILE *f = NULL;
	int n = 0;

	if (path_fmt(path, sizeof(path), "%s/cgroup.procs", cgroup) == 0)
		f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		n++;
	return f ? n : -1;
}

static void print_counters(int fd, __u64 key, const struct out *o)
{
	if (fd < 0)
		return;
	printf(o->json ? ",\"counters\":{" : "  counters:");
	for (int h = 0; h < EGRET_HOOK_MAX; h++) {
		uint64_t a = percpu_counter(fd, key, EGRET_COUNTER(h, EGRET_VERDICT_ALLOW));
		uint64_t d = percpu_counter(fd, key, EGRET_COUNTER(h, EGRET_VERDICT_DENY));
		uint64_t w = percpu_counter(fd, key, EGRET_COUNTER(h, EGRET_VERDICT_WOULD_DENY));

		if (o->json)
			printf("%s\"%s\":{\"allow\":%llu,\"deny\":%llu,\"would_deny\":%llu}",
			       h ? "," : "", egret_hook_name(h), (unsigned long long)a,
			       (unsigned long long)d, (unsigned long long)w);
		else
			printf(" %s %llu/%llu%s", egret_hook_name(h), (unsigned long long)a,
			       (unsigned long long)(d + w), h + 1 < EGRET_HOOK_MAX ? ";" : "");
	}
	if (o->json)
		printf(",\"dropped_events\":%llu}",
		       (unsigned long long)percpu_counter(fd, key, EGRET_COUNTER_DROPPED));
	else
		printf(" (allowed/denied); %llu events dropped\n",
		       (unsigned long long)percpu_counter(fd, key, EGRET_COUNTER_DROPPED));
}

/* One allow entry: its live rules, with remaining lifetime. */
static void print_entry(struct out *o, const char *addr,
			const struct egret_allow *val, const char *name,
			uint64_t now)
{
	char ports[160] = "", life[32] = "static";
	size_t off = 0;
	uint64_t soonest = 0;
	int live = 0;

	for (int i = 0; i < EGRET_PORT_SLOTS; i++) {
		const struct egret_port_rule *r = &val->rules[i];

		if (r->expires_ns == EGRET_EXPIRES_UNUSED ||
		    (r->expires_ns != EGRET_EXPIRES_NEVER && r->expires_ns <= now))
			continue;
		live++;
		if (r->expires_ns != EGRET_EXPIRES_NEVER &&
		    (!soonest || r->expires_ns < soonest))
			soonest = r->expires_ns;
		if (r->port_lo == 0 && r->port_hi == 65535)
			off += (size_t)snprintf(ports + off, sizeof(ports) - off,
						o->json ? "%s\"any\"" : "%sany", live > 1 ? "," : "");
		else if (r->port_lo == r->port_hi)
			off += (size_t)snprintf(ports + off, sizeof(ports) - off, "%s%u",
						live > 1 ? "," : "", r->port_lo);
		else
			off += (size_t)snprintf(ports + off, sizeof(ports) - off,
						o->json ? "%s\"%u-%u\"" : "%s%u-%u",
						live > 1 ? "," : "", r->port_lo, r->port_hi);
		if (off >= sizeof(ports))
			break;
	}
	if (!live)
		return;		/* expired, awaiting the sweep */
	if (soonest)
		snprintf(life, sizeof(life), "%llu s",
			 (unsigned long long)((soonest - now) / 1000000000ULL));
	if (o->json) {
		printf("%s{\"addr\":\"%s\",\"ports\":[%s],\"expires_in\":", o->first_entry ? "" : ",",
		       addr, ports);
		if (soonest)
			printf("%llu", (unsigned long long)((soonest - now) / 1000000000ULL));
		else
			printf("null");
		printf(",\"name\":");
		if (name)
			printf("\"%s\"", name);
		else
			printf("null");
		printf("}");
	} else {
		printf("    %-40s %-20s %-10s %s\n", addr, ports, life,
		       name ? name : "-");
	}
	o->first_entry = false;
}

static const char *lookup_name(int names_fd, __u64 attempt, int family,
			       const __u32 *addr, struct egret_name *buf)
{
	struct egret_name_key key = { .attempt = attempt, .family = (__u32)family };

	memcpy(key.addr, addr, family == 4 ? 4 : 16);
	if (names_fd < 0 || bpf_map_lookup_elem(names_fd, &key, buf) < 0)
		return NULL;
	buf->name[sizeof(buf->name) - 1] = '\0';
	return buf->name;
}

/* Walk one pinned map (exact or trie, v4 or v6): the entries of attempt
 * @attempt (the maps are every attempt's). */
static void print_map(struct out *o, const char *pins, enum loader_map map,
		      int family, bool trie, int names_fd, __u64 attempt,
		      uint64_t now)
{
	unsigned char key[sizeof(struct egret_lpm_key6)], next[sizeof(key)];
	_cleanup_close_ int fd = pinned(pins, map);
	/* egret.h: a trie key holds the attempt after prefixlen. */
	size_t off = trie ? sizeof(__u32) : 0;
	void *prev = NULL;

	if (fd < 0)
		return;
	while (bpf_map_get_next_key(fd, prev, next) == 0) {
		struct egret_allow val;
		struct egret_name nb;
		char text[INET6_ADDRSTRLEN + 8];
		const __u32 *addr = (const __u32 *)(next + off + sizeof(__u64));
		size_t n;

		memcpy(key, next, sizeof(key));
		prev = key;
		if (memcmp(key + off, &attempt, sizeof(attempt)) ||
		    bpf_map_lookup_elem(fd, key, &val) < 0)
			continue;
		inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, text, sizeof(text));
		if (trie) {
			n = strlen(text);
			snprintf(text + n, sizeof(text) - n, "/%u",
				 *(const __u32 *)key - EGRET_LPM_ATTEMPT_BITS);
		}
		print_entry(o, text, &val, trie ? NULL :
			    lookup_name(names_fd, attempt, family, addr, &nb), now);
	}
}

/* The attempt's destinations, most bytes sent first: what it sent and
 * received so far, its connections, its budget (bpf/lib/account.h). */
static void print_destinations(struct out *o, const char *pins, __u64 attempt)
{
	_cleanup_close_ int fd = pinned(pins, LOADER_DEST_COUNTS);
	_cleanup_close_ int tally = pinned(pins, LOADER_DEST_TALLY);
	struct dest_figures *all = NULL;
	size_t n = 0;

	if (attempt && fd >= 0 && dests_read(fd, tally, attempt, &all, &n) < 0)
		n = 0;
	if (o->json)
		printf(",\"destinations\":[");
	else if (n)
		printf("    %-40s %-12s %-12s %-11s %s\n", "DESTINATION", "SENT", "RECEIVED",
		       "CONNECTIONS", "UPLOAD BUDGET");
	for (size_t i = 0; i < n; i++) {
		const struct egret_dest_count *c = &all[i].c;
		char sent[32], recv[32], budget[48] = "-";

		if (o->json) {
			printf("%s{\"name\":", i ? "," : "");
			json_fputs(stdout, c->name);
			printf(",\"sent\":%llu,\"received\":%llu,\"connections\":%llu,"
			       "\"budget\":", (unsigned long long)c->sent,
			       (unsigned long long)c->received, (unsigned long long)c->conns);
			printf(c->budget ? "%llu" : "null", (unsigned long long)c->budget);
			printf(",\"over_budget\":%s}", c->over ? "true" : "false");
			continue;
		}
		dests_size_text(c->sent, sent, sizeof(sent));
		dests_size_text(c->received, recv, sizeof(recv));
		if (c->budget) {
			dests_size_text(c->budget, budget, sizeof(budget));
			if (c->over)
				strncat(budget, " (exceeded)", sizeof(budget) - strlen(budget) - 1);
		}
		printf("    %-40s %-12s %-12s %-11llu %s\n", c->name, sent, recv,
		       (unsigned long long)c->conns, budget);
	}
	if (o->json)
		printf("]");
	free(all);
}

static void print_attempt(struct out *o, const struct attempt_state *st,
			  bool live, bool first)
{
	_cleanup_close_ int counters = pinned(st->pins, LOADER_COUNTERS);
	_cleanup_close_ int names = pinned(st->pins, LOADER_NAMES);
	_cleanup_close_ int cg = open(st->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	uint64_t now = allow_now_ns();
	__u64 key = 0;
	char started[32];
	struct tm tm;

	localtime_r(&st->started, &tm);
	strftime(started, sizeof(started), "%Y-%m-%d %H:%M:%S", &tm);
	/* The attempt's key, its cgroup's id; none once the cgroup is gone
	 * (and then no entry is shown: none is the attempt's any more). */
	if (cg < 0 || loader_cgroup_key(cg, &key) < 0)
		key = 0;
	if (o->json) {
		printf("%s{\"id\":\"%s\",\"live\":%s,\"egret_pid\":%d,\"cgroup\":\"%s\","
		       "\"pids\":%d,\"started\":%lld,\"repo\":", first ? "" : ",",
		       st->id, live ? "true" : "false", (int)st->pid, st->cgroup,
		       count_pids(st->cgroup), (long long)st->started);
		if (st->repo[0])
			printf("\"%s\"", st->repo);
		else
			printf("null");
		/* Every shared map's key begins with it (bpftool: .key.attempt). */
		printf(key ? ",\"key\":%llu" : ",\"key\":null", (unsigned long long)key);
	} else {
		printf("%s  %s%s  pids %d  started %s  repo %s\n  cgroup %s\n",
		       st->id, live ? "" : "(stale) ", live ? "live" : "",
		       count_pids(st->cgroup), started,
		       st->repo[0] ? st->repo : "-", st->cgroup);
		if (key)
			printf("  key %llu (the maps' .key.attempt: bpftool map dump pinned %s/egret_allow4 | jq '.[] | select(.key.attempt == %llu)')\n",
			       (unsigned long long)key, st->pins, (unsigned long long)key);
	}
	print_counters(key ? counters : -1, key, o);
	if (o->json)
		printf(",\"entries\":[");
	else
		printf("    %-40s %-20s %-10s %s\n", "ALLOWED", "PORTS", "EXPIRES", "NAME");
	o->first_entry = true;
	if (key) {
		print_map(o, st->pins, LOADER_ALLOW4, 4, false, names, key, now);
		print_map(o, st->pins, LOADER_ALLOW6, 6, false, names, key, now);
		print_map(o, st->pins, LOADER_CIDR4, 4, true, -1, key, now);
		print_map(o, st->pins, LOADER_CIDR6, 6, true, -1, key, now);
	}
	if (o->json)
		printf("]");
	print_destinations(o, st->pins, key);
	printf(o->json ? "}" : "\n");
}

int attempt_show(const struct show_filter *f)
{
	struct out o = { .json = f->json };
	struct dirent *de;
	DIR *dir;
	int shown = 0;

	dir = opendir(EGRET_RUN_DIR);
	if (!dir && errno != ENOENT) {
		log_error_errno(-errno, "status: read %s (needs root)", EGRET_RUN_DIR);
		return 1;
	}
	if (o.json)
		printf("{\"version\":1,\"attempts\":[");
	while (dir && (de = readdir(dir))) {
		struct attempt_state st;
		_cleanup_close_ int fd = -1;
		int live;

		if (de->d_name[0] == '.' || (f->only && strcmp(f->only, de->d_name)))
			continue;
		fd = openat(dirfd(dir), de->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 || state_read_fd(fd, &st) < 0)
			continue;
		/* A caller's view: its own attempts of this egretd, no other. */
		if (f->by_caller && (!st.daemon || st.caller != f->caller ||
				     strcmp(st.instance, f->instance)))
			continue;
		live = state_is_live(fd);
		print_attempt(&o, &st, live == 1, shown == 0);
		shown++;
	}
	if (dir)
		closedir(dir);
	if (o.json)
		printf("]}\n");
	else if (!shown)
		printf(f->only ? "no attempt %s\n" : "no attempts\n", f->only);
	fflush(stdout);
	return f->only && !shown ? 1 : 0;
}
