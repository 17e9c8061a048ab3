// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* test_receipt.c - receipts' keys and signatures (lib/sign.h) and their
 * text (observe/receipt.h): a receipt verifies, and any byte changed, a
 * line added or another key does not. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/sign.h"
#include "observe/events.h"
#include "observe/receipt.h"

static char dir[64], key1[96], key2[96];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/egret-unit-receipt.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(key1, sizeof(key1), "%s/a.key", dir);
	snprintf(key2, sizeof(key2), "%s/b.key", dir);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Made once, 0600; the same key read back; refused when others may read
 * it or it is not one. */
static void test_key_file(void **state)
{
	struct sign_key a, b;
	struct stat st;
	char bad[128];
	FILE *f;

	(void)state;
	assert_int_equal(sign_key_load(key1, 0, &a), -ENOENT);
	assert_int_equal(sign_key_load(key1, 1, &a), 0);
	assert_int_equal(stat(key1, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(sign_key_load(key1, 1, &b), 0);
	assert_string_equal(a.pub_text, b.pub_text);
	assert_memory_equal(a.sec, b.sec, sizeof(a.sec));
	assert_int_equal(strncmp(a.pub_text, "ed25519:", 8), 0);
	assert_int_equal(strlen(a.pub_text), 8 + 44);
	assert_int_equal(chmod(key1, 0640), 0);
	assert_int_equal(sign_key_load(key1, 1, &b), -EPERM);
	assert_int_equal(chmod(key1, 0600), 0);
	snprintf(bad, sizeof(bad), "%s/bad.key", dir);
	f = fopen(bad, "w");
	assert_non_null(f);
	fputs("egret-receipt-key v1 ed25519 notbase64!\n", f);
	fclose(f);
	assert_int_equal(chmod(bad, 0600), 0);
	assert_int_equal(sign_key_load(bad, 1, &b), -EBADMSG);
	sign_key_clear(&a);
	sign_key_clear(&b);
}

static void test_sign_verify(void **state)
{
	struct sign_key a;
	char sig[SIGN_SIG_TEXT_MAX];

	(void)state;
	assert_int_equal(sign_key_load(key1, 1, &a), 0);
	assert_int_equal(sign_detached(&a, "d", "hello", 5, sig, sizeof(sig)), 0);
	assert_int_equal(sign_verify(a.pub_text, "d", "hello", 5, sig), 0);
	assert_int_equal(sign_verify(a.pub_text, "d", "hellO", 5, sig), -EBADMSG);
	/* The domain is part of what is signed. */
	assert_int_equal(sign_verify(a.pub_text, "e", "hello", 5, sig), -EBADMSG);
	assert_int_equal(sign_verify("ed25519:xx", "d", "hello", 5, sig), -EINVAL);
	assert_int_equal(sign_verify(a.pub_text, "d", "hello", 5, "AAAA"), -EINVAL);
	sign_key_clear(&a);
}

static char *made(size_t *len, struct sign_key *k)
{
	struct events ev = { .counters_fd = -1, .tls_counts_fd = -1, .dests_fd = -1,
			     .log = { .fd = -1 }, .dns_denied = 2, .nnames_out = 1 };
	struct receipt_facts f = { .attempt = "abc123", .repo = "owner/app", .version = "t",
				   .policy_sha256 = "00", .started = 1, .ended = 2, .status = 3 };
	char *text = NULL;

	strcpy(ev.names_out[0].name, "evil.example");
	ev.names_out[0].count = 2;
	assert_int_equal(sign_key_load(key1, 1, k), 0);
	assert_int_equal(receipt_make(&ev, &f, k, &text, len), 0);
	return text;
}

static void test_receipt_check(void **state)
{
	char signer[SIGN_PUB_TEXT_MAX], *copy;
	struct sign_key k, other;
	size_t len, body;
	char *text = made(&len, &k);

	(void)state;
	assert_int_equal(receipt_check(text, len, NULL, signer, &body), 0);
	assert_string_equal(signer, k.pub_text);
	assert_non_null(strstr(text, "\"names_refused\":[{\"name\":\"evil.example\""));
	assert_int_equal(receipt_check(text, len, k.pub_text, signer, &body), 0);
	assert_int_equal(text[body], '\n');
	/* Every byte of the first line is signed. */
	copy = malloc(len);
	for (size_t i = 0; i < body; i++) {
		memcpy(copy, text, len);
		copy[i] ^= 0x01;
		assert_int_not_equal(receipt_check(copy, len, NULL, signer, &body), 0);
		body = (size_t)(strchr(text, '\n') - text);
	}
	/* Another key; a line added; the end cut. */
	assert_int_equal(sign_key_load(key2, 1, &other), 0);
	assert_int_equal(receipt_check(text, len, other.pub_text, signer, &body), -EKEYREJECTED);
	copy = realloc(copy, len + 8);
	memcpy(copy, text, len);
	memcpy(copy + len, "{}\n", 3);
	assert_int_equal(receipt_check(copy, len + 3, NULL, signer, &body), -EBADMSG);
	assert_int_equal(receipt_check(text, len - 1, NULL, signer, &body), -EBADMSG);
	free(copy);
	free(text);
	sign_key_clear(&k);
	sign_key_clear(&other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_file),
		cmocka_unit_test(test_sign_verify),
		cmocka_unit_test(test_receipt_check),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
