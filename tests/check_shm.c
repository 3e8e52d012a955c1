/*
 * check_shm.c: the arena and mailboxes across real processes (fork): order
 * and exactly-once delivery, overflow policies, lanes, the doorbell, dead
 * letters, counters, the actor table, attach validation and seals.
 *
 * Crash safety (a producer killed mid-send, ambiguous claims, garbage in
 * cells) and the wake-up stress test are in check_shm_crash.c.
 */
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <check.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm/shm.h"
#include "shm/shm_impl.h"	/* test_enq_sampled: the sleeping word */
#include "tests/check_shm_util.h"
#include "worker/actor.h"
#include "tests/lib/tcheck.h"

START_TEST(test_layout_check)
{
	struct shm_mailbox_layout m = shm_test_mbox(8, 128,
	    SHM_OVERFLOW_REJECT);
	struct shm_layout l = { 1, &m, 4, 16 };
	char	 err[SHM_ERRBUF];

	ck_assert_int_eq(shm_layout_check(&l, err, sizeof(err)), 0);
	m.capacity = 12;
	ck_assert_int_eq(shm_layout_check(&l, err, sizeof(err)), SHM_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "power of two"));
	m.capacity = 8;
	m.cell = 100;
	ck_assert_int_eq(shm_layout_check(&l, err, sizeof(err)), SHM_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "cell size"));
	m.cell = 128;
	l.nproducers = 0;
	ck_assert_int_eq(shm_layout_check(&l, err, sizeof(err)), SHM_EINVAL);
	ck_assert_uint_eq(shm_layout_size(&l), 0);
}
END_TEST

/* N producer processes x M messages: all delivered once, each in order. */
START_TEST(test_order_exactly_once)
{
	enum { NPROD = 4 };
	struct shm_arena *a = shm_test_arena(1, 64, 128, SHM_OVERFLOW_BLOCK);
	struct shm_counters c;
	struct shm_msg	 m;
	uint32_t	 next[NPROD] = { 0 }, body[2];
	unsigned	 M = 50000 / shm_test_scale(), got = 0, i;
	uint64_t	 sum;
	pid_t		 pids[NPROD];
	int		 rc;

	for (i = 0; i < NPROD; i++)
		pids[i] = shm_test_spawn_sender(a, 0, i, M);
	while (got < NPROD * M) {
		rc = shm_recv_wait(a, 0, SHM_LANES_INBOX, SHM_WAIT_SPIN_SLEEP,
		    2000, 10 * 1000000000LL, &m, body, sizeof(body), NULL);
		ck_assert_msg(rc == 0, "recv after %u: %s", got,
		    shm_strerror(rc));
		ck_assert_uint_eq(m.len, sizeof(body));
		ck_assert_uint_lt(body[0], NPROD);
		ck_assert_msg(body[1] == next[body[0]], "producer %u: got %u, "
		    "expected %u", body[0], body[1], next[body[0]]);
		ck_assert_uint_eq(m.tag, 7);
		next[body[0]]++;
		got++;
	}
	for (i = 0; i < NPROD; i++)
		ck_assert_int_eq(shm_test_wait_exit(pids[i]), 0);
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_ALL, &m, body,
	    sizeof(body), NULL), SHM_EEMPTY);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.enqueued, NPROD * M);
	ck_assert_uint_eq(c.dequeued, NPROD * M);
	ck_assert_uint_eq(c.depth, 0);
	ck_assert_uint_le(c.depth_hwm, 64);
	ck_assert_uint_eq(c.dead_lettered, 0);
	for (i = 0, sum = 0; i < SHM_HIST_BUCKETS; i++)
		sum += c.wait_hist[i];
	/* One wait per sampled position (shm.h, SHM_STAMP_EVERY). */
	ck_assert_uint_eq(sum, (NPROD * M + SHM_STAMP_EVERY - 1) /
	    SHM_STAMP_EVERY);
	shm_detach(a);
}
END_TEST

/* Fill a 4-cell lane with tags 0..n-1 from this process. */
static void
fill(struct shm_producer *p, uint32_t idx, unsigned n, int expect_last)
{
	struct shm_msg	 m;
	unsigned	 i;
	int		 rc;

	for (i = 0; i < n; i++) {
		memset(&m, 0, sizeof(m));
		m.tag = i;
		m.len = sizeof(i);
		rc = shm_send(p, idx, SHM_LANE_MAIN, &m, &i, 0);
		if (i + 1 < n || expect_last == 0)
			ck_assert_msg(rc == 0, "send %u: %s", i,
			    shm_strerror(rc));
		else
			ck_assert_int_eq(rc, expect_last);
	}
}

static void
expect_tags(struct shm_arena *a, uint32_t idx, unsigned from, unsigned to)
{
	struct shm_msg	 m;
	unsigned	 i, v;

	for (i = from; i < to; i++) {
		ck_assert_int_eq(shm_recv(a, idx, SHM_LANES_INBOX, &m, &v,
		    sizeof(v), NULL), 0);
		ck_assert_uint_eq(m.tag, i);
		ck_assert_uint_eq(v, i);
	}
	ck_assert_int_eq(shm_recv(a, idx, SHM_LANES_INBOX, &m, &v, sizeof(v),
	    NULL), SHM_EEMPTY);
}

static void
expect_dl(struct shm_arena *a, uint64_t *cur, enum shm_dl_reason r,
    uint32_t tag)
{
	struct shm_dead_letter d;

	ck_assert_int_eq(shm_dl_read(a, cur, &d), 1);
	ck_assert_msg(d.reason == (uint32_t)r, "reason %s, expected %s",
	    shm_reason_name(d.reason), shm_reason_name(r));
	ck_assert_uint_eq(d.msg.tag, tag);
}

START_TEST(test_overflow_reject)
{
	struct shm_arena *a = shm_test_arena(1, 4, 128, SHM_OVERFLOW_REJECT);
	struct shm_producer *p;
	struct shm_counters c;
	uint64_t	 cur = 0;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	fill(p, 0, 5, SHM_EFULL);
	expect_dl(a, &cur, SHM_DL_FULL, 4);
	expect_tags(a, 0, 0, 4);
	shm_counters(a, 0, &c);
	ck_assert_uint_eq(c.full, 1);
	ck_assert_uint_eq(c.dead_lettered, 1);
	fill(p, 0, 4, 0);		/* room again */
	expect_tags(a, 0, 0, 4);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

START_TEST(test_overflow_drop_newest)
{
	struct shm_arena *a = shm_test_arena(1, 4, 128,
	    SHM_OVERFLOW_DROP_NEWEST);
	struct shm_producer *p;
	struct shm_counters c;
	uint64_t	 cur = 0;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	fill(p, 0, 5, SHM_EDROPPED);
	expect_dl(a, &cur, SHM_DL_DROPPED_NEWEST, 4);
	expect_tags(a, 0, 0, 4);
	shm_counters(a, 0, &c);
	ck_assert_uint_eq(c.dropped, 1);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

START_TEST(test_overflow_drop_oldest)
{
	struct shm_arena *a = shm_test_arena(1, 4, 128,
	    SHM_OVERFLOW_DROP_OLDEST);
	struct shm_producer *p;
	struct shm_counters c;
	struct shm_dead_letter d;
	uint64_t	 cur = 0;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	fill(p, 0, 6, 0);
	expect_dl(a, &cur, SHM_DL_DROPPED_OLDEST, 0);
	expect_dl(a, &cur, SHM_DL_DROPPED_OLDEST, 1);
	ck_assert_int_eq(shm_dl_read(a, &cur, &d), 0);
	expect_tags(a, 0, 2, 6);
	shm_counters(a, 0, &c);
	ck_assert_uint_eq(c.dropped, 2);
	ck_assert_uint_eq(c.dequeued, 4);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * drop_oldest under a real consumer and two producers: nothing twice,
 * each producer's order kept, every message delivered or dropped.
 */
START_TEST(test_drop_oldest_concurrent)
{
	struct shm_arena *a = shm_test_arena(1, 8, 128,
	    SHM_OVERFLOW_DROP_OLDEST);
	struct shm_counters c;
	struct shm_msg	 m;
	uint32_t	 body[2], last[2] = { 0, 0 };
	unsigned	 M = 100000 / shm_test_scale(), got = 0;
	pid_t		 pid[2];
	int		 rc, first[2] = { 1, 1 };

	pid[0] = shm_test_spawn_sender(a, 0, 0, M);
	pid[1] = shm_test_spawn_sender(a, 0, 1, M);
	for (;;) {
		rc = shm_recv_wait(a, 0, SHM_LANES_INBOX, SHM_WAIT_SPIN_SLEEP,
		    1000, 200000000LL, &m, body, sizeof(body), NULL);
		/*
		 * A quiet spell ends it only once both senders are done: on a
		 * loaded machine a sender can be off the CPU for longer.
		 */
		if (rc == SHM_ETIMEDOUT && shm_test_exited(pid[0]) &&
		    shm_test_exited(pid[1]))
			break;
		if (rc == SHM_ETIMEDOUT)
			continue;
		ck_assert_int_eq(rc, 0);
		ck_assert_uint_lt(body[0], 2);
		ck_assert_msg(first[body[0]] || body[1] > last[body[0]],
		    "producer %u: %u after %u", body[0], body[1],
		    last[body[0]]);
		first[body[0]] = 0;
		last[body[0]] = body[1];
		got++;
	}
	ck_assert_int_eq(shm_test_wait_exit(pid[0]), 0);
	ck_assert_int_eq(shm_test_wait_exit(pid[1]), 0);
	shm_counters(a, 0, &c);
	ck_assert_uint_eq(c.garbled, 0);
	ck_assert_uint_eq(got + c.dropped, 2 * M);
	ck_assert_uint_eq(c.dead_lettered, c.dropped);
	shm_detach(a);
}
END_TEST

/* block: a timeout gives SHM_EFULL; a consumer that frees a cell wakes it. */
START_TEST(test_overflow_block)
{
	struct shm_arena *a = shm_test_arena(1, 4, 128, SHM_OVERFLOW_BLOCK);
	struct shm_producer *p;
	struct shm_msg	 m;
	uint64_t	 cur = 0;
	unsigned	 v = 4;
	uint32_t	 body[2];
	pid_t		 pid;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	fill(p, 0, 4, 0);
	memset(&m, 0, sizeof(m));
	m.tag = 4;
	m.len = sizeof(v);
	ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m, &v, 50000000),
	    SHM_EFULL);
	expect_dl(a, &cur, SHM_DL_FULL, 4);
	/* A child blocks without a timeout until the parent takes one. */
	pid = shm_test_spawn_sender(a, 0, 0, 1);
	ck_assert_int_eq(shm_test_sleeping_senders(a, 0, 5000), 1);
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, &v, sizeof(v),
	    NULL), 0);
	ck_assert_uint_eq(m.tag, 0);
	ck_assert_int_eq(shm_test_wait_exit(pid), 0);
	for (v = 1; v < 4; v++) {
		ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, body,
		    sizeof(body), NULL), 0);
		ck_assert_uint_eq(m.tag, v);
	}
	/* The child's message comes last. */
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, body,
	    sizeof(body), NULL), 0);
	ck_assert_uint_eq(m.tag, 7);
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, body,
	    sizeof(body), NULL), SHM_EEMPTY);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

START_TEST(test_oversize)
{
	struct shm_arena *a = shm_test_arena(1, 4, 128, SHM_OVERFLOW_REJECT);
	struct shm_producer *p;
	struct shm_msg	 m;
	char		 big[200];
	uint64_t	 cur = 0;

	ck_assert_uint_eq(shm_payload_max(a, 0), 128 - SHM_CELL_HDR);
	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	memset(&m, 0, sizeof(m));
	memset(big, 'x', sizeof(big));
	m.tag = 9;
	m.len = 128 - SHM_CELL_HDR + 1;
	ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m, big, 0),
	    SHM_EOVERSIZE);
	expect_dl(a, &cur, SHM_DL_OVERSIZE, 9);
	m.len = 128 - SHM_CELL_HDR;
	ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m, big, 0), 0);
	ck_assert_int_eq(shm_send(p, 5, SHM_LANE_MAIN, &m, big, 0),
	    SHM_EBADINDEX);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/* The system lane is drained first; the reply lane only when asked for. */
START_TEST(test_lanes)
{
	struct shm_arena *a = shm_test_arena(1, 4, 128, SHM_OVERFLOW_REJECT);
	struct shm_producer *p;
	struct shm_msg	 m;
	enum shm_lane	 lane;
	unsigned	 v = 0;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	memset(&m, 0, sizeof(m));
	m.tag = 1;
	ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0), 0);
	m.tag = 2;
	ck_assert_int_eq(shm_send(p, 0, SHM_LANE_REPLY, &m, NULL, 0), 0);
	m.tag = 3;
	ck_assert_int_eq(shm_send(p, 0, SHM_LANE_SYSTEM, &m, NULL, 0), 0);
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, &v, sizeof(v),
	    &lane), 0);
	ck_assert_uint_eq(m.tag, 3);
	ck_assert_int_eq(lane, SHM_LANE_SYSTEM);
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, &v, sizeof(v),
	    &lane), 0);
	ck_assert_uint_eq(m.tag, 1);
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, &v, sizeof(v),
	    &lane), SHM_EEMPTY);
	ck_assert(shm_pending(a, 0, SHM_LANE_BIT(SHM_LANE_REPLY)));
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANE_BIT(SHM_LANE_REPLY), &m, &v,
	    sizeof(v), &lane), 0);
	ck_assert_uint_eq(m.tag, 2);
	ck_assert_int_eq(lane, SHM_LANE_REPLY);
	ck_assert(!shm_pending(a, 0, SHM_LANES_ALL));
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

static int
count_handler(void *arg, enum shm_lane lane, const struct shm_msg *m,
    const void *payload)
{
	unsigned *n = arg;

	(void)lane;
	(void)payload;
	ck_assert_uint_eq(m->tag, *n);
	(*n)++;
	return 0;
}

START_TEST(test_drain_batch)
{
	struct shm_arena *a = shm_test_arena(1, 16, 128, SHM_OVERFLOW_REJECT);
	struct shm_producer *p;
	unsigned	 n = 0;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	fill(p, 0, 10, 0);
	ck_assert_int_eq(shm_drain(a, 0, SHM_LANES_INBOX, 4, count_handler,
	    &n), 4);
	ck_assert_int_eq(shm_drain(a, 0, SHM_LANES_INBOX, 0, count_handler,
	    &n), 6);
	ck_assert_uint_eq(n, 10);
	ck_assert_int_eq(shm_drain(a, 0, SHM_LANES_INBOX, 0, count_handler,
	    &n), 0);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * A consumer that takes one message per call (libactor) looks for blocked
 * senders not per message but once the lane is found empty, every 32
 * freed cells, or before shm_wait sleeps: each of the three must wake a
 * sender asleep on the full lane (its count raised as wait_space does).
 */
static void
take_one_by_one(struct shm_arena *a, unsigned k)
{
	unsigned n = 0, i;

	for (i = 0; i < k; i++)
		ck_assert_int_eq(shm_drain(a, 0, SHM_LANES_INBOX, 1,
		    count_handler, &n), 1);
}

START_TEST(test_take_one_wakes_senders)
{
	struct shm_arena *a = shm_test_arena(1, 64, 128, SHM_OVERFLOW_BLOCK);
	struct shm_producer *p;
	struct shm_mbox	*m = shm_mb(a, 0)->m;
	unsigned	 n = 0;
	uint32_t	 w;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	atomic_fetch_add(&m->space_waiters, 1);
	/* Found empty (40: 8 freed since the look after the 32nd). */
	fill(p, 0, 40, 0);
	take_one_by_one(a, 40);
	w = atomic_load(&m->space_word);
	ck_assert_int_eq(shm_drain(a, 0, SHM_LANES_INBOX, 1, count_handler,
	    &n), 0);
	ck_assert_uint_ne(atomic_load(&m->space_word), w);
	/* Before shm_wait sleeps. */
	fill(p, 0, 40, 0);
	take_one_by_one(a, 40);
	w = atomic_load(&m->space_word);
	ck_assert_int_eq(shm_wait(a, 0, SHM_LANES_INBOX, SHM_WAIT_SPIN, 0, 0),
	    SHM_ETIMEDOUT);
	ck_assert_uint_ne(atomic_load(&m->space_word), w);
	/* Half empty after 32 one-by-one takes: woken before it is empty. */
	fill(p, 0, 64, 0);
	w = atomic_load(&m->space_word);
	take_one_by_one(a, 32);
	ck_assert_uint_ne(atomic_load(&m->space_word), w);
	atomic_fetch_sub(&m->space_waiters, 1);
	n = 32;
	ck_assert_int_eq(shm_drain(a, 0, SHM_LANES_INBOX, 0, count_handler,
	    &n), 32);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

static int
any_handler(void *arg, enum shm_lane lane, const struct shm_msg *m,
    const void *payload)
{
	(void)lane;
	(void)m;
	(void)payload;
	(*(unsigned *)arg)++;
	return 0;
}

/*
 * Taken one per call, sampled messages are timed against a clock reading
 * kept from an earlier take; a message sent after that reading must get
 * a reading of its own: the next sampled one sent, left 20 ms, taken, its
 * wait is >= 2^24 ns.
 */
START_TEST(test_take_one_wait_hist)
{
	struct shm_arena *a = shm_test_arena(1, 16, 128, SHM_OVERFLOW_REJECT);
	struct shm_producer *p;
	struct shm_counters c;
	struct timespec	 ts = { 0, 20000000 };
	uint64_t	 sum = 0, slow = 0;
	unsigned	 n = 0, i;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	for (i = 0; i < SHM_STAMP_EVERY; i++) {
		fill(p, 0, 1, 0);
		ck_assert_int_eq(shm_drain(a, 0, SHM_LANES_INBOX, 1,
		    any_handler, &n), 1);
	}
	fill(p, 0, 1, 0);
	nanosleep(&ts, NULL);
	ck_assert_int_eq(shm_drain(a, 0, SHM_LANES_INBOX, 1, any_handler,
	    &n), 1);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	for (i = 0; i < SHM_HIST_BUCKETS; i++) {
		sum += c.wait_hist[i];
		if (i >= 24)
			slow += c.wait_hist[i];
	}
	ck_assert_uint_eq(sum, 2);
	ck_assert_uint_eq(slow, 1);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/* The enq_ns of each message taken, by tag. */
static int
record_enq(void *arg, enum shm_lane lane, const struct shm_msg *m,
    const void *payload)
{
	uint64_t *enq = arg;

	(void)lane;
	(void)payload;
	if (m->tag < 16)
		enq[m->tag] = m->enq_ns;
	return 0;
}

/*
 * Which sends read the clock (shm.h, SHM_ENQ_UNTIMED): a message at every
 * SHM_STAMP_EVERY-th position carries its time, the others their
 * position; shm_send_stamped says when it took place without timing its
 * message; a receiver asleep on the lane gets a timed message whatever
 * its position.  The wait histogram counts the sampled positions.
 */
START_TEST(test_enq_sampled)
{
	struct shm_arena *a = shm_test_arena(1, 16, 128, SHM_OVERFLOW_REJECT);
	struct shm_producer *p;
	struct shm_counters c;
	struct shm_msg	 m;
	uint64_t	 enq[16] = { 0 }, t0, t1, t2, t3, started, sum = 0;
	unsigned	 i;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	memset(&m, 0, sizeof(m));
	t0 = shm_clock_ns(a);
	for (i = 0; i < 10; i++) {
		m.tag = i;
		ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0),
		    0);
	}
	t1 = shm_clock_ns(a);
	m.tag = 10;
	ck_assert_int_eq(shm_send_stamped(p, 0, SHM_LANE_MAIN, &m, NULL, 0,
	    &started), 0);
	t2 = shm_clock_ns(a);
	/* Asleep on the main lane, as wait.c's nap says it. */
	atomic_store(&shm_mb(a, 0)->m->sleeping, SHM_LANE_BIT(SHM_LANE_MAIN));
	m.tag = 11;
	ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0), 0);
	t3 = shm_clock_ns(a);
	ck_assert_int_eq(atomic_load(&shm_mb(a, 0)->m->sleeping), 0);
	ck_assert_int_eq(shm_drain(a, 0, SHM_LANES_INBOX, 0, record_enq, enq),
	    12);
	for (i = 0; i < 10; i++) {
		if (i % SHM_STAMP_EVERY == 0) {
			ck_assert(shm_enq_timed(enq[i]));
			ck_assert_uint_ge(enq[i], t0);
			ck_assert_uint_le(enq[i], t1);
		} else
			ck_assert_uint_eq(enq[i], SHM_ENQ_UNTIMED | i);
	}
	ck_assert_uint_eq(enq[10], SHM_ENQ_UNTIMED | 10);
	ck_assert_uint_ge(started, t1);
	ck_assert_uint_le(started, t2);
	ck_assert(shm_enq_timed(enq[11]));
	ck_assert_uint_ge(enq[11], t2);
	ck_assert_uint_le(enq[11], t3);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	for (i = 0; i < SHM_HIST_BUCKETS; i++)
		sum += c.wait_hist[i];
	ck_assert_uint_eq(sum, 2);	/* positions 0 and 8 */
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

static int
record_tag(void *arg, enum shm_lane lane, const struct shm_msg *m,
    const void *payload)
{
	uint32_t *t = arg;

	(void)lane;
	(void)payload;
	t[++t[0]] = m->tag;
	return 0;
}

/*
 * shm_take_one is shm_drain of one message with less bookkeeping: the
 * same order (system lane first), the same counters, 0 when empty.
 */
START_TEST(test_take_one_as_drain)
{
	struct shm_arena *a[2];
	struct shm_producer *p;
	struct shm_counters c[2];
	struct shm_msg	 m;
	uint32_t	 tags[2][8];
	uint64_t	 sum[2] = { 0, 0 };
	unsigned	 i, k;
	int		 rc;

	for (k = 0; k < 2; k++) {
		a[k] = shm_test_arena(1, 16, 128, SHM_OVERFLOW_BLOCK);
		ck_assert_int_eq(shm_producer_open(a[k], &p), 0);
		memset(&m, 0, sizeof(m));
		for (i = 1; i <= 3; i++) {
			m.tag = i;
			ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m,
			    NULL, 0), 0);
		}
		m.tag = 9;
		ck_assert_int_eq(shm_send(p, 0, SHM_LANE_SYSTEM, &m, NULL, 0),
		    0);
		memset(tags[k], 0, sizeof(tags[k]));
		do {
			rc = k == 0 ? shm_take_one(a[k], 0, SHM_LANES_INBOX,
			    record_tag, tags[k]) : shm_drain(a[k], 0,
			    SHM_LANES_INBOX, 1, record_tag, tags[k]);
			ck_assert_int_ge(rc, 0);
			ck_assert_int_le(rc, 1);
		} while (rc == 1);
		ck_assert_int_eq(shm_counters(a[k], 0, &c[k]), 0);
		for (i = 0; i < SHM_HIST_BUCKETS; i++)
			sum[k] += c[k].wait_hist[i];
		shm_producer_close(p);
	}
	ck_assert_uint_eq(tags[0][0], 4);
	ck_assert_uint_eq(tags[0][1], 9);
	for (i = 0; i <= 4; i++)
		ck_assert_uint_eq(tags[0][i], tags[1][i]);
	ck_assert_uint_eq(c[0].dequeued, 4);
	ck_assert_uint_eq(c[0].dequeued, c[1].dequeued);
	ck_assert_uint_eq(c[0].depth, c[1].depth);
	ck_assert_uint_eq(c[0].depth_hwm, c[1].depth_hwm);
	ck_assert_uint_eq(sum[0], 2);	/* position 0 of each lane */
	ck_assert_uint_eq(sum[0], sum[1]);
	for (k = 0; k < 2; k++)
		shm_detach(a[k]);
}
END_TEST

/*
 * The wait histogram is the wait of what the owner handles: a message on
 * the main lane is timed, an answer on the reply lane is counted as
 * dequeued but not timed.
 */
START_TEST(test_reply_lane_not_timed)
{
	struct shm_arena *a = shm_test_arena(1, 16, 128, SHM_OVERFLOW_REJECT);
	struct shm_producer *p;
	struct shm_counters c;
	struct shm_msg	 m;
	uint64_t	 sum = 0;
	unsigned	 i;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	memset(&m, 0, sizeof(m));
	m.flags = SHM_MSG_REPLY;
	ck_assert_int_eq(shm_send(p, 0, SHM_LANE_REPLY, &m, NULL, 0), 0);
	m.flags = 0;
	ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0), 0);
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_ALL, &m, NULL, 0, NULL), 0);
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_ALL, &m, NULL, 0, NULL), 0);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.dequeued, 2);
	for (i = 0; i < SHM_HIST_BUCKETS; i++)
		sum += c.wait_hist[i];
	ck_assert_uint_eq(sum, 1);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * Real processes: a sender blocked without timeout on a small lane, a
 * consumer taking one message per call and sleeping when it finds none:
 * everything arrives, in order, bounded in time (a sender never woken
 * would still get through in 1 ms slices, so this checks order and loss).
 */
START_TEST(test_take_one_blocked_sender)
{
	struct shm_arena *a = shm_test_arena(1, 8, 128, SHM_OVERFLOW_BLOCK);
	struct shm_msg	 m;
	uint32_t	 body[2];
	unsigned	 i, M = 20000 / shm_test_scale();
	pid_t		 pid;
	int		 rc;

	pid = shm_test_spawn_sender(a, 0, 3, M);
	for (i = 0; i < M; i++) {
		rc = shm_recv_wait(a, 0, SHM_LANES_INBOX, SHM_WAIT_SLEEP, 0,
		    5000000000LL, &m, body, sizeof(body), NULL);
		ck_assert_int_eq(rc, 0);
		ck_assert_uint_eq(body[0], 3);
		ck_assert_uint_eq(body[1], i);
	}
	ck_assert_int_eq(shm_test_wait_exit(pid), 0);
	shm_detach(a);
}
END_TEST

/* A consumer in epoll is rung by a producer in another process. */
START_TEST(test_doorbell)
{
	struct shm_arena *a = shm_test_arena(1, 16, 128, SHM_OVERFLOW_BLOCK);
	struct epoll_event ev = { .events = EPOLLIN }, out;
	struct shm_msg	 m;
	unsigned	 v;
	int		 bell, ep, n;
	pid_t		 pid;

	ck_assert_int_ge(bell = shm_doorbell_open(a, 0), 0);
	ck_assert_int_ge(ep = epoll_create1(EPOLL_CLOEXEC), 0);
	ck_assert_int_eq(epoll_ctl(ep, EPOLL_CTL_ADD, bell, &ev), 0);
	ck_assert_int_eq(shm_doorbell_arm(a, 0, SHM_LANES_INBOX), 0);
	pid = shm_test_spawn_sender(a, 0, 0, 1);
	n = epoll_wait(ep, &out, 1, 10000);
	ck_assert_int_eq(n, 1);
	shm_doorbell_disarm(a, 0, bell);
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, &v, sizeof(v),
	    NULL), 0);
	ck_assert_int_eq(shm_test_wait_exit(pid), 0);
	/* Armed with something pending: do not sleep. */
	pid = shm_test_spawn_sender(a, 0, 0, 1);
	ck_assert_int_eq(shm_test_wait_exit(pid), 0);
	ck_assert_int_eq(shm_doorbell_arm(a, 0, SHM_LANES_INBOX), 1);
	close(ep);
	close(bell);
	shm_detach(a);
}
END_TEST

START_TEST(test_dead_letters)
{
	struct shm_arena *a = shm_test_arena(1, 4, 128, SHM_OVERFLOW_REJECT);
	struct shm_dead_letter d;
	struct shm_msg	 m;
	uint64_t	 cur = 0;
	unsigned	 i, j;
	char		 pl[100];

	for (i = 0; i < SHM_DL_NREASONS; i++) {
		ck_assert_str_ne(shm_reason_name(i), "unknown reason");
		for (j = 0; j < i; j++)
			ck_assert_str_ne(shm_reason_name(i),
			    shm_reason_name(j));
	}
	ck_assert_str_eq(shm_reason_name(SHM_DL_SENDER_DIED),
	    "sender died mid-send");
	memset(&m, 0, sizeof(m));
	memset(pl, 'p', sizeof(pl));
	m.len = sizeof(pl);
	/* The test arena keeps 16 dead letters: write 20, 4 are lost. */
	for (i = 0; i < 20; i++) {
		m.tag = i;
		ck_assert_int_eq(shm_dl_put(a, 0, SHM_LANE_MAIN,
		    i % SHM_DL_NREASONS, &m, pl), 0);
	}
	ck_assert_uint_eq(shm_dl_total(a), 20);
	ck_assert_uint_eq(shm_dl_lost(a), 4);
	for (i = 4; i < 20; i++) {
		ck_assert_int_eq(shm_dl_read(a, &cur, &d), 1);
		ck_assert_uint_eq(d.msg.tag, i);
		ck_assert_uint_eq(d.seq, i);
		ck_assert_uint_eq(d.reason, i % SHM_DL_NREASONS);
		ck_assert_uint_eq(d.payload_len, SHM_DL_PAYLOAD);
		ck_assert_uint_eq(d.payload[0], 'p');
	}
	ck_assert_int_eq(shm_dl_read(a, &cur, &d), 0);
	ck_assert_uint_eq(cur, 20);
	ck_assert_int_eq(shm_dl_put(a, 0, SHM_LANE_MAIN, SHM_DL_NREASONS, &m,
	    NULL), SHM_EINVAL);
	ck_assert_str_eq(shm_strerror(SHM_EFULL), "mailbox full");
	ck_assert_str_eq(shm_strerror(-999), "unknown shm error");
	shm_detach(a);
}
END_TEST

/*
 * The index by path: names given, renamed and taken away over and over
 * (every bucket a gap left by a rename at some point), and every lookup
 * finds exactly the mailbox named so, in the creator and in a process
 * that attached.
 */
START_TEST(test_path_index)
{
	struct shm_arena *a = shm_test_arena(8, 4, 128, SHM_OVERFLOW_REJECT);
	struct shm_arena *b;
	char	 path[32], err[SHM_ERRBUF];
	uint32_t i, round;

	for (round = 0; round < 200; round++)
		for (i = 0; i < 8; i++) {
			snprintf(path, sizeof(path), "/r%u/%u", round, i);
			ck_assert_int_eq(shm_actor_set_path(a, i, (round + i) %
			    5 == 0 ? "" : path), 0);
		}
	ck_assert_int_eq(shm_attach_fds(shm_layout_fd(a), shm_fd(a), &b, err,
	    sizeof(err)), 0);
	for (i = 0; i < 8; i++) {
		snprintf(path, sizeof(path), "/r199/%u", i);
		ck_assert_int_eq(shm_lookup(a, path), (199 + i) % 5 == 0 ?
		    SHM_ENOENT : (int)i);
		ck_assert_int_eq(shm_lookup(b, path), shm_lookup(a, path));
		snprintf(path, sizeof(path), "/r198/%u", i);
		ck_assert_int_eq(shm_lookup(a, path), SHM_ENOENT);
	}
	ck_assert_int_eq(shm_actor_set_path(a, 3, "/moved"), 0);
	ck_assert_int_eq(shm_lookup(b, "/moved"), 3);
	ck_assert_int_eq(shm_lookup(b, "/r199/3"), SHM_ENOENT);
	ck_assert_int_eq(shm_lookup(b, ""), SHM_EINVAL);
	shm_detach(b);
	shm_detach(a);
}
END_TEST

/*
 * Each mailbox's own producer slot comes on top of the pool: with the pool
 * full, the consumer of a mailbox still gets its own, the one slot after
 * the pool that is its (the layout reserves one a mailbox, no more); a
 * second claim of it falls back to the pool; shm_reap_mailbox frees a
 * dead consumer's own slot and its pool slot.
 */
START_TEST(test_own_slots)
{
	struct shm_mailbox_layout m[2] = {
		shm_test_mbox(4, 128, SHM_OVERFLOW_REJECT),
		shm_test_mbox(4, 128, SHM_OVERFLOW_REJECT)
	};
	struct shm_layout l = { 2, m, 1, 16 };
	struct shm_producer *p0, *p1, *own0, *x;
	struct shm_arena *a;
	char	 err[SHM_ERRBUF];
	pid_t	 pid;

	ck_assert_int_eq(shm_create(&l, "check-shm", &a, err, sizeof(err)), 0);
	ck_assert_int_eq(shm_producer_open(a, &p0), 0);
	ck_assert_int_eq(shm_producer_open(a, &x), SHM_ENOSLOT);
	ck_assert_uint_eq(a->nslots, 1 + 2);
	ck_assert_int_eq(shm_producer_open_own(a, 0, &own0), 0);
	ck_assert_uint_eq(own0->slot_no, 1);
	ck_assert_int_eq(shm_producer_open_own(a, 0, &x), SHM_ENOSLOT);
	ck_assert_int_eq(shm_producer_open_own(a, 2, &x), SHM_EINVAL);
	shm_producer_close(p0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* The pool's slot, and mailbox 1's own: then die. */
		if (shm_producer_open_own(a, 1, &x) != 0 ||
		    shm_producer_open(a, &p1) != 0)
			_exit(1);
		_exit(0);
	}
	ck_assert_int_eq(shm_test_wait_exit(pid), 0);
	ck_assert_int_eq(shm_producer_open(a, &x), SHM_ENOSLOT);
	ck_assert_int_eq(shm_reap_mailbox(a, pid, 1, NULL), 2);
	ck_assert_int_eq(shm_producer_open(a, &p0), 0);
	ck_assert_int_eq(shm_producer_open_own(a, 1, &p1), 0);
	ck_assert_uint_eq(p1->slot_no, 2);
	shm_producer_close(p0);
	shm_producer_close(p1);
	shm_producer_close(own0);
	shm_detach(a);
}
END_TEST

/*
 * The arena clock uses the TSC when the kernel does, or when the CPU says
 * it is invariant whatever clock source the kernel chose (a VM's
 * kvm-clock), and not otherwise.
 */
START_TEST(test_tsc_trusted)
{
	static const char inv[] = "flags\t\t: fpu tsc constant_tsc rep_good "
	    "nopl nonstop_tsc cpuid tsc_known_freq";

	ck_assert(shm_tsc_trusted("tsc", NULL));
	ck_assert(shm_tsc_trusted("kvm-clock", inv));
	ck_assert(shm_tsc_trusted(NULL, inv));
	ck_assert(!shm_tsc_trusted("kvm-clock", "flags : fpu tsc "
	    "constant_tsc"));
	ck_assert(!shm_tsc_trusted("hpet", "flags : nonstop_tsc_x "
	    "constant_tsc"));
	ck_assert(!shm_tsc_trusted("kvm-clock", NULL));
	ck_assert(!shm_tsc_trusted(NULL, NULL));
}
END_TEST

/*
 * A spin-then-sleep consumer starts as a sparse one: its first wait sleeps
 * at once, in fence_mode (no spin, one membarrier, none per sleep after).
 * A busy spell of SHM_AWAKE_UNFENCE messages switches it back (then
 * producers fence no more); then spins that never pay switch it to
 * fence_mode again after SHM_NAPS_FENCE naps.
 */
START_TEST(test_sleeper_fences)
{
	struct shm_arena *a = shm_test_arena(1, 64, 128, SHM_OVERFLOW_REJECT);
	struct shm_producer *p;
	struct shm_msg	 m;
	int		 i;

	ck_assert_int_eq(shm_wait(a, 0, SHM_LANES_INBOX, SHM_WAIT_SPIN_SLEEP,
	    1000, 2000000), SHM_ETIMEDOUT);
	ck_assert_uint_eq(atomic_load(&shm_mb(a, 0)->m->fence_mode), 1);
	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	memset(&m, 0, sizeof(m));
	for (i = 0; i < SHM_AWAKE_UNFENCE; i++) {
		m.tag = 1;
		ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0), 0);
		ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0,
		    NULL), 0);
	}
	ck_assert_uint_eq(atomic_load(&shm_mb(a, 0)->m->fence_mode), 0);
	for (i = 0; i < SHM_NAPS_FENCE; i++) {
		ck_assert_int_eq(shm_wait(a, 0, SHM_LANES_INBOX,
		    SHM_WAIT_SPIN_SLEEP, 1000, 2000000), SHM_ETIMEDOUT);
		ck_assert_uint_eq(atomic_load(&shm_mb(a, 0)->m->fence_mode), 0);
	}
	ck_assert_int_eq(shm_wait(a, 0, SHM_LANES_INBOX, SHM_WAIT_SPIN_SLEEP,
	    1000, 2000000), SHM_ETIMEDOUT);
	ck_assert_uint_eq(atomic_load(&shm_mb(a, 0)->m->fence_mode), 1);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * A sleeper in fence_mode whose message comes well within the spin it
 * skipped, though its wake-up is late (here: the sender takes the
 * wake-up away, so the consumer wakes at its timeout, after longer than
 * its spin), spins again at its next wait, out of fence_mode.  Judged by
 * its wake-ups alone, a saturated ex-sleeper whose wake-ups are slower
 * than its spin stayed asleep and fenced for ever.  The sender publishes
 * 50 ms into a 600 ms nap whose skipped spin is 500 ms: bounds, not
 * timings.
 */
START_TEST(test_fenced_sleeper_spins_again)
{
	struct shm_arena *a = shm_test_arena(1, 64, 128, SHM_OVERFLOW_REJECT);
	struct shm_mbox	*mb;
	struct shm_msg	 m;
	pid_t		 pid;
	int		 i;

	for (i = 0; i <= SHM_NAPS_FENCE; i++)
		ck_assert_int_eq(shm_wait(a, 0, SHM_LANES_INBOX,
		    SHM_WAIT_SPIN_SLEEP, 1000, 2000000), SHM_ETIMEDOUT);
	mb = shm_mb(a, 0)->m;
	ck_assert_uint_eq(atomic_load(&mb->fence_mode), 1);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct shm_producer *p;

		if (shm_producer_open(a, &p) != 0)
			_exit(1);
		while (atomic_load(&mb->sleeping) == 0)
			usleep(100);
		usleep(50000);
		/* Asleep in its futex: no wake-up, it wakes at its timeout. */
		atomic_store(&mb->sleeping, 0);
		memset(&m, 0, sizeof(m));
		m.tag = 5;
		_exit(shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0) != 0);
	}
	ck_assert_int_eq(shm_wait(a, 0, SHM_LANES_INBOX, SHM_WAIT_SPIN_SLEEP,
	    1500000000, 2000000000), 0);
	ck_assert_int_eq(shm_test_wait_exit(pid), 0);
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0, NULL), 0);
	ck_assert_uint_eq(m.tag, 5);
	/* The next wait spins first: producers no longer fence. */
	ck_assert_int_eq(shm_wait(a, 0, SHM_LANES_INBOX, SHM_WAIT_SPIN_SLEEP,
	    1000, 2000000), SHM_ETIMEDOUT);
	ck_assert_uint_eq(atomic_load(&mb->fence_mode), 0);
	shm_detach(a);
}
END_TEST

/*
 * A drop_oldest mailbox (its consumer takes cells with a CAS, not in
 * place) that napped into fence_mode leaves it once busy, as an ordinary
 * one does (test_sleeper_fences): every message taken counts.
 */
START_TEST(test_sleeper_fences_drop_oldest)
{
	struct shm_arena *a = shm_test_arena(1, 64, 128,
	    SHM_OVERFLOW_DROP_OLDEST);
	struct shm_producer *p;
	struct shm_msg	 m;
	int		 i;

	for (i = 0; i <= SHM_NAPS_FENCE; i++)
		ck_assert_int_eq(shm_wait(a, 0, SHM_LANES_INBOX,
		    SHM_WAIT_SPIN_SLEEP, 1000, 2000000), SHM_ETIMEDOUT);
	ck_assert_uint_eq(atomic_load(&shm_mb(a, 0)->m->fence_mode), 1);
	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	memset(&m, 0, sizeof(m));
	for (i = 0; i < SHM_AWAKE_UNFENCE; i++) {
		ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0), 0);
		ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0,
		    NULL), 0);
	}
	ck_assert_uint_eq(atomic_load(&shm_mb(a, 0)->m->fence_mode), 0);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * What a send reads of the actor table (incarnation, state, prepared) is
 * dense: 128 actors to a page, the paths apart, so that a sender to
 * 10,000 actors at random keeps the table's pages in its TLB instead of
 * a page walk (and at first, a fault) per send.  A path still names its
 * actor both ways.
 */
START_TEST(test_actor_table_dense)
{
	enum { N = 300 };
	struct shm_mailbox_layout m[N];
	struct shm_layout l = { N, m, 16, 16 };
	struct shm_arena *a;
	char	 buf[SHM_PATH_MAX], path[32], err[SHM_ERRBUF];
	uintptr_t first, last;
	uint32_t i;

	for (i = 0; i < N; i++) {
		m[i] = shm_test_mbox(2, 64, SHM_OVERFLOW_REJECT);
		m[i].sys_capacity = m[i].reply_capacity = 2;
		m[i].state_size = 0;
	}
	ck_assert_msg(shm_create(&l, "check-table", &a, err, sizeof(err)) == 0,
	    "shm_create: %s", err);
	for (i = 0; i < N; i++) {
		snprintf(path, sizeof(path), "/w/%u", i);
		ck_assert_int_eq(shm_actor_set_path(a, i, path), 0);
	}
	for (i = 0; i < N; i++) {
		snprintf(path, sizeof(path), "/w/%u", i);
		ck_assert_int_eq(shm_lookup(a, path), (int)i);
		ck_assert_int_eq(shm_actor_path(a, i, buf, sizeof(buf)), 0);
		ck_assert_str_eq(buf, path);
	}
	/* 128 consecutive entries span one page (two if not aligned). */
	first = (uintptr_t)&shm_mb(a, 0)->actor->incarnation;
	last = (uintptr_t)&shm_mb(a, 127)->actor->prepared;
	ck_assert_uint_le(last - first, SHM_PAGE);
	shm_detach(a);
}
END_TEST

/*
 * A send to a main lane reads its mailbox's dense send view (32 bytes,
 * 128 to a page), not the full view (376 bytes, 10 to a page), which a
 * sender to 10,000 actors at random touched (and faulted in) at every
 * send: here the full view's pages are made unreadable after the first
 * send, and the second still goes through.
 */
START_TEST(test_send_reads_dense_view)
{
	struct shm_arena *a = shm_test_arena(8, 64, 128, SHM_OVERFLOW_REJECT);
	struct shm_producer *p;
	struct shm_msg	 m;
	uintptr_t	 pg = (uintptr_t)sysconf(_SC_PAGESIZE), lo, hi;
	int		 i;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	memset(&m, 0, sizeof(m));
	m.tag = 1;
	ck_assert_int_eq(shm_send(p, 5, SHM_LANE_MAIN, &m, "x", 1), 0);
	lo = (uintptr_t)&a->mb[5] & ~(pg - 1);
	hi = ((uintptr_t)(&a->mb[5] + 1) + pg - 1) & ~(pg - 1);
	ck_assert_uint_le(hi, (uintptr_t)a->sv);
	ck_assert_int_eq(mprotect((void *)lo, hi - lo, PROT_NONE), 0);
	m.tag = 2;
	i = shm_send(p, 5, SHM_LANE_MAIN, &m, "y", 1);
	ck_assert_int_eq(mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE),
	    0);
	ck_assert_int_eq(i, 0);
	for (i = 1; i <= 2; i++) {
		ck_assert_int_eq(shm_recv(a, 5, SHM_LANES_INBOX, &m, NULL, 0,
		    NULL), 0);
		ck_assert_uint_eq(m.tag, (unsigned)i);
	}
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * shm_copy, the payload copy that calls nothing (a woken consumer would
 * otherwise touch libc's memcpy, its PLT and GOT entry: three pages a
 * message), copies exactly n bytes, at any alignment, 0 included.
 */
START_TEST(test_shm_copy)
{
	unsigned char src[400], dst[420], want[420];
	size_t	 n, off, i;

	for (i = 0; i < sizeof(src); i++)
		src[i] = (unsigned char)(i * 7 + 1);
	/* Every length up to 130 (the 16-byte moves' bounds: 16, 32, 64). */
	for (n = 0; n <= 300; n += n < 130 ? 1 : 13)
		for (off = 0; off < 8; off++) {
			memset(dst, 0xee, sizeof(dst));
			memset(want, 0xee, sizeof(want));
			memcpy(want + off, src + 8 - off, n);
			shm_copy(dst + off, src + 8 - off, n);
			ck_assert_int_eq(memcmp(dst, want, sizeof(dst)), 0);
		}
}
END_TEST

/* Until pid sleeps (and, if w is given, *w is non-zero): bounded. */
static void
until_asleep(pid_t pid, _Atomic uint32_t *w)
{
	int	 i;

	for (i = 0; i < 5000; i++) {
		if ((w == NULL || atomic_load(w) != 0) &&
		    tcheck_proc_state(pid) == 'S')
			return;
		usleep(1000);
	}
	ck_abort_msg("process %d never slept", (int)pid);
}

/*
 * A wake-up wakes one sleeper of the mailbox's futex word, the consumer,
 * not every process queued on it: FUTEX_WAKE walks the kernel's hash
 * chain until it has woken as many as asked, and the chain holds other
 * mailboxes' sleepers (20 a chain at 10,000 actors on 2 CPUs), so asked
 * for all it walked them all, at every message.  A bystander asleep on
 * the same word after the consumer stays asleep through a send.  Both
 * sides run on one CPU, so that the sender makes no early wake-up
 * (ring.c, sleeps_on_futex), which would queue the consumer again
 * behind the bystander.
 */
START_TEST(test_wake_one)
{
	struct shm_arena *a = shm_test_arena(1, 64, 128, SHM_OVERFLOW_REJECT);
	struct shm_producer *p;
	struct shm_mbox	*mb = shm_mb(a, 0)->m;
	struct shm_msg	 m;
	cpu_set_t	 one;
	pid_t		 consumer, bystander;
	uint32_t	 w;
	int		 st, cpu = sched_getcpu();

	CPU_ZERO(&one);
	CPU_SET(cpu < 0 ? 0 : cpu, &one);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	consumer = fork();
	ck_assert_int_ge(consumer, 0);
	if (consumer == 0)
		_exit(shm_wait(a, 0, SHM_LANES_INBOX, SHM_WAIT_SLEEP, 0,
		    5000000000LL) == 0 ? 0 : 1);
	until_asleep(consumer, &mb->sleeping);
	bystander = fork();
	ck_assert_int_ge(bystander, 0);
	if (bystander == 0) {
		w = atomic_load(&mb->wake_word);
		_exit(shm_futex_wait(&mb->wake_word, w, 300000000) ==
		    -ETIMEDOUT ? 0 : 1);
	}
	until_asleep(bystander, NULL);
	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	memset(&m, 0, sizeof(m));
	ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0), 0);
	ck_assert_int_eq(waitpid(consumer, &st, 0), consumer);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "the consumer was not woken");
	ck_assert_int_eq(waitpid(bystander, &st, 0), bystander);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "the bystander was woken too");
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * A process that attaches to an arena of 20,000 mailboxes and sends to
 * two of them pays private memory for those two, not for all: its view
 * of a mailbox is made on first use.  (It was about 280 bytes each, made
 * at attach: 5.5 MiB here, 2.8 MiB in each of 10,000 actors.)  The pages
 * of the view that hold an entry are counted (mincore).
 */
START_TEST(test_attach_costs_what_is_used)
{
	enum { N = 20000 };
	struct shm_mailbox_layout *m = calloc(N, sizeof(*m));
	struct shm_layout l = { N, m, 16, 16 };
	struct shm_arena *a, *b;
	struct shm_producer *p;
	struct shm_msg	 msg;
	unsigned char	*vec;
	char		 err[SHM_ERRBUF];
	size_t		 pg = (size_t)sysconf(_SC_PAGESIZE), n, k, used = 0;
	int		 i;

	ck_assert_ptr_nonnull(m);
	for (i = 0; i < N; i++) {
		m[i] = shm_test_mbox(2, 64, SHM_OVERFLOW_REJECT);
		m[i].sys_capacity = m[i].reply_capacity = 2;
		m[i].state_size = 0;
	}
	ck_assert_int_eq(shm_create(&l, "check-view", &a, err, sizeof(err)),
	    0);
	free(m);
	ck_assert_int_eq(shm_attach_fds(shm_layout_fd(a), shm_fd(a), &b, err,
	    sizeof(err)), 0);
	ck_assert_int_eq(shm_producer_open(b, &p), 0);
	memset(&msg, 0, sizeof(msg));
	ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &msg, NULL, 0), 0);
	ck_assert_int_eq(shm_send(p, N - 1, SHM_LANE_MAIN, &msg, NULL, 0), 0);
	/*
	 * The pages of the views that hold an entry: two of the dense send
	 * views (160 pages or so), and none of the full views (1,300), which
	 * a send to a main lane does not need.  (The slots this process
	 * opened follow them in the same mapping.)
	 */
	n = (size_t)((unsigned char *)b->mine - (unsigned char *)b->mb) / pg;
	vec = calloc(n, 1);
	ck_assert_ptr_nonnull(vec);
	ck_assert_int_eq(mincore(b->mb, n * pg, vec), 0);
	for (k = 0; k < n; k++) {
		used += vec[k] & 1;
		ck_assert_msg((vec[k] & 1) == 0 || (unsigned char *)b->mb +
		    k * pg >= (unsigned char *)b->sv,
		    "page %zu of the full views resident", k);
	}
	ck_assert_msg(used <= 2, "%zu of %zu pages of the views resident",
	    used, n);
	free(vec);
	shm_producer_close(p);
	shm_detach(b);
	shm_detach(a);
}
END_TEST

/*
 * What a wake-up touches of its mailbox shares one page (arena.c,
 * place_mailbox): the control block, libactor's header at the start of
 * the state region and the head of the in-hand slot, for a mailbox of the
 * defaults (1,024 cells of 256 bytes, max_message 65,536, libactor's
 * region of the default watchers and asks), and each mailbox starts on a
 * page of its own; each lane's cells start on a page, so that a message
 * is on one page, not two.  What a sender touches, the control block's
 * page and the main lane's first cells, lies in one window of the
 * kernel's fault-around, so that one fault maps both: the in-hand slot's
 * far part, room for the largest payload, is not between them but after
 * every mailbox.
 */
START_TEST(test_wake_page)
{
	struct shm_mailbox_layout m[2];
	struct shm_layout l = { 2, m, 16, 16 };
	struct shm_mbox_local *mb;
	struct shm_arena *a;
	char	 err[SHM_ERRBUF];
	uintptr_t page;
	uint32_t i, k;

	for (i = 0; i < 2; i++) {
		m[i] = shm_test_mbox(1024, 256, SHM_OVERFLOW_BLOCK);
		m[i].sys_capacity = 16;
		m[i].reply_capacity = 64;
		m[i].max_message = 65536;
		m[i].state_size = (uint32_t)actor_region_size(0, 0, 0);
	}
	ck_assert_msg(shm_create(&l, "check-wake-page", &a, err,
	    sizeof(err)) == 0, "shm_create: %s", err);
	for (i = 0; i < 2; i++) {
		mb = shm_mb(a, i);
		page = (uintptr_t)mb->m;
		ck_assert_uint_eq(page % SHM_PAGE, 0);
		ck_assert_uint_eq((uintptr_t)mb->state / SHM_PAGE,
		    page / SHM_PAGE);
		/* The in-hand header and a 64-byte payload. */
		ck_assert_uint_eq(((uintptr_t)mb->inhand + SHM_CELL_HDR + 64 -
		    1) / SHM_PAGE, page / SHM_PAGE);
		ck_assert_uint_gt((uintptr_t)mb->lane[SHM_LANE_MAIN].cells,
		    (uintptr_t)mb->inhand);
		ck_assert_uint_eq((uintptr_t)mb->lane[SHM_LANE_MAIN].cells /
		    SHM_FAULT_BLOCK, page / SHM_FAULT_BLOCK);
		ck_assert_ptr_nonnull(mb->inhand_far);
		ck_assert_uint_ge(mb->inhand_far_size, 65536);
		ck_assert_uint_gt((uintptr_t)mb->inhand_far,
		    (uintptr_t)shm_mb(a, 1)->lane[SHM_LANE_REPLY].cells);
		/* No cell straddles two pages. */
		for (k = 0; k < SHM_NLANES; k++)
			ck_assert_uint_eq((uintptr_t)mb->lane[k].cells %
			    SHM_PAGE, 0);
	}
	shm_detach(a);
}
END_TEST

/* shm_cpu (RDPID where it has it) says the CPU the thread is pinned to. */
START_TEST(test_shm_cpu)
{
	struct shm_arena *a = shm_test_arena(1, 4, 64, SHM_OVERFLOW_REJECT);
	cpu_set_t old, one;
	int	 cpu, n = 0;

	ck_assert_int_eq(sched_getaffinity(0, sizeof(old), &old), 0);
	for (cpu = 0; cpu < CPU_SETSIZE && n < 8; cpu++) {
		if (!CPU_ISSET(cpu, &old))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		ck_assert_int_eq(sched_setaffinity(0, sizeof(one), &one), 0);
		ck_assert_int_eq(shm_cpu(a), cpu);
		n++;
	}
	ck_assert_int_eq(sched_setaffinity(0, sizeof(old), &old), 0);
	shm_detach(a);
}
END_TEST

#if defined(__x86_64__)
/* The AVX-512 state components in use (XGETBV 1), or -1 if it cannot say. */
static int
avx512_in_use(void)
{
	unsigned eax, ebx, ecx, edx;
	uint32_t lo, hi;

	if (!__builtin_cpu_supports("avx512f") ||
	    __get_cpuid_count(0xd, 1, &eax, &ebx, &ecx, &edx) == 0 ||
	    (eax & (1u << 2)) == 0)
		return -1;
	__asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
	return (int)(lo & 0xe0);
}
#endif

/*
 * A sleeper gives back its AVX-512 registers (wait.c, zmm_give_back): a
 * process that used ZMM16 (as glibc's string functions do on such a CPU)
 * has that state in use until something resets it, and the kernel then
 * saves and restores it at every context switch.  After a nap it is not in
 * use any more.  On a CPU without AVX-512 there is nothing to give back,
 * and the test says so.
 */
START_TEST(test_nap_gives_back_avx512)
{
#if defined(__x86_64__)
	struct shm_arena *a;
	int	 rc, before, after;

	if (avx512_in_use() < 0) {
		fprintf(stderr, "test_nap_gives_back_avx512: no AVX-512 or "
		    "XGETBV 1 here: nothing to give back\n");
		return;
	}
	a = shm_test_arena(1, 4, 64, SHM_OVERFLOW_REJECT);
	/* No call between (Check's own marks use glibc's string code). */
	__asm__ __volatile__("vpternlogd $0xff, %%zmm16, %%zmm16, %%zmm16"
	    : : : "memory");
	before = avx512_in_use();
	rc = shm_wait(a, 0, SHM_LANES_INBOX, SHM_WAIT_SLEEP, 0, 1000000);
	after = avx512_in_use();
	ck_assert_int_ne(before & 0x80, 0);
	ck_assert_int_eq(rc, SHM_ETIMEDOUT);
	ck_assert_int_eq(after, 0);
	shm_detach(a);
#endif
}
END_TEST

START_TEST(test_actor_table)
{
	struct shm_arena *a = shm_test_arena(3, 4, 128, SHM_OVERFLOW_REJECT);
	char	 buf[SHM_PATH_MAX];
	char	 longp[SHM_PATH_MAX + 1];
	size_t	 len;
	void	*r;

	ck_assert_int_eq(shm_actor_set_path(a, 1, "/web/frontend/1"), 0);
	ck_assert_int_eq(shm_actor_set_path(a, 2, "/db"), 0);
	ck_assert_int_eq(shm_lookup(a, "/db"), 2);
	ck_assert_int_eq(shm_lookup(a, "/web/frontend/1"), 1);
	ck_assert_int_eq(shm_lookup(a, "/web"), SHM_ENOENT);
	ck_assert_int_eq(shm_actor_path(a, 1, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/web/frontend/1");
	memset(longp, 'a', SHM_PATH_MAX);
	longp[SHM_PATH_MAX] = '\0';
	ck_assert_int_eq(shm_actor_set_path(a, 0, longp), SHM_EINVAL);
	ck_assert_int_eq(shm_actor_set_path(a, 3, "/x"), SHM_EBADINDEX);
	ck_assert_uint_eq(shm_actor_incarnation(a, 1), 0);
	ck_assert_uint_eq(shm_actor_bump_incarnation(a, 1), 1);
	ck_assert_uint_eq(shm_actor_ref(a, 1).incarnation, 1);
	shm_actor_set_pid(a, 1, 1234);
	ck_assert_int_eq(shm_actor_pid(a, 1), 1234);
	shm_actor_set_state(a, 1, SHM_ACTOR_UP);
	ck_assert_int_eq(shm_actor_state(a, 1), SHM_ACTOR_UP);
	r = shm_inhand(a, 1, &len);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(len, 128);
	ck_assert_uint_eq((uintptr_t)r % 64, 0);
	r = shm_state(a, 1, &len);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(len, 1000);
	ck_assert_uint_eq((uintptr_t)r % 64, 0);
	memset(r, 0xab, len);		/* all of it is ours */
	ck_assert_ptr_null(shm_inhand(a, 9, &len));
	shm_detach(a);
}
END_TEST

/*
 * A copy of a's layout with len bytes at off replaced by bytes, sealed as
 * actord seals it: refused with an error that says why.
 */
static void
refused_layout(struct shm_arena *a, size_t off, const void *bytes,
    size_t len, const char *why)
{
	struct shm_arena *b;
	unsigned char	*copy;
	char		 err[SHM_ERRBUF];
	int		 fd;

	copy = malloc(a->lsize);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, a->lbase, a->lsize);
	memcpy(copy + off, bytes, len);
	fd = shm_test_copy(copy, a->lsize, a->lsize, SHM_TEST_SEALS_RO);
	ck_assert_int_eq(shm_attach_fds(fd, shm_fd(a), &b, err, sizeof(err)),
	    SHM_ECORRUPT);
	ck_assert_msg(strstr(err, why) != NULL, "%s", err);
	close(fd);
	free(copy);
}

/*
 * Attach refuses a wrong magic, version, size, an fd not sealed as it
 * must be, garbage.
 */
START_TEST(test_attach_refuses)
{
	struct shm_arena *a = shm_test_arena(2, 8, 128, SHM_OVERFLOW_REJECT);
	struct shm_arena *b;
	uint64_t	 v64;
	uint32_t	 v32;
	char		 err[SHM_ERRBUF];
	size_t		 size = shm_size(a);
	int		 fd;

	ck_assert_int_eq(shm_attach_fds(shm_layout_fd(a), shm_fd(a), &b, err,
	    sizeof(err)), 0);
	ck_assert_uint_eq(shm_nmailboxes(b), 2);
	ck_assert_uint_eq(shm_arena_id(b), shm_arena_id(a));
	shm_detach(b);

	memset(&v64, 'Z', 8);
	refused_layout(a, 0, &v64, 8, "magic");
	v32 = 0x7f7f7f7f;
	refused_layout(a, 8, &v32, 4, "version");
	/* An offset off by 64: the recomputed layout disagrees. */
	memcpy(&v64, a->lbase + 64, 8);
	v64 += 64;
	refused_layout(a, 64, &v64, 8, "corrupt");

	/* Data in a bigger and in a smaller memfd. */
	fd = shm_test_copy(a->base, size, size + 4096, SHM_TEST_SEALS);
	ck_assert_int_eq(shm_attach_fds(shm_layout_fd(a), fd, &b, err,
	    sizeof(err)), SHM_ECORRUPT);
	ck_assert_msg(strstr(err, "bytes") != NULL, "%s", err);
	close(fd);
	fd = shm_test_copy(a->base, size, size - 4096, SHM_TEST_SEALS);
	ck_assert_int_eq(shm_attach_fds(shm_layout_fd(a), fd, &b, err,
	    sizeof(err)), SHM_ECORRUPT);
	close(fd);
	fd = shm_test_copy(a->lbase, a->lsize, 16, SHM_TEST_SEALS_RO);
	ck_assert_int_eq(shm_attach_fds(fd, shm_fd(a), &b, err, sizeof(err)),
	    SHM_ECORRUPT);
	close(fd);
	/* Data not sealed; a layout a worker could still write. */
	fd = shm_test_copy(a->base, size, size, 0);
	ck_assert_int_eq(shm_attach_fds(shm_layout_fd(a), fd, &b, err,
	    sizeof(err)), SHM_ECORRUPT);
	ck_assert_msg(strstr(err, "sealed") != NULL, "%s", err);
	close(fd);
	fd = shm_test_copy(a->lbase, a->lsize, a->lsize, SHM_TEST_SEALS);
	ck_assert_int_eq(shm_attach_fds(fd, shm_fd(a), &b, err, sizeof(err)),
	    SHM_ECORRUPT);
	ck_assert_msg(strstr(err, "read-only") != NULL, "%s", err);
	close(fd);
	/* Not a memory file at all. */
	fd = open("/dev/null", O_RDWR);
	ck_assert_int_lt(shm_attach_fds(fd, shm_fd(a), &b, err, sizeof(err)),
	    0);
	ck_assert_int_lt(shm_attach_fds(shm_layout_fd(a), fd, &b, err,
	    sizeof(err)), 0);
	close(fd);
	/* Intact again. */
	ck_assert_int_eq(shm_attach_fds(shm_layout_fd(a), shm_fd(a), &b, err,
	    sizeof(err)), 0);
	shm_detach(b);
	shm_detach(a);
}
END_TEST

/*
 * A copy of a's layout, sealed as actord seals it, where mailbox idx's
 * descriptor goes through edit (its checksum recomputed when resum).
 */
static int
edited_layout(struct shm_arena *a, uint32_t idx, void (*edit)(struct shm_desc *),
    bool resum)
{
	unsigned char	*copy = malloc(a->lsize);
	struct shm_desc	*d;
	size_t		 off = (size_t)((const unsigned char *)&a->desc[idx] -
			    a->lbase);
	int		 fd;

	ck_assert_ptr_nonnull(copy);
	memcpy(copy, a->lbase, a->lsize);
	d = (struct shm_desc *)(void *)(copy + off);
	edit(d);
	if (resum)
		d->check = shm_desc_sum(d);
	fd = shm_test_copy(copy, a->lsize, a->lsize, SHM_TEST_SEALS_RO);
	free(copy);
	return fd;
}

static void
desc_out_of_bounds(struct shm_desc *d)
{
	uint32_t l;

	/* Consistent with its sizes, but a gigabyte past the arena's end. */
	d->ctl_off += 1ULL << 30;
	for (l = 0; l < SHM_NLANES; l++)
		d->cells_off[l] += 1ULL << 30;
	d->inhand_off += 1ULL << 30;
	d->state_off += 1ULL << 30;
}

static void
desc_bigger(struct shm_desc *d)
{
	/* Past the page its cells start on: the next lane's move. */
	d->capacity[SHM_LANE_MAIN] *= 64;
}

/*
 * Attach checks the header and the seals, not every descriptor (issue 13:
 * attaching cost O(mailboxes), starting N workers O(N^2)): a layout whose
 * last descriptor points out of the arena, or was changed under its
 * checksum, still attaches; the bad mailbox is found at its first use and
 * refused there (SHM_ECORRUPT, the reason from shm_mailbox_check, actor_open
 * refused), without a read out of bounds (the sanitizer pass runs this);
 * the other mailboxes work.
 */
START_TEST(test_attach_checks_descriptors_lazily)
{
	static void (*const edits[])(struct shm_desc *) = {
		desc_out_of_bounds, desc_bigger, desc_bigger
	};
	static const bool resum[] = { true, false, true };
	static const char *const why[] = { "out of the arena", "checksum",
	    "not matching" };
	struct shm_arena *a = shm_test_arena(3, 8, 128, SHM_OVERFLOW_REJECT);
	struct shm_arena *b;
	struct shm_producer *p;
	struct shm_counters c;
	struct shm_msg	 m;
	struct actor	*act;
	char		 err[SHM_ERRBUF];
	size_t		 len;
	unsigned	 k;
	int		 fd;

	memset(&m, 0, sizeof(m));
	m.tag = 7;
	for (k = 0; k < sizeof(edits) / sizeof(edits[0]); k++) {
		fd = edited_layout(a, 2, edits[k], resum[k]);
		ck_assert_msg(shm_attach_fds(fd, shm_fd(a), &b, err,
		    sizeof(err)) == 0, "%s", err);
		ck_assert_int_eq(shm_mailbox_check(b, 0, err, sizeof(err)), 0);
		ck_assert_int_eq(shm_mailbox_check(b, 2, err, sizeof(err)),
		    SHM_ECORRUPT);
		ck_assert_msg(strstr(err, why[k]) != NULL, "%s", err);
		ck_assert_int_eq(shm_mailbox_check(b, 3, err, sizeof(err)),
		    SHM_EBADINDEX);
		ck_assert_int_eq(shm_producer_open(b, &p), 0);
		ck_assert_int_eq(shm_send(p, 2, SHM_LANE_MAIN, &m, NULL, 0),
		    SHM_ECORRUPT);
		/* Whatever else meets it finds an empty mailbox. */
		ck_assert(!shm_pending(b, 2, SHM_LANES_ALL));
		ck_assert_int_eq(shm_recv(b, 2, SHM_LANES_ALL, &m, NULL, 0,
		    NULL), SHM_EEMPTY);
		ck_assert_int_eq(shm_counters(b, 2, &c), 0);
		ck_assert_ptr_null(shm_state(b, 2, &len));
		ck_assert_int_eq(actor_open(b, 2, &act, err, sizeof(err)),
		    ACTOR_ECORRUPT);
		/* The others are untouched: a's mailbox 1 receives. */
		m.tag = 7;
		ck_assert_int_eq(shm_send(p, 1, SHM_LANE_MAIN, &m, NULL, 0), 0);
		ck_assert_int_eq(shm_recv(a, 1, SHM_LANES_INBOX, &m, NULL, 0,
		    NULL), 0);
		ck_assert_uint_eq(m.tag, 7);
		shm_producer_close(p);
		shm_detach(b);
		close(fd);
	}
	shm_detach(a);
}
END_TEST

/*
 * What a worker holds of the layout (the header, the descriptors, the
 * actor table) it cannot change, by any way the memfd offers: no writable
 * mapping, no write, no hole punched, no truncation, and its read-only
 * mapping cannot be made writable.  The creator's mapping still writes,
 * and the worker sees it.
 */
START_TEST(test_layout_read_only)
{
	struct shm_arena *a = shm_test_arena(1, 8, 128, SHM_OVERFLOW_REJECT);
	pid_t	 pid;
	int	 st;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct shm_arena *b;
		char	 err[SHM_ERRBUF], name[64];
		void	*p;
		int	 bad = 0, fd;

		if (shm_attach_fds(shm_layout_fd(a), shm_fd(a), &b, err,
		    sizeof(err)) != 0)
			_exit(100);
		fd = shm_layout_fd(b);
		p = mmap(NULL, b->lsize, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    0);
		if (p != MAP_FAILED)
			bad |= 1;
		if (mprotect(b->lbase, 4096, PROT_READ | PROT_WRITE) == 0)
			bad |= 2;
		if (pwrite(fd, "\0", 1, 0) != -1)
			bad |= 4;
		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
		    4096) != -1)
			bad |= 8;
		if (ftruncate(fd, 0) != -1)
			bad |= 16;
		snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
		if ((fd = open(name, O_RDWR)) != -1 && mmap(NULL, 4096,
		    PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) != MAP_FAILED)
			bad |= 32;
		if (shm_actor_set_path(b, 0, "/mine") != SHM_EINVAL ||
		    shm_mailbox_configure(b, 0, 2, SHM_OVERFLOW_REJECT, 0) !=
		    SHM_EINVAL)
			bad |= 64;
		/* The creator's word, seen through the read-only map. */
		while (shm_actor_state(b, 0) != SHM_ACTOR_UP)
			usleep(1000);
		_exit(bad);
	}
	shm_actor_set_state(a, 0, SHM_ACTOR_UP);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: %#x",
	    st);
	shm_detach(a);
}
END_TEST

/* The arena clock follows CLOCK_MONOTONIC (a sanity bound, not a timing). */
START_TEST(test_clock)
{
	struct shm_arena *a = shm_test_arena(1, 4, 128, SHM_OVERFLOW_REJECT);
	uint64_t t0 = shm_now_ns(), c = shm_clock_ns(a), t1 = shm_now_ns();

	ck_assert_uint_gt(c + 1000000000ULL, t0);
	ck_assert_uint_lt(c, t1 + 1000000000ULL);
	ck_assert_uint_le(shm_clock_ns(a), shm_clock_ns(a));
	shm_detach(a);
}
END_TEST

/*
 * One reading of the arena clock between two of CLOCK_MONOTONIC, the
 * narrowest of a few: *mono is their middle; returns the width.
 */
static uint64_t
clock_bracket(struct shm_arena *a, uint64_t *arena, uint64_t *mono)
{
	uint64_t m0, c, m1, best = UINT64_MAX;
	int i;

	for (i = 0; i < 16; i++) {
		m0 = shm_now_ns();
		c = shm_clock_ns(a);
		m1 = shm_now_ns();
		if (m1 - m0 < best) {
			best = m1 - m0;
			*arena = c;
			*mono = m0 + best / 2;
		}
	}
	return best;
}

/*
 * The arena clock runs at CLOCK_MONOTONIC's rate within its calibration's
 * bound (CAL_MAX_PPM, 1,000 ppm; twice that here) over 50 ms, whether it
 * reads the TSC or not: the short calibration of shm_create is not wrong.
 */
START_TEST(test_clock_rate)
{
	struct shm_arena *a = shm_test_arena(1, 4, 128, SHM_OVERFLOW_REJECT);
	struct timespec ts = { 0, 50000000 };
	uint64_t c0 = 0, m0 = 0, c1 = 0, m1 = 0, w, dc, dm, off;

	w = clock_bracket(a, &c0, &m0);
	nanosleep(&ts, NULL);
	w += clock_bracket(a, &c1, &m1);
	dc = c1 - c0;
	dm = m1 - m0;
	off = dc > dm ? dc - dm : dm - dc;
	ck_assert_msg(off <= dm * 2000 / 1000000 + w, "arena clock %llu ns "
	    "against %llu ns of CLOCK_MONOTONIC", (unsigned long long)dc,
	    (unsigned long long)dm);
	shm_detach(a);
}
END_TEST

START_TEST(test_attach_env)
{
	struct shm_arena *a = shm_test_arena(2, 8, 128, SHM_OVERFLOW_REJECT);
	struct shm_arena *b;
	char	 err[SHM_ERRBUF], num[16];

	unsetenv(SHM_ENV_FD);
	unsetenv(SHM_ENV_LAYOUT_FD);
	ck_assert_int_eq(shm_attach_env(&b, err, sizeof(err)), SHM_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, SHM_ENV_LAYOUT_FD));
	snprintf(num, sizeof(num), "%d", shm_layout_fd(a));
	setenv(SHM_ENV_LAYOUT_FD, num, 1);
	ck_assert_int_eq(shm_attach_env(&b, err, sizeof(err)), SHM_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, SHM_ENV_FD));
	setenv(SHM_ENV_FD, "12x", 1);
	ck_assert_int_eq(shm_attach_env(&b, err, sizeof(err)), SHM_EINVAL);
	snprintf(num, sizeof(num), "%d", shm_fd(a));
	setenv(SHM_ENV_FD, num, 1);
	ck_assert_int_eq(shm_attach_env(&b, err, sizeof(err)), 0);
	ck_assert_uint_eq(shm_nmailboxes(b), 2);
	shm_detach(b);
	shm_detach(a);
}
END_TEST

/* A child can neither shrink nor grow the arena. */
/* Pages of the arena's memfd that hold memory, by mincore on a new map. */
static size_t
resident_pages(struct shm_arena *a)
{
	size_t	 size = shm_size(a), pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t	 n = (size + pg - 1) / pg, i, count = 0;
	unsigned char *vec = malloc(n);
	void	*p;

	ck_assert_ptr_nonnull(vec);
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, shm_fd(a), 0);
	ck_assert_ptr_ne(p, MAP_FAILED);
	ck_assert_int_eq(mincore(p, size, vec), 0);
	for (i = 0; i < n; i++)
		count += vec[i] & 1;
	munmap(p, size);
	free(vec);
	return count;
}

/*
 * A mailbox's cells cost memory only as messages use them: a prepared
 * mailbox (0) and a lazy one (actord's spares) before and after it is
 * prepared, 4 MiB of cells each, stay unallocated but for the pages of
 * the cells a message went through, and work like any other mailbox.
 */
START_TEST(test_lazy_mailbox)
{
	struct shm_mailbox_layout m[2];
	struct shm_layout l = { 2, m, 16, 16 };
	struct shm_producer *p;
	struct shm_arena *a;
	struct shm_msg	 msg;
	char		 err[SHM_ERRBUF];
	size_t		 before, after, ring_pages;

	m[0] = shm_test_mbox(16384, 256, SHM_OVERFLOW_REJECT);
	m[1] = shm_test_mbox(16384, 256, SHM_OVERFLOW_REJECT);
	m[1].lazy = 1;
	ring_pages = 16384 * 256 / (size_t)sysconf(_SC_PAGESIZE);
	ck_assert_msg(shm_create(&l, "check-lazy", &a, err, sizeof(err)) == 0,
	    "shm_create: %s", err);
	ck_assert(shm_mailbox_prepared(a, 0));
	ck_assert(!shm_mailbox_prepared(a, 1));
	before = resident_pages(a);
	ck_assert_msg(before < ring_pages / 8, "%zu pages resident before "
	    "prepare (ring: %zu)", before, ring_pages);
	ck_assert_int_eq(shm_mailbox_prepare(a, 1), 0);
	ck_assert_int_eq(shm_mailbox_prepare(a, 1), 0);	/* idempotent */
	ck_assert(shm_mailbox_prepared(a, 1));
	after = resident_pages(a);
	ck_assert_msg(after <= before + 1, "%zu pages resident after "
	    "prepare, %zu before (ring: %zu)", after, before, ring_pages);
	ck_assert_int_eq(shm_mailbox_prepare(a, 2), SHM_EBADINDEX);
	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	memset(&msg, 0, sizeof(msg));
	msg.tag = 7;
	msg.len = 2;
	ck_assert_int_eq(shm_send(p, 1, SHM_LANE_MAIN, &msg, "hi", 0), 0);
	memset(&msg, 0, sizeof(msg));
	ck_assert_int_eq(shm_recv(a, 1, SHM_LANES_INBOX, &msg, NULL, 0, NULL),
	    0);
	ck_assert_uint_eq(msg.tag, 7);
	ck_assert_uint_eq(msg.len, 2);
	ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &msg, "hi", 0), 0);
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &msg, NULL, 0, NULL),
	    0);
	after = resident_pages(a);
	ck_assert_msg(after < before + 8, "%zu pages resident after a "
	    "message each, %zu before (ring: %zu)", after, before, ring_pages);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

START_TEST(test_sealed)
{
	struct shm_arena *a = shm_test_arena(1, 8, 128, SHM_OVERFLOW_REJECT);
	size_t	 size = shm_size(a);
	pid_t	 pid;
	int	 fd = shm_fd(a), st;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int bad = 0;

		if (ftruncate(fd, (off_t)size / 2) != -1 || errno != EPERM)
			bad |= 1;
		if (ftruncate(fd, (off_t)size * 2) != -1 || errno != EPERM)
			bad |= 2;
		if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE) != -1)
			bad |= 4;
		_exit(bad);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child: %#x",
	    st);
	shm_detach(a);
}
END_TEST

static Suite *
shm_suite(void)
{
	Suite	*s = suite_create("shm");
	TCase	*tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_layout_check);
	tcase_add_test(tc, test_wake_page);
	tcase_add_test(tc, test_wake_one);
	tcase_add_test(tc, test_shm_copy);
	tcase_add_test(tc, test_send_reads_dense_view);
	tcase_add_test(tc, test_actor_table_dense);
	tcase_add_test(tc, test_shm_cpu);
	tcase_add_test(tc, test_nap_gives_back_avx512);
	tcase_add_test(tc, test_path_index);
	tcase_add_test(tc, test_attach_costs_what_is_used);
	tcase_add_test(tc, test_tsc_trusted);
	tcase_add_test(tc, test_clock_rate);
	tcase_add_test(tc, test_sleeper_fences);
	tcase_add_test(tc, test_fenced_sleeper_spins_again);
	tcase_add_test(tc, test_sleeper_fences_drop_oldest);
	tcase_add_test(tc, test_own_slots);
	tcase_add_test(tc, test_order_exactly_once);
	tcase_add_test(tc, test_overflow_reject);
	tcase_add_test(tc, test_overflow_drop_newest);
	tcase_add_test(tc, test_overflow_drop_oldest);
	tcase_add_test(tc, test_drop_oldest_concurrent);
	tcase_add_test(tc, test_overflow_block);
	tcase_add_test(tc, test_oversize);
	tcase_add_test(tc, test_lanes);
	tcase_add_test(tc, test_drain_batch);
	tcase_add_test(tc, test_take_one_wakes_senders);
	tcase_add_test(tc, test_take_one_blocked_sender);
	tcase_add_test(tc, test_take_one_wait_hist);
	tcase_add_test(tc, test_enq_sampled);
	tcase_add_test(tc, test_reply_lane_not_timed);
	tcase_add_test(tc, test_take_one_as_drain);
	tcase_add_test(tc, test_doorbell);
	tcase_add_test(tc, test_dead_letters);
	tcase_add_test(tc, test_actor_table);
	tcase_add_test(tc, test_attach_refuses);
	tcase_add_test(tc, test_attach_checks_descriptors_lazily);
	tcase_add_test(tc, test_layout_read_only);
	tcase_add_test(tc, test_attach_env);
	tcase_add_test(tc, test_clock);
	tcase_add_test(tc, test_sealed);
	tcase_add_test(tc, test_lazy_mailbox);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(shm_suite());
}
