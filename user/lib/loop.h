/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * lib/loop.h - the one epoll loop egret runs while COMMAND lives: the child's
 * pidfd, signals, the DNS proxy's sockets, c-ares' sockets and timers.
 */
#ifndef EGRET_LOOP_H
#define EGRET_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct loop_source;
typedef void (*loop_fn)(struct loop_source *src, uint32_t events);

/* Embedded in its owner, which container_of()s back from @src. */
struct loop_source {
	int fd;
	loop_fn fn;
	bool added;
	/* For loop_release(): called once the current batch is done. */
	void (*release)(struct loop_source *src);
	struct loop_source *next_dead;
};

struct loop {
	int epfd;
	bool stop;
	int error;		/* first fatal error, ends the loop */
	struct loop_source *dead;
};

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - __builtin_offsetof(type, member)))

int loop_init(struct loop *l);
void loop_close(struct loop *l);

/* Watch @src->fd for @events; modify if already watched. */
int loop_watch(struct loop *l, struct loop_source *src, uint32_t events);
void loop_unwatch(struct loop *l, struct loop_source *src);

/* Unwatch @src if @l is set and close its fd (a timer the owner made). */
void loop_source_close(struct loop *l, struct loop_source *src);

/* Unwatch @src and call src->release after the current batch, when no
 * pending event can still point at it. */
void loop_release(struct loop *l, struct loop_source *src);

/* Dispatch until loop_stop() or a fatal error. Returns 0 or -errno. */
int loop_run(struct loop *l);
void loop_stop(struct loop *l, int error);

/* A timerfd armed relative to now; ms 0 disarms. */
int timerfd_arm_ms(int fd, uint64_t ms, bool periodic);

/* CLOCK_MONOTONIC, in µs: the clock of the loop's timers. */
uint64_t mono_us(void);

#endif
