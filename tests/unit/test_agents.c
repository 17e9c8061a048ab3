// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_agents.c - agent profiles (issue 40): the catalog's `agents:`
 * section, `agents:` in a policy (top level and per repository), which
 * names are quiet, and that a quiet name is counted as such and never
 * becomes a request.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "observe/events.h"
#include "observe/summary.h"
#include "policy/load.h"
#include "policy/yaml.h"
#include "requests/log.h"

struct fixture {
	struct catalog *cat;
	struct policy_doc doc;
	struct policy p;
	struct diag d;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];

	if (!f || !(f->cat = calloc(1, sizeof(*f->cat))) ||
	    catalog_load(f->cat, err, sizeof(err)) < 0)
		return -1;
	policy_init(&f->p);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	policy_doc_free(&f->doc);
	policy_free(&f->p);
	free(f->cat);
	free(f);
	return 0;
}

static int parse(struct fixture *f, const char *yaml)
{
	policy_doc_free(&f->doc);
	memset(&f->d, 0, sizeof(f->d));
	return policy_doc_parse(&f->doc, yaml, strlen(yaml), "t.yaml", f->cat, &f->d);
}

static void resolve_ok(struct fixture *f, const char *yaml, const char *repo)
{
	if (parse(f, yaml) != 0)
		fail_msg("rejected: %s", f->d.n ? f->d.msg[0] : "?");
	policy_free(&f->p);
	assert_int_equal(policy_resolve(&f->doc, f->cat, repo, NULL, &f->p, &f->d), 0);
}

/* The rule for @name (quiet or not, as asked), or NULL. */
static const struct host_rule *rule(const struct fixture *f, const char *name, bool quiet)
{
	for (size_t i = 0; i < f->p.nhosts; i++)
		if (!strcmp(f->p.hosts[i].name, name) && f->p.hosts[i].quiet == quiet)
			return &f->p.hosts[i];
	return NULL;
}

static bool allowed(const struct fixture *f, const char *name)
{
	struct port_range ports[EGRET_PORT_SLOTS];
	unsigned int n;
	bool any;

	return host_rules_match(f->p.hosts, f->p.nhosts, name, ports, &n, &any) > 0;
}

static bool quiet(const struct fixture *f, const char *name)
{
	return host_rules_quiet(f->p.hosts, f->p.nhosts, name) != NULL;
}

/* Every built-in profile is measured, budgeted, and keeps its work and
 * its noise apart. */
static void builtin_profiles(void **state)
{
	struct fixture *f = *state;
	const char *names[] = { "claude-code", "codex", "gemini-cli" };

	assert_int_equal(f->cat->n[CATALOG_AGENT], 3);
	for (size_t i = 0; i < 3; i++) {
		const struct catalog_entry *e = catalog_find(f->cat, CATALOG_AGENT, names[i]);

		assert_non_null(e);
		assert_true(e->nhosts > 0);
		assert_non_null(strstr(e->measured, "2026-"));
		assert_true(e->upload_limit >= 64ULL << 20);
		assert_int_equal(e->nports, 1);
		assert_int_equal(e->ports[0].lo, 443);
	}
	assert_string_equal(catalog_find(f->cat, CATALOG_AGENT, "codex")->quiet[0],
			    "ab.chatgpt.com");
	assert_string_equal(catalog_find(f->cat, CATALOG_AGENT, "gemini-cli")->quiet[0],
			    "play.googleapis.com");
}

static void catalog_refuses_bad_profiles(void **state)
{
	static const char *const bad[] = {
		/* a host both work and noise */
		"agents:\n  x:\n    measured: v1\n    source: s\n    ports: [443]\n"
		"    upload_limit: 1M\n    hosts: [a.example]\n    quiet: [a.example]\n",
		/* not measured */
		"agents:\n  x:\n    source: s\n    ports: [443]\n    upload_limit: 1M\n"
		"    hosts: [a.example]\n",
		/* no budget */
		"agents:\n  x:\n    measured: v1\n    source: s\n    ports: [443]\n"
		"    hosts: [a.example]\n",
		/* a wildcard is never quiet */
		"agents:\n  x:\n    measured: v1\n    source: s\n    ports: [443]\n"
		"    upload_limit: 1M\n    hosts: [a.example]\n    quiet: [\"*.b.example\"]\n",
		/* quiet is an agent's key only */
		"ecosystems:\n  x:\n    source: s\n    ports: [443]\n    hosts: [a.example]\n"
		"    quiet: [b.example]\n",
	};
	struct catalog *c = calloc(1, sizeof(*c));
	char err[256];

	(void)state;
	assert_non_null(c);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(catalog_parse(c, bad[i], strlen(bad[i]), "c.yaml", err,
					       sizeof(err)), -EINVAL);
	free(c);
}

/* `agents:` expands to the profile's hosts (with its budget) and its quiet
 * names; a repository's section adds to the top level's. */
static void agents_merge(void **state)
{
	struct fixture *f = *state;
	const struct host_rule *h;

	resolve_ok(f, "version: 1\nagents: [codex]\nrepos:\n  acme/app:\n"
		      "    agents: [gemini-cli]\n", "acme/app");
	h = rule(f, "api.openai.com", false);
	assert_non_null(h);
	assert_string_equal(h->origin, "agents: codex");
	assert_int_equal(h->upload_limit,
			 catalog_find(f->cat, CATALOG_AGENT, "codex")->upload_limit);
	assert_int_equal(h->nports, 1);
	assert_int_equal(h->ports[0].lo, 443);
	assert_non_null(rule(f, "generativelanguage.googleapis.com", false));
	assert_non_null(rule(f, "ab.chatgpt.com", true));
	assert_non_null(rule(f, "play.googleapis.com", true));

	/* Another repository: the top level's alone. */
	resolve_ok(f, "version: 1\nagents: [codex]\nrepos:\n  acme/app:\n"
		      "    agents: [gemini-cli]\n", "acme/other");
	assert_non_null(rule(f, "api.openai.com", false));
	assert_null(rule(f, "generativelanguage.googleapis.com", false));
	assert_null(rule(f, "play.googleapis.com", true));

	/* No agents: nothing of them. */
	resolve_ok(f, "version: 1\necosystems: [npm]\n", NULL);
	assert_null(rule(f, "api.openai.com", false));
	assert_null(rule(f, "ab.chatgpt.com", true));
}

static void agents_refused(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(parse(f, "version: 1\nagents: [codx]\n"), -EINVAL);
	assert_int_equal(f->d.n, 1);
	assert_non_null(strstr(f->d.msg[0], "t.yaml:2:10: agents: unknown name 'codx'"));
	assert_non_null(strstr(f->d.msg[0], "did you mean 'codex'"));
	assert_int_equal(parse(f, "version: 1\nrepos:\n  a/b:\n    agents: claude-code\n"),
			 -EINVAL);
	assert_non_null(strstr(f->d.msg[0], "t.yaml:4:13: agents: want a list of names"));
	assert_int_equal(parse(f, "version: 1\nagent: [codex]\n"), -EINVAL);
	assert_non_null(strstr(f->d.msg[0], "did you mean 'agents'"));
}

/* A quiet name allows nothing and is quiet; a name any other entry allows
 * is allowed and not quiet (the git remote, hosts:, another profile). */
static void quiet_classification(void **state)
{
	struct fixture *f = *state;

	resolve_ok(f, "version: 1\nagents: [codex]\n", NULL);
	assert_false(allowed(f, "ab.chatgpt.com"));
	assert_true(quiet(f, "ab.chatgpt.com"));
	assert_false(quiet(f, "AB.chatgpt.com"));	/* the proxy lower-cases first */
	assert_false(quiet(f, "x.ab.chatgpt.com"));		/* exact names only */
	assert_false(quiet(f, "api.openai.com"));
	assert_true(allowed(f, "api.openai.com"));
	assert_false(quiet(f, "evil.example"));
	assert_false(allowed(f, "evil.example"));

	resolve_ok(f, "version: 1\nagents: [codex]\nhosts: [github.com, \"*.chatgpt.com:443\"]\n",
		   NULL);
	assert_true(allowed(f, "github.com"));
	assert_false(quiet(f, "github.com"));
	assert_true(allowed(f, "ab.chatgpt.com"));		/* a wildcard allows it */
	assert_false(quiet(f, "ab.chatgpt.com"));
	assert_true(quiet(f, "api.github.com"));
	/* Quiet rules give no budget, pin nothing, name no destination. */
	resolve_ok(f, "version: 1\nagents: [codex]\n", NULL);
	assert_int_equal(host_rules_upload_limit(f->p.hosts, f->p.nhosts, "chatgpt.com"), 0);
	assert_false(host_rules_unpinned(f->p.hosts, f->p.nhosts, "chatgpt.com"));
}

/* `upload_limits: {agents: SIZE}` replaces every profile's budget; `none`
 * removes them; a repository's overrides the top level's. */
static void agents_budget(void **state)
{
	struct fixture *f = *state;

	resolve_ok(f, "version: 1\nagents: [claude-code]\nupload_limits: {agents: 1M}\n", NULL);
	assert_int_equal(rule(f, "api.anthropic.com", false)->upload_limit, 1 << 20);
	resolve_ok(f, "version: 1\nagents: [claude-code]\nupload_limits: {agents: none}\n", NULL);
	assert_int_equal(rule(f, "api.anthropic.com", false)->upload_limit, 0);
	resolve_ok(f, "version: 1\nagents: [claude-code]\nupload_limits: {agents: 1M}\n"
		      "repos:\n  a/b:\n    upload_limits: {agents: 2M}\n", "a/b");
	assert_int_equal(rule(f, "api.anthropic.com", false)->upload_limit, 2 << 20);
	resolve_ok(f, "version: 1\nagents: [claude-code]\n", NULL);
	assert_int_equal(rule(f, "api.anthropic.com", false)->upload_limit, 256ULL << 20);
}

/* A quiet name refused by the proxy is no request; a plain denial is. */
static void quiet_is_no_request(void **state)
{
	struct request_log l;
	struct dns_decision d = { .name = "ab.chatgpt.com", .qtype = DNS_TYPE_A,
				  .verdict = DNS_VERDICT_DENY, .why = DNS_WHY_QUIET };

	(void)state;
	assert_int_equal(request_log_open(&l, "/nonexistent", "a/b", "t", NULL), 0);
	request_log_lookup(&l, &d);
	d.verdict = DNS_VERDICT_WOULD_DENY;	/* --audit */
	request_log_lookup(&l, &d);
	assert_int_equal(l.n, 0);
	d = (struct dns_decision){ .name = "evil.example", .qtype = DNS_TYPE_A,
				   .verdict = DNS_VERDICT_DENY, .why = DNS_WHY_NOT_ALLOWED };
	request_log_lookup(&l, &d);
	assert_int_equal(l.n, 1);
	free(l.seen);
}

/* The summary counts quiet names apart: on its first line only when some
 * came, and each after the denials that need attention, as quiet. */
static void quiet_in_summary(void **state)
{
	static struct events ev;	/* zeroed, as events_open() wants */
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	(void)state;
	assert_int_equal(events_open(&ev, NULL, "t1", false), 0);
	for (int i = 0; i < 3; i++)
		events_dns(&ev, &(struct dns_decision){ .name = "play.googleapis.com",
			.qtype = DNS_TYPE_A, .verdict = DNS_VERDICT_DENY, .why = DNS_WHY_QUIET });
	events_dns(&ev, &(struct dns_decision){ .name = "evil.example", .qtype = DNS_TYPE_A,
		.verdict = DNS_VERDICT_DENY, .why = DNS_WHY_NOT_ALLOWED });
	out = open_memstream(&buf, &len);
	assert_non_null(out);
	summary_print(&ev, out);
	fclose(out);
	assert_non_null(strstr(buf, "DNS 0 answered, 1 names denied, 3 quiet, 0 failed\n"));
	assert_non_null(strstr(buf, "egret:   name denied      1 x evil.example: not allowed"
				    " by the policy\negret:   quiet            3 x play.googleapis.com: "));
	free(buf);
	events_close(&ev);

	/* None: the first line as it always was. */
	memset(&ev, 0, sizeof(ev));
	assert_int_equal(events_open(&ev, NULL, "t2", false), 0);
	out = open_memstream(&buf, &len);
	summary_print(&ev, out);
	fclose(out);
	assert_non_null(strstr(buf, "DNS 0 answered, 0 names denied, 0 failed\n"));
	free(buf);
	events_close(&ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(builtin_profiles, setup, teardown),
		cmocka_unit_test(catalog_refuses_bad_profiles),
		cmocka_unit_test_setup_teardown(agents_merge, setup, teardown),
		cmocka_unit_test_setup_teardown(agents_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(quiet_classification, setup, teardown),
		cmocka_unit_test_setup_teardown(agents_budget, setup, teardown),
		cmocka_unit_test(quiet_is_no_request),
		cmocka_unit_test(quiet_in_summary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
