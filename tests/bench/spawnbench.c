/* spawnbench.c - launch cost of a command.
 * Usage: spawnbench seq N -- CMD...   run CMD N times one after another;
 *          prints per run: "run <i> wall_ms <ms> maxrss_kb <kb> status <st>"
 *        spawnbench conc K -- CMD...  start K copies at once, wait for all;
 *          prints "conc <K> wall_ms <ms> ok <count exit 0> maxrss_kb <max>"
 * maxrss is wait4()'s ru_maxrss of the direct child (CMD itself, e.g. egret);
 * COMMAND run by egret is a separate, smaller process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static pid_t spawn(char **cmd)
{
	pid_t p = fork();
	if (p == 0) {
		execvp(cmd[0], cmd);
		_exit(127);
	}
	return p;
}

int main(int argc, char **argv)
{
	long n, i;
	char **cmd;

	if (argc < 5 || strcmp(argv[3], "--")) {
		fprintf(stderr, "usage: spawnbench seq|conc N -- CMD...\n");
		return 2;
	}
	n = atol(argv[2]);
	if (n < 1 || n > 1000)
		return 2;
	cmd = argv + 4;
	if (!strcmp(argv[1], "seq")) {
		for (i = 0; i < n; i++) {
			struct rusage ru;
			int st;
			double t0 = now_ms();
			pid_t p = spawn(cmd);
			wait4(p, &st, 0, &ru);
			printf("run %ld wall_ms %.3f maxrss_kb %ld status %d\n", i,
			       now_ms() - t0, ru.ru_maxrss,
			       WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		}
	} else {
		long ok = 0, maxrss = 0;
		double t0 = now_ms();
		for (i = 0; i < n; i++)
			spawn(cmd);
		for (i = 0; i < n; i++) {
			struct rusage ru;
			int st;
			if (wait4(-1, &st, 0, &ru) < 0)
				break;
			if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
				ok++;
			if (ru.ru_maxrss > maxrss)
				maxrss = ru.ru_maxrss;
		}
		printf("conc %ld wall_ms %.3f ok %ld maxrss_kb %ld\n", n,
		       now_ms() - t0, ok, maxrss);
	}
	return 0;
}
