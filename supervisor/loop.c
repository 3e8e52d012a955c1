/*
 * loop.c: actord's one event loop: an epoll set, and one timerfd armed at
 * the earliest absolute deadline of a binary heap of timers.
 *
 * It owns the epoll and timerfd descriptors and the heap.  It must never
 * sleep, poll or wake up on its own: with no fd ready and no deadline,
 * epoll_wait blocks for ever, so an idle actord makes no system call.
 *
 * A simulated loop (loop_init_sim, for the deterministic simulator in
 * tests/sim) has no descriptor: its clock is a number the simulator
 * moves, and loop_sim_fire runs the timers that are due.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/loop.h"
#include "supervisor/log.h"

static void	heap_swap(struct loop *, size_t, size_t);
static void	heap_up(struct loop *, size_t);
static void	heap_down(struct loop *, size_t);
static void	rearm(struct loop *);
static void	rearm_now(struct loop *);
static void	on_timerfd(void *, uint32_t);

uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The loop's clock: the monotonic clock, or the simulated one. */
uint64_t
loop_now(const struct loop *l)
{
	return l->simulated ? l->sim_now : now_ms();
}

void
loop_init_sim(struct loop *l, uint64_t now)
{
	memset(l, 0, sizeof(*l));
	l->epfd = l->tfd = -1;
	l->simulated = true;
	l->sim_now = now;
}

/* The earliest deadline of a simulated loop, or 0 when none. */
uint64_t
loop_sim_next(const struct loop *l)
{
	return l->nheap > 0 ? l->heap[0]->when : 0;
}

/* Run the timers of a simulated loop that are due at sim_now. */
void
loop_sim_fire(struct loop *l)
{
	struct timer *t;

	while (l->nheap > 0 && l->heap[0]->when <= l->sim_now) {
		t = l->heap[0];
		timer_cancel(l, t);
		t->fn(t->arg);
	}
}

int
loop_init(struct loop *l)
{
	memset(l, 0, sizeof(*l));
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd == -1)
		return -1;
	l->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (l->tfd == -1) {
		close(l->epfd);
		return -1;
	}
	if (loop_add(l, &l->tfd_ev, l->tfd, EPOLLIN, on_timerfd, l) == -1) {
		close(l->tfd);
		close(l->epfd);
		return -1;
	}
	return 0;
}

void
loop_close(struct loop *l)
{
	if (l->tfd != -1)
		close(l->tfd);
	if (l->epfd != -1)
		close(l->epfd);
	free(l->heap);
	l->heap = NULL;
	l->nheap = l->heapcap = 0;
	l->tfd = l->epfd = -1;
}

int
loop_add(struct loop *l, struct ev *ev, int fd, uint32_t events, ev_fn fn,
    void *arg)
{
	struct epoll_event ee;

	ev->fd = fd;
	ev->fn = fn;
	ev->arg = arg;
	ev->since = l->batch;
	memset(&ee, 0, sizeof(ee));
	ee.events = events;
	ee.data.ptr = ev;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ee) == -1) {
		ev->fd = -1;
		return -1;
	}
	return 0;
}

/* Other events for a descriptor that loop_add took. */
int
loop_mod(struct loop *l, struct ev *ev, uint32_t events)
{
	struct epoll_event ee;

	if (ev->fd == -1) {
		errno = EBADF;
		return -1;
	}
	memset(&ee, 0, sizeof(ee));
	ee.events = events;
	ee.data.ptr = ev;
	return epoll_ctl(l->epfd, EPOLL_CTL_MOD, ev->fd, &ee);
}

void
loop_del(struct loop *l, struct ev *ev)
{
	if (ev->fd == -1)
		return;
	(void)epoll_ctl(l->epfd, EPOLL_CTL_DEL, ev->fd, NULL);
	ev->fd = -1;
}

void
timer_init(struct timer *t, timer_fn fn, void *arg)
{
	t->when = 0;
	t->idx = SIZE_MAX;
	t->fn = fn;
	t->arg = arg;
}

bool
timer_pending(const struct timer *t)
{
	return t->idx != SIZE_MAX;
}

static void
heap_swap(struct loop *l, size_t a, size_t b)
{
	struct timer *t = l->heap[a];

	l->heap[a] = l->heap[b];
	l->heap[b] = t;
	l->heap[a]->idx = a;
	l->heap[b]->idx = b;
}

static void
heap_up(struct loop *l, size_t i)
{
	while (i > 0 && l->heap[(i - 1) / 2]->when > l->heap[i]->when) {
		heap_swap(l, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void
heap_down(struct loop *l, size_t i)
{
	size_t c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= l->nheap)
			break;
		if (c + 1 < l->nheap && l->heap[c + 1]->when < l->heap[c]->when)
			c++;
		if (l->heap[i]->when <= l->heap[c]->when)
			break;
		heap_swap(l, i, c);
		i = c;
	}
}

/*
 * The heap's earliest deadline may have changed.  Within a turn of the
 * loop (its handlers), the timerfd is armed once at the turn's end, not
 * at each change: a turn that cancels one timer and starts another (a
 * child ready and the next one started; a child reaped and the next one
 * stopped) made two timerfd_settime calls, one of them to disarm it.
 * Outside a turn, at once.
 */
static void
rearm(struct loop *l)
{
	if (l->in_turn)
		l->heap_moved = true;
	else
		rearm_now(l);
}

/* Arm the timerfd at the earliest deadline, only when it changed. */
static void
rearm_now(struct loop *l)
{
	struct itimerspec its;
	uint64_t when;

	l->heap_moved = false;
	if (l->simulated)
		return;
	when = l->nheap > 0 ? l->heap[0]->when : 0;
	if (when == l->armed)
		return;
	memset(&its, 0, sizeof(its));
	if (when != 0) {
		/* when is never 0 (timer_at): a past deadline fires at once. */
		its.it_value.tv_sec = when / 1000;
		its.it_value.tv_nsec = (when % 1000) * 1000000;
	}
	if (timerfd_settime(l->tfd, TFD_TIMER_ABSTIME, &its, NULL) == -1)
		log_warn("%s: timerfd_settime", __func__);
	l->armed = when;
}

void
timer_at(struct loop *l, struct timer *t, uint64_t when)
{
	struct timer **nh;
	size_t ncap;

	if (when == 0)
		when = 1;
	if (timer_pending(t))
		timer_cancel(l, t);
	if (l->nheap == l->heapcap) {
		ncap = l->heapcap ? l->heapcap * 2 : 64;
		nh = reallocarray(l->heap, ncap, sizeof(*nh));
		if (nh == NULL)
			fatal("%s: reallocarray", __func__);
		l->heap = nh;
		l->heapcap = ncap;
	}
	t->when = when;
	t->idx = l->nheap;
	l->heap[l->nheap++] = t;
	heap_up(l, t->idx);
	rearm(l);
}

void
timer_after(struct loop *l, struct timer *t, uint64_t ms)
{
	timer_at(l, t, loop_now(l) + ms);
}

void
timer_cancel(struct loop *l, struct timer *t)
{
	size_t i = t->idx;

	if (i == SIZE_MAX)
		return;
	l->nheap--;
	if (i != l->nheap) {
		l->heap[i] = l->heap[l->nheap];
		l->heap[i]->idx = i;
		heap_down(l, i);
		heap_up(l, l->heap[i]->idx);
	}
	t->idx = SIZE_MAX;
	rearm(l);
}

/* Fire every timer whose deadline has passed, earliest first. */
static void
on_timerfd(void *arg, uint32_t events)
{
	struct loop *l = arg;
	struct timer *t;
	uint64_t exp, now;

	(void)events;
	(void)!read(l->tfd, &exp, sizeof(exp));
	l->armed = 0;		/* a fired timerfd is disarmed */
	now = now_ms();
	while (l->nheap > 0 && l->heap[0]->when <= now) {
		t = l->heap[0];
		timer_cancel(l, t);
		t->fn(t->arg);
	}
	rearm(l);
}

/*
 * One epoll_wait and the handlers of what it returned.  An event names
 * its struct ev, not the descriptor: a handler that removes an ev and
 * adds it again (a worker reaped and restarted: its pidfd event is
 * another process's now) leaves in this batch an event of the removed
 * descriptor under the new one's name.  Such an ev was added during this
 * batch (or a nested one), after epoll_wait had returned: its event is
 * skipped.  The new descriptor's own events come in the next batch
 * (epoll reports what is already ready when a descriptor is added).
 */
int
loop_once(struct loop *l, int timeout_ms)
{
	struct epoll_event ee[32];
	struct ev *ev;
	uint64_t batch;
	int i, n;
	bool outer = !l->in_turn;

	n = epoll_wait(l->epfd, ee, 32, timeout_ms);
	if (n == -1)
		return errno == EINTR ? 0 : -1;
	l->in_turn = true;
	batch = ++l->batch;
	for (i = 0; i < n; i++) {
		ev = ee[i].data.ptr;
		if (ev->fd == -1 || ev->since >= batch)
			continue;
		ev->fn(ev->arg, ee[i].events);
	}
	if (outer) {
		l->in_turn = false;
		if (l->heap_moved)
			rearm_now(l);
	}
	return n;
}
