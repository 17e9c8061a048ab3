// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bpf-stats.c - what the verifier spends on each program of a BPF object,
 * as veristat shows it: processed instructions, states, verification
 * time, stack depth, and the translated and JITed sizes. `make bpf-stats`
 * runs it on build/egret.bpf.o. Needs root.
 *
 * With --budget FILE it is a gate (`make bpf-budget`, in make test). FILE
 * holds "margin PCT" and a "PROGRAM REFERENCE" line for every program of
 * the object (the instructions it verified where the figures were
 * recorded); a program fails when it verifies more than its reference
 * plus the margin, and so does a program with no line, or a line with no
 * program. The count depends on the kernel build as well as on the
 * object: the margin covers that spread (tests/bpf/budgets.txt says how
 * much was seen), and stays well under the growth the gate exists to
 * catch. --grow PCT scales every measured count first: `--grow 50` must
 * fail every program, or a 50 % growth could pass unseen.
 *
 *   bpf-stats OBJECT [--budget FILE [--grow PCT]]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define LOG_SIZE	(64 * 1024)
#define MAX_PROGS	64

struct stats {
	const char *name;
	unsigned long insns, states, peak, usec;
	char stack[64];
	unsigned int xlated, jited;
	char *log;
};

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static void parse(struct stats *s)
{
	const char *p;

	if ((p = strstr(s->log, "processed ")))
		sscanf(p, "processed %lu insns (limit %*u) max_states_per_insn %*u total_states %lu peak_states %lu",
		       &s->insns, &s->states, &s->peak);
	if ((p = strstr(s->log, "verification time ")))
		sscanf(p, "verification time %lu usec", &s->usec);
	if ((p = strstr(s->log, "stack depth ")))
		sscanf(p, "stack depth %63s", s->stack);
}

/* A program's budget: its reference plus @margin per cent, rounded up. */
static unsigned long budget_of(unsigned long ref, unsigned long margin)
{
	return ref + (ref * margin + 99) / 100;
}

/*
 * Each program of @s checked against @path, its counts scaled by
 * (100 + @grow) per cent: the number of failures (over budget, no line,
 * or a line of no program); those over budget in *@ret_over. With @grow,
 * a program within budget is the one reported: the what-if wants them
 * all over.
 */
static int check_budget(const char *path, const struct stats *s, int n,
			unsigned long grow, int *ret_over)
{
	char line[256], name[128];
	unsigned long ref, margin = 0;
	int bad = 0, ln = 0, seen[MAX_PROGS] = { 0 }, over = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		fprintf(stderr, "bpf-stats: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long got, max;
		int i;

		ln++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "margin %lu", &margin) == 1) {
			if (margin == 0 || margin >= 50) {
				fprintf(stderr, "bpf-stats: %s:%d: margin %lu %%: want 1-49 (a 50 %% growth must fail)\n",
					path, ln, margin);
				bad++;
			}
			continue;
		}
		if (sscanf(line, "%127s %lu", name, &ref) != 2) {
			fprintf(stderr, "bpf-stats: %s:%d: want PROGRAM REFERENCE or margin PCT\n", path, ln);
			bad++;
			continue;
		}
		if (!margin) {
			fprintf(stderr, "bpf-stats: %s:%d: no margin line before the first program\n", path, ln);
			bad++;
			continue;
		}
		for (i = 0; i < n && strcmp(s[i].name, name); i++)
			;
		if (i == n) {
			fprintf(stderr, "bpf-stats: %s:%d: no program %s in the object\n", path, ln, name);
			bad++;
			continue;
		}
		seen[i] = 1;
		got = s[i].insns + (s[i].insns * grow + 99) / 100;
		max = budget_of(ref, margin);
		if (got > max) {
			over++;
			if (!grow)
				fprintf(stderr, "bpf-stats: %s verifies %lu instructions, over its budget of %lu (reference %lu + %lu %%, %s:%d)\n",
					name, got, max, ref, margin, path, ln);
		} else if (grow) {
			fprintf(stderr, "bpf-stats: %s grown by %lu %% (%lu instructions) would pass its budget of %lu (%s:%d): the margin is too wide or the reference stale\n",
				name, grow, got, max, path, ln);
		}
	}
	fclose(f);
	for (int i = 0; i < n; i++)
		if (!seen[i]) {
			fprintf(stderr, "bpf-stats: %s has no budget line in %s\n", s[i].name, path);
			bad++;
		}
	*ret_over = over;
	return bad;
}

int main(int argc, char **argv)
{
	static struct stats s[MAX_PROGS];
	struct bpf_program *prog;
	struct bpf_object *obj;
	struct timespec t0, t1;
	unsigned long total = 0;
	unsigned long grow = 0;
	int n = 0, r, over = 0;
	char *end;

	if (argc == 6 && !strcmp(argv[4], "--grow")) {
		grow = strtoul(argv[5], &end, 10);
		if (*end || !grow || grow > 1000)
			argc = 0;
	}
	if (argc != 2 && !((argc == 4 || argc == 6) && !strcmp(argv[2], "--budget"))) {
		fprintf(stderr, "usage: bpf-stats OBJECT [--budget FILE [--grow PCT]]\n");
		return 2;
	}
	libbpf_set_print(quiet);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "bpf-stats: open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	bpf_object__for_each_program(prog, obj) {
		if (n == MAX_PROGS)
			break;
		s[n].name = bpf_program__name(prog);
		s[n].log = calloc(1, LOG_SIZE);
		if (!s[n].log)
			return 1;
		bpf_program__set_log_buf(prog, s[n].log, LOG_SIZE);
		bpf_program__set_log_level(prog, 4);	/* BPF_LOG_STATS */
		n++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = bpf_object__load(obj);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (r) {
		fprintf(stderr, "bpf-stats: load %s: %s\n", argv[1], strerror(-r));
		return 1;
	}
	printf("%-24s %9s %8s %7s %9s %7s %7s %8s\n", "PROGRAM", "INSNS", "STATES", "PEAK",
	       "VERIFY_US", "STACK", "XLATED", "JITED_B");
	for (int i = 0; i < n; i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		prog = bpf_object__find_program_by_name(obj, s[i].name);
		parse(&s[i]);
		if (prog && !bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len)) {
			s[i].xlated = info.xlated_prog_len / 8;
			s[i].jited = info.jited_prog_len;
		}
		total += s[i].usec;
		printf("%-24s %9lu %8lu %7lu %9lu %7s %7u %8u\n", s[i].name, s[i].insns, s[i].states,
		       s[i].peak, s[i].usec, s[i].stack, s[i].xlated, s[i].jited);
	}
	printf("verification %lu us in all; the object's load %ld ms\n", total,
	       (long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
	r = argc >= 4 ? check_budget(argv[3], s, n, grow, &over) : 0;
	bpf_object__close(obj);
	/* Without --grow: none over. With it: all over, none else wrong. */
	if (grow)
		return r || over != n ? 1 : 0;
	return r || over ? 1 : 0;
}
