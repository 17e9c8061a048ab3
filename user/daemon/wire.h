/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * daemon/wire.h - the messages between `egret run` and egretd (docs/WIRE.md).
 *
 * egretd decodes these as root from unprivileged callers, so the format is
 * strict and there is one way to write each message: a header, then typed
 * fields in ascending tag order, every length exact, every count and size
 * bounded, unknown or misplaced fields refused. wire_encode() follows the
 * same rules, so decode(encode(m)) is m and encode(decode(b)) is b
 * (tests/fuzz/fuzz_wire.c holds it to that). Pure: no I/O, no allocation,
 * no logging; fds travel beside the bytes (SCM_RIGHTS), never in them.
 */
#ifndef EGRET_DAEMON_WIRE_H
#define EGRET_DAEMON_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/names.h"
#include "lib/paths.h"

#define WIRE_MAGIC		"EGRT"
#define WIRE_VERSION		1
#define WIRE_HEADER_LEN		12	/* magic, u16 version, u16 type, u32 body length */
#define WIRE_FIELD_HEADER_LEN	4	/* u16 tag, u16 length */
#define WIRE_MAX		65536	/* a whole message, header included */
/* After egretd went away mid-attempt, how long each side waits for the
 * other: the client keeps trying to reconnect (ATTACH), a re-adopted
 * attempt waits for its client. One figure (docs/DEPLOYMENT.md). */
#define WIRE_REATTACH_S		60

#define WIRE_ARGV_MAX		1024	/* ARGV items */
#define WIRE_ARG_LEN_MAX	4096	/* bytes of one ARGV item */
#define WIRE_ENV_MAX		1024	/* ENV items */
#define WIRE_ENV_LEN_MAX	(WIRE_MAX - WIRE_HEADER_LEN - WIRE_FIELD_HEADER_LEN)
#define WIRE_CWD_MAX		4095	/* PATH_MAX without its NUL */
#define WIRE_REPO_MAX		(POLICY_REPO_MAX - 1)
#define WIRE_ALLOW_MAX		64	/* ALLOW items */
#define WIRE_ALLOW_LEN_MAX	255	/* bytes of one ALLOW item */
#define WIRE_ID_MAX		EGRET_ID_MAX
#define WIRE_SIGNO_MAX		64	/* SIGRTMAX */
#define WIRE_STATUS_MAX		255
#define WIRE_TEXT_MAX		512	/* bytes of an ERROR line */
#define WIRE_OPTION_MAX		128	/* OPTION items */
#define WIRE_OPTION_LEN_MAX	4096	/* bytes of one OPTION item */

/* Message types. RUN, ATTACH, STATUS go to egretd; SIGNAL both ways; the
 * others come back. */
enum wire_type {
	WIRE_NONE = 0,			/* never on the wire: a failed decode */
	WIRE_RUN = 1,			/* start an attempt */
	WIRE_ATTACH = 2,		/* reconnect to attempt ID (egretd restarted) */
	WIRE_SIGNAL = 3,		/* forward SIGNO to COMMAND; from egretd,
					 * SIGTSTP: COMMAND stopped (Ctrl-Z) */
	WIRE_STARTED = 4,		/* the attempt is ID */
	WIRE_EXIT = 5,			/* the attempt ended: STATUS */
	WIRE_ERROR = 6,			/* egret's one-line error (then EXIT 125) */
	WIRE_STATUS = 7,		/* show the caller's own attempts (egret status) */
	WIRE_TYPE_MAX = WIRE_STATUS,
};

/* Field tags, one meaning each whatever the type; a message lists its
 * fields in this order. */
enum wire_tag {
	WIRE_TAG_ARGV = 1,		/* repeated; item 0 is COMMAND, not empty */
	WIRE_TAG_ENV = 2,		/* repeated NAME=VALUE, COMMAND's environment */
	WIRE_TAG_CWD = 3,		/* absolute path, in the caller's mounts */
	WIRE_TAG_REPO = 4,		/* OWNER/NAME: --repo */
	WIRE_TAG_ALLOW = 5,		/* repeated: --allow, as typed */
	WIRE_TAG_AUDIT = 6,		/* flag: --audit */
	WIRE_TAG_PTY = 7,		/* flag: --pty */
	WIRE_TAG_ID = 8,		/* attempt id */
	WIRE_TAG_SIGNO = 9,		/* u32, 1..WIRE_SIGNO_MAX */
	WIRE_TAG_STATUS = 10,		/* u32, 0..WIRE_STATUS_MAX */
	WIRE_TAG_TEXT = 11,		/* printable ASCII and space */
	WIRE_TAG_OPTION = 12,		/* repeated NAME[=VALUE]: an option of
					 * egret run egretd passes on
					 * (wire_option_valid) */
	WIRE_TAG_JSON = 13,		/* flag: --json (STATUS) */
	WIRE_TAG_RECEIPT = 14,		/* flag: --receipt; its file is a fourth fd */
	WIRE_TAG_MAX = WIRE_TAG_JSON,
};

/*
 * RUN. The repeated fields are char * arrays so that egretd can hand argv
 * and env to execve() as they are (each NULL-terminated after a decode);
 * to encode, only the first argc/envc/nallow entries are read.
 */
struct wire_run {
	size_t argc;
	char *argv[WIRE_ARGV_MAX + 1];
	size_t envc;
	char *env[WIRE_ENV_MAX + 1];
	size_t nallow;
	char *allow[WIRE_ALLOW_MAX];
	const char *cwd;
	const char *repo;		/* NULL: no --repo */
	bool audit;
	bool pty;
	size_t noption;
	/* After the OPTIONs on the wire (tag order). */
	char *option[WIRE_OPTION_MAX];	/* "home=/h", "clean-env", ... */
	bool receipt;			/* --receipt: its file beside stdio */
};

/*
 * May a RUN carry option @v (@len bytes: NAME or NAME=VALUE)? The options
 * of egret run whose row in its table (attempt/run_options.def) says
 * RUN_VIA_OPTION: those that only shape COMMAND's own process, or only
 * lower what egretd gives, which egretd passes on as "--NAME=VALUE" for
 * egret run to judge. NAME=VALUE, VALUE not empty, for one that takes an
 * argument; NAME alone otherwise. Everything else is egretd's to decide.
 */
bool wire_option_valid(const char *v, size_t len);

/*
 * One message. A decode points every string into @arena (the copies, each
 * NUL-terminated; a message cannot need more than WIRE_MAX bytes of them),
 * so the struct must not be copied by value. It is large (about 81 KiB):
 * static or heap, one per connection. To encode, the strings may live
 * anywhere.
 */
struct wire_msg {
	enum wire_type type;
	union {
		struct wire_run run;
		struct {
			const char *id;
		} attach, started;
		struct {
			uint32_t signo;
		} signal;
		struct {
			uint32_t status;
		} exit;
		struct {
			const char *text;
		} error;
		struct {
			const char *id;		/* one attempt, or NULL: all */
			bool json;
		} status;
	};
	char arena[WIRE_MAX];
};

/*
 * @m into @buf: the message's length, or -E2BIG (a limit, or more than
 * @size bytes) or -EINVAL (anything else wire_decode() would refuse), with
 * the reason in @err. Writes nothing outside @buf[0..@size).
 */
int wire_encode(const struct wire_msg *m, uint8_t *buf, size_t size,
		char *err, size_t errlen);

/*
 * The message in @buf[0..@len) into @m: 0, or -E2BIG (a limit) or
 * -EBADMSG (anything else), with the reason in @err. On failure m->type is
 * WIRE_NONE and the rest of @m is meaningless. The receiver still refuses
 * a type that does not travel its way (a client's EXIT, egretd's RUN).
 */
int wire_decode(const uint8_t *buf, size_t len, struct wire_msg *m,
		char *err, size_t errlen);

/* "RUN", ..., or NULL for a type that does not exist. */
const char *wire_type_name(uint32_t type);

#endif
