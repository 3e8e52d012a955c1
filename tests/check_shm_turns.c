/*
 * check_shm_turns.c: senders blocked on a full lane get their turns in the
 * order they blocked, one per freed cell (shm/turns.c), with real sender
 * processes: the order, the wake-ups counted per freed cell, senders
 * SIGKILLed in line (at the front and in the middle), a sender that times
 * out in line, the consumer SIGKILLed while senders wait, a queue
 * scribbled on while senders wait, and its repair; who a grant wakes;
 * what a sender let in from the line counts as room; and how often a
 * sender far back in line looks at it.
 */
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shm/shm.h"
#include "tests/check_shm_util.h"
#include "tests/lib/tcheck.h"

#define CAP		4	/* cells of the lane under test */
#define TAG_FILL	1
#define TAG_LINE	7
#define WAIT_MS		10000	/* the most any step may take */

static void
send_fill(struct shm_producer *p, unsigned n)
{
	struct shm_msg	 m;
	unsigned	 i;

	memset(&m, 0, sizeof(m));
	m.tag = TAG_FILL;
	for (i = 0; i < n; i++)
		ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0), 0);
}

/* Spawn k senders in line, each once the one before it holds a ticket. */
static void
line_up(struct shm_arena *a, pid_t *pids, unsigned k, int64_t timeout_ns)
{
	unsigned i;

	for (i = 0; i < k; i++) {
		pids[i] = shm_test_spawn_sender_to(a, 0, i, 1, timeout_ns);
		ck_assert_msg(shm_test_waiting_senders(a, 0, i + 1, WAIT_MS),
		    "sender %u never queued", i);
	}
}

/* Wait until pid has exited (not reaped), or fail. */
static void
wait_exited(pid_t pid)
{
	struct timespec ts = { 0, 1000000 };
	unsigned i;

	for (i = 0; i < WAIT_MS && !shm_test_exited(pid); i++)
		nanosleep(&ts, NULL);
	ck_assert_msg(shm_test_exited(pid), "sender %d never got in",
	    (int)pid);
}

/* Take one message off the lane: its sender id (TAG_LINE), or -1. */
static int
take(struct shm_arena *a)
{
	struct shm_msg m;

	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0, NULL),
	    0);
	return m.tag == TAG_LINE ? (int)m.sender.index : -1;
}

/*
 * Free one cell (taking the message at the head, its sender's id to
 * order[*n] if one of the line's), then wait for sender pid to get in.
 */
static void
let_in(struct shm_arena *a, pid_t pid, int *order, int *n)
{
	int id;

	if ((id = take(a)) >= 0)
		order[(*n)++] = id;
	wait_exited(pid);
	ck_assert_int_eq(shm_test_wait_exit(pid), 0);
}

/* Take what is left, the line's senders' ids to order[*n...]. */
static void
take_rest(struct shm_arena *a, int *order, int *n)
{
	int id;

	while (shm_pending(a, 0, SHM_LANES_INBOX))
		if ((id = take(a)) >= 0)
			order[(*n)++] = id;
}

/*
 * K senders block in a known order; the consumer frees one cell at a
 * time, each time waiting for one of them to get in: they get in in the
 * order they blocked, and each freed cell woke at most one sender.  (With
 * every blocked sender polling on its own, as before the queue, the
 * order was whichever looked first.)
 */
START_TEST(test_fifo_order)
{
	enum { K = 6 };
	struct shm_arena *a = shm_test_arena(1, CAP, 128, SHM_OVERFLOW_BLOCK);
	struct shm_producer *p;
	struct shm_counters c;
	pid_t		 pids[K];
	int		 order[K], n = 0;
	unsigned	 i;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	send_fill(p, CAP);
	line_up(a, pids, K, SHM_NO_TIMEOUT);
	/* One cell free at a time: exactly the oldest in line takes it. */
	for (i = 0; i < K; i++)
		let_in(a, pids[i], order, &n);
	take_rest(a, order, &n);
	ck_assert_int_eq(n, K);
	for (i = 0; i < K; i++)
		ck_assert_msg(order[i] == (int)i, "turn %u went to sender %d",
		    i, order[i]);
	/* One wake-up at most per freed cell, never the whole line. */
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_msg(c.sender_wakeups <= K, "%llu wake-ups for %d cells",
	    (unsigned long long)c.sender_wakeups, K);
	ck_assert_uint_eq(shm_test_queued(a, 0), 0);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * Senders SIGKILLed in line, the front and one in the middle, and reaped:
 * the others still get in, in order, and nothing is owed to the dead.
 */
START_TEST(test_dead_tickets)
{
	enum { K = 5 };
	struct shm_arena *a = shm_test_arena(1, CAP, 128, SHM_OVERFLOW_BLOCK);
	struct shm_producer *p;
	pid_t		 pids[K];
	int		 order[K], n = 0;
	unsigned	 released, i;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	send_fill(p, CAP);
	line_up(a, pids, K, SHM_NO_TIMEOUT);
	for (i = 0; i < 3; i += 2) {		/* the front, then #2 */
		ck_assert_int_eq(kill(pids[i], SIGKILL), 0);
		ck_assert_int_eq(shm_test_wait_exit(pids[i]), 128 + SIGKILL);
		ck_assert_int_ge(shm_reap(a, pids[i], &released), 0);
		ck_assert_uint_eq(released, 0);
	}
	for (i = 1; i < K; i += 1 + (i == 1))	/* 1, 3, 4 */
		let_in(a, pids[i], order, &n);
	take_rest(a, order, &n);
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(order[0], 1);
	ck_assert_int_eq(order[1], 3);
	ck_assert_int_eq(order[2], 4);
	ck_assert_uint_eq(shm_test_queued(a, 0), 0);
	ck_assert_int_eq((int32_t)atomic_load(&shm_mb(a, 0)->m->turn_out), 0);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * A sender with a timeout, in the middle of the line, times out (full,
 * a dead letter) while the lane stays full; the ones behind it still get
 * their turns, in order, once cells are freed.
 */
START_TEST(test_timeout_in_line)
{
	struct shm_arena *a = shm_test_arena(1, CAP, 128, SHM_OVERFLOW_BLOCK);
	struct shm_producer *p;
	pid_t		 pids[3];
	int		 order[3], n = 0;
	unsigned	 i;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	send_fill(p, CAP);
	for (i = 0; i < 3; i++) {
		pids[i] = shm_test_spawn_sender_to(a, 0, i, 1, i == 1 ?
		    20 * 1000000LL : SHM_NO_TIMEOUT);
		ck_assert(shm_test_waiting_senders(a, 0, i + 1, WAIT_MS));
	}
	ck_assert_int_eq(shm_test_wait_exit(pids[1]), 1);
	ck_assert_uint_eq(shm_dl_total(a), 1);
	let_in(a, pids[0], order, &n);
	let_in(a, pids[2], order, &n);
	take_rest(a, order, &n);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(order[0], 0);
	ck_assert_int_eq(order[1], 2);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * The queue's words scribbled on while senders wait (turns far ahead,
 * owed far beyond the lane, a next ticket behind the grant): nobody
 * crashes, and every sender still gets in once cells are freed, within
 * a bounded wait.  Then the repair at a consumer's reap resets a queue
 * that makes no sense.
 */
START_TEST(test_scribbled_turns)
{
	enum { K = 4 };
	struct shm_arena *a = shm_test_arena(1, CAP, 128, SHM_OVERFLOW_BLOCK);
	struct shm_mbox	*m = shm_mb(a, 0)->m;
	static const uint32_t lies[][3] = {	/* next, grant, out (+=) */
		{ 0, 0, 1000 },			/* owed beyond the lane */
		{ 0, 0x40000000u, 0 },		/* turns granted far ahead */
		{ 0x80000000u, 0, 0 },		/* a line past any count */
	};
	struct shm_producer *p;
	struct shm_repair r;
	pid_t		 pids[K];
	unsigned	 l, i, got;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	for (l = 0; l < sizeof(lies) / sizeof(lies[0]); l++) {
		send_fill(p, CAP);
		line_up(a, pids, K, SHM_NO_TIMEOUT);
		atomic_fetch_add(&m->turn_next, lies[l][0]);
		atomic_fetch_add(&m->turn_grant, lies[l][1]);
		atomic_fetch_add(&m->turn_out, lies[l][2]);
		shm_turns_wake_all(m);
		for (got = 0; got < CAP + K;) {
			if (shm_recv(a, 0, SHM_LANES_INBOX, &(struct shm_msg){ 0 },
			    NULL, 0, NULL) == 0) {
				got++;
				continue;
			}
			(void)shm_wait(a, 0, SHM_LANES_INBOX, SHM_WAIT_SLEEP,
			    0, WAIT_MS * 1000000LL);
		}
		for (i = 0; i < K; i++)
			ck_assert_int_eq(shm_test_wait_exit(pids[i]), 0);
		/* What the lie left, the repair sets right. */
		(void)shm_mailbox_repair(a, 0, &r);
		ck_assert_uint_le(atomic_load(&m->turn_next) -
		    atomic_load(&m->turn_grant), 1u << 20);
	}
	atomic_store(&m->turn_out, 0x80000000u);
	ck_assert_int_gt(shm_mailbox_repair(a, 0, &r), 0);
	ck_assert_uint_eq(atomic_load(&m->turn_out), 0);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * The consumer is SIGKILLed while senders wait in line (it took one
 * message and then stopped taking): actord's reap (shm_reap, recovery,
 * repair) keeps the line, and the next consumer lets them in, in order.
 */
START_TEST(test_consumer_killed)
{
	enum { K = 4 };
	struct shm_arena *a = shm_test_arena(1, CAP, 128, SHM_OVERFLOW_BLOCK);
	struct shm_producer *p;
	struct shm_repair r;
	pid_t		 pids[K], consumer;
	int		 order[K], n = 0;
	unsigned	 i;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	send_fill(p, CAP);
	line_up(a, pids, K, SHM_NO_TIMEOUT);
	consumer = fork();
	ck_assert_int_ge(consumer, 0);
	if (consumer == 0) {
		(void)take(a);
		pause();
		_exit(0);
	}
	/* The freed cell goes to the first in line, the consumer dies. */
	wait_exited(pids[0]);
	ck_assert_int_eq(shm_test_wait_exit(pids[0]), 0);
	ck_assert_int_eq(kill(consumer, SIGKILL), 0);
	ck_assert_int_eq(shm_test_wait_exit(consumer), 128 + SIGKILL);
	ck_assert_int_ge(shm_reap(a, consumer, NULL), 0);
	ck_assert_int_ge(shm_consumer_recover(a, 0), 0);
	ck_assert_int_eq(shm_mailbox_repair(a, 0, &r), 0);
	ck_assert_uint_eq(shm_test_queued(a, 0), K - 1);
	for (i = 1; i < K; i++)
		let_in(a, pids[i], order, &n);
	take_rest(a, order, &n);
	ck_assert_int_eq(n, K);
	for (i = 0; i < K; i++)
		ck_assert_int_eq(order[i], (int)i);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/* The queue's words as a worker may write them: a lie that looks sane. */
static void
scribble_sane_lie(struct shm_arena *a)
{
	struct shm_mbox_local *mb = shm_mb(a, 0);

	atomic_fetch_add(&mb->m->turn_next, 5000);	/* nobody in it */
	atomic_store(&mb->m->turn_out, CAP);		/* every cell owed */
	atomic_store(&mb->m->turn_left[3], 77);
	atomic_store(&mb->lane[SHM_LANE_MAIN].ctl->queued, 1);
}

/*
 * A line of 5,000 tickets nobody holds, every free cell owed to a turn:
 * each word within its bounds, so the repair used to keep them, and the
 * next sender waited behind nobody until its timeout ("mailbox full"
 * after a worker scribbled and the mailbox was repaired).  With nobody in
 * line (no slot notes a ticket), the repair resets the queue, and a send
 * goes straight in, taking no ticket.
 */
START_TEST(test_repair_sane_lie)
{
	struct shm_arena *a = shm_test_arena(1, CAP, 128, SHM_OVERFLOW_BLOCK);
	struct shm_mbox	*m = shm_mb(a, 0)->m;
	struct shm_producer *p;
	struct shm_repair r;
	uint32_t	 next;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	scribble_sane_lie(a);
	ck_assert_int_gt(shm_mailbox_repair(a, 0, &r), 0);
	ck_assert_uint_eq(shm_test_queued(a, 0), 0);
	ck_assert_uint_eq(atomic_load(&m->turn_out), 0);
	ck_assert_uint_eq(atomic_load(&m->turn_left[3]), 0);
	ck_assert_uint_eq(atomic_load(
	    &shm_mb(a, 0)->lane[SHM_LANE_MAIN].ctl->queued), 0);
	next = atomic_load(&m->turn_next);
	send_fill(p, 1);
	ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &(struct shm_msg){
	    .tag = TAG_FILL }, NULL, 2000 * 1000000LL), 0);
	ck_assert_uint_eq(atomic_load(&m->turn_next), next);
	/* At rest, a repair changes nothing. */
	ck_assert_int_eq(shm_mailbox_repair(a, 0, &r), 0);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * The same lie, not repaired (the consumer lives): a send that may not
 * wait (an offer, a timeout of 0) takes a free cell without a ticket, and
 * one with a short timeout gets in too (a last look once out of time)
 * rather than fail as full with cells free.
 */
START_TEST(test_no_wait_passes_lie)
{
	struct shm_arena *a = shm_test_arena(1, CAP, 128, SHM_OVERFLOW_BLOCK);
	struct shm_mbox	*m = shm_mb(a, 0)->m;
	struct shm_msg	 msg = { .tag = TAG_FILL };
	struct shm_producer *p;
	uint32_t	 next;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	scribble_sane_lie(a);
	next = atomic_load(&m->turn_next);
	ck_assert_int_eq(shm_offer(p, 0, SHM_LANE_MAIN, &msg, NULL), 0);
	ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &msg, NULL, 0), 0);
	ck_assert_uint_eq(atomic_load(&m->turn_next), next);
	ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &msg, NULL,
	    20 * 1000000LL), 0);
	ck_assert_uint_eq(shm_dl_total(a), 0);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * No convoy: K senders of M messages each wait in line behind a full
 * lane, more of them than half its cells.  Then the consumer takes every
 * message.  Each sender let in sends on while there is room, instead of
 * queueing again behind the line for each of its messages: far fewer
 * tickets taken than messages (about one per message when every send
 * joined the line while it was not empty: a sleep and a wake-up each).
 */
START_TEST(test_no_convoy)
{
	enum { K = 40, M = 50, LANE = 64 };
	struct shm_mailbox_layout mbox = shm_test_mbox(LANE, 128,
	    SHM_OVERFLOW_BLOCK);
	struct shm_layout l = { 1, &mbox, K + 8, 16 };
	struct shm_producer *p;
	struct shm_arena *a;
	struct timespec	 nap = { 0, 50000 };
	char		 err[SHM_ERRBUF];
	pid_t		 pids[K];
	unsigned	 i, got = 0;

	ck_assert_msg(shm_create(&l, "check-turns", &a, err, sizeof(err)) == 0,
	    "shm_create: %s", err);
	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	for (i = 0; i < LANE; i++)
		ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &(struct shm_msg){
		    .tag = TAG_FILL }, NULL, 0), 0);
	for (i = 0; i < K; i++) {
		pids[i] = shm_test_spawn_sender_to(a, 0, i, M, SHM_NO_TIMEOUT);
		ck_assert_msg(shm_test_waiting_senders(a, 0, i + 1, WAIT_MS),
		    "sender %u never queued", i);
	}
	while (got < LANE + K * M) {
		if (shm_recv(a, 0, SHM_LANES_INBOX, &(struct shm_msg){ 0 },
		    NULL, 0, NULL) == 0) {
			/* Slower than the senders: the line never empties. */
			if (++got % 4 == 0)
				nanosleep(&nap, NULL);
			continue;
		}
		(void)shm_wait(a, 0, SHM_LANES_INBOX, SHM_WAIT_SLEEP, 0,
		    WAIT_MS * 1000000LL);
	}
	for (i = 0; i < K; i++)
		ck_assert_int_eq(shm_test_wait_exit(pids[i]), 0);
	ck_assert_msg(atomic_load(&shm_mb(a, 0)->m->turn_next) < K * M / 5,
	    "%u tickets for %u messages", atomic_load(&shm_mb(a,
	    0)->m->turn_next), K * M);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * A wake-up for one turn wakes that sender only: in any line of up to
 * SHM_TURN_WAITERS tickets (1,000 senders into one mailbox, as bench-scale
 * runs it, and across the wrap of the counter) no two tickets sleep on the
 * same futex cell with the same bit.  (With 256 cell-bits, a line of 1,000
 * woke some 4 senders per turn, 3 of which slept again.)
 */
START_TEST(test_wake_own_bit)
{
	static const uint32_t from[] = { 0, 5000, UINT32_MAX - 600 };
	struct shm_arena *a = shm_test_arena(1, CAP, 128, SHM_OVERFLOW_BLOCK);
	struct shm_mbox	*m = shm_mb(a, 0)->m;
	uint32_t	 seen[SHM_TURN_CELLS], t, i, bit;
	_Atomic uint32_t *cell;
	unsigned	 f;

	ck_assert_uint_ge(SHM_TURN_WAITERS, 1000);
	for (f = 0; f < sizeof(from) / sizeof(from[0]); f++) {
		memset(seen, 0, sizeof(seen));
		for (i = 0; i < SHM_TURN_WAITERS; i++) {
			t = from[f] + i;
			cell = shm_turn_cell(m, t);
			bit = shm_turn_bit(t);
			ck_assert_uint_eq(__builtin_popcount(bit), 1);
			ck_assert_msg((seen[cell - m->turn_cell] & bit) == 0,
			    "ticket %u shares its cell and bit", t);
			seen[cell - m->turn_cell] |= bit;
		}
	}
	shm_detach(a);
}
END_TEST

/*
 * A grant bounded by the turns out at once (TURN_BATCH) with the lane at
 * most half full wakes those it lets in and nobody else: the consumer
 * grants the next ones once these are used, so the new front is not
 * woken to poll (it would only sleep again: a wake-up per batch, a third
 * of them with two let in).  A grant bounded by the free cells, or made
 * above the half mark (where the consumer grants none), wakes the new
 * front too, which polls for the next cells freed.
 */
/* Take n messages off the lane, looking for nobody. */
static void
take_n(struct shm_arena *a, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX,
		    &(struct shm_msg){ 0 }, NULL, 0, NULL), 0);
}

START_TEST(test_batch_wakes_no_front)
{
	enum { LANE = 8 };
	struct shm_arena *a = shm_test_arena(1, LANE, 128,
	    SHM_OVERFLOW_BLOCK);
	struct shm_mbox_local *mb = shm_mb(a, 0);
	struct shm_producer *p;
	struct shm_counters c;
	unsigned	 granted, woken;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	/* Ten tickets in line (held by nobody: only the wake-ups count). */
	atomic_store(&mb->m->turn_next, 10);
	/* The lane empty: a batch of turns, no front. */
	granted = shm_turns_grant(mb);
	ck_assert_uint_ge(granted, 1);
	ck_assert_uint_lt(granted, LANE / 2);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.sender_wakeups, granted);
	woken = granted;
	/* Those turns used; one cell free: its turn, and the new front. */
	atomic_store(&mb->m->turn_out, 0);
	send_fill(p, LANE - 1);
	ck_assert_uint_eq(shm_turns_grant(mb), 1);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.sender_wakeups, woken + 2);
	woken += 2;
	/* Three cells free, the lane above half full: the front too. */
	atomic_store(&mb->m->turn_out, 0);
	take_n(a, 2);
	granted = shm_turns_grant(mb);
	ck_assert_uint_ge(granted, 1);
	ck_assert_uint_lt(granted, 3);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.sender_wakeups, woken + granted + 1);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * A sender let in from the line (its pass) sends on while more cells are
 * free than turns are owed, and counts them from the cells, not from
 * head: head is the consumer's line, which it writes for every message
 * it takes (pulled over by every such send, measured), and which a
 * consumer in a batch publishes only at its end.  So cells freed in a
 * batch count at once: inside the consumer's handler for its third
 * message, two cells are free and one turn is owed, and the pass holder
 * may send; at its first, no cell is free and it may not.
 */
struct mid_batch {
	struct shm_producer *p;
	struct shm_mbox_local *mb;
	unsigned	 n;
	bool		 passed[3];
};

static int
mid_batch_handler(void *arg, enum shm_lane lane, const struct shm_msg *m,
    const void *payload)
{
	struct mid_batch *b = arg;

	(void)lane;
	(void)m;
	(void)payload;
	b->p->pass_mbox = 1;		/* mailbox 0's index + 1 */
	b->p->pass_left = 4;
	b->passed[b->n] = shm_turns_may_pass(b->p, b->mb);
	return ++b->n == 3;
}

START_TEST(test_pass_counts_freed_cells)
{
	enum { LANE = 8 };
	struct shm_arena *a = shm_test_arena(1, LANE, 128,
	    SHM_OVERFLOW_BLOCK);
	struct mid_batch b = { .mb = shm_mb(a, 0) };

	ck_assert_int_eq(shm_producer_open(a, &b.p), 0);
	send_fill(b.p, LANE);
	/* One in line (held by nobody), one turn owed. */
	atomic_store(&b.mb->m->turn_next, 1);
	atomic_store(&b.mb->m->turn_out, 1);
	ck_assert_int_eq(shm_drain(a, 0, SHM_LANE_BIT(SHM_LANE_MAIN), 0,
	    mid_batch_handler, &b), 3);
	ck_assert(!b.passed[0]);
	ck_assert(b.passed[2]);
	shm_producer_close(b.p);
	shm_detach(a);
}
END_TEST

/* Voluntary context switches of pid so far (its sleeps), or -1. */
static long
sleeps_of(pid_t pid)
{
	char	 path[64], line[256];
	long	 v = -1;
	FILE	*f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/*
 * A sender far back in line sleeps longer between its looks at the line
 * than one near the front (turns.c, lost_look): 1,000 tickets behind, it
 * looks every 164 ms, not every 64 ms, so in 300 ms it wakes at most
 * twice whatever the load (a late wake-up only makes it fewer); every
 * 64 ms it woke four or five times, each a sleep and a wake-up for
 * nothing while the line moved (a third of the senders' sleeps in
 * bench-scale's fan-in at P = 1,000).  The lane stays full and the line
 * does not move: the sender never leaves it.
 */
START_TEST(test_far_back_looks_less)
{
	struct shm_arena *a = shm_test_arena(1, CAP, 128, SHM_OVERFLOW_BLOCK);
	struct timespec	 ms100 = { 0, 100000000 }, ms300 = { 0, 300000000 };
	struct shm_producer *p;
	long		 s0, s1;
	pid_t		 pid;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	send_fill(p, CAP);
	/* 1,000 tickets ahead, held by nobody, none granted. */
	atomic_store(&shm_mb(a, 0)->m->turn_next, 1000);
	pid = shm_test_spawn_sender(a, 0, 1, 1);
	ck_assert(shm_test_waiting_senders(a, 0, 1001, WAIT_MS));
	nanosleep(&ms100, NULL);		/* asleep by now */
	s0 = sleeps_of(pid);
	nanosleep(&ms300, NULL);
	s1 = sleeps_of(pid);
	ck_assert_int_ge(s0, 0);
	ck_assert_msg(s1 - s0 <= 2, "%ld looks in 300 ms", s1 - s0);
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(shm_test_wait_exit(pid), 128 + SIGKILL);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/* A send that does not block takes no ticket and wakes nobody. */
START_TEST(test_unblocked_send_no_turn)
{
	struct shm_arena *a = shm_test_arena(1, CAP, 128, SHM_OVERFLOW_BLOCK);
	struct shm_producer *p;
	struct shm_counters c;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	send_fill(p, CAP);
	ck_assert_uint_eq(atomic_load(&shm_mb(a, 0)->m->turn_next), 0);
	ck_assert_uint_eq(atomic_load(
	    &shm_mb(a, 0)->lane[SHM_LANE_MAIN].ctl->queued), 0);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.sender_wakeups, 0);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

static Suite *
turns_suite(void)
{
	Suite	*s = suite_create("shm_turns");
	TCase	*tc = tcase_create("turns");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_fifo_order);
	tcase_add_test(tc, test_dead_tickets);
	tcase_add_test(tc, test_timeout_in_line);
	tcase_add_test(tc, test_scribbled_turns);
	tcase_add_test(tc, test_consumer_killed);
	tcase_add_test(tc, test_unblocked_send_no_turn);
	tcase_add_test(tc, test_repair_sane_lie);
	tcase_add_test(tc, test_no_wait_passes_lie);
	tcase_add_test(tc, test_no_convoy);
	tcase_add_test(tc, test_wake_own_bit);
	tcase_add_test(tc, test_batch_wakes_no_front);
	tcase_add_test(tc, test_pass_counts_freed_cells);
	tcase_add_test(tc, test_far_back_looks_less);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(turns_suite());
}
