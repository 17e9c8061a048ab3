/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * attempt/inbox.h - the attempt's request socket: where the agent asks
 * for a host with its reason (`egret request`, requests/ask.h,
 * docs/AGENTS.md). A unix SOCK_SEQPACKET listener at
 * EGRET_LIMITS_DIR/<id>/request.sock ($EGRET_REQUEST), served from the
 * attempt's loop. It takes a message only from a process of the
 * attempt's own cgroup (the kernel says which, by the peer's pidfd),
 * ASK_PER_MINUTE a minute and ASK_PER_ATTEMPT in all; what it takes
 * becomes a pending request (requests/log.h), never a decision.
 */
#ifndef EGRET_ATTEMPT_INBOX_H
#define EGRET_ATTEMPT_INBOX_H

#include <limits.h>
#include <stdint.h>

#include "lib/loop.h"
#include "requests/log.h"

#define INBOX_CONNS	8	/* connections waiting for their message */
#define INBOX_SOCKET	"request.sock"

struct request_inbox;

struct inbox_conn {
	struct loop_source src;		/* fd -1: free */
	struct request_inbox *in;
	int peer;			/* peer_check(): 0, or refused with its message */
	uint32_t pid;			/* the asking process, for the request */
	char comm[REQUEST_COMM_MAX + 1];
};

struct inbox_counts {
	uint64_t filed;			/* pending requests made */
	uint64_t rate;			/* refused: over the rate */
	uint64_t peer;			/* refused: not this attempt's process */
	uint64_t bad;			/* refused: not a request (the answer says) */
	uint64_t full;			/* refused: the attempt's requests full */
};

struct request_inbox {
	struct loop_source listen;	/* fd -1: none */
	struct inbox_conn conns[INBOX_CONNS];
	unsigned int evict;		/* the next slot a new connection takes */
	struct loop *loop;
	struct request_log *log;
	uint64_t cgroup_id;		/* the attempt's */
	char path[PATH_MAX];		/* "": none */
	unsigned int tokens;		/* messages it may take now */
	uint64_t refill_us;		/* when the next token comes */
	unsigned int taken;		/* messages taken in all */
	struct inbox_counts n;
};

void request_inbox_init(struct request_inbox *in);

/*
 * Listen at @dir/INBOX_SOCKET (@dir: the attempt's limits directory,
 * root's), replacing a socket a dead egret left there (egretd's
 * re-adoption), for the processes of cgroup @cgroup_id; what they ask
 * goes to @log. 0 or -errno.
 */
int request_inbox_open(struct request_inbox *in, const char *dir, struct request_log *log,
		       uint64_t cgroup_id);

int request_inbox_start(struct request_inbox *in, struct loop *loop);

/* Leave the loop (before it closes). */
void request_inbox_detach(struct request_inbox *in);

/* Detach, close, remove the socket; one log line of what it refused. */
void request_inbox_close(struct request_inbox *in, const char *attempt);

#endif
