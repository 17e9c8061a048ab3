// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attempt/cgroup.h"
#include "attempt/gc.h"
#include "attempt/preflight.h"
#include "attempt/state.h"
#include "attempt/instance.h"
#include "attempt/limits.h"
#include "enforce/loader.h"
#include "enforce/shared.h"
#include "enforce/sockkill.h"
#include "lib/atomic_file.h"
#include "lib/log.h"
#include "lib/paths.h"
#include "lib/percpu.h"
#include "lib/util.h"

#define KILL_TIMEOUT_MS 5000

/*
 * The attempt's entries in the set's maps go first: the maps are every
 * attempt's, and only its cgroup's id (its key) tells which entries are
 * its. With the cgroup gone already (an earlier teardown cut short) the
 * key is unknown and the entries stay, unreachable: no program names
 * that key again.
 */
static void forget_entries(__u64 key, const char *cgroup, const char *pins)
{
	struct loader ld;
	int r;

	loader_init(&ld);
	r = loader_open_pins(&ld, pins, key);
	if (r == 0)
		r = loader_forget(&ld, false);
	if (r < 0 && r != -ENOENT)
		log_warn("remove the entries of %s from the shared maps: %s", cgroup,
			 strerror(-r));
	loader_destroy(&ld);
}

/* The attempt's key, from its cgroup's id; 0 when the cgroup is gone. */
static __u64 cgroup_key_of(const char *cgroup)
{
	_cleanup_close_ int cg = -1;
	__u64 key = 0;

	cg = cgroup[0] ? open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (cg < 0 || loader_cgroup_key(cg, &key) < 0)
		return 0;
	return key;
}

void teardown_count_sockets(const char *cgroup, struct teardown_known *known)
{
	uint64_t made = 1, audited = 1;

	known->no_sockets = cgroup[0] && known->counters_fd >= 0 &&
	       cgroup_kill_wait(cgroup, KILL_TIMEOUT_MS) == 0 &&
	       percpu_counter_read(known->counters_fd, known->counters_key,
				   EGRET_COUNTER(EGRET_HOOK_SOCKET, EGRET_VERDICT_ALLOW), &made) == 0 &&
	       percpu_counter_read(known->counters_fd, known->counters_key,
				   EGRET_COUNTER(EGRET_HOOK_SOCKET, EGRET_VERDICT_WOULD_DENY),
				   &audited) == 0 &&
	       made + audited == 0;
}

int attempt_teardown(const char *cgroup, const char *pins, const struct teardown_known *known)
{
	__u64 key = cgroup_key_of(cgroup);
	bool sockets = !(known && known->no_sockets);
	int r;

	if (key && pins[0] && !(known && known->forgotten))
		forget_entries(key, cgroup, pins);
	if (cgroup[0]) {
		r = cgroup_kill_remove(cgroup, KILL_TIMEOUT_MS);
		if (r < 0 && r != -ENOENT)
			return log_error_errno(r, "remove cgroup %s", cgroup);
	}
	/* Its sockets die while its programs still judge them: a closed
	 * socket goes on sending what it queued (sockkill.h). */
	if (key && sockets) {
		r = sockets_destroy_cgroup(key);
		if (r < 0)
			log_warn("destroy the sockets of %s: %s", cgroup, strerror(-r));
		else if (r > 0)
			log_debug("destroyed %d sockets of %s", r, cgroup);
	}
	if (pins[0]) {
		r = flat_dir_remove(pins);
		if (r < 0 && r != -ENOENT)
			return log_error_errno(r, "remove pins %s", pins);
	}
	return 0;
}

/*
 * An egretd's attempt nobody serves (its lock is ours now): may it go?
 * Not while its egretd runs, which re-adopts it at its next scan; not
 * within the grace period of GC_DAEMON_GONE, which starts when a gc
 * first sees it so (written into the record, which @fd holds).
 */
static bool daemon_attempt_gone(int fd, struct attempt_state *st, enum gc_daemon mode)
{
	time_t now = time(NULL);
	int running;

	if (mode == GC_DAEMON_NONE)
		return false;
	running = st->instance[0] ? daemon_instance_running(st->instance) : 0;
	if (running != 0) {
		if (running > 0 && st->unserved) {
			st->unserved = 0;
			state_update(fd, st);
		}
		return false;
	}
	if (mode == GC_DAEMON_NOW)
		return true;
	if (!st->unserved) {
		st->unserved = now;
		if (state_update(fd, st) == 0)
			log_info("gc: attempt %s of egretd %s: nobody serves it and that egretd is not running; it goes if still so in %d s",
				 st->id, st->instance[0] ? st->instance : "(unnamed)",
				 GC_UNSERVED_GRACE_S);
		return false;
	}
	return now - st->unserved >= GC_UNSERVED_GRACE_S;
}

/* Is @cgroup (a path) @under, or under it? */
static bool cgroup_under(const char *cgroup, const char *under)
{
	size_t n = strlen(under);

	while (n > 1 && under[n - 1] == '/')
		n--;
	return !strncmp(cgroup, under, n) && (cgroup[n] == '/' || cgroup[n] == '\0');
}

/* Remove one record @name if stale. 1 removed, 0 alive, <0 error. */
static int gc_one(int dfd, const char *name, const struct gc_opts *o)
{
	struct attempt_state st;
	_cleanup_close_ int fd = -1;
	struct stat sb;
	int r;

	fd = openat(dfd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	/* What is not ours to remove is passed over unlocked: a lock taken
	 * even for an instant makes an egretd's re-adopter, which wants it
	 * then, think another has the attempt. */
	if (state_read_fd(fd, &st) == 0 &&
	    ((o->under && !cgroup_under(st.cgroup, o->under)) ||
	     (st.daemon && o->daemon == GC_DAEMON_NONE)))
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK ? 0 : -errno;
	/* Another gc may have finished with it between open and flock. */
	if (fstat(fd, &sb) < 0 || sb.st_nlink == 0)
		return 0;

	r = state_read_fd(fd, &st);
	if (r < 0 || strcmp(st.id, name))
		return log_error_errno(r < 0 ? r : -EINVAL,
				       "gc: unreadable record %s/%s", EGRET_RUN_DIR, name);
	if (o->under && !cgroup_under(st.cgroup, o->under))
		return 0;
	if (st.daemon && !daemon_attempt_gone(fd, &st, o->daemon))
		return 0;
	r = attempt_teardown(st.cgroup, st.pins, NULL);
	if (r < 0)
		return r;
	if (st.uid >= 0)
		preflight_uid_prune((uid_t)st.uid);
	limits_remove(st.id);
	r = state_remove(name);
	if (r < 0)
		return log_error_errno(r, "gc: remove %s/%s", EGRET_RUN_DIR, name);
	log_info("gc: removed stale attempt %s (egret pid %d gone)", st.id,
		 (int)st.pid);
	return 1;
}

void gc_hidden_files(void)
{
	static const char *const dirs[] = { EGRET_UID_LOCK_DIR, EGRETD_ATTEMPT_DIR };

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		int r = atomic_file_sweep(dirs[i]);

		if (r < 0)
			log_warn("gc: %s: what dead writers left: %s", dirs[i], strerror(-r));
	}
}

int gc_stale_attempts(const struct gc_opts *o)
{
	int removed = 0, failed = 0;
	struct dirent *de;
	DIR *dir;

	dir = opendir(EGRET_RUN_DIR);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(dir))) {
		int r;

		/* A record is born whole (lib/atomic_file.h): what an egret
		 * that died left of one is a hidden name, and nothing was
		 * made for it yet (records come first). */
		if (atomic_file_is_hidden(de->d_name)) {
			if (atomic_file_sweep_at(dirfd(dir), de->d_name) < 0)
				failed++;
			continue;
		}
		/* Records are named by their id; a directory
		 * (SHARED_LOCK_DIR) is not one. */
		if (de->d_name[0] == '.' || de->d_type == DT_DIR)
			continue;
		r = gc_one(dirfd(dir), de->d_name, o);
		if (r > 0)
			removed++;
		else if (r < 0)
			failed++;
	}
	closedir(dir);
	if (o->daemon != GC_DAEMON_NONE) {
		daemon_instance_prune();
		gc_hidden_files();
	}
	return failed ? -EBUSY : removed;
}
