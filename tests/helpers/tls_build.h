/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * tls_build.h - hand-built TLS ClientHellos for the test helpers: tlshello
 * (every shape the red-team tests need) and probe (a plain one before its
 * payload, for connections to a pinned port). Header-only, static inline:
 * each helper is one file.
 */
#ifndef EGRET_TEST_TLS_BUILD_H
#define EGRET_TEST_TLS_BUILD_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>

#define HELLO_MAX (16 * 1024)	/* every record, headers included */
#define REC_HDR 5		/* type, version, length */

/* TLS code points */
#define CT_HANDSHAKE 22
#define HS_CLIENT_HELLO 1
#define EXT_SERVER_NAME 0x0000
#define EXT_SUPPORTED_GROUPS 0x000a
#define EXT_SIG_ALGS 0x000d
#define EXT_ALPN 0x0010
#define EXT_PADDING 0x0015
#define EXT_SUPPORTED_VERSIONS 0x002b
#define EXT_PSK_MODES 0x002d
#define EXT_KEY_SHARE 0x0033
#define EXT_ECH 0xfe0d
#define GROUP_X25519 0x001d
#define GROUP_X25519MLKEM768 0x11ec
#define MLKEM768_EK_LEN 1184	/* 768 12-bit coefficients + 32-byte rho */
#define MLKEM768_PAIRS ((MLKEM768_EK_LEN - 32) / 3)	/* 3 bytes each */
#define MLKEM_Q 3329

/* What the ClientHello holds (tlshello's options). */
struct hello_opts {
	long records;	/* TLS records the handshake is cut over (1: one) */
	long pad;	/* padding extension length; -1: none */
	int pq, sni_last, no_sni, ech;
	const char *sni, *name2;
};

/* An append-only byte buffer; the first failure sticks in err. */
struct buf {
	unsigned char *p;
	size_t len, cap;
	int err;	/* 0, ENOBUFS (does not fit) or getrandom()'s errno */
};

static inline void put(struct buf *b, const void *src, size_t n)
{
	if (b->err)
		return;
	if (n > b->cap - b->len) {
		b->err = ENOBUFS;
		return;
	}
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static inline void put_u8(struct buf *b, unsigned int v)
{
	unsigned char c = (unsigned char)v;

	put(b, &c, 1);
}

static inline void put_u16(struct buf *b, unsigned int v)
{
	unsigned char c[2] = { (unsigned char)(v >> 8), (unsigned char)v };

	put(b, c, 2);
}

static inline void put_zeros(struct buf *b, size_t n)
{
	if (b->err)
		return;
	if (n > b->cap - b->len) {
		b->err = ENOBUFS;
		return;
	}
	memset(b->p + b->len, 0, n);
	b->len += n;
}

static inline int fill_random(void *p, size_t n)
{
	unsigned char *c = p;
	ssize_t r;

	while (n) {
		r = getrandom(c, n, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Random bytes where a real client puts random or key material: a fixed
 * pattern could let an enforcer (or a test) match on it by accident. */
static inline void put_random(struct buf *b, size_t n)
{
	size_t at = b->len;

	put_zeros(b, n);
	if (!b->err)
		b->err = fill_random(b->p + at, n);
}

/* Reserve a big-endian length field of @width bytes (1-3) to be filled in by
 * close_len() once what it covers has been appended. */
static inline size_t open_len(struct buf *b, int width)
{
	size_t at = b->len;

	put_zeros(b, (size_t)width);
	return at;
}

static inline void close_len(struct buf *b, size_t at, int width)
{
	size_t n;
	int i;

	if (b->err)
		return;
	n = b->len - at - (size_t)width;
	if (n >> (8 * width)) {
		b->err = ENOBUFS;
		return;
	}
	for (i = width - 1; i >= 0; i--) {
		b->p[at + (size_t)i] = (unsigned char)n;
		n >>= 8;
	}
}

/* An extension's type and the offset of its 2-byte length. */
static inline size_t open_ext(struct buf *b, unsigned int type)
{
	put_u16(b, type);
	return open_len(b, 2);
}

static inline void put_host_name(struct buf *b, const char *name)
{
	size_t len;

	put_u8(b, 0);		/* name_type host_name */
	len = open_len(b, 2);
	put(b, name, strlen(name));
	close_len(b, len, 2);
}

static inline void ext_server_name(struct buf *b, const struct hello_opts *o)
{
	size_t ext = open_ext(b, EXT_SERVER_NAME), list = open_len(b, 2);

	put_host_name(b, o->sni);
	if (o->name2)
		put_host_name(b, o->name2);
	close_len(b, list, 2);
	close_len(b, ext, 2);
}

/* Each list below is a u16 list: its length, then the code points. */
static inline void ext_u16_list(struct buf *b, unsigned int type,
			 const uint16_t *v, size_t n)
{
	size_t ext = open_ext(b, type), list = open_len(b, 2), i;

	for (i = 0; i < n; i++)
		put_u16(b, v[i]);
	close_len(b, list, 2);
	close_len(b, ext, 2);
}

static inline void ext_supported_groups(struct buf *b, int pq)
{
	static const uint16_t groups[] = {
		GROUP_X25519MLKEM768, GROUP_X25519, 0x0017, 0x0018,
	};

	/* secp256r1 and secp384r1 after x25519, as browsers offer them */
	if (pq)
		ext_u16_list(b, EXT_SUPPORTED_GROUPS, groups, 4);
	else
		ext_u16_list(b, EXT_SUPPORTED_GROUPS, groups + 1, 3);
}

static inline void ext_sig_algs(struct buf *b)
{
	/* ECDSA and RSA-PSS/PKCS#1 with SHA-256/384/512: any ordinary
	 * certificate a test server makes can answer one of them */
	static const uint16_t algs[] = {
		0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601,
	};

	ext_u16_list(b, EXT_SIG_ALGS, algs, sizeof(algs) / sizeof(algs[0]));
}

static inline void ext_supported_versions(struct buf *b)
{
	size_t ext = open_ext(b, EXT_SUPPORTED_VERSIONS), list = open_len(b, 1);

	put_u16(b, 0x0304);
	put_u16(b, 0x0303);
	close_len(b, list, 1);
	close_len(b, ext, 2);
}

/*
 * An ML-KEM-768 encapsulation key that passes the FIPS 203 modulus check
 * (every 12-bit coefficient below q), so a server that speaks
 * X25519MLKEM768 takes the share instead of failing the handshake over a
 * malformed key: random bytes alone would fail that check.
 */
static inline void put_mlkem768_ek(struct buf *b)
{
	unsigned char r[MLKEM768_PAIRS * 4];
	unsigned int c0, c1;
	size_t i;
	int err;

	err = fill_random(r, sizeof(r));
	if (err) {
		if (!b->err)
			b->err = err;
		return;
	}
	for (i = 0; i < MLKEM768_PAIRS; i++) {	/* two coefficients, 3 bytes */
		c0 = ((unsigned int)r[4 * i] << 8 | r[4 * i + 1]) % MLKEM_Q;
		c1 = ((unsigned int)r[4 * i + 2] << 8 | r[4 * i + 3]) % MLKEM_Q;
		put_u8(b, c0 & 0xff);
		put_u8(b, (c0 >> 8) | (c1 & 0x0f) << 4);
		put_u8(b, c1 >> 4);
	}
	put_random(b, 32);	/* rho */
}

static inline void ext_key_share(struct buf *b, int pq)
{
	size_t ext = open_ext(b, EXT_KEY_SHARE), shares = open_len(b, 2), key;

	if (pq) {
		/* the hybrid share: ML-KEM-768 key, then an x25519 key */
		put_u16(b, GROUP_X25519MLKEM768);
		key = open_len(b, 2);
		put_mlkem768_ek(b);
		put_random(b, 32);
		close_len(b, key, 2);
	}
	/* x25519 takes any 32 bytes as a public key */
	put_u16(b, GROUP_X25519);
	key = open_len(b, 2);
	put_random(b, 32);
	close_len(b, key, 2);
	close_len(b, shares, 2);
	close_len(b, ext, 2);
}

static inline void ext_psk_modes(struct buf *b)
{
	size_t ext = open_ext(b, EXT_PSK_MODES), list = open_len(b, 1);

	put_u8(b, 1);		/* psk_dhe_ke */
	close_len(b, list, 1);
	close_len(b, ext, 2);
}

static inline void ext_alpn(struct buf *b)
{
	size_t ext = open_ext(b, EXT_ALPN), list = open_len(b, 2), name;

	name = open_len(b, 1);
	put(b, "http/1.1", 8);
	close_len(b, name, 1);
	close_len(b, list, 2);
	close_len(b, ext, 2);
}

/* Only the type matters to an enforcer (ECH hides the real name); the body
 * is shaped like an outer ECHClientHello so parsers do not choke on it. */
static inline void ext_ech(struct buf *b)
{
	size_t ext = open_ext(b, EXT_ECH), field;

	put_u8(b, 0);		/* outer */
	put_u16(b, 0x0001);	/* HKDF-SHA256 */
	put_u16(b, 0x0001);	/* AES-128-GCM */
	put_u8(b, 1);		/* config_id */
	field = open_len(b, 2);	/* enc */
	put_random(b, 32);
	close_len(b, field, 2);
	field = open_len(b, 2);	/* payload */
	put_random(b, 200);
	close_len(b, field, 2);
	close_len(b, ext, 2);
}

static inline void ext_padding(struct buf *b, size_t n)
{
	size_t ext = open_ext(b, EXT_PADDING);

	put_zeros(b, n);
	close_len(b, ext, 2);
}

/* The handshake message: header, then the ClientHello body. */
static inline void build_client_hello(struct buf *b, const struct hello_opts *o)
{
	static const uint16_t suites[] = { 0x1301, 0x1302, 0x1303, 0xc02f };
	size_t body, list, exts, i;

	put_u8(b, HS_CLIENT_HELLO);
	body = open_len(b, 3);
	put_u16(b, 0x0303);	/* legacy_version: TLS 1.2 */
	put_random(b, 32);
	put_u8(b, 32);		/* a session id, as TLS 1.3 middlebox */
	put_random(b, 32);	/* compatibility mode sends */
	list = open_len(b, 2);
	for (i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
		put_u16(b, suites[i]);
	close_len(b, list, 2);
	put_u8(b, 1);		/* compression methods: null only */
	put_u8(b, 0);

	exts = open_len(b, 2);
	if (!o->no_sni && !o->sni_last)
		ext_server_name(b, o);
	ext_supported_groups(b, o->pq);
	ext_sig_algs(b);
	ext_supported_versions(b);
	ext_key_share(b, o->pq);
	ext_psk_modes(b);
	ext_alpn(b);
	if (o->ech)
		ext_ech(b);
	if (o->pad >= 0)
		ext_padding(b, (size_t)o->pad);
	if (!o->no_sni && o->sni_last)
		ext_server_name(b, o);
	close_len(b, exts, 2);
	close_len(b, body, 3);
}

/*
 * The handshake message in @nrec records, as even as possible (the
 * remainder in the last ones). Every record is non-empty: TLS forbids
 * zero-length handshake fragments, and a peer would reject them.
 */
static inline void build_records(struct buf *out, const struct buf *hs, long nrec)
{
	size_t off = 0, n, left;
	long i;

	for (i = 0; i < nrec; i++) {
		left = hs->len - off;
		n = left / (size_t)(nrec - i);
		put_u8(out, CT_HANDSHAKE);
		put_u16(out, 0x0301);	/* what clients put in the first records */
		put_u16(out, (unsigned int)n);
		put(out, hs->p + off, n);
		off += n;
	}
}

/* The whole byte stream to send into @out; 0, or an errno (ENOBUFS: the
 * options make it bigger than HELLO_MAX, or more records than bytes). */
static inline int tls_build_stream(struct buf *out, const struct hello_opts *o)
{
	static unsigned char hsbuf[HELLO_MAX];
	struct buf hs = { .p = hsbuf, .cap = HELLO_MAX - REC_HDR };

	build_client_hello(&hs, o);
	if (hs.err)
		return hs.err;
	if ((size_t)o->records > hs.len)
		return ENOBUFS;
	build_records(out, &hs, o->records);
	return out->err;
}

#endif
