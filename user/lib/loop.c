// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <time.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "lib/loop.h"

#define LOOP_BATCH 32

static void loop_reap(struct loop *l);

int loop_init(struct loop *l)
{
	*l = (struct loop){};
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	return l->epfd < 0 ? -errno : 0;
}

void loop_close(struct loop *l)
{
	loop_reap(l);
	if (l->epfd >= 0)
		close(l->epfd);
	l->epfd = -1;
}

int loop_watch(struct loop *l, struct loop_source *src, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = src };

	if (epoll_ctl(l->epfd, src->added ? EPOLL_CTL_MOD : EPOLL_CTL_ADD,
		      src->fd, &ev) < 0)
		return -errno;
	src->added = true;
	return 0;
}

void loop_unwatch(struct loop *l, struct loop_source *src)
{
	if (!src->added)
		return;
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, src->fd, NULL);
	src->added = false;
}

void loop_source_close(struct loop *l, struct loop_source *src)
{
	if (src->fd < 0)
		return;
	if (l)
		loop_unwatch(l, src);
	close(src->fd);
	src->fd = -1;
}

void loop_release(struct loop *l, struct loop_source *src)
{
	loop_unwatch(l, src);
	src->next_dead = l->dead;
	l->dead = src;
}

static void loop_reap(struct loop *l)
{
	while (l->dead) {
		struct loop_source *src = l->dead;

		l->dead = src->next_dead;
		src->release(src);
	}
}

void loop_stop(struct loop *l, int error)
{
	l->stop = true;
	if (error && !l->error)
		l->error = error;
}

int loop_run(struct loop *l)
{
	struct epoll_event evs[LOOP_BATCH];

	while (!l->stop) {
		int n = epoll_wait(l->epfd, evs, LOOP_BATCH, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		for (int i = 0; i < n && !l->stop; i++) {
			struct loop_source *src = evs[i].data.ptr;

			/* A source unwatched earlier in this batch is skipped. */
			if (src->added)
				src->fn(src, evs[i].events);
		}
		loop_reap(l);
	}
	loop_reap(l);
	return l->error;
}

int timerfd_arm_ms(int fd, uint64_t ms, bool periodic)
{
	struct itimerspec its = {};

	its.it_value.tv_sec = (time_t)(ms / 1000);
	its.it_value.tv_nsec = (long)(ms % 1000) * 1000000L;
	if (periodic)
		its.it_interval = its.it_value;
	return timerfd_settime(fd, 0, &its, NULL) < 0 ? -errno : 0;
}

uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}
