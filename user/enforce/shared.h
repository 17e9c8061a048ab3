/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * enforce/shared.h - the set of programs every attempt uses: loaded and
 * verified once per build and boot, pinned under SHARED_ROOT/<tag>/.
 *
 * Loading egret's objects costs 100-200 ms of BPF verifier time, nearly
 * all of an attempt's start. The programs keep no attempt in themselves
 * (bpf/lib/attempt.h), so the first egret of a build loads them and pins
 * them, and every later one opens the pins, checks them (each program
 * present, of its kind, using only the set's maps; each map of its kind
 * and size) and attaches: a few ms. An attempt pins what it uses in its
 * own directory too, so removing a set never takes anything from a
 * running attempt.
 *
 * A set is removed by `egret gc --programs` alone, and only when nobody
 * uses it: each user (an attempt, for its lifetime; egretd, for its own)
 * holds a shared lock on SHARED_LOCK_DIR/<tag>.lock, which the remover
 * must take exclusively. Another build's `egret run` on the host never
 * costs egretd its set (and the next attempt the verifier's seconds).
 * The tag hashes the objects, which the Makefile builds reproducibly: the
 * same commit built anywhere has one tag.
 */
#ifndef EGRET_SHARED_H
#define EGRET_SHARED_H

#include <stdbool.h>

#include "lib/paths.h"

#define SHARED_ROOT	EGRET_BPFFS "/egret-programs"
/* <tag>.lock: held shared by a set's users (lib/lockfile.h); make.lock:
 * held while a set is looked for or made, so that a burst of attempts on
 * a fresh boot loads once, the others wait and open it. Beside the
 * records: every deployment gives egret a writable /run/egret (a
 * container's root file system may be read-only), and gc passes over
 * the directory. */
#define SHARED_LOCK_DIR	EGRET_RUN_DIR "/.programs"

struct loader;

/*
 * This build's set into @ld: the pinned one, or (none yet, or unusable)
 * loaded now and pinned for the next attempts. With @fresh, loaded now
 * for this attempt alone and never pinned. ld->loaded_now says which;
 * ld->set_lock holds the set's lock until loader_destroy().
 *
 * @keep (NULL: none) is an empty cgroup of egret's own to which a pinned
 * set's programs are attached as well, once: the kernel turns the cgroup
 * hooks of an attach type on and off as its first program comes and its
 * last goes, and each turn rewrites kernel text on every CPU (a few
 * hundred microseconds, twice per attach type per attempt when attempts
 * come one at a time). Held there, they stay on. Nothing runs in @keep;
 * anything that did would find every destination refused (its storage
 * names no attempt).
 */
int shared_get(struct loader *ld, bool fresh, const char *keep, const char **ret_step);

/* The task iterator of this build's pinned set (bpf/tasks.bpf.c), checked
 * as open_set() checks each program: its fd, or -errno (-ENOENT: no set
 * yet, or a kernel that could not load it). */
int shared_tasks_prog(void);

/* Remove every set nobody uses (this build's too), and half-made ones
 * whose maker is gone. With none left, @keep (NULL: none) goes too.
 * Returns how many sets were removed, or -errno. */
int shared_gc(const char *keep);

#endif
