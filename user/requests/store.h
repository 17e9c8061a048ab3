/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * requests/store.h - allowlist-extension requests: what attempts of a repository
 * were denied, waiting for an operator's decision (docs/POLICY.md,
 * "Requests").
 *
 * The store lives in egret's state directory (root, 0700):
 *
 *   lock                      flock(2)ed around every read-modify-write
 *   next-id                   the next request id (ids are global)
 *   requests/<owner>__<name>  one tab-separated record per request
 *
 * Only egret writes it, from the evidence of denials and from what an
 * agent asked for (requests/ask.h): the destination it tried or named,
 * and its reason, printable only; never a decision.
 */
#ifndef EGRET_REQUESTS_H
#define EGRET_REQUESTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/names.h"
#include "lib/paths.h"

#define REQUESTS_DEFAULT_DIR	"/var/lib/egret"
#define REQUESTS_MAX_PENDING	1000	/* per repository; beyond: dropped */
#define REQUESTS_MAX_RECORDS	20000	/* per repository, decided ones too */
#define REQUESTS_LOCK_WAIT_MS	10000	/* the CLI and an attempt's last flush */
#define REQUEST_ATTEMPTS	8	/* most recent attempt ids kept */
#define REQUEST_COMM_MAX	16
#define REQUEST_COMMANDS	4	/* distinct commands kept per request */
#define REQUEST_WHY_MAX		200	/* an agent's reason (requests/ask.h) */

enum request_kind { REQUEST_NAME, REQUEST_ADDR };
enum request_status { REQUEST_PENDING, REQUEST_APPROVED, REQUEST_DENIED };

/* One request, deduplicated by (repo, kind, target, port). */
struct request {
	unsigned long id;
	enum request_status status;
	enum request_kind kind;
	char target[DNS_NAME_MAX + 1];	/* a name, or an address in text */
	uint16_t port;			/* 0: a DNS lookup, no port yet */
	char proto[8];			/* "tcp", "udp", "dns", ... */
	uint64_t count;			/* denials seen */
	uint64_t nattempts;		/* attempts that saw it */
	int64_t first, last;		/* unix seconds */
	char attempts[REQUEST_ATTEMPTS][EGRET_ID_MAX + 1]; /* newest last */
	unsigned int nrecent;
	uint32_t pid;			/* an example process; 0: unknown */
	char comm[REQUEST_COMM_MAX + 1];
	/* Every distinct command that was refused it, the first
	 * REQUEST_COMMANDS (12 retries of npm are npm's, not the first
	 * curl's). */
	char commands[REQUEST_COMMANDS][REQUEST_COMM_MAX + 1];
	unsigned int ncommands;
	/* The agent's reason, when it asked for this from inside an
	 * attempt (`egret request`): printable ASCII; "": it did not. */
	char why[REQUEST_WHY_MAX + 1];
	char decided_by[64];		/* "alice (uid 0)" */
	int64_t decided_at;
};

/* The requests of one repository. */
struct request_file {
	char repo[POLICY_REPO_MAX];
	struct request *items;
	size_t n, cap;
	uint64_t dropped;		/* new requests refused: file full */
};

/* An open, locked store. */
struct request_store {
	char dir[4096];
	int lock_fd;
	unsigned long next_id;		/* 0: not read yet */
	bool ids_taken;			/* next-id must be written */
};

/*
 * Open the store at @dir (created root-owned 0700 if missing; refused when
 * owned by another user) and take its lock, waiting up to @wait_ms (0: not
 * at all) before -EAGAIN. request_store_close() releases it.
 */
int request_store_open(struct request_store *s, const char *dir, int wait_ms);
void request_store_close(struct request_store *s);

/* Just prepare @dir (for `egret run` before COMMAND starts). */
int request_store_prepare(const char *dir);

/* Read @repo's requests (none yet: empty). -EBADMSG with the line in
 * @err for a corrupt file. Ids handed out since the store was opened are
 * made durable (next-id) before the first file that holds them. */
int request_file_load(const struct request_store *s, const char *repo,
		      struct request_file *f, char *err, size_t errlen);
int request_file_save(struct request_store *s, const struct request_file *f);
void request_file_free(struct request_file *f);

/* Every repository's file, for listing and lookup by id. */
int request_store_repos(const struct request_store *s, char ***ret_repos,
			size_t *ret_n);

/* The pending requests of every repository (files that do not read
 * count none). */
uint64_t request_store_pending(const struct request_store *s);

/*
 * Fold @seen (count, first/last, example process; target/kind/port/proto
 * as the key) into @f for @attempt: an existing request counts up (keeping
 * its status: a denied request stays denied), a new one gets the next id
 * unless the repository holds REQUESTS_MAX_PENDING pending requests or
 * REQUESTS_MAX_RECORDS in all (-ENOSPC, counted in f->dropped).
 * @new_attempt: first time this attempt reports the request.
 */
int request_file_merge(struct request_store *s, struct request_file *f,
		       const struct request *seen, const char *attempt,
		       bool new_attempt);

/* ---- the files' text (requests/record.c) ---- */

/* Encode/decode one record line (exposed for tests). */
int request_format(const struct request *r, char *buf, size_t len);
int request_parse(const char *line, struct request *r);

/* A file's first line: its repository and dropped count, into @buf
 * (without the line end); or back, -EBADMSG if it is not one. */
void request_header_format(const struct request_file *f, char *buf, size_t len);
int request_header_parse(const char *line, char *repo, size_t repolen,
			 uint64_t *dropped);

const char *request_status_name(enum request_status st);

/* "files.example.net:443", "203.0.113.9:5432", "[2001:db8::1]:443",
 * "evil.example (lookup)" */
void request_target_text(const struct request *r, char *buf, size_t len);

/* Add @comm to @r's distinct commands (none beyond REQUEST_COMMANDS). */
void request_add_command(struct request *r, const char *comm);

#endif
