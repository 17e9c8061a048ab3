/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * egret_tls.h - reading the name a TLS ClientHello asks for, in steps the
 * BPF verifier can bound, shared by the programs (bpf/lib/pin.h) and the
 * unit tests and fuzzer (tests/unit, tests/fuzz), like egret_match.h.
 *
 * Input: the first TLS record of a connection, whole, in a buffer of
 * EGRET_HELLO_MAX bytes (in BPF, one claimed for the judgement:
 * bpf/lib/pin.h). Every byte is read at an offset masked to the buffer,
 * so the verifier sees each load in bounds whatever the offset; the
 * checks against @len are what make the parse correct. Extensions are
 * walked in any order, of any size, one per step:
 * nothing here assumes server_name comes first or the record is small.
 *
 * What is refused (the reason an egret_hello ends with): a first record
 * that is not a handshake record holding one whole ClientHello (a hello
 * spread over several records, or larger than the buffer, is refused:
 * no client in use does either), lengths that do not add up, more than
 * EGRET_HELLO_EXTS extensions, a server_name extension twice or with
 * other than exactly one host_name, a name with a byte outside
 * [A-Za-z0-9._-] or empty labels, and the encrypted_client_hello
 * extension (its inner hello names a host egret cannot read).
 */
#ifndef EGRET_TLS_H
#define EGRET_TLS_H

#include "egret.h"

#ifndef EGRET_INLINE
#define EGRET_INLINE static inline __attribute__((always_inline))
#endif

/* The buffer: a power of two, so a mask bounds every offset. A
 * ClientHello with post-quantum key shares is about 2 kB. */
#define EGRET_HELLO_MAX		8192U
#define EGRET_HELLO_MASK	(EGRET_HELLO_MAX - 1)
#define EGRET_HELLO_EXTS	128	/* extension steps at most */

#define TLS_RECORD_HEADER	5
#define TLS_CONTENT_HANDSHAKE	22
#define TLS_HANDSHAKE_CLIENT_HELLO 1
#define TLS_EXT_SERVER_NAME	0x0000
#define TLS_EXT_ECH		0xfe0d
/* Drafts' code points of ECH (0xfe08-0xfe0c) and of ESNI (0xffce):
 * refused as ECH is. */
#define TLS_EXT_ECH_DRAFT_LO	0xfe08
#define TLS_EXT_ESNI		0xffce
#define TLS_NAME_TYPE_HOST	0

/* Where a parse stands; zeroed, then egret_hello_begin(). */
struct egret_hello {
	__u32 len;		/* bytes of the record in the buffer */
	__u32 off;		/* the next extension */
	__u32 end;		/* the end of the extensions */
	__u32 sni_off;		/* the server_name extension's body, or 0 */
	__u32 sni_len;
	__u32 name_off;		/* the host name, once egret_hello_sni() found it */
	__u32 name_len;
	__u32 reason;		/* EGRET_REASON_*: ALLOWED while nothing is wrong */
};

EGRET_INLINE __u32 egret_hello_u8(const __u8 *buf, __u32 off)
{
	return buf[off & EGRET_HELLO_MASK];
}

EGRET_INLINE __u32 egret_hello_u16(const __u8 *buf, __u32 off)
{
	return egret_hello_u8(buf, off) << 8 | egret_hello_u8(buf, off + 1);
}

/*
 * From the first bytes of a connection (@have of them, at least one):
 * how many the first record takes, header included; 0 if that is not yet
 * known (fewer than TLS_RECORD_HEADER bytes of what may be a handshake
 * record); or -1 if it is no handshake record egret can read.
 */
EGRET_INLINE int egret_hello_need(const __u8 *buf, __u32 have)
{
	__u32 rec;

	if (egret_hello_u8(buf, 0) != TLS_CONTENT_HANDSHAKE)
		return -1;
	if (have < TLS_RECORD_HEADER)
		return 0;
	if (egret_hello_u8(buf, 1) != 3)	/* SSL 3.0 and TLS 1.x */
		return -1;
	rec = egret_hello_u16(buf, 3);
	if (rec == 0 || rec > EGRET_HELLO_MAX - TLS_RECORD_HEADER)
		return -1;
	return (int)(rec + TLS_RECORD_HEADER);
}

/*
 * The fixed part: the record holds exactly one ClientHello, whole; step
 * over version, random, session id, cipher suites and compression to the
 * extensions. @len: the record's bytes in the buffer (egret_hello_need()).
 * Sets h->reason; returns 0 to walk the extensions, -1 if refused.
 */
EGRET_INLINE int egret_hello_begin(struct egret_hello *h, const __u8 *buf, __u32 len)
{
	__u32 hs_len, off;

	h->len = len;
	h->reason = EGRET_REASON_NOT_TLS;
	if (len < TLS_RECORD_HEADER + 4 || len > EGRET_HELLO_MAX)
		return -1;
	if (egret_hello_u8(buf, 5) != TLS_HANDSHAKE_CLIENT_HELLO)
		return -1;
	hs_len = egret_hello_u8(buf, 6) << 16 | egret_hello_u16(buf, 7);
	/* One record, one whole hello: no hello spread over records. */
	if (TLS_RECORD_HEADER + 4 + hs_len != len)
		return -1;
	off = TLS_RECORD_HEADER + 4 + 2 + 32;	/* version, random */
	if (off + 1 > len)
		return -1;
	off += 1 + egret_hello_u8(buf, off);	/* session id */
	if (off + 2 > len)
		return -1;
	off += 2 + egret_hello_u16(buf, off);	/* cipher suites */
	if (off + 1 > len)
		return -1;
	off += 1 + egret_hello_u8(buf, off);	/* compression methods */
	if (off + 2 > len)
		return -1;
	h->end = off + 2 + egret_hello_u16(buf, off);
	h->off = off + 2;
	if (h->end != len)	/* nothing after the extensions */
		return -1;
	h->reason = EGRET_REASON_ALLOWED;
	return 0;
}

/* One extension: 1 to go on, 0 when all are walked (or refused: then
 * h->reason says why). */
EGRET_INLINE int egret_hello_ext(struct egret_hello *h, const __u8 *buf)
{
	__u32 type, elen, off = h->off;

	if (h->reason != EGRET_REASON_ALLOWED || off == h->end)
		return 0;
	if (off + 4 > h->end)
		goto bad;
	type = egret_hello_u16(buf, off);
	elen = egret_hello_u16(buf, off + 2);
	if (off + 4 + elen > h->end)
		goto bad;
	if ((type >= TLS_EXT_ECH_DRAFT_LO && type <= TLS_EXT_ECH) ||
	    type == TLS_EXT_ESNI) {
		h->reason = EGRET_REASON_ECH;
		return 0;
	}
	if (type == TLS_EXT_SERVER_NAME) {
		if (h->sni_off)
			goto bad;	/* twice: which one would the server read? */
		h->sni_off = off + 4;
		h->sni_len = elen;
	}
	h->off = off + 4 + elen;
	return 1;
bad:
	h->reason = EGRET_REASON_NOT_TLS;
	return 0;
}

/* After the walk (h->off == h->end): the one host_name, or the reason
 * there is none. 0 with h->name_off/name_len set, or -1. */
EGRET_INLINE int egret_hello_sni(struct egret_hello *h, const __u8 *buf)
{
	__u32 off = h->sni_off, nlen;

	if (h->reason != EGRET_REASON_ALLOWED)
		return -1;
	if (h->off != h->end) {		/* more than EGRET_HELLO_EXTS */
		h->reason = EGRET_REASON_NOT_TLS;
		return -1;
	}
	if (!off) {
		h->reason = EGRET_REASON_NO_SNI;
		return -1;
	}
	h->reason = EGRET_REASON_NOT_TLS;
	/* ServerNameList: its length, then exactly one host_name entry. */
	if (h->sni_len < 5 || egret_hello_u16(buf, off) != h->sni_len - 2)
		return -1;
	if (egret_hello_u8(buf, off + 2) != TLS_NAME_TYPE_HOST)
		return -1;
	nlen = egret_hello_u16(buf, off + 3);
	if (nlen == 0 || nlen > EGRET_SNI_MAX || 5 + nlen != h->sni_len)
		return -1;
	h->name_off = off + 5;
	h->name_len = nlen;
	h->reason = EGRET_REASON_ALLOWED;
	return 0;
}

/*
 * Byte @i of the name, lower-cased, into @out (the pin key's name): 0, or
 * -1 for a byte no host name has, or an empty label (a leading, trailing
 * or doubled dot: a name is compared as the DNS proxy stored it).
 */
EGRET_INLINE int egret_hello_name_byte(const struct egret_hello *h,
				       const __u8 *buf, __u32 i, char *out)
{
	__u32 c = egret_hello_u8(buf, h->name_off + i);
	__u32 prev = i ? egret_hello_u8(buf, h->name_off + i - 1) : '.';

	if (c >= 'A' && c <= 'Z')
		c += 'a' - 'A';
	else if (c == '.') {
		if (prev == '.' || i + 1 == h->name_len)
			return -1;
	} else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		     c == '-' || c == '_')) {
		return -1;
	}
	out[i & 255] = (char)c;
	return 0;
}

#endif /* EGRET_TLS_H */
