// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/text.h"
#include "policy/gitremote.h"
#include "policy/host.h"

static const struct {
	const char *prefix;
	const char *scheme;
	uint16_t port;
} schemes[] = {
	{ "https://", "https", 443 },
	{ "http://", "http", 80 },
	{ "ssh://", "ssh", 22 },
	{ "git+ssh://", "ssh", 22 },
	{ "ssh+git://", "ssh", 22 },
	{ "git://", "git", 9418 },
};

/* "host", "host:port", "[v6]", "[v6]:port" (authority without userinfo). */
static int parse_authority(char *auth, bool port_allowed, struct git_remote *r,
			   char *err, size_t errlen)
{
	char *host = auth, *port = NULL;
	unsigned char bin[16];
	struct host_rule rule;

	if (auth[0] == '[') {
		char *close = strchr(auth, ']');

		if (!close)
			return errbuf_fail(err, errlen, "missing ']' in '%s'", auth);
		*close = '\0';
		host = auth + 1;
		if (close[1] == ':')
			port = close + 2;
		else if (close[1])
			return errbuf_fail(err, errlen, "junk after ']' in '%s'", auth);
	} else if ((port = strchr(auth, ':'))) {
		*port++ = '\0';
	}
	if (port) {
		char *end;
		unsigned long v;

		if (!port_allowed)
			return errbuf_fail(err, errlen, "unexpected port in '%s'", auth);
		v = strtoul(port, &end, 10);
		if (!*port || *end || v == 0 || v > 65535)
			return errbuf_fail(err, errlen, "bad port '%s'", port);
		r->port = (uint16_t)v;
	}
	if (inet_pton(AF_INET, host, bin) == 1 || inet_pton(AF_INET6, host, bin) == 1) {
		r->is_ip = true;
		snprintf(r->host, sizeof(r->host), "%s", host);
		return 0;
	}
	if (host_name_parse(host, &rule, err, errlen) < 0 || rule.wildcard)
		return errbuf_fail(err, errlen, "'%s' is not a valid host", host);
	strcpy(r->host, rule.name);
	return 0;
}

int git_remote_parse(const char *url, struct git_remote *ret, char *err,
		     size_t errlen)
{
	struct git_remote r = {};
	char buf[1024], *rest = NULL, *at, *end;
	size_t i;
	int rc;

	if (strlen(url) >= sizeof(buf))
		return errbuf_fail(err, errlen, "git remote too long%s", "");
	strcpy(buf, url);
	for (i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		size_t n = strlen(schemes[i].prefix);

		if (!strncasecmp(buf, schemes[i].prefix, n)) {
			r.scheme = schemes[i].scheme;
			r.port = schemes[i].port;
			rest = buf + n;
			break;
		}
	}
	if (rest) {
		/* scheme://[userinfo@]authority[/path] */
		end = strchr(rest, '/');
		if (end)
			*end = '\0';
		at = strrchr(rest, '@');
		rc = parse_authority(at ? at + 1 : rest, true, &r, err, errlen);
	} else {
		/* scp-like: [user@]host:path, where no '/' precedes the ':'. */
		char *bracket = strchr(buf, ']');
		char *colon = strchr(bracket ? bracket : buf, ':');
		char *slash = strchr(buf, '/');

		char *helper = strstr(buf, "::");

		/* "transport::address" runs a remote helper; "x://" is a
		 * scheme we do not know (file://, ftp://...): both refused. */
		if ((helper && (!bracket || helper < strchr(buf, '['))) ||
		    strstr(buf, "://") || !colon || (slash && slash < colon) ||
		    colon == buf)
			return errbuf_fail(err, errlen,
					   "'%s' is not a network git remote (want https://, ssh://, git:// or user@host:path)",
					   url);
		*colon = '\0';
		at = strrchr(buf, '@');
		r.scheme = "ssh";
		r.port = 22;
		rc = parse_authority(at ? at + 1 : buf, false, &r, err, errlen);
	}
	if (rc < 0)
		return rc;
	*ret = r;
	return 0;
}
