// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch/environ.h"
#include "launch/user.h"
#include "lib/util.h"

/* Variables that name the caller's own places: wrong for another user. */
static const char *const callers_places[] = {
	"HOME", "USER", "LOGNAME", "SHELL", "MAIL", "XDG_RUNTIME_DIR",
	"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
};

bool environ_assignment_valid(const char *text, bool want_value)
{
	size_t i;

	if (!((text[0] >= 'A' && text[0] <= 'Z') || (text[0] >= 'a' && text[0] <= 'z') ||
	      text[0] == '_'))
		return false;
	for (i = 1; text[i] && text[i] != '='; i++)
		if (!((text[i] >= 'A' && text[i] <= 'Z') || (text[i] >= 'a' && text[i] <= 'z') ||
		      (text[i] >= '0' && text[i] <= '9') || text[i] == '_'))
			return false;
	return want_value ? text[i] == '=' : text[i] == '\0';
}

/* Is @entry ("NAME=VALUE") the variable @name? */
static bool is_var(const char *entry, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(entry, name, n) && entry[n] == '=';
}

static bool is_any(const char *entry, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (is_var(entry, names[i]))
			return true;
	return false;
}

/* The list under construction: pointers into @from, or into @own. */
struct env_list {
	const char *v[ENVIRON_MAX_VARS];
	size_t n;
	char own[8][4200];		/* HOME=, USER=, ... PATH= */
	size_t nown;
};

static int add(struct env_list *l, const char *entry)
{
	if (l->n == ENVIRON_MAX_VARS)
		return -E2BIG;
	l->v[l->n++] = entry;
	return 0;
}

/* Replace (or add) NAME with "NAME=VALUE" formatted into our storage. */
static int put(struct env_list *l, const char *name, const char *value)
{
	char *slot;

	if (l->nown == 8)
		return -E2BIG;
	slot = l->own[l->nown++];
	if ((size_t)snprintf(slot, sizeof(l->own[0]), "%s=%s", name, value) >=
	    sizeof(l->own[0]))
		return -E2BIG;
	for (size_t i = 0; i < l->n; i++)
		if (is_var(l->v[i], name)) {
			l->v[i] = slot;
			return 0;
		}
	return add(l, slot);
}

/* "NAME=VALUE" over an existing NAME, or added. */
static int put_entry(struct env_list *l, const char *entry)
{
	size_t n = strcspn(entry, "=");

	for (size_t i = 0; i < l->n; i++)
		if (!strncmp(l->v[i], entry, n) && l->v[i][n] == '=') {
			l->v[i] = entry;
			return 0;
		}
	return add(l, entry);
}

/* A shell that refuses logins is no shell to spawn. */
static const char *usable_shell(const char *shell)
{
	const char *base = strrchr(shell, '/');

	base = base ? base + 1 : shell;
	if (!*shell || !strcmp(base, "nologin") || !strcmp(base, "false"))
		return "/bin/sh";
	return shell;
}

static int identity(struct env_list *l, const struct launch_user *user,
		    const struct environ_opts *o)
{
	char name[32];
	const char *login = user->name, *home = user->home, *shell = user->shell;
	struct passwd *pw = NULL;
	int r;

	if (!user->set) {
		/* --allow-root: whoever egret runs as. */
		pw = getpwuid(getuid());
		login = pw ? pw->pw_name : "root";
		home = pw ? pw->pw_dir : "/";
		shell = pw ? pw->pw_shell : "/bin/sh";
	} else if (!login[0]) {
		snprintf(name, sizeof(name), "%u", (unsigned int)user->uid);
		login = name;
	}
	if (o->home)
		home = o->home;
	if ((r = put(l, "HOME", home && *home ? home : "/")) < 0 ||
	    (r = put(l, "USER", login)) < 0 ||
	    (r = put(l, "LOGNAME", login)) < 0 ||
	    (r = put(l, "SHELL", usable_shell(shell ? shell : ""))) < 0)
		return r;
	return 0;
}

int environ_build(char *const *from, const struct launch_user *user,
		  const struct environ_opts *o, bool pty, char ***ret)
{
	/* Not calloc(): 77 KiB whose every page a clear would fault in,
	 * where a start fills a few entries (issue 42). Only what add()
	 * and put() wrote is read. */
	struct env_list *l = malloc(sizeof(*l));
	size_t size, i;
	char **envp, *p;
	int r = 0;

	if (!l)
		return -ENOMEM;
	l->n = l->nown = 0;
	for (i = 0; from && from[i] && r == 0; i++) {
		if (o->clean ? !is_any(from[i], o->pass, o->npass) &&
				   !(pty && is_var(from[i], "TERM")) :
			       user->set && is_any(from[i], callers_places,
						   sizeof(callers_places) / sizeof(callers_places[0])))
			continue;
		r = add(l, from[i]);
	}
	if (r == 0 && o->clean && !is_any("PATH=", o->pass, o->npass))
		r = put(l, "PATH", ENVIRON_CLEAN_PATH);
	if (r == 0 && (user->set || o->clean || o->home))
		r = identity(l, user, o);
	for (i = 0; r == 0 && i < o->nset; i++)
		r = put_entry(l, o->set[i]);
	if (r < 0)
		goto out;

	size = (l->n + 1) * sizeof(char *);
	for (i = 0; i < l->n; i++)
		size += strlen(l->v[i]) + 1;
	envp = malloc(size);
	if (!envp) {
		r = -ENOMEM;
		goto out;
	}
	p = (char *)(envp + l->n + 1);
	for (i = 0; i < l->n; i++) {
		size_t n = strlen(l->v[i]) + 1;

		envp[i] = memcpy(p, l->v[i], n);
		p += n;
	}
	envp[l->n] = NULL;
	*ret = envp;
out:
	free(l);
	return r;
}

void environ_filter_path(char **envp)
{
	for (; *envp; envp++) {
		char *in, *out, *end;

		if (strncmp(*envp, "PATH=", 5))
			continue;
		/* Shrinks in place: entries are copied down over the ones
		 * this user cannot search (or that are empty: "." by POSIX,
		 * a cwd we did not choose). */
		in = out = *envp + 5;
		while (*in) {
			char dir[4096];
			size_t n;

			end = strchr(in, ':');
			n = end ? (size_t)(end - in) : strlen(in);
			if (n && n < sizeof(dir)) {
				memcpy(dir, in, n);
				dir[n] = '\0';
				if (access(dir, X_OK) == 0) {
					if (out != *envp + 5)
						*out++ = ':';
					memmove(out, in, n);
					out += n;
				}
			}
			in += n + (end ? 1 : 0);
		}
		*out = '\0';
		return;
	}
}

void environ_drop_egret(char **envp)
{
	static const char *const names[] = { "EGRET_LIMITS=", "EGRET_LIMITS_JSON=",
					     "EGRET_DENIALS=", "EGRET_REQUEST=" };
	char **out = envp;

	for (; *envp; envp++) {
		bool drop = false;

		for (size_t i = 0; i < ARRAY_SIZE(names) && !drop; i++)
			drop = !strncmp(*envp, names[i], strlen(names[i]));
		if (!drop)
			*out++ = *envp;
	}
	*out = NULL;
}
