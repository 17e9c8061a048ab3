/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * requests/ask.h - a request the agent asks for from inside its attempt
 * (`egret request NAME[:PORTS] --why TEXT`, docs/AGENTS.md): the message
 * on the attempt's request socket, and how egret reads it. The message is
 * the command's, untrusted: every byte of it is checked here before it
 * becomes a request, and its reason is made printable ASCII before
 * anything stores or shows it.
 *
 * The wire (a unix SOCK_SEQPACKET socket, one message each way):
 *   ask:    TARGET '\0' REASON           at most ASK_MSG_MAX bytes
 *   answer: "pending ..." or "refused: WHY ..."   one line, then the end
 * TARGET is NAME[:PORTS] (PORTS: up to ASK_PORTS_MAX single ports,
 * comma-separated), ADDR[:PORTS] or [V6][:PORTS]. No port asks for the
 * name's lookup (approved: port 443, docs/POLICY.md).
 * egret-client takes the constants alone: it links against libc only.
 */
#ifndef EGRET_REQUESTS_ASK_H
#define EGRET_REQUESTS_ASK_H

#include <stddef.h>
#include <stdint.h>

#include "lib/names.h"
#include "requests/store.h"

#define ASK_MSG_MAX		512	/* bytes, target, NUL and reason */
#define ASK_WHY_MAX		REQUEST_WHY_MAX	/* characters of reason kept */
#define ASK_PORTS_MAX		4
#define ASK_ANSWER_MAX		256
#define ASK_PER_MINUTE		10	/* a burst of 10, then one per 6 s */
#define ASK_PER_ATTEMPT		64
#define ASK_ENV			"EGRET_REQUEST"	/* the socket's path, inside */

struct ask {
	enum request_kind kind;
	char target[DNS_NAME_MAX + 1];	/* a name, or an address as text */
	uint16_t ports[ASK_PORTS_MAX];
	unsigned int nports;		/* 0: the name's lookup */
	char why[ASK_WHY_MAX + 1];	/* printable ASCII only */
};

/*
 * Read the message @msg (@len bytes, as received) into @ret: 0, or
 * -EINVAL with the refusal in @err ("target: ..."), for the answer.
 */
int ask_parse(const void *msg, size_t len, struct ask *ret, char *err, size_t errlen);

/*
 * @n bytes of @in as printable ASCII into @out (at most @outlen - 1
 * characters, NUL-terminated): control characters (terminal escapes
 * begin with one), DEL and every byte above ASCII become '?', runs of
 * white space one space, and leading and trailing space go.
 */
void ask_sanitize(const char *in, size_t n, char *out, size_t outlen);

#endif
