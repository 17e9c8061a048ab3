// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lib/sign.c - Ed25519 keys and signatures (lib/sign.h), libsodium's
 * crypto_sign: nothing of the algorithm is written here.
 */
#include <dlfcn.h>
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

/*
 * libsodium, loaded at the first key or signature: only receipts need it,
 * and a shared library linked into egret costs every start its mapping,
 * relocation and page faults (issue 42). Loaded by its soname as the
 * dynamic linker would have, so a distribution's update reaches egret.
 */
#ifndef EGRET_SODIUM_SONAME
#define EGRET_SODIUM_SONAME	"libsodium.so.23"
#endif

static struct {
	void *lib;
	__typeof__(&sodium_init) sodium_init;
	__typeof__(&sodium_bin2base64) sodium_bin2base64;
	__typeof__(&sodium_base642bin) sodium_base642bin;
	__typeof__(&sodium_bin2hex) sodium_bin2hex;
	__typeof__(&randombytes_buf) randombytes_buf;
	__typeof__(&crypto_sign_seed_keypair) crypto_sign_seed_keypair;
	__typeof__(&crypto_sign_detached) crypto_sign_detached;
	__typeof__(&crypto_sign_verify_detached) crypto_sign_verify_detached;
	__typeof__(&crypto_hash_sha256) crypto_hash_sha256;
} so;

#define SO_SYM(name)	(so.name = (__typeof__(so.name))dlsym(so.lib, #name))

static int sodium_ready(void)
{
	if (so.lib)
		return 0;
	so.lib = dlopen(EGRET_SODIUM_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!so.lib)
		return -ELIBACC;
	if (!SO_SYM(sodium_init) || !SO_SYM(sodium_bin2base64) ||
	    !SO_SYM(sodium_base642bin) || !SO_SYM(sodium_bin2hex) ||
	    !SO_SYM(randombytes_buf) || !SO_SYM(crypto_sign_seed_keypair) ||
	    !SO_SYM(crypto_sign_detached) || !SO_SYM(crypto_sign_verify_detached) ||
	    !SO_SYM(crypto_hash_sha256) || so.sodium_init() < 0) {
		dlclose(so.lib);
		so.lib = NULL;
		return -ELIBBAD;
	}
	return 0;
}

static void pub_text(struct sign_key *k)
{
	char b64[sodium_base64_ENCODED_LEN(32, B64)];

	so.sodium_bin2base64(b64, sizeof(b64), k->pub, sizeof(k->pub), B64);
	snprintf(k->pub_text, sizeof(k->pub_text), "ed25519:%s", b64);
}

static int key_from_seed(const uint8_t seed[32], struct sign_key *k)
{
	if (so.crypto_sign_seed_keypair(k->pub, k->sec, seed) != 0)
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

	so.randombytes_buf(seed, sizeof(seed));
	so.sodium_bin2base64(b64, sizeof(b64), seed, sizeof(seed), B64);
	n = snprintf(line, sizeof(line), KEY_HEADER "%s\n", b64);
	r = key_from_seed(seed, k);
	explicit_bzero(seed, sizeof(seed));
	explicit_bzero(b64, sizeof(b64));
	if (r < 0)
		return r;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || fchmod(fd, 0600) < 0 || write(fd, line, (size_t)n) != n || fsync(fd) < 0) {
		r = -errno;
		explicit_bzero(line, sizeof(line));
		if (fd >= 0)
			unlink(path);
		return r ? r : -EIO;
	}
	explicit_bzero(line, sizeof(line));
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
		explicit_bzero(line, sizeof(line));
		return -EBADMSG;
	}
	*nl = '\0';
	b64 = line + strlen(KEY_HEADER);
	r = so.sodium_base642bin(seed, sizeof(seed), b64, strlen(b64), NULL, &seedlen, NULL, B64);
	explicit_bzero(line, sizeof(line));
	if (r != 0 || seedlen != sizeof(seed))
		return -EBADMSG;
	r = key_from_seed(seed, ret);
	explicit_bzero(seed, sizeof(seed));
	return r;
}

void sign_key_clear(struct sign_key *k)
{
	explicit_bzero(k->sec, sizeof(k->sec));
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
	int r;

	if ((r = sodium_ready()) < 0)
		return r;
	if (siglen < sodium_base64_ENCODED_LEN(sizeof(s), B64))
		return -ENOSPC;
	buf = framed(domain, msg, len, &n);
	if (!buf)
		return -ENOMEM;
	if (so.crypto_sign_detached(s, NULL, buf, n, k->sec) != 0)
		return -EIO;
	so.sodium_bin2base64(sig, siglen, s, sizeof(s), B64);
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
	    so.sodium_base642bin(pub, sizeof(pub), pub_text + 8, strlen(pub_text + 8), NULL,
			      &publen, NULL, B64) != 0 || publen != sizeof(pub) ||
	    so.sodium_base642bin(s, sizeof(s), sig, strlen(sig), NULL, &slen, NULL, B64) != 0 ||
	    slen != sizeof(s))
		return -EINVAL;
	buf = framed(domain, msg, len, &n);
	if (!buf)
		return -ENOMEM;
	return so.crypto_sign_verify_detached(s, buf, n, pub) == 0 ? 0 : -EBADMSG;
}

int sign_sha256_hex(const void *msg, size_t len, char hex[65])
{
	uint8_t h[crypto_hash_sha256_BYTES];
	int r = sodium_ready();

	if (r < 0)
		return r;
	so.crypto_hash_sha256(h, msg, len);
	so.sodium_bin2hex(hex, 65, h, sizeof(h));
	return 0;
}
