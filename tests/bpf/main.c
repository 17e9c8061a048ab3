// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * main.c - the BPF program tests: egret's programs run by the kernel over
 * hand-built packets (BPF_PROG_TEST_RUN), in three groups, after one
 * check that this machine can run them at all.
 */
#include "harness.h"

int main(void)
{
	int exit_code = 0, failed = 0;

	if (bpft_preflight("the BPF program tests", &exit_code) < 0)
		return exit_code;
	failed += bpft_objects_tests();
	failed += bpft_packets_tests();
	failed += bpft_judge_tests();
	failed += bpft_account_tests();
	return failed ? 1 : 0;
}
