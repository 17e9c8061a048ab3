// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "git/harvest.h"
#include "lib/util.h"

const char git_harvest_help[] =
	"What it switches off (git/harvest.h):\n"
	"  - the git directories git's pointer files name: pinned (GIT_DIR,\n"
	"    GIT_COMMON_DIR, GIT_WORK_TREE) to a clone's .git or a worktree's\n"
	"    checked layout, so no .git file, commondir or core.worktree an\n"
	"    attempt wrote picks other ones\n"
	"  - core.fsmonitor, hooks (core.hooksPath=/dev/null), the pager, the\n"
	"    editor (GIT_EDITOR=:), submodule recursion (a nested repository's\n"
	"    own configuration is never read), the ext:: transport (file:// only\n"
	"    as your own)\n"
	"  - external diffs and textconv in the diff commands (--no-ext-diff,\n"
	"    --no-textconv); the repository's upload-pack and receive-pack\n"
	"    (--upload-pack, --receive-pack)\n"
	"  - what the repository's own configuration sets, where it can run a\n"
	"    program: filter drivers, textconv, credential helpers, core.sshCommand,\n"
	"    core.askPass, proxies, signing programs, interactive.diffFilter -\n"
	"    your system or global value is\n"
	"    used, or a neutral one; keys no later value undoes (url.*.insteadOf,\n"
	"    core.gitProxy, hook.*, diff.external, diff.*.command, merge.*.driver,\n"
	"    trailer.*.cmd, remote.*.vcs, ...) make it refuse, naming the key\n"
	"  - aliases and git-* commands from PATH: only the commands below run\n"
	"  - relative PATH entries: neither git nor a helper is found in the\n"
	"    worktree\n";

/* ---- the commands ------------------------------------------------ */

static const char *const diff_adds[] = { "--no-ext-diff", "--no-textconv", NULL };
static const char *const textconv_adds[] = { "--no-textconv", NULL };
/* remote.*.uploadpack and receivepack: the first one git reads wins, the
 * repository's before any -c; the option wins over both. */
static const char *const push_adds[] = { "--receive-pack=git-receive-pack", NULL };
static const char *const fetch_adds[] = { "--upload-pack=git-upload-pack", NULL };

static const struct git_harvest_cmd commands[] = {
	{ "add", NULL },
	{ "blame", textconv_adds },
	{ "branch", NULL },
	{ "cat-file", NULL },
	{ "check-attr", NULL },
	{ "check-ignore", NULL },
	{ "checkout", NULL },
	{ "clean", NULL },
	{ "commit", NULL },
	{ "count-objects", NULL },
	{ "describe", NULL },
	{ "diff", diff_adds },
	{ "diff-files", diff_adds },
	{ "diff-index", diff_adds },
	{ "diff-tree", diff_adds },
	{ "fetch", fetch_adds },
	{ "for-each-ref", NULL },
	{ "format-patch", diff_adds },
	{ "grep", textconv_adds },
	{ "log", diff_adds },
	{ "ls-files", NULL },
	{ "ls-remote", fetch_adds },
	{ "ls-tree", NULL },
	{ "push", push_adds },
	{ "remote", NULL },
	{ "reset", NULL },
	{ "restore", NULL },
	{ "rev-list", NULL },
	{ "rev-parse", NULL },
	{ "shortlog", NULL },
	{ "show", diff_adds },
	{ "show-ref", NULL },
	{ "status", NULL },
	{ "switch", NULL },
	{ "tag", NULL },
	{ "version", NULL },
};

const struct git_harvest_cmd *git_harvest_cmd(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

void git_harvest_cmd_list(char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(commands) && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", commands[i].name);
}

/* ---- git's argv -------------------------------------------------- */

void git_harvest_init(struct git_harvest *h, const char *git)
{
	*h = (struct git_harvest){ .argc = 1 };
	h->argv[0] = git;
}

void git_harvest_free(struct git_harvest *h)
{
	for (size_t i = 0; i < h->nowned; i++)
		free(h->owned[i]);
	h->nowned = 0;
}

int git_harvest_push(struct git_harvest *h, const char *word)
{
	if (h->argc >= GIT_HARVEST_ARGS_MAX)
		return -E2BIG;
	h->argv[h->argc++] = word;
	h->argv[h->argc] = NULL;
	return 0;
}

int git_harvest_config(struct git_harvest *h, const char *key, const char *value)
{
	char *pair;
	int r;

	if (strchr(key, '='))
		return -EINVAL;
	if (h->argc + 2 > GIT_HARVEST_ARGS_MAX || h->nowned >= ARRAY_SIZE(h->owned))
		return -E2BIG;
	if (asprintf(&pair, "%s=%s", key, value) < 0)
		return -ENOMEM;
	h->owned[h->nowned++] = pair;
	r = git_harvest_push(h, "-c");
	return r < 0 ? r : git_harvest_push(h, pair);
}

/* What every run gets, whatever the repository says. */
static const char *const base_config[][2] = {
	{ "core.fsmonitor", "false" },
	{ "core.hooksPath", "/dev/null" },
	{ "core.pager", "cat" },
	{ "submodule.recurse", "false" },
	{ "diff.ignoreSubmodules", "all" },
	{ "status.submoduleSummary", "false" },
	{ "fetch.recurseSubmodules", "false" },
	{ "push.recurseSubmodules", "no" },
	{ "protocol.ext.allow", "never" },
	{ "protocol.file.allow", "user" },
	{ "log.showSignature", "false" },
	{ "gc.auto", "0" },
	{ "maintenance.auto", "false" },
};

int git_harvest_base(struct git_harvest *h)
{
	int r = git_harvest_push(h, "--no-pager");

	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(base_config); i++)
		r = git_harvest_config(h, base_config[i][0], base_config[i][1]);
	return r;
}

/* ---- the repository's own configuration -------------------------- */

enum sub_rule { SUB_NONE, SUB_ANY, SUB_EITHER };

enum key_action {
	KEY_NEUTRAL,	/* the miner's value, else @neutral */
	KEY_HELPERS,	/* the helper list reset, the miner's helpers again */
	KEY_REFUSE,	/* no later value undoes it */
};

struct key_rule {
	const char *section;	/* as git lists it: lower case */
	enum sub_rule sub;
	const char *subsection;	/* only this one, or NULL */
	const char *variable;	/* lower case */
	enum key_action action;
	const char *neutral;
};

/* First match wins. Each a key git takes a program (or a route) from. */
static const struct key_rule key_rules[] = {
	{ "filter", SUB_ANY, NULL, "clean", KEY_NEUTRAL, "" },
	{ "filter", SUB_ANY, NULL, "smudge", KEY_NEUTRAL, "" },
	{ "filter", SUB_ANY, NULL, "process", KEY_NEUTRAL, "" },
	{ "filter", SUB_ANY, NULL, "required", KEY_NEUTRAL, "false" },
	{ "diff", SUB_ANY, NULL, "textconv", KEY_NEUTRAL, "cat" },
	{ "diff", SUB_ANY, NULL, "command", KEY_REFUSE, NULL },
	{ "diff", SUB_NONE, NULL, "external", KEY_REFUSE, NULL },
	{ "merge", SUB_ANY, NULL, "driver", KEY_REFUSE, NULL },
	{ "interactive", SUB_NONE, NULL, "difffilter", KEY_NEUTRAL, "cat" },
	{ "credential", SUB_EITHER, NULL, "helper", KEY_HELPERS, NULL },
	{ "core", SUB_NONE, NULL, "sshcommand", KEY_NEUTRAL, "ssh" },
	{ "core", SUB_NONE, NULL, "askpass", KEY_NEUTRAL, "" },
	{ "core", SUB_NONE, NULL, "gitproxy", KEY_REFUSE, NULL },
	{ "core", SUB_NONE, NULL, "alternaterefscommand", KEY_REFUSE, NULL },
	{ "remote", SUB_ANY, NULL, "proxy", KEY_NEUTRAL, "" },
	{ "remote", SUB_ANY, NULL, "vcs", KEY_REFUSE, NULL },
	{ "http", SUB_EITHER, NULL, "proxy", KEY_NEUTRAL, "" },
	{ "url", SUB_ANY, NULL, "insteadof", KEY_REFUSE, NULL },
	{ "url", SUB_ANY, NULL, "pushinsteadof", KEY_REFUSE, NULL },
	{ "gpg", SUB_NONE, NULL, "program", KEY_NEUTRAL, "gpg" },
	{ "gpg", SUB_ANY, "openpgp", "program", KEY_NEUTRAL, "gpg" },
	{ "gpg", SUB_ANY, "x509", "program", KEY_NEUTRAL, "gpgsm" },
	{ "gpg", SUB_ANY, "ssh", "program", KEY_NEUTRAL, "ssh-keygen" },
	{ "gpg", SUB_ANY, NULL, "program", KEY_REFUSE, NULL },
	{ "gpg", SUB_ANY, NULL, "defaultkeycommand", KEY_REFUSE, NULL },
	{ "trailer", SUB_ANY, NULL, "cmd", KEY_REFUSE, NULL },
	{ "trailer", SUB_ANY, NULL, "command", KEY_REFUSE, NULL },
	{ "hook", SUB_ANY, NULL, NULL, KEY_REFUSE, NULL },
};

/* One entry of the listing: "SCOPE\0KEY[\nVALUE]\0". */
struct entry {
	const char *scope;
	char key[512];
	const char *value;	/* NULL: a key with no value */
	size_t value_len;
};

/* The entry at *@at, or 0 at the end, -EINVAL if malformed. */
static int next_entry(const char *text, size_t len, size_t *at, struct entry *e)
{
	const char *scope = text + *at, *kv, *end, *nl;
	size_t klen;

	if (*at >= len)
		return 0;
	end = memchr(scope, '\0', len - *at);
	if (!end)
		return -EINVAL;
	kv = end + 1;
	if (kv >= text + len || !(end = memchr(kv, '\0', (size_t)(text + len - kv))))
		return -EINVAL;
	nl = memchr(kv, '\n', (size_t)(end - kv));
	klen = (size_t)((nl ? nl : end) - kv);
	if (!klen || klen >= sizeof(e->key))
		return -EINVAL;
	memcpy(e->key, kv, klen);
	e->key[klen] = '\0';
	e->scope = scope;
	e->value = nl ? nl + 1 : NULL;
	e->value_len = nl ? (size_t)(end - nl - 1) : 0;
	*at = (size_t)(end + 1 - text);
	return 1;
}

/* The repository's own: its config, config.worktree and their includes. */
static bool repo_scope(const char *scope)
{
	return !strcmp(scope, "local") || !strcmp(scope, "worktree");
}

static const struct key_rule *rule_for(const char *key)
{
	const char *dot = strchr(key, '.'), *last = strrchr(key, '.');
	size_t slen = dot ? (size_t)(dot - key) : 0;
	bool has_sub = dot && last != dot;

	if (!dot)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(key_rules); i++) {
		const struct key_rule *k = &key_rules[i];

		if (strlen(k->section) != slen || strncmp(k->section, key, slen))
			continue;
		if ((k->sub == SUB_NONE && has_sub) || (k->sub == SUB_ANY && !has_sub))
			continue;
		if (k->subsection && (!has_sub || (size_t)(last - dot - 1) != strlen(k->subsection) ||
				      strncmp(dot + 1, k->subsection, strlen(k->subsection))))
			continue;
		if (k->variable && strcmp(last + 1, k->variable))
			continue;
		return k;
	}
	return NULL;
}

/* Did an entry before @upto of the repository's set @key already? */
static bool seen_before(const char *text, size_t upto, const char *key)
{
	struct entry e;
	size_t at = 0;

	while (at < upto && next_entry(text, upto, &at, &e) > 0)
		if (repo_scope(e.scope) && !strcmp(e.key, key))
			return true;
	return false;
}

/* The miner's last value of @key (system, global, command), or NULL. */
static char *miners_value(const char *text, size_t len, const char *key)
{
	struct entry e, last = { .scope = NULL };
	size_t at = 0;

	while (next_entry(text, len, &at, &e) > 0)
		if (!repo_scope(e.scope) && !strcmp(e.key, key))
			last = e;
	if (!last.scope)
		return NULL;
	return last.value ? strndup(last.value, last.value_len) : strdup("true");
}

/* The miner's credential helpers, appended again after the resets. */
static int helpers_again(struct git_harvest *h, const char *text, size_t len)
{
	struct entry e;
	size_t at = 0;
	int r = 0;

	while (r == 0 && next_entry(text, len, &at, &e) > 0) {
		const struct key_rule *k = rule_for(e.key);
		char *v;

		if (repo_scope(e.scope) || !k || k->action != KEY_HELPERS)
			continue;
		v = e.value ? strndup(e.value, e.value_len) : strdup("");
		r = v ? git_harvest_config(h, e.key, v) : -ENOMEM;
		free(v);
	}
	return r;
}

static int override(struct git_harvest *h, const struct key_rule *k, const char *key,
		    const char *text, size_t len)
{
	char *v;
	int r;

	if (k->action == KEY_HELPERS)
		return git_harvest_config(h, key, "");	/* resets the list */
	v = miners_value(text, len, key);
	r = git_harvest_config(h, key, v ? v : k->neutral);
	free(v);
	return r;
}

int git_harvest_scan(struct git_harvest *h, const char *text, size_t len,
		     char *err, size_t errlen)
{
	bool helpers = false;
	struct entry e;
	size_t at = 0, before;
	int r;

	err[0] = '\0';
	for (before = at; (r = next_entry(text, len, &at, &e)) > 0; before = at) {
		const struct key_rule *k = repo_scope(e.scope) ? rule_for(e.key) : NULL;

		if (!k || seen_before(text, before, e.key))
			continue;
		if (k->action == KEY_REFUSE)
			return snprintf(err, errlen, "the repository's own configuration (%s) sets %s, which can make git run a program, and no later setting undoes it: remove it first",
					e.scope, e.key), -EPERM;
		helpers |= k->action == KEY_HELPERS;
		r = override(h, k, e.key, text, len);
		if (r == -EINVAL)
			return snprintf(err, errlen, "the repository's own configuration sets %s, which a command line cannot override: remove it first",
					e.key), -EPERM;
		if (r < 0)
			return r;
	}
	if (r < 0)
		return snprintf(err, errlen, "git config --list printed what egret cannot read"), r;
	return helpers ? helpers_again(h, text, len) : 0;
}
