// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* log_libbpf.c - libbpf's output through egret's log (lib/log.h); apart
 * from log.c so that egretd's client links no libbpf. */
#include <stdarg.h>
#include <stdio.h>
#include <bpf/libbpf.h>

#include "lib/log.h"

/*
 * libbpf prints verifier logs and retries as warnings. By default egret's
 * own error line names the failed step; the libbpf detail only appears at
 * -v (warnings, info) and -vv (debug).
 */
static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	enum log_level want = level == LIBBPF_DEBUG ? LOG_DEBUG : LOG_INFO;

	if (want > log_get_level())
		return 0;
	fputs("libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

void log_setup_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
