// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lib/sign.c - Ed25519 keys and signatures (lib/sign.h), libsodium's
 * crypto_sign: nothing of the algorithm is written here.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sodium.h>

#include "lib/sign.h"
#include "lib/util.h"

#define KEY_HEADER	"egret-receipt-key v1 ed25519 "
#define B64		sodium_base64_VARIANT_ORIGINAL

static int sodium_ready(void)
{
	return sodium_init() < 0 ? -EIO : 0;
}

static void pub_text(struct sign_key *k)
{
	char b64[sodium_base64_ENCODED_LEN(32, B64)];

	sodium_bin2base64(b64, sizeof(b64), k->pub, sizeof(k->pub), B64);
	snprintf(k->pub_text, sizeof(k->pub_text), "ed25519:%s", b64);
}

static int key_from_seed(const uint8_t seed[32], struct sign_key *k)
{
	if (crypto_sign_seed_keypair(k->pub, k->sec, seed) != 0)
		return -EIO;
	pub_text(k);
	return 0;
}

static int key_create(const char *path, struct sign_key *k)
{
	char b64[sodium_base64_ENCODED_LEN(32, B64)], line[128];
	uint8_t seed[32];
	_cleanup_close_ int fd = -1;
	int n, r;

	randombytes_buf(seed, sizeof(seed));
	sodium_bin2base64(b64, sizeof(b64), seed, sizeof(seed), B64);
	n = snprintf(line, sizeof(line), KEY_HEADER "%s\n", b64);
	r = key_from_seed(seed, k);
	sodium_memzero(seed, sizeof(seed));
	sodium_memzero(b64, sizeof(b64));
	if (r < 0)
		return r;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || fchmod(fd, 0600) < 0 || write(fd, line, (size_t)n) != n || fsync(fd) < 0) {
		r = -errno;
		sodium_memzero(line, sizeof(line));
		if (fd >= 0)
			unlink(path);
		return r ? r : -EIO;
	}
	sodium_memzero(line, sizeof(line));
	return 0;
}

int sign_key_load(const char *path, int create, struct sign_key *ret)
{
	char line[128], *b64, *nl;
	uint8_t seed[32];
	size_t seedlen = 0;
	_cleanup_close_ int fd = -1;
	struct stat st;
	ssize_t n;
	int r;

	if ((r = sodium_ready()) < 0)
		return r;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && create)
		return key_create(path, ret);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return -EPERM;
	n = read(fd, line, sizeof(line) - 1);
	if (n < 0)
		return -errno;
	line[n] = '\0';
	nl = strchr(line, '\n');
	if (strncmp(line, KEY_HEADER, strlen(KEY_HEADER)) || !nl || nl[1]) {
		sodium_memzero(line, sizeof(line));
		return -EBADMSG;
	}
	*nl = '\0';
	b64 = line + strlen(KEY_HEADER);
	r = sodium_base642bin(seed, sizeof(seed), b64, strlen(b64), NULL, &seedlen, NULL, B64);
	sodium_memzero(line, sizeof(line));
	if (r != 0 || seedlen != sizeof(seed))
		return -EBADMSG;
	r = key_from_seed(seed, ret);
	sodium_memzero(seed, sizeof(seed));
	return r;
}

void sign_key_clear(struct sign_key *k)
{
	sodium_memzero(k->sec, sizeof(k->sec));
}

/* @domain with its NUL, then @msg: one buffer, as crypto_sign wants. */
static uint8_t *framed(const char *domain, const void *msg, size_t len, size_t *ret_len)
{
	size_t d = strlen(domain) + 1;
	uint8_t *buf = malloc(d + len + 1);

	if (!buf)
		return NULL;
	memcpy(buf, domain, d);
	memcpy(buf + d, msg, len);
	*ret_len = d + len;
	return buf;
}

int sign_detached(const struct sign_key *k, const char *domain, const void *msg,
		  size_t len, char *sig, size_t siglen)
{
	uint8_t s[crypto_sign_BYTES];
	_cleanup_free_ uint8_t *buf = NULL;
	size_t n;

	if (siglen < sodium_base64_ENCODED_LEN(sizeof(s), B64))
		return -ENOSPC;
	buf = framed(domain, msg, len, &n);
	if (!buf)
		return -ENOMEM;
	if (crypto_sign_detached(s, NULL, buf, n, k->sec) != 0)
		return -EIO;
	sodium_bin2base64(sig, siglen, s, sizeof(s), B64);
	return 0;
}

int sign_verify(const char *pub_text, const char *domain, const void *msg, size_t len,
		const char *sig)
{
	uint8_t pub[32], s[crypto_sign_BYTES];
	_cleanup_free_ uint8_t *buf = NULL;
	size_t publen = 0, slen = 0, n;
	int r;

	if ((r = sodium_ready()) < 0)
		return r;
	if (strncmp(pub_text, "ed25519:", 8) ||
	    sodium_base642bin(pub, sizeof(pub), pub_text + 8, strlen(pub_text + 8), NULL,
			      &publen, NULL, B64) != 0 || publen != sizeof(pub) ||
	    sodium_base642bin(s, sizeof(s), sig, strlen(sig), NULL, &slen, NULL, B64) != 0 ||
	    slen != sizeof(s))
		return -EINVAL;
	buf = framed(domain, msg, len, &n);
	if (!buf)
		return -ENOMEM;
	return crypto_sign_verify_detached(s, buf, n, pub) == 0 ? 0 : -EBADMSG;
}

void sign_sha256_hex(const void *msg, size_t len, char hex[65])
{
	uint8_t h[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(h, msg, len);
	sodium_bin2hex(hex, 65, h, sizeof(h));
}
