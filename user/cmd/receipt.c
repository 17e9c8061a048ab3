// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd/receipt.c - `egret receipt` (cmd/receipt.h). verify prints the
 * receipt, its first line, on stdout once its signature holds; what it
 * was checked against on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attempt/receipt.h"
#include "cmd/receipt.h"
#include "lib/cmd.h"
#include "lib/exit.h"
#include "lib/log.h"
#include "lib/sign.h"
#include "lib/util.h"
#include "observe/receipt.h"

static const char *opt_key, *opt_key_file, *opt_state_dir;

static int usage(FILE *to)
{
	fprintf(to, "Usage: egret receipt verify FILE [--key PUBKEY]\n"
		"       egret receipt key [--key-file FILE] [--state-dir DIR]\n\n"
		"verify: check an attempt's signed egress receipt (egret run --receipt)\n"
		"and print it. PUBKEY: \"ed25519:...\" as `egret receipt key` printed it,\n"
		"or a file holding it; without it, this host's key when readable, else\n"
		"only the key the receipt names (said so). Exit 0: it verifies; 1: it\n"
		"does not (one line says why).\n"
		"key: this host's public key, to publish (made if missing): the state\n"
		"directory's receipt.key, or --key-file.\n");
	return to == stdout ? 0 : EXIT_USAGE;
}

static int read_whole(const char *path, char **ret, size_t *len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf;
	ssize_t n;
	size_t off = 0;

	if (fd < 0)
		return -errno;
	buf = malloc(RECEIPT_MAX + 1);
	if (!buf)
		return -ENOMEM;
	while ((n = read(fd, buf + off, RECEIPT_MAX + 1 - off)) > 0)
		off += (size_t)n;
	if (n < 0 || off > RECEIPT_MAX) {
		free(buf);
		return n < 0 ? -errno : -EFBIG;
	}
	*ret = buf;
	*len = off;
	return 0;
}

/* --key: the text itself, or a file whose first line it is. */
static int trusted_key(char *buf, size_t len, bool *ret_have)
{
	char path[PATH_MAX];
	struct sign_key k;
	FILE *f;

	*ret_have = false;
	if (opt_key && !strncmp(opt_key, "ed25519:", 8)) {
		snprintf(buf, len, "%s", opt_key);
		*ret_have = true;
		return 0;
	}
	if (opt_key) {
		f = fopen(opt_key, "re");
		if (!f || !fgets(buf, (int)len, f)) {
			if (f)
				fclose(f);
			return log_error_errno(-EINVAL, "--key %s: want ed25519:... or a file holding it",
					       opt_key);
		}
		fclose(f);
		buf[strcspn(buf, "\r\n")] = '\0';
		*ret_have = true;
		return 0;
	}
	/* This host's, where we may read it (root's). */
	if (receipt_key_path(NULL, opt_state_dir, path, sizeof(path)) == 0 &&
	    sign_key_load(path, 0, &k) == 0) {
		sign_key_clear(&k);
		snprintf(buf, len, "%s", k.pub_text);
		*ret_have = true;
	}
	return 0;
}

static int verify(int argc, char **argv)
{
	char pub[SIGN_PUB_TEXT_MAX + 64], signer[SIGN_PUB_TEXT_MAX];
	_cleanup_free_ char *text = NULL;
	size_t len = 0, body = 0;
	bool have;
	int r;

	if (argc != 2)
		return usage(stderr);
	r = trusted_key(pub, sizeof(pub), &have);
	if (r < 0)
		return EXIT_USAGE;
	r = read_whole(argv[1], &text, &len);
	if (r < 0) {
		log_error_errno(r, "receipt %s", argv[1]);
		return EXIT_TROUBLE;
	}
	r = receipt_check(text, len, have ? pub : NULL, signer, &body);
	switch (r) {
	case 0:
		break;
	case -EKEYREJECTED:
		log_error("receipt %s: signed by %s, not by %s", argv[1], signer, pub);
		return EXIT_TROUBLE;
	case -EPERM:
		log_error("receipt %s: the signature does not verify: it was changed after egret signed it",
			  argv[1]);
		return EXIT_TROUBLE;
	default:
		log_error("receipt %s: not an egret receipt (%s)", argv[1],
			  r == -EBADMSG ? "its form" : strerror(-r));
		return EXIT_TROUBLE;
	}
	fwrite(text, 1, body + 1, stdout);
	fprintf(stderr, "egret: receipt %s: verified: signed by %s%s\n", argv[1], signer,
		have ? "" : " (the key it names: no key of yours given; pass --key)");
	return 0;
}

static int key(int argc, char **argv)
{
	char path[PATH_MAX];
	struct sign_key k;
	int r;

	(void)argv;
	if (argc != 1)
		return usage(stderr);
	r = receipt_key_path(opt_key_file, opt_state_dir, path, sizeof(path));
	if (r == 0)
		r = sign_key_load(path, 1, &k);
	if (r < 0) {
		log_error_errno(r, "receipt key %s", path);
		return EXIT_TROUBLE;
	}
	sign_key_clear(&k);
	printf("%s\n", k.pub_text);
	return 0;
}

static int unknown(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return usage(stderr);
}

static const struct cmd subcommands[] = {
	{ "verify", verify, NULL },
	{ "key", key, NULL },
};

int cmd_receipt(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "key-file", required_argument, NULL, 'f' },
		{ "state-dir", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'k')
			opt_key = optarg;
		else if (c == 'f')
			opt_key_file = optarg;
		else if (c == 's')
			opt_state_dir = optarg;
		else
			return usage(c == 'h' ? stdout : stderr);
	}
	return cmd_select(subcommands, ARRAY_SIZE(subcommands), argc - optind, argv + optind,
			  unknown);
}
