// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_tls.c - the ClientHello reader SNI pinning compiles into BPF
 * (include/egret_tls.h), driven step by step as bpf/lib/pin.h drives it:
 * real hellos, hand-built ones in any extension order and size, and every
 * shape it must refuse.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <linux/types.h>

#include "egret.h"
#include "egret_tls.h"
#include "tls_hellos.h"

/* The buffer as BPF has it: EGRET_HELLO_MAX bytes, the record at 0. */
static __u8 buf[EGRET_HELLO_MAX];

/* pin_judge() without the map: the reason, and the name it read. */
static enum egret_reason judge(const __u8 *rec, size_t len, char name[EGRET_SNI_MAX + 3])
{
	struct egret_hello h = {};
	int need;

	memset(buf, 0, sizeof(buf));
	memset(name, 0, EGRET_SNI_MAX + 3);
	if (len > sizeof(buf))
		return EGRET_REASON_NOT_TLS;
	memcpy(buf, rec, len);
	need = egret_hello_need(buf, (__u32)len);
	if (need <= 0 || (size_t)need > len)
		return EGRET_REASON_NOT_TLS;
	if (egret_hello_begin(&h, buf, (__u32)need) < 0)
		return (enum egret_reason)h.reason;
	for (int i = 0; i < EGRET_HELLO_EXTS && egret_hello_ext(&h, buf); i++)
		;
	if (egret_hello_sni(&h, buf) < 0)
		return (enum egret_reason)h.reason;
	for (__u32 i = 0; i < h.name_len; i++)
		if (egret_hello_name_byte(&h, buf, i, name) < 0)
			return EGRET_REASON_NOT_TLS;
	return EGRET_REASON_ALLOWED;
}

/* ---- a ClientHello builder ---------------------------------------- */

struct hello {
	__u8 b[EGRET_HELLO_MAX + 64];
	size_t n;
	size_t ext_len_at;
};

static void put(struct hello *h, const void *p, size_t n)
{
	assert_true(h->n + n <= sizeof(h->b));
	memcpy(h->b + h->n, p, n);
	h->n += n;
}

static void put16(struct hello *h, unsigned int v)
{
	__u8 b[2] = { (__u8)(v >> 8), (__u8)v };

	put(h, b, 2);
}

static void begin(struct hello *h)
{
	static const __u8 head[] = { 22, 3, 1, 0, 0, 1, 0, 0, 0, 3, 3 };
	__u8 zero[32] = {};

	memset(h, 0, sizeof(*h));
	put(h, head, sizeof(head));
	put(h, zero, 32);		/* random */
	put(h, (__u8[]){ 0 }, 1);	/* session id */
	put16(h, 2);
	put16(h, 0x1301);
	put(h, (__u8[]){ 1, 0 }, 2);	/* compression: null */
	h->ext_len_at = h->n;
	put16(h, 0);
}

static void ext(struct hello *h, unsigned int type, const void *body, size_t n)
{
	put16(h, type);
	put16(h, (unsigned int)n);
	put(h, body, n);
}

static void sni(struct hello *h, const char *name)
{
	__u8 body[300];
	size_t n = strlen(name);

	body[0] = (__u8)((n + 3) >> 8);
	body[1] = (__u8)(n + 3);
	body[2] = 0;
	body[3] = (__u8)(n >> 8);
	body[4] = (__u8)n;
	memcpy(body + 5, name, n);
	ext(h, TLS_EXT_SERVER_NAME, body, n + 5);
}

static void filler(struct hello *h, unsigned int type, size_t n)
{
	static __u8 zero[4096];

	ext(h, type, zero, n);
}

/* Lengths filled in: the record's, the handshake's, the extensions'. */
static void end(struct hello *h)
{
	size_t rec = h->n - 5, hs = h->n - 9, exts = h->n - h->ext_len_at - 2;

	h->b[3] = (__u8)(rec >> 8);
	h->b[4] = (__u8)rec;
	h->b[6] = (__u8)(hs >> 16);
	h->b[7] = (__u8)(hs >> 8);
	h->b[8] = (__u8)hs;
	h->b[h->ext_len_at] = (__u8)(exts >> 8);
	h->b[h->ext_len_at + 1] = (__u8)exts;
}

/* ---- tests -------------------------------------------------------- */

static void real_clients_read(void **state)
{
	char name[EGRET_SNI_MAX + 3];

	(void)state;
	assert_int_equal(judge(openssl_bin, openssl_bin_len, name), EGRET_REASON_ALLOWED);
	assert_string_equal(name, "registry.npmjs.org");
	/* Python asked in mixed case: compared as the DNS proxy stored it. */
	assert_int_equal(judge(python_bin, python_bin_len, name), EGRET_REASON_ALLOWED);
	assert_string_equal(name, "registry.npmjs.org");
}

/* Chrome permutes extensions; post-quantum key shares are ~1.2 kB. */
static void any_order_any_size(void **state)
{
	char name[EGRET_SNI_MAX + 3];
	struct hello h;

	(void)state;
	begin(&h);
	filler(&h, 0x0033, 1250);	/* key_share, X25519MLKEM768 sized */
	filler(&h, 0x000a, 8);
	filler(&h, 0x0015, 500);	/* padding */
	sni(&h, "pkgs.test");
	end(&h);
	assert_true(h.n > 1700);
	assert_int_equal(judge(h.b, h.n, name), EGRET_REASON_ALLOWED);
	assert_string_equal(name, "pkgs.test");

	/* A hello as large as the buffer holds, the name last. */
	begin(&h);
	for (int i = 0; i < 7; i++)
		filler(&h, 0x2a2a + i, 1100);
	sni(&h, "a.b");
	end(&h);
	assert_true(h.n > 7000 && h.n <= EGRET_HELLO_MAX);
	assert_int_equal(judge(h.b, h.n, name), EGRET_REASON_ALLOWED);
	assert_string_equal(name, "a.b");
}

static void without_a_name_refused(void **state)
{
	char name[EGRET_SNI_MAX + 3];
	struct hello h;

	(void)state;
	begin(&h);
	filler(&h, 0x000a, 8);
	end(&h);
	assert_int_equal(judge(h.b, h.n, name), EGRET_REASON_NO_SNI);
}

/* The inner hello of ECH names a host egret cannot read. */
static void encrypted_hello_refused(void **state)
{
	char name[EGRET_SNI_MAX + 3];
	struct hello h;

	(void)state;
	begin(&h);
	sni(&h, "registry.npmjs.org");
	filler(&h, TLS_EXT_ECH, 200);
	end(&h);
	assert_int_equal(judge(h.b, h.n, name), EGRET_REASON_ECH);
	/* The drafts' code points, and ESNI's, alike. */
	for (unsigned int t = 0xfe08; t <= 0xfe0c; t++) {
		begin(&h);
		sni(&h, "registry.npmjs.org");
		filler(&h, t, 40);
		end(&h);
		assert_int_equal(judge(h.b, h.n, name), EGRET_REASON_ECH);
	}
	begin(&h);
	filler(&h, 0xffce, 40);
	sni(&h, "registry.npmjs.org");
	end(&h);
	assert_int_equal(judge(h.b, h.n, name), EGRET_REASON_ECH);
}

static void two_names_refused(void **state)
{
	static const __u8 two[] = {
		0, 14, 0, 0, 5, 'a', '.', 't', 'e', 's', 0, 0, 4, 'e', 'v', 'i', 'l',
	};
	char name[EGRET_SNI_MAX + 3];
	struct hello h;

	(void)state;
	/* Two host_name entries in one list. */
	begin(&h);
	ext(&h, TLS_EXT_SERVER_NAME, two, sizeof(two));
	end(&h);
	assert_int_equal(judge(h.b, h.n, name), EGRET_REASON_NOT_TLS);
	/* Two server_name extensions. */
	begin(&h);
	sni(&h, "registry.npmjs.org");
	sni(&h, "evil.test");
	end(&h);
	assert_int_equal(judge(h.b, h.n, name), EGRET_REASON_NOT_TLS);
}

static void bad_names_refused(void **state)
{
	static const char *const bad[] = {
		"evil.test.", ".evil.test", "evil..test", "evil test", "evil/test",
		"ev\x01il", "\xc3\xa9vil.test",
	};
	char name[EGRET_SNI_MAX + 3];
	struct hello h;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		begin(&h);
		sni(&h, bad[i]);
		end(&h);
		assert_int_equal(judge(h.b, h.n, name), EGRET_REASON_NOT_TLS);
	}
	/* 253 bytes is the longest name; 254 is none. */
	{
		char longest[256];

		memset(longest, 'a', 253);
		longest[253] = '\0';
		begin(&h);
		sni(&h, longest);
		end(&h);
		assert_int_equal(judge(h.b, h.n, name), EGRET_REASON_ALLOWED);
		assert_int_equal(strlen(name), 253);
		longest[253] = 'a';
		longest[254] = '\0';
		begin(&h);
		sni(&h, longest);
		end(&h);
		assert_int_equal(judge(h.b, h.n, name), EGRET_REASON_NOT_TLS);
	}
}

/* One record, one whole hello, lengths that add up - or nothing. */
static void broken_records_refused(void **state)
{
	char name[EGRET_SNI_MAX + 3];
	struct hello h, cut;
	int need;

	(void)state;
	begin(&h);
	sni(&h, "registry.npmjs.org");
	end(&h);

	/* The hello spread over two records: the first holds part of it. */
	cut = h;
	cut.b[3] = 0;
	cut.b[4] = 40;
	assert_int_equal(judge(cut.b, 45, name), EGRET_REASON_NOT_TLS);
	/* Not a handshake record; not a ClientHello. */
	cut = h;
	cut.b[0] = 23;
	assert_int_equal(judge(cut.b, cut.n, name), EGRET_REASON_NOT_TLS);
	cut = h;
	cut.b[5] = 2;
	assert_int_equal(judge(cut.b, cut.n, name), EGRET_REASON_NOT_TLS);
	/* An extension running past the end; extensions' length too long. */
	cut = h;
	cut.b[cut.ext_len_at + 5] += 1;
	assert_int_equal(judge(cut.b, cut.n, name), EGRET_REASON_NOT_TLS);
	cut = h;
	cut.b[cut.ext_len_at + 1] += 1;
	assert_int_equal(judge(cut.b, cut.n, name), EGRET_REASON_NOT_TLS);
	/* Bytes after the extensions. */
	cut = h;
	cut.b[cut.n++] = 0;
	end(&cut);
	cut.b[cut.ext_len_at + 1] -= 1;
	assert_int_equal(judge(cut.b, cut.n, name), EGRET_REASON_NOT_TLS);

	/* What egret_hello_need() says of the first bytes. */
	assert_int_equal(egret_hello_need(h.b, 1), 0);
	assert_int_equal(egret_hello_need(h.b, 4), 0);
	need = egret_hello_need(h.b, 5);
	assert_int_equal(need, (int)h.n);
	cut = h;
	cut.b[3] = 0x20;	/* an 8 kB record: more than the buffer */
	cut.b[4] = 0;
	assert_int_equal(egret_hello_need(cut.b, 5), -1);
	cut.b[0] = 'G';		/* plain HTTP */
	assert_int_equal(egret_hello_need(cut.b, 1), -1);
}

/* More extensions than the walk takes steps: refused, not cut short. */
static void too_many_extensions_refused(void **state)
{
	char name[EGRET_SNI_MAX + 3];
	struct hello h;

	(void)state;
	begin(&h);
	for (int i = 0; i < EGRET_HELLO_EXTS; i++)
		filler(&h, 0x3000 + i, 0);
	sni(&h, "registry.npmjs.org");
	end(&h);
	assert_int_equal(judge(h.b, h.n, name), EGRET_REASON_NOT_TLS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(real_clients_read),
		cmocka_unit_test(any_order_any_size),
		cmocka_unit_test(without_a_name_refused),
		cmocka_unit_test(encrypted_hello_refused),
		cmocka_unit_test(two_names_refused),
		cmocka_unit_test(bad_names_refused),
		cmocka_unit_test(broken_records_refused),
		cmocka_unit_test(too_many_extensions_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
