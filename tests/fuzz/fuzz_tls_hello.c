// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_tls_hello.c - libFuzzer target for the ClientHello reader SNI
 * pinning compiles into BPF (include/egret_tls.h), driven as
 * bpf/lib/pin.h drives it. Whatever the bytes, every read stays inside
 * the buffer (ASan), a parse ends in bounded steps, and a name it accepts
 * is one the DNS proxy could have stored: 1-253 bytes of [a-z0-9._-],
 * no empty label, lying inside the record.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "egret_tls.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A heap copy of exactly EGRET_HELLO_MAX bytes: ASan sees past it. */
	__u8 *buf = calloc(1, EGRET_HELLO_MAX);
	char name[EGRET_SNI_MAX + 3] = {};
	struct egret_hello h = {};
	int need, steps = 0;

	if (!buf)
		abort();
	memcpy(buf, data, size < EGRET_HELLO_MAX ? size : EGRET_HELLO_MAX);
	need = egret_hello_need(buf, (__u32)(size < EGRET_HELLO_MAX ? size : EGRET_HELLO_MAX));
	if (need <= 0 || (size_t)need > size || egret_hello_begin(&h, buf, (__u32)need) < 0)
		goto out;
	while (steps < EGRET_HELLO_EXTS && egret_hello_ext(&h, buf))
		steps++;
	if (egret_hello_sni(&h, buf) < 0)
		goto out;
	if (h.name_len < 1 || h.name_len > EGRET_SNI_MAX ||
	    h.name_off + h.name_len > (__u32)need)
		abort();
	for (__u32 i = 0; i < h.name_len; i++)
		if (egret_hello_name_byte(&h, buf, i, name) < 0)
			goto out;
	for (__u32 i = 0; i < h.name_len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
		      c == '_' || c == '.') || (c == '.' && (i == 0 || name[i - 1] == '.')))
			abort();
	}
	if (name[h.name_len - 1] == '.' || strlen(name) != h.name_len)
		abort();
out:
	free(buf);
	return 0;
}
