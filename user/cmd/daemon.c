// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cmd/daemon.c - egretd: the root service that runs attempts for callers
 * without root (docs/EGRETD.md). The same binary as egret, started by the
 * name egretd.
 */
#include <errno.h>
#include <sys/wait.h>
#include <sched.h>
#include <fcntl.h>
#include <limits.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/daemon.h"
#include "daemon/config.h"
#include "daemon/peer.h"
#include "attempt/instance.h"
#include "daemon/server.h"
#include "attempt/cgroup.h"
#include "enforce/loader.h"
#include "enforce/shared.h"
#include "lib/exit.h"
#include "lib/log.h"
#include "lib/paths.h"
#include "lib/util.h"
#include "requests/export.h"

static void daemon_usage(FILE *out)
{
	fprintf(out,
		"Usage: egretd [--config FILE] [--check-config] [-v]\n"
		"\n"
		"Run attempts for callers without root: `egret run` of a caller the\n"
		"configuration names connects to egretd's socket; egretd checks who\n"
		"it is (the kernel's word) and what it may ask for, and runs the\n"
		"attempt as egret run does as root, COMMAND on the caller's stdin,\n"
		"stdout and stderr.\n"
		"\n"
		"  --config FILE    egretd's configuration (default " DAEMON_CONFIG_PATH ")\n"
		"  --check-config   validate it, print a summary, exit (0 valid, 2 not)\n"
		"  -v, --verbose    more detail in egretd's log\n"
		"  -h, --help       this text\n"
		"\n"
		"Socket activation (systemd's LISTEN_FDS) is used when given. See\n"
		"docs/EGRETD.md for the file and the deployment.\n");
}

/* Slots made before the first caller: each holds 192 KiB of kernel memory
 * for as long as the set is pinned; attempts past them make their own. */
#define EGRETD_WARM_SLOTS	64

/* The set of programs, loaded (verified) and pinned before the first
 * caller, with a slot made for each attempt it may run at once: a burst
 * of attempts then starts without the verifier or a grace period. What
 * cannot be had now is each attempt's to report. Returns the set's lock
 * (enforce/shared.h), held for egretd's life so that no gc removes the
 * set from under it, or -1. */
static int warm_programs(unsigned int max)
{
	int lock;

	const char *step = "";
	char keep[PATH_MAX];
	struct loader ld;
	int r;

	loader_init(&ld);
	cgroup_keep_path(keep, sizeof(keep));
	r = shared_get(&ld, false, keep[0] ? keep : NULL, &step);
	if (max > EGRETD_WARM_SLOTS)
		max = EGRETD_WARM_SLOTS;
	if (r == 0 && (r = loader_make_slots(&ld, max)) < 0)
		step = "make the attempts' ring buffers and repeat counts";
	if (r < 0)
		log_warn("egretd: %s: %s (each attempt tries again)", step, strerror(-r));
	else
		log_info("egretd: the programs are %s, %u slots ready",
			 ld.loaded_now ? "loaded and pinned" : "pinned already", max);
	lock = TAKE_FD(ld.set_lock);
	loader_destroy(&ld);
	return lock;
}

/*
 * What each attempt's process would otherwise do again for itself, done
 * once before the accept loop so that the handlers forked from it inherit
 * the result: libc's NSS module (COMMAND's user is looked up), libbpf's
 * answers about the kernel (cached per process), and the parsed registry
 * catalog. Each is only a head start: a handler that finds
 * nothing here does it itself.
 */
static void warm_process(uid_t attempt_uid)
{
	char mnt[PATH_MAX];
	gid_t groups[1];
	int n = 1;

	/* Each request looks for the cgroup2 mount twice (daemon/peer.h). */
	(void)daemon_cgroup2_mount(mnt, sizeof(mnt));

	/* An attempt uid has no passwd entry, as a rule: the lookup goes on
	 * past the files to every NSS module (systemd's, on Debian), which
	 * is what gets loaded here. */
	(void)getpwuid(attempt_uid);
	(void)getgrouplist("root", 0, groups, &n);
	/* It also makes libbpf probe its own features, once. (Not the probes
	 * that keep a failure: one at start would last egretd's life.) */
	(void)loader_can_set_errno();
}

/*
 * The host's name, for the request lines' `node` when the configuration
 * names none: egretd shares the host's PID namespace (docs/DEPLOYMENT.md),
 * so the UTS namespace of pid 1 is the host's even when egretd's own is a
 * container's (whose hostname changes with every recreate). Read in a
 * child that enters it; this process's own name if that fails.
 */
static void host_name(char *buf, size_t len)
{
	int p[2], fd, status;
	ssize_t n = -1;
	pid_t pid;

	buf[0] = '\0';
	if (pipe2(p, O_CLOEXEC) == 0) {
		pid = fork();
		if (pid == 0) {
			char name[HOST_NAME_MAX + 1] = "";

			close(p[0]);
			fd = open("/proc/1/ns/uts", O_RDONLY | O_CLOEXEC);
			if (fd < 0 || setns(fd, CLONE_NEWUTS) < 0 ||
			    gethostname(name, sizeof(name) - 1) < 0)
				_exit(1);
			_exit(write(p[1], name, strlen(name)) < 0);
		}
		close(p[1]);
		if (pid > 0) {
			n = read(p[0], buf, len - 1);
			waitpid(pid, &status, 0);
		}
		close(p[0]);
	}
	if (n > 0)
		buf[n] = '\0';
	else if (gethostname(buf, len - 1) < 0)
		buf[0] = '\0';
	buf[len - 1] = '\0';
}

/* What egretd's command line said. */
struct daemon_args {
	const char *path;	/* --config */
	bool check;		/* --check-config */
};

/* The options into @ret: 0, 1 when --help was printed, or -EINVAL after
 * the usage or one line. */
static int daemon_args_parse(int argc, char **argv, struct daemon_args *ret)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", no_argument, NULL, 'C' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*ret = (struct daemon_args){ .path = DAEMON_CONFIG_PATH };
	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			ret->path = optarg;
			break;
		case 'C':
			ret->check = true;
			break;
		case 'v':
			if (log_get_level() < LOG_DEBUG)
				log_set_level(log_get_level() + 1);
			break;
		case 'h':
			daemon_usage(stdout);
			return 1;
		default:
			daemon_usage(stderr);
			return -EINVAL;
		}
	}
	if (optind != argc) {
		log_error("egretd takes no arguments ('%s')", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* fds 0-2 taken: a caller's fd received later must never land there
 * (the handler dup2()s the caller's three onto them). */
static int stdio_reserve(void)
{
	for (int i = 0; i < 3; i++)
		if (fcntl(i, F_GETFD) < 0 && open("/dev/null", O_RDWR) != i) {
			log_error("egretd: cannot open /dev/null on fd %d", i);
			return -EBADF;
		}
	return 0;
}

/* The configuration at @path into @cfg; every problem logged. */
static int config_read(const char *path, struct daemon_config *cfg)
{
	struct diag d = { .file = path };
	int r = daemon_config_load(path, cfg, &d);

	if (r < 0 && d.n)
		diag_log(&d);
	else if (r < 0)
		log_error_errno(r, "egretd: configuration %s", path);
	return r;
}

/* The name request lines carry (`node`): egretd.yaml's, the deployment's
 * (a DaemonSet's node name), else the host's name where egretd can read
 * it. */
static void node_name_set(const struct daemon_config *cfg)
{
	const char *env = getenv("EGRET_NODE");
	char node[REQUEST_NODE_MAX + 1];

	if (cfg->node[0])
		snprintf(node, sizeof(node), "%s", cfg->node);
	else if (env && env[0])
		snprintf(node, sizeof(node), "%s", env);
	else
		host_name(node, sizeof(node));
	request_export_set_node(node);
}

/* What egretd holds while it serves: its instance's lock, taken before the
 * socket's name is touched, and the socket. */
struct daemon_hold {
	char instance[DAEMON_SOCKET_PATH_MAX];
	int lock;		/* daemon_instance_lock()'s, or -1 */
	int fd;			/* the listening socket, or -1 */
};

static void daemon_hold_release(struct daemon_hold *h)
{
	if (h->fd >= 0)
		close(TAKE_FD(h->fd));
	if (h->lock >= 0)
		daemon_instance_unlock(h->instance, TAKE_FD(h->lock));
}

/*
 * Who we are, and that no other egretd is, before the socket's name is
 * touched (a second egretd would take it from the first) and before any
 * attempt of ours is re-adopted (attempt/instance.h); then the socket,
 * systemd's or our own. 0, or -errno after one line.
 */
static int daemon_hold_take(const struct daemon_config *cfg, struct daemon_hold *h)
{
	int fd = daemon_activated_fd(), r;

	r = fd == -ENOENT || fd >= 0 ? 0 : fd;
	h->fd = fd >= 0 ? fd : -1;
	if (r == 0)
		r = daemon_instance_name(fd, cfg->socket_path, h->instance, sizeof(h->instance));
	r = r < 0 ? r : daemon_instance_lock(h->instance);
	if (r == -EBUSY)
		log_error("egretd: another egretd serves %s (its lock in %s is held): one egretd per socket",
			  h->instance, EGRETD_ATTEMPT_DIR);
	else if (r < 0)
		log_error_errno(r, "egretd: take the lock of egretd %s in %s",
				cfg->socket_path, EGRETD_ATTEMPT_DIR);
	if (r < 0)
		return r;
	h->lock = r;
	if (fd == -ENOENT && (r = daemon_listen(cfg)) < 0)
		return log_error_errno(r, "egretd: listen on %s", cfg->socket_path);
	if (fd == -ENOENT)
		h->fd = r;
	return 0;
}

int cmd_daemon(int argc, char **argv)
{
	_cleanup_(daemon_config_free) struct daemon_config cfg = {};
	_cleanup_(daemon_hold_release) struct daemon_hold hold = { .lock = -1, .fd = -1 };
	_cleanup_close_ int set_lock = -1;
	struct daemon_args args;
	int r;

	r = daemon_args_parse(argc, argv, &args);
	if (r != 0)
		return r > 0 ? 0 : EXIT_USAGE;
	if (stdio_reserve() < 0)
		return EXIT_SETUP;
	if (config_read(args.path, &cfg) < 0)
		return EXIT_POLICY;
	if (args.check) {
		printf("%s: valid; socket %s, %zu caller(s), attempts as uids %u-%u, at most %u at once\n",
		       args.path, cfg.socket_path, cfg.ncallers, (unsigned int)cfg.uid_first,
		       (unsigned int)cfg.uid_last, cfg.max);
		return 0;
	}
	node_name_set(&cfg);
	if (geteuid() != 0) {
		log_error("egretd must run as root: it makes cgroups, loads BPF and starts COMMAND as other uids");
		return EXIT_SETUP;
	}
	if (daemon_hold_take(&cfg, &hold) < 0)
		return EXIT_SETUP;
	set_lock = warm_programs(cfg.max);
	warm_process(cfg.uid_first);
	r = daemon_serve(&cfg, hold.instance, hold.lock, hold.fd);
	return r < 0 ? EXIT_SETUP : 0;
}
