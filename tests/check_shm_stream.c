/*
 * check_shm_stream.c: a stream of tells from one producer that owns its
 * mailbox's main lane (the express path: shm/express.c, and the owner's
 * send, shm/ring.c express_send), SIGKILLed at whatever point of a send
 * it has reached, again and again: what it published is delivered in its
 * order, a send it did not finish is either delivered whole or released
 * (one dead letter "sender died"), and the lane is never wedged: whoever
 * comes next sends, takes the lane and is received.  Settled either by
 * shm_reap first or by the next sender's revoke first.  And the owner's
 * send to a lane that does not exist is refused, not sent to the lane
 * whose ring id it would compute.
 */
#include <sys/time.h>
#include <sys/wait.h>

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shm/shm.h"
#include "tests/check_shm_util.h"
#include "tests/lib/tcheck.h"

#define ROUNDS	10
#define CAP	1024
#define HOT	(SHM_OWN_STREAK + 8)	/* sends that take the lane */
#define TAG0	1000000u		/* the next producer's tags */

/* Tag and payload say the same number: a torn message shows. */
static int
offer(struct shm_producer *p, uint32_t tag)
{
	struct shm_msg	 m;
	uint64_t	 body[8];
	unsigned	 i;

	memset(&m, 0, sizeof(m));
	m.tag = tag;
	m.len = sizeof(body);
	for (i = 0; i < 8; i++)
		body[i] = tag;
	return shm_offer(p, 0, SHM_LANE_MAIN, &m, body);
}

/* The next message, which must carry tag want; 0, or SHM_EEMPTY. */
static int
take(struct shm_arena *a, uint32_t want)
{
	struct shm_msg	 m;
	uint64_t	 body[8];
	unsigned	 i;
	int		 rc;

	rc = shm_recv(a, 0, SHM_LANES_INBOX, &m, body, sizeof(body), NULL);
	if (rc == SHM_EEMPTY)
		return rc;
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(m.tag, want);
	ck_assert_uint_eq(m.len, sizeof(body));
	for (i = 0; i < 8; i++)
		ck_assert_uint_eq(body[i], want);
	return 0;
}

static void
die(int sig)
{
	(void)sig;
	raise(SIGKILL);
}

/*
 * A child that offers tags 0, 1, 2, ... for ever, each until it goes in,
 * in bursts of a quarter of the lane while it is at most half full, and
 * else naps: it never finds the lane full, so that it owns it from its
 * SHM_OWN_STREAK-th send on.  It SIGKILLs itself after cpu_ms of its
 * own CPU time (ITIMER_PROF: the timer fires at a clock tick, wherever
 * the tick finds it; almost all of its time it is sending).
 */
static pid_t
spawn_stream(struct shm_arena *a, long cpu_ms)
{
	struct shm_producer *p;
	struct shm_counters c;
	struct itimerval it;
	struct timespec	 nap = { 0, 20000 };
	uint32_t	 i, k;
	int		 rc;
	pid_t		 pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid != 0)
		return pid;
	if (shm_producer_open(a, &p) != 0)
		_exit(10);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = cpu_ms / 1000;
	it.it_value.tv_usec = (cpu_ms % 1000) * 1000;
	if (signal(SIGPROF, die) == SIG_ERR ||
	    setitimer(ITIMER_PROF, &it, NULL) != 0)
		_exit(13);
	for (i = 0;; ) {
		if (shm_counters(a, 0, &c) != 0)
			_exit(12);
		if (c.depth > CAP / 2) {
			nanosleep(&nap, NULL);
			continue;
		}
		for (k = 0; k < CAP / 4; ) {
			rc = offer(p, i);
			if (rc == 0) {
				i++;
				k++;
			} else if (rc != SHM_EFULL)
				_exit(11);
		}
	}
}

/* shm_drain's handler: each message the one after the last. */
static int
in_order(void *arg, enum shm_lane lane, const struct shm_msg *m,
    const void *payload)
{
	uint32_t *next = arg;
	uint64_t body[8];
	unsigned i;

	ck_assert_int_eq(lane, SHM_LANE_MAIN);
	ck_assert_uint_eq(m->tag, *next);
	ck_assert_uint_eq(m->len, sizeof(body));
	memcpy(body, payload, sizeof(body));
	for (i = 0; i < 8; i++)
		ck_assert_uint_eq(body[i], *next);
	(*next)++;
	return 0;
}

/* Messages received in order from *next on until the lane is empty. */
static void
take_all(struct shm_arena *a, uint32_t *next)
{
	while (shm_drain(a, 0, SHM_LANES_INBOX, 0, in_order, next) > 0)
		;
}

/*
 * One round: the stream taken until it kills itself (the owner by then on
 * the express path), settled by the reap (reap_first) or by the next
 * sender.
 */
static void
kill_round(unsigned round, bool reap_first)
{
	struct shm_arena *a = shm_test_arena(1, CAP, 128,
	    SHM_OVERFLOW_BLOCK);
	struct shm_producer *q;
	struct shm_counters c;
	uint32_t	 next = 0, i;
	unsigned	 released = 0;
	pid_t		 pid;

	pid = spawn_stream(a, 1 + (long)round % 4);
	while (shm_drain(a, 0, SHM_LANES_INBOX, 0, in_order, &next) > 0 ||
	    !shm_test_exited(pid))
		;
	ck_assert_int_eq(shm_test_wait_exit(pid), 128 + SIGKILL);
	if (reap_first)
		ck_assert_int_ge(shm_reap(a, pid, &released), 1);
	take_all(a, &next);
	ck_assert_int_eq(shm_producer_open(a, &q), 0);
	/* The next sender: its first send settles a dead owner's, if any. */
	for (i = 0; i < HOT; i++)
		ck_assert_int_eq(offer(q, TAG0 + i), 0);
	/* Nothing of the dead owner's after what was taken: its last send
	   was published, or released. */
	for (i = 0; i < HOT; i++)
		ck_assert_int_eq(take(a, TAG0 + i), 0);
	ck_assert_int_eq(take(a, 0), SHM_EEMPTY);
	ck_assert((atomic_load(&shm_mb(a, 0)->m->lane[SHM_LANE_MAIN].tail) &
	    TAIL_OWNED) != 0);
	if (!reap_first)
		ck_assert_int_ge(shm_reap(a, pid, &released), 1);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.depth, 0);
	ck_assert_uint_le(c.released, 1);
	ck_assert_uint_eq(shm_test_count_dl(a, SHM_DL_SENDER_DIED),
	    c.released);
	ck_assert_uint_eq(c.enqueued, c.dequeued);
	shm_producer_close(q);
	shm_detach(a);
}

START_TEST(test_owner_killed_reaped)
{
	unsigned r, n = ROUNDS / shm_test_scale() + 2;

	for (r = 0; r < n; r++)
		kill_round(r, true);
}
END_TEST

START_TEST(test_owner_killed_revoked)
{
	unsigned r, n = ROUNDS / shm_test_scale() + 2;

	for (r = 0; r < n; r++)
		kill_round(r, false);
}
END_TEST

/*
 * The owner of mailbox 1's main lane sends to a lane that does not exist
 * of mailbox 0 (its ring id would be mailbox 1's main lane's): refused,
 * and nothing goes into mailbox 1.
 */
START_TEST(test_owner_bad_lane)
{
	struct shm_arena *a = shm_test_arena(2, CAP, 128,
	    SHM_OVERFLOW_BLOCK);
	struct shm_producer *p;
	struct shm_msg	 m;
	unsigned	 i;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	memset(&m, 0, sizeof(m));
	for (i = 0; i < HOT; i++) {
		m.tag = i;
		ck_assert_int_eq(shm_send(p, 1, SHM_LANE_MAIN, &m, NULL, 0), 0);
		ck_assert_int_eq(shm_recv(a, 1, SHM_LANES_INBOX, &m, NULL, 0,
		    NULL), 0);
		ck_assert_uint_eq(m.tag, i);
	}
	ck_assert((atomic_load(&shm_mb(a, 1)->m->lane[SHM_LANE_MAIN].tail) &
	    TAIL_OWNED) != 0);
	m.tag = 7;
	ck_assert_int_eq(shm_send(p, 0, (enum shm_lane)SHM_NLANES, &m, NULL,
	    0), SHM_EBADINDEX);
	ck_assert_int_eq(shm_recv(a, 1, SHM_LANES_INBOX, &m, NULL, 0, NULL),
	    SHM_EEMPTY);
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0, NULL),
	    SHM_EEMPTY);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

static Suite *
stream_suite(void)
{
	Suite	*s = suite_create("shm_stream");
	TCase	*tc = tcase_create("stream");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_owner_killed_reaped);
	tcase_add_test(tc, test_owner_killed_revoked);
	tcase_add_test(tc, test_owner_bad_lane);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(stream_suite());
}
