/*
 * check_shm_crash.c: the mailboxes while processes die and memory is
 * scribbled on, and wake-ups under stress.  A producer is SIGKILLed between
 * claim and publish (stopped there by the test hook), an ambiguous claim is
 * not released, garbage in cells is refused and counted, and two processes
 * sleep and wake each other a few million times without losing one.
 */
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm/shm.h"
#include "tests/check_shm_util.h"
#include "tests/lib/tcheck.h"

#define SEC	1000000000LL

static void
stop_self(void *arg)
{
	(void)arg;
	raise(SIGSTOP);
}

/* A child that sends tags [from, to) then tag `hooked` with the hook set. */
static pid_t
spawn_stopper(struct shm_arena *a, unsigned from, unsigned to,
    unsigned hooked)
{
	struct shm_producer *p;
	struct shm_msg	 m;
	unsigned	 i;
	pid_t		 pid;
	int		 st;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (shm_producer_open(a, &p) != 0)
			_exit(10);
		memset(&m, 0, sizeof(m));
		for (i = from; i < to; i++) {
			m.tag = i;
			if (shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0) != 0)
				_exit(11);
		}
		shm_producer_set_hook(p, stop_self, NULL);
		m.tag = hooked;
		_exit(shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0) == 0 ? 0 :
		    12);
	}
	/* Wait until it stopped in the hook, i.e. holds a claimed cell. */
	ck_assert_int_eq(waitpid(pid, &st, WUNTRACED), pid);
	ck_assert_msg(WIFSTOPPED(st), "child did not stop: %#x", st);
	return pid;
}

static void
send_tag(struct shm_producer *p, unsigned tag)
{
	struct shm_msg m;

	memset(&m, 0, sizeof(m));
	m.tag = tag;
	ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0), 0);
}

/* A consumer child: receives exactly these tags in order, then exits 0. */
static pid_t
spawn_consumer(struct shm_arena *a, const unsigned *tags, unsigned n)
{
	struct shm_msg	 m;
	unsigned	 i;
	pid_t		 pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid != 0)
		return pid;
	for (i = 0; i < n; i++) {
		if (shm_recv_wait(a, 0, SHM_LANES_INBOX, SHM_WAIT_SLEEP, 0,
		    20 * SEC, &m, NULL, 0, NULL) != 0)
			_exit(20 + i);
		if (m.tag != tags[i])
			_exit(50 + i);
	}
	_exit(0);
}

static void
die_now(void *arg)
{
	(void)arg;
	_exit(9);
}

/*
 * A drop_oldest sender killed after taking the oldest message off the
 * head and before writing its dead letter: the cell stays marked, nobody
 * else frees it, and shm_reap writes the dead letter and frees it.  The
 * next message is then delivered.  Before the STEALING mark, the consumer
 * freed such a cell and the dropped message left no trace.
 */
START_TEST(test_killed_stealer_dead_letters)
{
	struct shm_arena *a = shm_test_arena(1, 2, 128,
	    SHM_OVERFLOW_DROP_OLDEST);
	struct shm_producer *p, *q;
	struct shm_dead_letter d;
	struct shm_counters c;
	struct shm_msg	 m;
	uint64_t	 cur = 0;
	unsigned	 released;
	pid_t		 pid;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	send_tag(p, 1);
	send_tag(p, 2);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (shm_producer_open(a, &q) != 0)
			_exit(2);
		shm_producer_set_steal_hook(q, die_now, NULL);
		memset(&m, 0, sizeof(m));
		m.tag = 3;
		(void)shm_send(q, 0, SHM_LANE_MAIN, &m, NULL, 0);
		_exit(0);		/* the hook did not fire */
	}
	ck_assert_int_eq(shm_test_wait_exit(pid), 9);
	/* Marked, not freed: the consumer waits for it, takes nothing. */
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0, NULL),
	    SHM_EEMPTY);
	ck_assert_int_eq(shm_test_count_dl(a, SHM_DL_DROPPED_OLDEST), 0);
	ck_assert_int_ge(shm_reap(a, pid, &released), 1);
	ck_assert_int_eq(shm_dl_read(a, &cur, &d), 1);
	ck_assert_uint_eq(d.reason, SHM_DL_DROPPED_OLDEST);
	ck_assert_uint_eq(d.msg.tag, 1);
	ck_assert_int_eq(shm_dl_read(a, &cur, &d), 0);
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0, NULL),
	    0);
	ck_assert_uint_eq(m.tag, 2);
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0, NULL),
	    SHM_EEMPTY);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.dropped, 1);
	send_tag(p, 4);		/* still a working lane */
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0, NULL),
	    0);
	ck_assert_uint_eq(m.tag, 4);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * A producer killed between claim and publish wedges the lane until
 * shm_reap releases the cell; then everything after it is delivered, and
 * the sleeping consumer is woken.
 */
START_TEST(test_kill_mid_send)
{
	static const unsigned tags[] = { 0, 1, 2, 3, 4 };
	struct shm_arena *a = shm_test_arena(1, 16, 128, SHM_OVERFLOW_BLOCK);
	struct shm_producer *p;
	struct shm_counters c;
	struct shm_msg	 m;
	unsigned	 released;
	pid_t		 sender, consumer;
	int		 rc, i;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	sender = spawn_stopper(a, 0, 3, 99);
	/* Behind the claimed cell: published, but not deliverable yet. */
	send_tag(p, 3);
	send_tag(p, 4);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0,
		    NULL), 0);
		ck_assert_uint_eq(m.tag, (unsigned)i);
	}
	/* 3 and 4 are published, but wait behind the claimed cell. */
	ck_assert(!shm_pending(a, 0, SHM_LANES_INBOX));
	ck_assert_int_eq(shm_wait(a, 0, SHM_LANES_INBOX, SHM_WAIT_SLEEP, 0,
	    SEC / 10), SHM_ETIMEDOUT);
	consumer = spawn_consumer(a, tags + 3, 2);
	ck_assert_int_eq(kill(sender, SIGKILL), 0);
	ck_assert_int_eq(shm_test_wait_exit(sender), 128 + SIGKILL);
	ck_assert_int_eq(shm_test_count_dl(a, SHM_DL_SENDER_DIED), 0);
	for (i = 0; i < 100; i++) {
		rc = shm_reap(a, sender, &released);
		if (rc != SHM_EAGAIN)
			break;
		usleep(10000);
	}
	ck_assert_int_ge(rc, 1);
	ck_assert_uint_eq(released, 1);
	ck_assert_int_eq(shm_test_wait_exit(consumer), 0);
	ck_assert_int_eq(shm_test_count_dl(a, SHM_DL_SENDER_DIED), 1);
	shm_counters(a, 0, &c);
	ck_assert_uint_eq(c.released, 1);
	ck_assert_uint_eq(c.dequeued, 5);
	ck_assert_uint_eq(c.depth, 0);
	/* The lane goes on working, on the cells of the next lap too. */
	for (i = 0; i < 40; i++) {
		send_tag(p, 100 + i);
		ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0,
		    NULL), 0);
		ck_assert_uint_eq(m.tag, 100 + i);
	}
	/* Reaping again finds nothing. */
	ck_assert_int_eq(shm_reap(a, sender, &released), 0);
	ck_assert_uint_eq(released, 0);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * A dead producer whose record names the same cell as a live producer's is
 * ambiguous: the cell is not released, and reap says try again.  Once the
 * live one publishes, the retry frees the slot and releases nothing.
 */
START_TEST(test_ambiguous_claim)
{
	struct shm_arena *a = shm_test_arena(1, 16, 128, SHM_OVERFLOW_BLOCK);
	struct shm_slot	*live = NULL, *dead = NULL;
	struct shm_msg	 m;
	unsigned	 released, i;
	pid_t		 owner, ghost;
	int		 rc;

	owner = spawn_stopper(a, 0, 0, 50);
	ghost = fork();
	ck_assert_int_ge(ghost, 0);
	if (ghost == 0) {
		struct shm_producer *p;

		_exit(shm_producer_open(a, &p) == 0 ? 0 : 1);
	}
	ck_assert_int_eq(shm_test_wait_exit(ghost), 0);
	for (i = 0; i < a->nslots; i++) {
		if (atomic_load(&a->slots[i].pid) == owner)
			live = &a->slots[i];
		if (atomic_load(&a->slots[i].pid) == ghost)
			dead = &a->slots[i];
	}
	ck_assert_ptr_nonnull(live);
	ck_assert_ptr_nonnull(dead);
	ck_assert_uint_eq(REC_KIND(atomic_load(&live->rec_ring)), REC_INTENT);
	/* The ghost died as a CAS loser on the very same cell. */
	atomic_store(&dead->rec_pos, atomic_load(&live->rec_pos));
	atomic_store(&dead->rec_ring, atomic_load(&live->rec_ring));
	ck_assert_int_eq(shm_reap(a, ghost, &released), SHM_EAGAIN);
	ck_assert_uint_eq(released, 0);
	ck_assert_uint_eq(cell_seq(&shm_mb(a, 0)->lane[0], 0, memory_order_seq_cst),
	    0);
	ck_assert_uint_eq(shm_dl_total(a), 0);
	/* The owner goes on and publishes. */
	ck_assert_int_eq(kill(owner, SIGCONT), 0);
	ck_assert_int_eq(shm_test_wait_exit(owner), 0);
	rc = shm_reap(a, ghost, &released);
	ck_assert_int_eq(rc, 1);
	ck_assert_uint_eq(released, 0);
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0, NULL),
	    0);
	ck_assert_uint_eq(m.tag, 50);
	ck_assert_uint_eq(shm_dl_total(a), 0);
	shm_detach(a);
}
END_TEST

/*
 * Garbage in cells: a length past the cell, a wild sequence number in a
 * published cell, reserved flags, a wild number in a free cell.  Each is
 * refused and counted, the consumer survives and delivers the rest.
 */
START_TEST(test_garbage)
{
	static const unsigned tags[] = { 0, 4, 5, 6, 7 };
	struct shm_arena *a = shm_test_arena(1, 16, 128, SHM_OVERFLOW_BLOCK);
	struct shm_lane_local *l = &shm_mb(a, 0)->lane[SHM_LANE_MAIN];
	struct shm_producer *p;
	struct shm_counters c;
	struct shm_msg	 m;
	unsigned	 i;
	pid_t		 consumer;
	int		 rc;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	for (i = 0; i < 5; i++)
		send_tag(p, i);
	lane_cell(l, 1)->msg.len = 100000;
	cell_seq_set(l, 2, 0xdeadbeefULL, memory_order_seq_cst);
	lane_cell(l, 3)->msg.flags = 0xff000000u;
	cell_seq_set(l, 7, 12345, memory_order_seq_cst);	/* free, ahead */
	send_tag(p, 5);
	send_tag(p, 6);
	memset(&m, 0, sizeof(m));
	m.tag = 7;
	ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0),
	    SHM_EGARBLED);
	consumer = spawn_consumer(a, tags, 5);
	/* The consumer repairs the free cell when it gets there. */
	for (i = 0; i < 2000; i++) {
		rc = shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0);
		if (rc != SHM_EGARBLED)
			break;
		usleep(5000);
	}
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(shm_test_wait_exit(consumer), 0);
	shm_counters(a, 0, &c);
	ck_assert_uint_ge(c.garbled, 5);
	ck_assert_uint_eq(c.dequeued, 5);
	ck_assert_int_eq(shm_test_count_dl(a, SHM_DL_GARBLED), 3);
	/* Still a working lane. */
	for (i = 0; i < 40; i++) {
		send_tag(p, 200 + i);
		ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0,
		    NULL), 0);
		ck_assert_uint_eq(m.tag, 200 + i);
	}
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/* The mailbox (+ 1) the slot of pid holds a ticket of, or 0. */
static uint32_t
queued_on(struct shm_arena *a, pid_t pid)
{
	uint32_t i;

	for (i = 0; i < a->nslots; i++)
		if (atomic_load(&a->slots[i].pid) == pid)
			return atomic_load(&a->slots[i].turn_mbox);
	return 0;
}

/*
 * A sender killed while it sleeps on a full lane (block) claimed nothing:
 * reaping it releases nothing and writes no dead letter, gives its turn
 * up, and the lane still takes the next message once it has room.
 */
START_TEST(test_kill_blocked_sender)
{
	struct shm_arena *a = shm_test_arena(1, 4, 128, SHM_OVERFLOW_BLOCK);
	struct shm_producer *p;
	struct shm_msg	 m;
	unsigned	 released, i;
	pid_t		 pid;
	int		 st;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	for (i = 0; i < 4; i++)
		send_tag(p, i);
	pid = shm_test_spawn_sender(a, 0, 9, 1);
	/* Stop it where it counts as a waiter (it looks again every ms). */
	for (i = 0; i < 1000; i++) {
		ck_assert_int_eq(shm_test_sleeping_senders(a, 0, 5000), 1);
		ck_assert_int_eq(kill(pid, SIGSTOP), 0);
		ck_assert_int_eq(waitpid(pid, &st, WUNTRACED), pid);
		if (shm_test_queued(a, 0) == 1 && queued_on(a, pid) == 1)
			break;
		ck_assert_int_eq(kill(pid, SIGCONT), 0);
	}
	ck_assert_uint_eq(queued_on(a, pid), 1);
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(shm_test_wait_exit(pid), 128 + SIGKILL);
	ck_assert_int_eq(shm_reap(a, pid, &released), 1);
	ck_assert_uint_eq(released, 0);
	ck_assert_uint_eq(shm_dl_total(a), 0);
	/* Its turn went with it: nobody is owed one, nobody waits. */
	ck_assert_int_eq((int32_t)atomic_load(&shm_mb(a, 0)->m->turn_out), 0);
	ck_assert_uint_eq(shm_test_queued(a, 0), 0);
	ck_assert_uint_eq(queued_on(a, pid), 0);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0,
		    NULL), 0);
		ck_assert_uint_eq(m.tag, i);
	}
	send_tag(p, 4);
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0, NULL),
	    0);
	ck_assert_uint_eq(m.tag, 4);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * What a dead consumer or a dead drop_oldest sender leaves behind: a cell
 * taken off the head (head moved past it) but never freed.  Recovery and
 * reap free it, and the lane fills and drains over it again.
 */
START_TEST(test_recover_taken)
{
	struct shm_arena *a = shm_test_arena(1, 4, 128,
	    SHM_OVERFLOW_DROP_OLDEST);
	struct shm_lane_local *l = &shm_mb(a, 0)->lane[SHM_LANE_MAIN];
	struct shm_slot	*s = NULL;
	struct shm_producer *p;
	struct shm_msg	 m;
	unsigned	 released, i;
	pid_t		 ghost;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	send_tag(p, 0);
	send_tag(p, 1);
	/* A consumer died after moving head past 0 and 1, before freeing. */
	cell_seq_set(l, 0, 1 | SEQ_TAKEN, memory_order_seq_cst);
	cell_seq_set(l, 1, 2 | SEQ_TAKEN, memory_order_seq_cst);
	atomic_store(&l->ctl->head, 2);
	ck_assert_int_eq(shm_consumer_recover(a, 0), 2);
	ck_assert_uint_eq(cell_seq(l, 0, memory_order_seq_cst), 4);
	/* A drop_oldest sender died the same way, its record says STEAL. */
	send_tag(p, 2);
	ghost = fork();
	ck_assert_int_ge(ghost, 0);
	if (ghost == 0) {
		struct shm_producer *q;

		_exit(shm_producer_open(a, &q) == 0 ? 0 : 1);
	}
	ck_assert_int_eq(shm_test_wait_exit(ghost), 0);
	for (i = 0; i < a->nslots; i++)
		if (atomic_load(&a->slots[i].pid) == ghost)
			s = &a->slots[i];
	ck_assert_ptr_nonnull(s);
	cell_seq_set(l, 2, 3 | SEQ_TAKEN, memory_order_seq_cst);
	atomic_store(&l->ctl->head, 3);
	atomic_store(&s->rec_pos, 2);
	atomic_store(&s->rec_ring, l->ring_id << 2 | REC_STEAL);
	ck_assert_int_eq(shm_reap(a, ghost, &released), 1);
	ck_assert_uint_eq(cell_seq(l, 2, memory_order_seq_cst), 2 + 4);
	/* The lane is whole: four in, four out, in order. */
	for (i = 0; i < 4; i++)
		send_tag(p, 10 + i);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0,
		    NULL), 0);
		ck_assert_uint_eq(m.tag, 10 + i);
	}
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0, NULL),
	    SHM_EEMPTY);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * Wake-ups under stress, streaming: a producer floods a small lane in
 * bursts, the consumer never spins (it sleeps whenever the lane is empty)
 * and the producer sleeps whenever it is full.  Every message must arrive
 * in order; a lost wake-up shows as a wait running out (fail).
 */
START_TEST(test_wake_stream)
{
	struct shm_arena *a = shm_test_arena(1, 8, 64, SHM_OVERFLOW_BLOCK);
	struct shm_counters c;
	struct shm_msg	 m;
	uint32_t	 body[2];
	unsigned	 N = 600000 / shm_test_scale(), i;
	pid_t		 pid;
	int		 rc;

	uint64_t	 t0 = shm_now_ns();

	pid = shm_test_spawn_sender(a, 0, 3, N);
	for (i = 0; i < N; i++) {
		rc = shm_recv_wait(a, 0, SHM_LANES_INBOX, SHM_WAIT_SLEEP, 0,
		    5 * SEC, &m, body, sizeof(body), NULL);
		ck_assert_msg(rc == 0, "message %u: %s", i, shm_strerror(rc));
		ck_assert_uint_eq(body[1], i);
	}
	ck_assert_int_eq(shm_test_wait_exit(pid), 0);
	shm_counters(a, 0, &c);
	ck_assert_uint_eq(c.dequeued, N);
	fprintf(stderr, "wake_stream: %u messages, %llu consumer wake-ups, "
	    "%.2f s\n", N, (unsigned long long)c.wakeups,
	    (double)(shm_now_ns() - t0) / 1e9);
	ck_assert_uint_gt(c.wakeups, 0);
	shm_detach(a);
}
END_TEST

/*
 * Wake-ups under stress, ping-pong: every message finds the other side
 * asleep on its futex (pure sleep mode), request in one mailbox, answer in
 * the other's reply lane.  A million round trips are two million
 * sleep/wake cycles (about 50 s here); a lost wake-up shows as a 5 s wait
 * running out.  Sanitized builds do a twentieth of it.
 */
START_TEST(test_wake_pingpong)
{
	struct shm_arena *a = shm_test_arena(2, 8, 64, SHM_OVERFLOW_BLOCK);
	struct shm_producer *p;
	struct shm_msg	 m;
	unsigned	 N = shm_test_scale() == 1 ? 1000000 : 50000, i;
	uint64_t	 t0 = shm_now_ns();
	pid_t		 pid;
	int		 rc;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (shm_producer_open(a, &p) != 0)
			_exit(10);
		for (i = 0; i < N; i++) {
			if (shm_recv_wait(a, 1, SHM_LANES_INBOX,
			    SHM_WAIT_SLEEP, 0, 5 * SEC, &m, NULL, 0,
			    NULL) != 0)
				_exit(11);
			if (m.tag != i)
				_exit(12);
			if (shm_send(p, 0, SHM_LANE_REPLY, &m, NULL, 0) != 0)
				_exit(13);
		}
		_exit(0);
	}
	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	memset(&m, 0, sizeof(m));
	for (i = 0; i < N; i++) {
		m.tag = i;
		ck_assert_int_eq(shm_send(p, 1, SHM_LANE_MAIN, &m, NULL, 0), 0);
		rc = shm_recv_wait(a, 0, SHM_LANE_BIT(SHM_LANE_REPLY),
		    SHM_WAIT_SLEEP, 0, 5 * SEC, &m, NULL, 0, NULL);
		ck_assert_msg(rc == 0, "round %u: %s", i, shm_strerror(rc));
		ck_assert_uint_eq(m.tag, i);
	}
	ck_assert_int_eq(shm_test_wait_exit(pid), 0);
	fprintf(stderr, "wake_pingpong: %u round trips, %.2f s\n", N,
	    (double)(shm_now_ns() - t0) / 1e9);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/* Until mailbox 0's consumer sleeps on its main lane: 1, or 0 after 5 s. */
static int
main_lane_asleep(struct shm_arena *a)
{
	struct timespec ts = { 0, 1000000 };
	int	 i;

	for (i = 0; i < 5000; i++) {
		if (atomic_load(&shm_mb(a, 0)->m->sleeping) &
		    SHM_LANE_BIT(SHM_LANE_MAIN))
			return 1;
		nanosleep(&ts, NULL);
	}
	return 0;
}

struct early_wake {
	struct shm_arena *a;
	uint64_t	 wakeups;	/* when the copy was about to begin */
	int		 slept_again;
};

/* The sender's hook, between its claim and its copy. */
static void
before_copy(void *arg)
{
	struct early_wake *e = arg;

	e->wakeups = atomic_load(&shm_mb(e->a, 0)->m->wakeups);
	e->slept_again = main_lane_asleep(e->a);
}

static void
pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(set), &set), 0);
}

/*
 * A consumer (on CPU ccpu) that sleeps after every message, sent one by
 * a producer on CPU 0: the consumer's wake-ups when the producer's copy
 * was about to begin, and whether it had slept again by then.
 */
static struct early_wake
wake_before_copy(int ccpu, uint64_t *total)
{
	struct shm_arena *a = shm_test_arena(1, 8, 64, SHM_OVERFLOW_REJECT);
	struct early_wake e = { a, 0, 0 };
	struct shm_producer *p;
	struct shm_msg	 m;
	cpu_set_t	 was;
	pid_t		 pid;

	ck_assert_int_eq(sched_getaffinity(0, sizeof(was), &was), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		pin_to(ccpu);
		if (shm_recv_wait(a, 0, SHM_LANES_INBOX, SHM_WAIT_SLEEP, 0,
		    5 * SEC, &m, NULL, 0, NULL) != 0)
			_exit(10);
		_exit(m.tag == 42 ? 0 : 11);
	}
	pin_to(0);
	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	ck_assert(main_lane_asleep(a));
	shm_producer_set_hook(p, before_copy, &e);
	memset(&m, 0, sizeof(m));
	m.tag = 42;
	ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0), 0);
	ck_assert_int_eq(shm_test_wait_exit(pid), 0);
	*total = atomic_load(&shm_mb(a, 0)->m->wakeups);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(was), &was), 0);
	shm_producer_close(p);
	shm_detach(a);
	return e;
}

/*
 * A consumer that sleeps after every message on another CPU is woken
 * before its sender claims and copies (the wake-up's latency then
 * overlaps the copy), and the early wake-up is only a hint: the
 * consumer, finding nothing, sleeps again, and the look after the
 * publish wakes it for the message.  On the sender's own CPU it is not
 * woken early: it could only preempt the sender, find nothing and sleep
 * again; the look after the publish wakes it once.
 */
START_TEST(test_wake_before_copy)
{
	struct early_wake e;
	uint64_t	 total;

	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
		e = wake_before_copy(1, &total);
		ck_assert_uint_eq(e.wakeups, 1);	/* before the copy */
		ck_assert(e.slept_again);		/* and found nothing */
		ck_assert_uint_eq(total, 2);
	}
	e = wake_before_copy(0, &total);
	ck_assert_uint_eq(e.wakeups, 0);		/* not early */
	ck_assert(e.slept_again);			/* still asleep */
	ck_assert_uint_eq(total, 1);
}
END_TEST

static Suite *
crash_suite(void)
{
	Suite	*s = suite_create("shm_crash");
	TCase	*tc = tcase_create("crash");
	TCase	*ts = tcase_create("stress");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_kill_mid_send);
	tcase_add_test(tc, test_ambiguous_claim);
	tcase_add_test(tc, test_garbage);
	tcase_add_test(tc, test_recover_taken);
	tcase_add_test(tc, test_kill_blocked_sender);
	tcase_add_test(tc, test_killed_stealer_dead_letters);
	suite_add_tcase(s, tc);
	tcase_set_timeout(ts, 240);
	tcase_add_test(ts, test_wake_before_copy);
	tcase_add_test(ts, test_wake_stream);
	tcase_add_test(ts, test_wake_pingpong);
	suite_add_tcase(s, ts);
	return s;
}

int
main(void)
{
	return tcheck_run(crash_suite());
}
