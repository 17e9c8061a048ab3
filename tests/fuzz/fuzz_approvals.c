// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_approvals.c - libFuzzer target for the approvals parser
 * (user/requests/approvals.c). An approvals file is merged into a repository's
 * policy by every attempt of it, and its names came from inside attempts
 * (through approved requests). The input is the file's YAML; whatever
 * parses is applied to a policy, which must then hold only what the
 * approvals said, within the policy's limits.
 */
#include <stddef.h>
#include <stdint.h>

#include "policy/policy.h"
#include "requests/approvals.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct diag d;
	struct approvals a;
	struct policy p;

	d = (struct diag){ 0 };
	if (approvals_parse(&a, (const char *)data, size, "fuzz.yaml", "owner/name", &d) == 0) {
		if (a.n > APPROVALS_MAX || d.n)
			__builtin_trap();
		policy_init(&p);
		if (approvals_apply(&a, &p) == 0 && p.nspecs + p.nhosts > a.n)
			__builtin_trap();
		policy_free(&p);
	}
	if (d.n > DIAG_MAX)
		__builtin_trap();
	approvals_free(&a);
	return 0;
}
