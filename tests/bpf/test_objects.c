// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * test_objects.c - both BPF objects pass this kernel's verifier, loaded
 * as user/enforce/ loads them (nothing attached).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "egret.h"
#include "egret_match.h"
#include "egret.skel.h"
#include "egret_unix.skel.h"
#include "harness.h"

/* Not in Debian 12's uapi headers (Linux 6.7); user/enforce/unix_filter.c
 * spells them the same way. */
#define BPFT_CGROUP_UNIX_CONNECT	49
#define BPFT_CGROUP_UNIX_SENDMSG	50

/* Every program of the egret object loaded (the group setup loads it). */
static void egret_object_loads(void **state)
{
	struct bpft *t = *state;
	struct bpf_program *prog;
	int n = 0;

	bpf_object__for_each_program(prog, t->skel->obj) {
		assert_true(bpf_program__fd(prog) >= 0);
		n++;
	}
	/* user/enforce/objects.c takes exactly this many (LOADER_NMAIN_PROGS). */
	assert_int_equal(n, 15);
}

/* The unix programs need the cgroup unix hooks (Linux 6.7): without
 * them egret never loads the object, and there is nothing to test. */
static int unix_hooks_exist(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = BPFT_CGROUP_UNIX_CONNECT);
	int fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SOCK_ADDR, "bpft_probe", "GPL",
			       insns, 2, &opts);

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* As load_unix() in user/enforce/objects.c: the attach types set before load, since
 * libbpf 1.1 knows no cgroup/connect_unix section. */
static void unix_object_loads(void **state)
{
	struct egret_unix_bpf *skel;
	int r;

	if (!unix_hooks_exist()) {
		print_message("skipped: this kernel has no cgroup unix hooks (Linux 6.7+)\n");
		skip();
	}
	skel = egret_unix_bpf__open();
	assert_non_null(skel);
	bpf_program__set_expected_attach_type(skel->progs.egret_unix_connect,
					      BPFT_CGROUP_UNIX_CONNECT);
	bpf_program__set_expected_attach_type(skel->progs.egret_unix_sendmsg,
					      BPFT_CGROUP_UNIX_SENDMSG);
	r = egret_unix_bpf__load(skel);
	egret_unix_bpf__destroy(skel);
	assert_int_equal(r, 0);
}

int bpft_objects_tests(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(egret_object_loads),
		cmocka_unit_test(unix_object_loads),
	};

	return cmocka_run_group_tests_name("objects", tests,
					   bpft_group_setup, bpft_group_teardown);
}
