/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lib/sign.h - Ed25519 signatures for egret's receipts (libsodium): a host
 * key kept in a file only its owner reads, its public half as text to
 * publish, and detached signatures over a domain-separated message.
 *
 * The key file:   "egret-receipt-key v1 ed25519 SEED\n"  (0600)
 * A public key:   "ed25519:PUB"
 * SEED and PUB are the 32 bytes in standard base64 (44 characters).
 */
#ifndef EGRET_LIB_SIGN_H
#define EGRET_LIB_SIGN_H

#include <stddef.h>
#include <stdint.h>

#define SIGN_PUB_TEXT_MAX	64	/* "ed25519:" + 44 + NUL fits */
#define SIGN_SIG_TEXT_MAX	96	/* 64 bytes in base64: 88 */

struct sign_key {
	uint8_t pub[32];
	uint8_t sec[64];		/* seed and public half, libsodium's */
	char pub_text[SIGN_PUB_TEXT_MAX];
};

/*
 * Load the key at @path, or (@create) make it if missing: a fresh key,
 * written 0600 by the caller's uid, never replacing a file. A key file
 * that anyone but its owner may read, or that is not one, is refused
 * (-EPERM, -EBADMSG). 0 or -errno.
 */
int sign_key_load(const char *path, int create, struct sign_key *ret);

/* Forget the secret half (sodium_memzero). */
void sign_key_clear(struct sign_key *k);

/* A detached signature of @domain (its NUL included) then @msg, base64,
 * into @sig (SIGN_SIG_TEXT_MAX). 0 or -errno. */
int sign_detached(const struct sign_key *k, const char *domain, const void *msg,
		  size_t len, char *sig, size_t siglen);

/* Does @sig (base64) sign @domain then @msg for the public key @pub_text
 * ("ed25519:..." )? 0, -EINVAL for a malformed key or signature,
 * -EBADMSG for a signature that does not verify. */
int sign_verify(const char *pub_text, const char *domain, const void *msg, size_t len,
		const char *sig);

/* SHA-256 of @msg, lower-case hex, into @hex (65 bytes): 0, or a
 * negative errno when libsodium cannot be loaded. */
int sign_sha256_hex(const void *msg, size_t len, char hex[65]);

#endif
