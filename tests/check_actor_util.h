/*
 * check_actor_util.h: what the libactor tests share: a MAP_SHARED page the
 * test process and its forked actors all see (results, gates, counters),
 * attach-or-die for function children, and bounded polls.  Tests only:
 * every wait here has a deadline.
 */
#ifndef ACTORD_TESTS_CHECK_ACTOR_UTIL_H
#define ACTORD_TESTS_CHECK_ACTOR_UTIL_H

#include <check.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "shm/shm.h"
#include "worker/actor.h"

#define NWORK		10000

struct shared {
	_Atomic int	 done;		/* the client finished its scenario */
	_Atomic int	 gate;
	_Atomic int	 blocked;
	_Atomic int	 notes;
	_Atomic int	 rc[16];
	_Atomic int64_t	 val[16];
	_Atomic int	 fail;		/* a client-side check failed: line */
	_Atomic uint64_t handled_total;
	_Atomic uint32_t handled[NWORK];
	_Atomic uint32_t poison_attempts[16];
	_Atomic int	 nterm;
	struct actor_terminated term[8];
	_Atomic int	 nloaded;
	char		 loaded[8][32];
	char		 text[64];
	_Atomic int	 senders_done;
	_Atomic int	 misrouted;
	_Atomic uint64_t sent;
};

static struct shared *sh;

static inline void
sh_map(void)
{
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(sh, MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
}

static inline void
sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) == -1)
		;
}

/* A function child: attach, or leave with a status the test will see. */
static inline struct actor *
attach_or_die(void)
{
	struct actor *a;
	char err[ACTOR_ERRBUF];

	if (actor_attach(&a, err, sizeof(err)) < 0) {
		fprintf(stderr, "actor_attach: %s\n", err);
		_exit(99);
	}
	return a;
}

/* Client side: a check that failed is reported through the shared page. */
#define CLIENT_CHECK(c) do {						\
	if (!(c)) {							\
		if (atomic_load(&sh->fail) == 0)			\
			atomic_store(&sh->fail, __LINE__);		\
		fprintf(stderr, "client check failed: %s (line %d)\n",	\
		    #c, __LINE__);					\
	}								\
} while (0)

/* Poll until the actor at idx runs an incarnation other than `old`. */
static inline int
wait_new_incarnation(struct shm_arena *ar, uint32_t idx, uint32_t old,
    int ms)
{
	int i;

	for (i = 0; i < ms * 10; i++) {
		if (shm_actor_incarnation(ar, idx) != old &&
		    shm_actor_state(ar, idx) == SHM_ACTOR_UP)
			return 0;
		sleep_us(100);
	}
	return -1;
}

static inline int
wait_state(struct shm_arena *ar, uint32_t idx, enum shm_actor_state st,
    int ms)
{
	int i;

	for (i = 0; i < ms * 10; i++) {
		if (shm_actor_state(ar, idx) == st)
			return 0;
		sleep_us(100);
	}
	return -1;
}

/* Count dead letters of one reason for one recipient. */
static inline int
count_dl(struct shm_arena *ar, uint32_t idx, uint32_t reason)
{
	struct actor_dead_letter d;
	uint64_t cur = 0;
	int n = 0;

	while (actor_dl_read(ar, &cur, &d) == 1)
		if (d.recipient == idx && d.reason == reason)
			n++;
	return n;
}

/* A client that idles until SIGTERM once its scenario is done. */
static inline int
idle_handler(struct actor *a, const struct actor_msg *m, void *arg)
{
	(void)a;
	(void)m;
	(void)arg;
	return 0;
}

static inline int
client_finish(struct actor *a)
{
	atomic_store(&sh->done, 1);
	(void)actor_run(a, idle_handler, NULL, NULL);
	actor_close(a);
	return 0;
}

#endif
