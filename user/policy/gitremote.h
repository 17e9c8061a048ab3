/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * policy/gitremote.h - the attempt's git remote, as the launcher passes it
 * (--git-remote URL), reduced to what egret must allow: host and port.
 */
#ifndef EGRET_GITREMOTE_H
#define EGRET_GITREMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/names.h"

struct git_remote {
	char host[DNS_NAME_MAX + 1];	/* lower case; an IP literal without [] */
	bool is_ip;
	uint16_t port;
	const char *scheme;		/* "https", "http", "ssh", "git" */
};

/*
 * Parse https://host[:port]/path, http://..., ssh://[user@]host[:port]/path,
 * git://host[:port]/path and scp-like [user@]host:path. Ports default to
 * the scheme's (443, 80, 22, 9418). Local paths, file:// and helper
 * transports (ext::) are refused: -EINVAL with a reason in @err.
 */
int git_remote_parse(const char *url, struct git_remote *ret, char *err,
		     size_t errlen);

#endif
