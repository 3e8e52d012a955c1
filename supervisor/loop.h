/*
 * loop.h: actord's event loop (loop.c): an epoll set whose events run
 * handlers (struct ev), timers on a deadline heap behind one timerfd
 * (struct timer), and the monotonic clock in ms.  The supervision tree
 * runs on one; the control socket (control.c) runs its listener, clients
 * and their deadlines on one of its own, nested in the tree's.
 */
#ifndef ACTORD_LOOP_H
#define ACTORD_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef void (*ev_fn)(void *arg, uint32_t events);
typedef void (*timer_fn)(void *arg);

struct ev {
	int		 fd;
	ev_fn		 fn;
	void		*arg;
	uint64_t	 since;		/* the loop's batch when it was added */
};

struct timer {
	uint64_t	 when;		/* absolute, ms on CLOCK_MONOTONIC */
	size_t		 idx;		/* position in the heap, or SIZE_MAX */
	timer_fn	 fn;
	void		*arg;
};

struct loop {
	int		 epfd;
	int		 tfd;
	struct ev	 tfd_ev;
	struct timer	**heap;
	size_t		 nheap;
	size_t		 heapcap;
	uint64_t	 armed;		/* deadline the timerfd holds; 0: none */
	uint64_t	 batch;		/* epoll_waits that returned events */
	bool		 in_turn;	/* loop_once runs handlers */
	bool		 heap_moved;	/* ... and the earliest deadline may
					 * have changed: rearm at the turn's end */
	bool		 simulated;	/* tests/sim: no fds, the clock is sim_now */
	uint64_t	 sim_now;	/* ms, the simulated clock */
};

uint64_t now_ms(void);
uint64_t loop_now(const struct loop *);
int	 loop_init(struct loop *);
void	 loop_init_sim(struct loop *, uint64_t now);
uint64_t loop_sim_next(const struct loop *);
void	 loop_sim_fire(struct loop *);
void	 loop_close(struct loop *);
int	 loop_add(struct loop *, struct ev *, int fd, uint32_t events,
	    ev_fn, void *arg);
int	 loop_mod(struct loop *, struct ev *, uint32_t events);
void	 loop_del(struct loop *, struct ev *);
void	 timer_init(struct timer *, timer_fn, void *arg);
void	 timer_at(struct loop *, struct timer *, uint64_t when);
void	 timer_after(struct loop *, struct timer *, uint64_t ms);
void	 timer_cancel(struct loop *, struct timer *);
bool	 timer_pending(const struct timer *);
int	 loop_once(struct loop *, int timeout_ms);

#endif
