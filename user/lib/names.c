// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>

#include "lib/names.h"

int dns_name_normalize(const char *in, char *out, size_t outlen)
{
	size_t n = strlen(in), i;

	if (n && in[n - 1] == '.')
		n--;
	if (n == 0 || n > DNS_NAME_MAX || n + 1 > outlen)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		char c = in[i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c + 32);
		out[i] = c;
	}
	out[n] = '\0';
	return 0;
}
