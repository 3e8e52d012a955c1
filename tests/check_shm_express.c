/*
 * check_shm_express.c: the express path (shm/express.c): a hot producer
 * owns a main lane and appends without a locked instruction; another
 * sender takes the lane back; FIFO order per producer across the switches;
 * capacity, policies and counters as on any claim; a consumer asleep is
 * woken; an owner killed mid-send is settled by shm_reap or by the next
 * sender; an owner stopped mid-send holds others only to their deadline;
 * a fork child of the owner cannot send with its copy of the producer;
 * an owner that fills the lane waits for room keeping it, within its
 * policy and timeout, and yields it to a sender that wants it; and a
 * worker's scribbles on the words never crash, hang or read out of the
 * arena.
 */
#include <sys/wait.h>

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm/shm.h"
#include "tests/check_shm_util.h"
#include "tests/lib/tcheck.h"

#define SEC	1000000000LL
#define HOT	(SHM_OWN_STREAK + 8)	/* sends that take the lane */

static struct shm_mbox *
mbox(struct shm_arena *a)
{
	return shm_mb(a, 0)->m;
}

static uint64_t
raw_tail(struct shm_arena *a)
{
	return atomic_load(&mbox(a)->lane[SHM_LANE_MAIN].tail);
}

/* The record of the slot own_slot names. */
static _Atomic uint64_t *
owner_busy(struct shm_arena *a)
{
	uint32_t o = atomic_load(&mbox(a)->own_slot);

	ck_assert(o != 0 && o <= a->nslots);
	return &a->slots[o - 1].own_busy;
}

static bool
owned(struct shm_arena *a)
{
	return (raw_tail(a) & TAIL_OWNED) != 0;
}

static int
send_tag(struct shm_producer *p, unsigned tag, int64_t timeout_ns)
{
	struct shm_msg m;

	memset(&m, 0, sizeof(m));
	m.tag = tag;
	return shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, timeout_ns);
}

static void
send_ok(struct shm_producer *p, unsigned tag)
{
	int rc = send_tag(p, tag, 0);

	ck_assert_msg(rc == 0, "send of %u: %s", tag, shm_strerror(rc));
}

static void
recv_tag(struct shm_arena *a, unsigned tag)
{
	struct shm_msg m;

	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0, NULL),
	    0);
	ck_assert_uint_eq(m.tag, tag);
}

static void
recv_empty(struct shm_arena *a)
{
	struct shm_msg m;

	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0, NULL),
	    SHM_EEMPTY);
}

/* p takes the lane, one message at a time: the lane is empty after. */
static void
take_lane(struct shm_arena *a, struct shm_producer *p)
{
	unsigned i;

	for (i = 0; i < HOT; i++) {
		send_ok(p, i);
		recv_tag(a, i);
	}
	ck_assert(owned(a));
}

static void
die_now(void *arg)
{
	(void)arg;
	_exit(9);
}

static void
stop_self(void *arg)
{
	(void)arg;
	raise(SIGSTOP);
}

/*
 * A producer sending to the same mailbox takes its main lane after
 * SHM_OWN_STREAK claims, then appends with no claim record; another
 * sender takes it back, and each one's messages stay in its order.
 */
START_TEST(test_owns_and_gives_back)
{
	struct shm_arena *a = shm_test_arena(1, 1024, 128,
	    SHM_OVERFLOW_REJECT);
	struct shm_producer *p, *q;
	struct shm_counters c;
	unsigned	 i;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	ck_assert_int_eq(shm_producer_open(a, &q), 0);
	for (i = 0; i < HOT; i++)
		send_ok(p, i);
	ck_assert_msg(owned(a), "a hot producer owns the lane");
	ck_assert_uint_eq(atomic_load(&p->slot->own_busy), 0);
	ck_assert_uint_eq(atomic_load(&p->slot->rec_ring), 0);
	send_ok(q, 10000);		/* takes it back */
	ck_assert(!owned(a));
	send_ok(p, HOT);
	for (i = 0; i < HOT; i++)
		recv_tag(a, i);
	recv_tag(a, 10000);
	recv_tag(a, HOT);
	recv_empty(a);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.enqueued, HOT + 2);
	ck_assert_uint_eq(c.dequeued, HOT + 2);
	ck_assert_uint_eq(c.depth, 0);
	shm_producer_close(p);
	shm_producer_close(q);
	shm_detach(a);
}
END_TEST

/*
 * Two producers in bursts, taking the lane from each other many times:
 * every message arrives once, each producer's in its order.
 */
START_TEST(test_fifo_across_switches)
{
	enum { N = 20000, BURST = 2000 };
	struct shm_arena *a = shm_test_arena(1, 4096, 128,
	    SHM_OVERFLOW_BLOCK);
	struct shm_msg	 m;
	uint32_t	 body[2], next[2] = { 0, 0 };
	pid_t		 pid[2];
	unsigned	 k, got = 0;
	int		 rc;

	for (k = 0; k < 2; k++)
		pid[k] = shm_test_spawn_sender(a, 0, k, N);
	while (got < 2 * N) {
		rc = shm_recv_wait(a, 0, SHM_LANES_INBOX, SHM_WAIT_SLEEP, 0,
		    20 * SEC, &m, body, sizeof(body), NULL);
		ck_assert_int_eq(rc, 0);
		ck_assert_uint_lt(body[0], 2);
		ck_assert_uint_eq(body[1], next[body[0]]);
		next[body[0]]++;
		got++;
		/* Let the other one take a burst now and then. */
		if (got % BURST == 0)
			usleep(100);
	}
	for (k = 0; k < 2; k++)
		ck_assert_int_eq(shm_test_wait_exit(pid[k]), 0);
	recv_empty(a);
	shm_detach(a);
}
END_TEST

/*
 * A child that sends M messages {id, i} in bursts of BURST with naps in
 * between, counting in owned[id] the bursts it ended owning the lane.
 */
static pid_t
spawn_burster(struct shm_arena *a, uint32_t id, unsigned M, unsigned burst,
    _Atomic unsigned *owned_by)
{
	struct shm_producer *p;
	struct shm_msg	 m;
	uint32_t	 body[2];
	unsigned	 i;
	pid_t		 pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid != 0)
		return pid;
	if (shm_producer_open(a, &p) != 0)
		_exit(10);
	memset(&m, 0, sizeof(m));
	m.len = sizeof(body);
	for (i = 0; i < M; i++) {
		body[0] = id;
		body[1] = i;
		if (shm_send(p, 0, SHM_LANE_MAIN, &m, body,
		    SHM_NO_TIMEOUT) != 0)
			_exit(11);
		if ((i + 1) % burst == 0) {
			if (p->own_ring != 0)
				atomic_fetch_add(&owned_by[id], 1);
			usleep(200 + 100 * id);
		}
	}
	shm_producer_close(p);
	_exit(0);
}

/*
 * Three producers in bursts long enough to take the lane, into one
 * consumer: the lane changes owner again and again, each change a
 * revoke racing the owner's sends, and every message arrives once, each
 * producer's in its order.
 */
START_TEST(test_owners_change)
{
	enum { P = 3, N = 12000 * P, BURST = 600 };
	struct shm_arena *a = shm_test_arena(1, 4096, 128,
	    SHM_OVERFLOW_BLOCK);
	_Atomic unsigned *owned_by;
	void		*shared;
	struct shm_msg	 m;
	uint32_t	 body[2], next[P] = { 0 };
	pid_t		 pid[P];
	unsigned	 k, got = 0, n = N / P / shm_test_scale(), total = 0;

	shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED |
	    MAP_ANONYMOUS, -1, 0);
	ck_assert(shared != MAP_FAILED);
	owned_by = shared;
	for (k = 0; k < P; k++)
		pid[k] = spawn_burster(a, k, n, BURST, owned_by);
	while (got < P * n) {
		ck_assert_int_eq(shm_recv_wait(a, 0, SHM_LANES_INBOX,
		    SHM_WAIT_SPIN_SLEEP, 20000, 20 * SEC, &m, body,
		    sizeof(body), NULL), 0);
		ck_assert_uint_lt(body[0], P);
		ck_assert_uint_eq(body[1], next[body[0]]);
		next[body[0]]++;
		got++;
	}
	for (k = 0; k < P; k++) {
		ck_assert_int_eq(shm_test_wait_exit(pid[k]), 0);
		total += owned_by[k];
	}
	recv_empty(a);
	ck_assert_msg(total >= 2, "the lane was owned at %u bursts' ends",
	    total);
	munmap(shared, 4096);
	shm_detach(a);
}
END_TEST

/*
 * The owner fills the lane: the physical capacity, then an effective one
 * below it (shm_mailbox_configure), refuse the next message as full with
 * its dead letter, exactly as for a claim by CAS.
 */
START_TEST(test_capacity)
{
	struct shm_arena *a = shm_test_arena(1, 512, 128,
	    SHM_OVERFLOW_REJECT);
	struct shm_producer *p;
	struct shm_counters c;
	unsigned	 i;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	take_lane(a, p);
	for (i = 0; i < 512; i++)
		send_ok(p, i);
	ck_assert_int_eq(send_tag(p, 512, 0), SHM_EFULL);
	ck_assert_uint_eq(shm_test_count_dl(a, SHM_DL_FULL), 1);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.depth, 512);
	ck_assert_uint_eq(c.full, 1);
	for (i = 0; i < 512; i++)
		recv_tag(a, i);
	recv_empty(a);
	/* An effective capacity of 100: the owner stops there too. */
	ck_assert_int_eq(shm_mailbox_configure(a, 0, 100, SHM_OVERFLOW_REJECT,
	    0), 0);
	take_lane(a, p);
	for (i = 0; i < 100; i++)
		send_ok(p, i);
	ck_assert_int_eq(send_tag(p, 100, 0), SHM_EFULL);
	for (i = 0; i < 100; i++)
		recv_tag(a, i);
	recv_empty(a);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/* drop_oldest under the owner: the oldest goes, as a dead letter. */
START_TEST(test_drop_oldest)
{
	struct shm_arena *a = shm_test_arena(1, 512, 128,
	    SHM_OVERFLOW_DROP_OLDEST);
	struct shm_producer *p;
	unsigned	 i;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	take_lane(a, p);
	for (i = 0; i < 513; i++)
		send_ok(p, i);
	ck_assert_uint_eq(shm_test_count_dl(a, SHM_DL_DROPPED_OLDEST), 1);
	for (i = 1; i < 513; i++)
		recv_tag(a, i);
	recv_empty(a);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * A consumer asleep is woken by the owner's publish: it would wait its
 * 20 s and fail without.
 */
START_TEST(test_wakes_sleeper)
{
	struct shm_arena *a = shm_test_arena(1, 1024, 128,
	    SHM_OVERFLOW_BLOCK);
	struct shm_producer *p;
	struct shm_msg	 m;
	unsigned	 i;
	pid_t		 pid;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	for (i = 0; i < HOT; i++)
		send_ok(p, i);
	ck_assert(owned(a));
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		for (i = 0; i < HOT + 3; i++) {
			if (shm_recv_wait(a, 0, SHM_LANES_INBOX,
			    SHM_WAIT_SLEEP, 0, 20 * SEC, &m, NULL, 0,
			    NULL) != 0)
				_exit(20);
			if (m.tag != i)
				_exit(21);
		}
		_exit(0);
	}
	for (i = HOT; i < HOT + 3; i++) {
		usleep(50000);		/* it drained and sleeps */
		send_ok(p, i);
		ck_assert(owned(a));
	}
	ck_assert_int_eq(shm_test_wait_exit(pid), 0);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * The consumer SIGKILLed with the owner's messages queued, reaped, and a
 * new one: it takes the rest in order, nothing lost, the owner still
 * sending on the express path; a system message goes before them.
 */
START_TEST(test_consumer_restarts)
{
	enum { N = 600 };
	struct shm_arena *a = shm_test_arena(1, 1024, 128,
	    SHM_OVERFLOW_BLOCK);
	struct shm_producer *p;
	struct shm_msg	 m;
	unsigned	 i;
	pid_t		 pid;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	take_lane(a, p);
	for (i = 0; i < N; i++)
		send_ok(p, i);
	ck_assert(owned(a));
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		for (i = 0; i < N / 2; i++)
			if (shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0,
			    NULL) != 0 || m.tag != i)
				_exit(20);
		raise(SIGKILL);
		_exit(21);
	}
	ck_assert_int_eq(shm_test_wait_exit(pid), 128 + SIGKILL);
	ck_assert_int_ge(shm_reap(a, pid, NULL), 0);
	shm_consumer_recover(a, 0);
	send_ok(p, N);
	ck_assert(owned(a));
	memset(&m, 0, sizeof(m));
	m.tag = 7777;
	ck_assert_int_eq(shm_send(p, 0, SHM_LANE_SYSTEM, &m, NULL, 0), 0);
	recv_tag(a, 7777);
	for (i = N / 2; i <= N; i++)
		recv_tag(a, i);
	recv_empty(a);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/* A child that takes the lane, then sends one more with hook set. */
static pid_t
spawn_owner(struct shm_arena *a, void (*hook)(void *))
{
	struct shm_producer *p;
	unsigned	 i;
	pid_t		 pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid != 0)
		return pid;
	if (shm_producer_open(a, &p) != 0)
		_exit(10);
	for (i = 0; i < HOT; i++)
		if (send_tag(p, i, 0) != 0)
			_exit(11);
	if (!owned(a))
		_exit(12);
	shm_producer_set_hook(p, hook, NULL);
	if (send_tag(p, HOT, 0) != 0)
		_exit(13);
	_exit(0);
}

/*
 * The owner killed between its claim and its publish: shm_reap releases
 * the cell (a dead letter "sender died") and gives the lane back; all it
 * published is delivered, and another producer sends and takes it.
 */
START_TEST(test_killed_owner_reaped)
{
	struct shm_arena *a = shm_test_arena(1, 1024, 128,
	    SHM_OVERFLOW_BLOCK);
	struct shm_producer *q;
	struct shm_counters c;
	unsigned	 i, released;
	pid_t		 pid;

	pid = spawn_owner(a, die_now);
	ck_assert_int_eq(shm_test_wait_exit(pid), 9);
	ck_assert(owned(a));
	ck_assert_uint_eq(atomic_load(owner_busy(a)), HOT + 1);
	ck_assert_int_ge(shm_reap(a, pid, &released), 1);
	ck_assert_uint_eq(released, 1);
	ck_assert(!owned(a));
	ck_assert_uint_eq(shm_test_count_dl(a, SHM_DL_SENDER_DIED), 1);
	for (i = 0; i < HOT; i++)
		recv_tag(a, i);
	recv_empty(a);
	ck_assert_int_eq(shm_producer_open(a, &q), 0);
	for (i = 0; i < HOT; i++)
		send_ok(q, 1000 + i);
	ck_assert(owned(a));
	for (i = 0; i < HOT; i++)
		recv_tag(a, 1000 + i);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.released, 1);
	ck_assert_uint_eq(c.depth, 0);
	shm_producer_close(q);
	shm_detach(a);
}
END_TEST

/*
 * The same owner dead and not yet reaped: the next sender finds its
 * process gone, settles its send and takes the lane back itself.
 */
START_TEST(test_killed_owner_revoked)
{
	struct shm_arena *a = shm_test_arena(1, 1024, 128,
	    SHM_OVERFLOW_BLOCK);
	struct shm_producer *q;
	unsigned	 i;
	pid_t		 pid;

	pid = spawn_owner(a, die_now);
	ck_assert_int_eq(shm_test_wait_exit(pid), 9);
	ck_assert_uint_eq(atomic_load(owner_busy(a)), HOT + 1);
	ck_assert_int_eq(shm_producer_open(a, &q), 0);
	send_ok(q, 5000);
	ck_assert_uint_eq(atomic_load(owner_busy(a)), 0);
	ck_assert_uint_eq(shm_test_count_dl(a, SHM_DL_SENDER_DIED), 1);
	for (i = 0; i < HOT; i++)
		recv_tag(a, i);
	recv_tag(a, 5000);
	recv_empty(a);
	ck_assert_int_ge(shm_reap(a, pid, NULL), 1);
	shm_producer_close(q);
	shm_detach(a);
}
END_TEST

/*
 * The owner stopped mid-send: another sender waits no longer than its
 * deadline (a full lane's answer); once the owner goes on, both go in.
 */
START_TEST(test_stopped_owner)
{
	struct shm_arena *a = shm_test_arena(1, 1024, 128,
	    SHM_OVERFLOW_BLOCK);
	struct shm_producer *q;
	unsigned	 i;
	pid_t		 pid;
	int		 st;

	pid = spawn_owner(a, stop_self);
	ck_assert_int_eq(waitpid(pid, &st, WUNTRACED), pid);
	ck_assert(WIFSTOPPED(st));
	ck_assert_int_eq(shm_producer_open(a, &q), 0);
	ck_assert_int_eq(send_tag(q, 5000, 10000000), SHM_EFULL);
	ck_assert_uint_eq(shm_test_count_dl(a, SHM_DL_FULL), 1);
	ck_assert_int_eq(kill(pid, SIGCONT), 0);
	ck_assert_int_eq(shm_test_wait_exit(pid), 0);
	send_ok(q, 5001);
	for (i = 0; i <= HOT; i++)
		recv_tag(a, i);
	recv_tag(a, 5001);
	recv_empty(a);
	shm_producer_close(q);
	shm_detach(a);
}
END_TEST

/* The consumer's side of test_full_*, called while the owner waits. */
struct room_arg {
	struct shm_arena *a;
	struct shm_producer *q;	/* sends too once it took one, if set */
	unsigned	 polls;	/* the sender's polls seen */
	unsigned	 unowned;	/* ... with the lane not owned */
	unsigned	 next;	/* the tag it takes next */
	unsigned	 want;	/* messages to take: one a wait */
	int		 q_rc;
};

static void
room_take(void *arg)
{
	struct room_arg *r = arg;
	struct shm_msg	 m;

	r->polls++;
	if (!owned(r->a))
		r->unowned++;
	if (r->want == 0)
		return;
	r->want--;
	if (shm_recv(r->a, 0, SHM_LANES_INBOX, &m, NULL, 0, NULL) != 0 ||
	    m.tag != r->next)
		abort();
	r->next++;
	if (r->q != NULL)
		r->q_rc = send_tag(r->q, 9000, 0);
}

/*
 * The owner fills its lane while the consumer takes one message during
 * each of its waits: it keeps the lane (it waits for the cell freed, it
 * does not give the lane back to claim by CAS), send after send, a lap
 * and more of the lane, and the messages come in order.
 */
START_TEST(test_full_keeps_lane)
{
	enum { CAP = 512 };
	struct shm_arena *a = shm_test_arena(1, CAP, 128,
	    SHM_OVERFLOW_BLOCK);
	struct room_arg	 r = { a, NULL, 0, 0, 0, 0, 0 };
	struct shm_producer *p;
	struct shm_msg	 m;
	uint64_t	 started = 0;
	unsigned	 i, polls;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	take_lane(a, p);
	for (i = 0; i < CAP; i++)
		send_ok(p, i);
	p->room_hook = room_take;
	p->room_hook_arg = &r;
	for (i = CAP; i < 3 * CAP; i++) {
		polls = r.polls;
		r.want = 1;
		ck_assert_int_eq(send_tag(p, i, 10 * SEC), 0);
		ck_assert_msg(r.polls > polls, "send %u found room", i);
		ck_assert_msg(owned(a) && p->own_ring != 0,
		    "the owner gave its full lane back at send %u", i);
	}
	/* shm_send_stamped waits the same way (send_msg, owned_claim). */
	r.want = 1;
	polls = r.polls;
	memset(&m, 0, sizeof(m));
	m.tag = 3 * CAP;
	ck_assert_int_eq(shm_send_stamped(p, 0, SHM_LANE_MAIN, &m, NULL,
	    SHM_TIMEOUT_DEFAULT, &started), 0);
	ck_assert(r.polls > polls && started != 0);
	ck_assert(owned(a) && p->own_ring != 0);
	p->room_hook = NULL;
	for (i = r.next; i <= 3 * CAP; i++)
		recv_tag(a, i);
	recv_empty(a);
	ck_assert_uint_eq(shm_test_count_dl(a, SHM_DL_FULL), 0);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * A full lane whose consumer takes nothing: the owner's send still
 * follows the policy and its timeout (block: SHM_EFULL once its time is
 * out, with its dead letter; an offer and a send that may not wait fail
 * at once), and gives the lane back, without a second poll for the
 * cell once it claims by CAS; and under reject it never waits.
 */
START_TEST(test_full_stopped_consumer)
{
	enum { CAP = 256 };
	struct shm_arena *a = shm_test_arena(1, CAP, 128,
	    SHM_OVERFLOW_BLOCK);
	struct room_arg	 r = { a, NULL, 0, 0, 0, 0, 0 };
	struct shm_producer *p;
	struct shm_counters c;
	struct shm_msg	 m;
	unsigned	 i, k;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	p->room_hook = room_take;
	p->room_hook_arg = &r;
	take_lane(a, p);
	for (i = 0; i < CAP; i++)
		send_ok(p, i);
	ck_assert_int_eq(send_tag(p, 1000, 20000000), SHM_EFULL);
	ck_assert_msg(r.polls > 0, "the owner waited for room");
	ck_assert_msg(r.unowned == 0, "%u polls for the same cell again once "
	    "the owner gave its lane back", r.unowned);
	ck_assert_uint_eq(shm_test_count_dl(a, SHM_DL_FULL), 1);
	ck_assert_msg(!owned(a) && p->own_ring == 0,
	    "an owner out of time gives the lane back");
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.full, 1);
	ck_assert_uint_eq(c.depth, CAP);
	for (i = 0; i < CAP; i++)
		recv_tag(a, i);
	recv_empty(a);
	/* An offer, a send that may not wait: at once, owner or not. */
	memset(&m, 0, sizeof(m));
	for (k = 0; k < 2; k++) {
		r.polls = 0;
		take_lane(a, p);
		for (i = 0; i < CAP; i++)
			send_ok(p, i);
		if (k == 0)
			ck_assert_int_eq(shm_offer(p, 0, SHM_LANE_MAIN, &m,
			    NULL), SHM_EFULL);
		else
			ck_assert_int_eq(send_tag(p, 1001, 0), SHM_EFULL);
		ck_assert_uint_eq(r.polls, 0);
		ck_assert_uint_eq(shm_test_count_dl(a, SHM_DL_FULL), 1 + k);
		for (i = 0; i < CAP; i++)
			recv_tag(a, i);
		recv_empty(a);
	}
	/* Under reject the owner fails at once, as a claim by CAS. */
	ck_assert_int_eq(shm_mailbox_configure(a, 0, CAP, SHM_OVERFLOW_REJECT,
	    0), 0);
	r.polls = 0;
	take_lane(a, p);
	for (i = 0; i < CAP; i++)
		send_ok(p, i);
	ck_assert_int_eq(send_tag(p, 1002, 10 * SEC), SHM_EFULL);
	ck_assert_uint_eq(r.polls, 0);
	ck_assert_uint_eq(shm_test_count_dl(a, SHM_DL_FULL), 3);
	for (i = 0; i < CAP; i++)
		recv_tag(a, i);
	recv_empty(a);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * While the owner waits for room, another sender wants the lane: it
 * takes it back at once (the owner holds no record while it waits) and
 * the cell freed; the owner, its lane gone, is one more blocked sender,
 * out of time here.
 */
START_TEST(test_full_owner_yields)
{
	enum { CAP = 256 };
	struct shm_arena *a = shm_test_arena(1, CAP, 128,
	    SHM_OVERFLOW_BLOCK);
	struct room_arg	 r = { a, NULL, 0, 0, 0, 0, -1 };
	struct shm_producer *p, *q;
	unsigned	 i;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	ck_assert_int_eq(shm_producer_open(a, &q), 0);
	take_lane(a, p);
	for (i = 0; i < CAP; i++)
		send_ok(p, i);
	r.q = q;
	r.want = 1;
	p->room_hook = room_take;
	p->room_hook_arg = &r;
	ck_assert_int_eq(send_tag(p, 2000, 20000000), SHM_EFULL);
	ck_assert_int_eq(r.q_rc, 0);
	ck_assert(!owned(a) && p->own_ring == 0);
	ck_assert_uint_eq(shm_test_count_dl(a, SHM_DL_FULL), 1);
	for (i = 1; i < CAP; i++)
		recv_tag(a, i);
	recv_tag(a, 9000);
	recv_empty(a);
	shm_producer_close(p);
	shm_producer_close(q);
	shm_detach(a);
}
END_TEST

/* A child that owns a full lane and dies while it waits for room. */
static void
die_waiting(void *arg)
{
	(void)arg;
	_exit(9);
}

/*
 * The owner killed while it waits for room: it held no record, so the
 * reap releases nothing and gives the lane back; everything it sent is
 * delivered, and another producer sends on.
 */
START_TEST(test_full_owner_killed)
{
	enum { CAP = 512 };
	struct shm_arena *a = shm_test_arena(1, CAP, 128,
	    SHM_OVERFLOW_BLOCK);
	struct shm_producer *p, *q;
	unsigned	 i, released;
	pid_t		 pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (shm_producer_open(a, &p) != 0)
			_exit(10);
		for (i = 0; i < CAP; i++)
			if (send_tag(p, i, 0) != 0)
				_exit(11);
		if (!owned(a))
			_exit(12);
		p->room_hook = die_waiting;
		(void)send_tag(p, CAP, 10 * SEC);
		_exit(13);
	}
	ck_assert_int_eq(shm_test_wait_exit(pid), 9);
	ck_assert(owned(a));
	ck_assert_uint_eq(atomic_load(owner_busy(a)), 0);
	ck_assert_int_ge(shm_reap(a, pid, &released), 1);
	ck_assert_uint_eq(released, 0);
	ck_assert(!owned(a));
	ck_assert_uint_eq(shm_test_count_dl(a, SHM_DL_SENDER_DIED), 0);
	for (i = 0; i < CAP; i++)
		recv_tag(a, i);
	recv_empty(a);
	ck_assert_int_eq(shm_producer_open(a, &q), 0);
	send_ok(q, 77);
	recv_tag(a, 77);
	recv_empty(a);
	shm_producer_close(q);
	shm_detach(a);
}
END_TEST

/*
 * A fork child of the owner holds a copy of its producer: its sends fail
 * SHM_EFORKED and write nothing (two writers appending to an owned lane
 * without a locked instruction would overwrite each other); the parent
 * keeps the lane, and a producer the child opens itself sends.
 */
START_TEST(test_fork_child_of_owner)
{
	struct shm_arena *a = shm_test_arena(1, 1024, 128,
	    SHM_OVERFLOW_BLOCK);
	struct shm_producer *p, *own;
	struct shm_msg	 m;
	pid_t		 pid;
	int		 rc;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	take_lane(a, p);
	ck_assert(!shm_producer_forked(p));
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		memset(&m, 0, sizeof(m));
		m.tag = 666;
		rc = shm_producer_forked(p) ? 0 : 1;
		if (shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0) != SHM_EFORKED ||
		    shm_offer(p, 0, SHM_LANE_MAIN, &m, NULL) != SHM_EFORKED)
			rc = 2;
		m.tag = 777;
		if (shm_producer_open(a, &own) != 0 ||
		    shm_send(own, 0, SHM_LANE_MAIN, &m, NULL, 0) != 0)
			rc = 3;
		shm_producer_close(own);
		shm_producer_close(p);
		_exit(rc);
	}
	ck_assert_int_eq(shm_test_wait_exit(pid), 0);
	recv_tag(a, 777);
	recv_empty(a);
	send_ok(p, 1);
	recv_tag(a, 1);
	recv_empty(a);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * A worker's scribbles on the words: an owner that is no slot, a claim
 * record naming any cell, a count of revokers that never ends, slot
 * fields naming no mailbox.  Sends still go in (or the lane is merely
 * never owned), nothing is lost, and shm_reap and shm_mailbox_repair
 * take the slot and the lane as they are.
 */
START_TEST(test_hostile_words)
{
	struct shm_arena *a = shm_test_arena(1, 1024, 128,
	    SHM_OVERFLOW_BLOCK);
	struct shm_mbox	*m = mbox(a);
	struct shm_producer *p, *q;
	struct shm_repair r;
	unsigned	 i, k;
	pid_t		 pid;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	ck_assert_int_eq(shm_producer_open(a, &q), 0);
	send_ok(p, 0);
	recv_tag(a, 0);
	/*
	 * Owners that are no slot, no live one, or the sender itself, with
	 * records naming any cell, or the very cell at tail.
	 */
	for (k = 0; k < 4; k++) {
		atomic_store(&m->own_slot, k == 0 ? UINT32_MAX : k == 1 ? 0 :
		    k == 2 ? 16 : p->slot_no + 1);
		atomic_store(&a->slots[k == 3 ? p->slot_no : 15].own_busy,
		    k == 3 ? raw_tail(a) + 1 : 0xdeadbeefcafeULL * (k + 1));
		atomic_fetch_or(&m->lane[SHM_LANE_MAIN].tail, TAIL_OWNED);
		send_ok(p, k + 1);
		ck_assert_msg(!owned(a), "scribble %u", k);
		recv_tag(a, k + 1);
	}
	atomic_store(&p->slot->own_busy, 0);
	/*
	 * A live "owner" whose record never ends: a send that may not wait
	 * fails as on a full lane, after a bounded wait; a hostile owner can
	 * hold its own mailbox's senders, as a full lane can, no longer.
	 */
	atomic_store(&m->own_slot, q->slot_no + 1);
	atomic_store(&q->slot->own_busy, 5);
	atomic_fetch_or(&m->lane[SHM_LANE_MAIN].tail, TAIL_OWNED);
	ck_assert_int_eq(send_tag(p, 99, 0), SHM_EFULL);
	ck_assert_int_eq(send_tag(p, 99, 2000000), SHM_EFULL);
	atomic_store(&q->slot->own_busy, 0);
	send_ok(p, 5);
	recv_tag(a, 5);
	/* Revokers that never end: the lane is never owned, sends go. */
	atomic_store(&m->own_revoke, UINT32_MAX);
	for (i = 0; i < 2 * HOT; i++)
		send_ok(p, i);
	ck_assert(!owned(a));
	for (i = 0; i < 2 * HOT; i++)
		recv_tag(a, i);
	atomic_store(&m->own_revoke, 0);
	/* A dead process's slot naming no mailbox, or a wild one. */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (shm_producer_open(a, &q) != 0)
			_exit(10);
		atomic_store(&q->slot->own_mbox, 0x7fffffff);
		atomic_store(&q->slot->revoking, 1);
		atomic_store(&q->slot->own_busy, ~0ULL);
		_exit(0);
	}
	ck_assert_int_eq(shm_test_wait_exit(pid), 0);
	ck_assert_int_ge(shm_reap(a, pid, NULL), 1);
	/* tail owned with its cell published: repair keeps the message. */
	for (i = 0; i < HOT; i++)
		send_ok(p, i);
	atomic_store(&p->slot->own_busy, raw_tail(a) & ~TAIL_OWNED);
	ck_assert_int_eq(shm_mailbox_repair(a, 0, &r), 0);
	for (i = 0; i < HOT; i++)
		recv_tag(a, i);
	atomic_store(&p->slot->own_busy, 0);
	send_ok(p, 7);
	recv_tag(a, 7);
	recv_empty(a);
	shm_producer_close(p);
	shm_producer_close(q);
	shm_detach(a);
}
END_TEST

static Suite *
express_suite(void)
{
	Suite	*s = suite_create("shm_express");
	TCase	*tc = tcase_create("express");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_owns_and_gives_back);
	tcase_add_test(tc, test_fifo_across_switches);
	tcase_add_test(tc, test_owners_change);
	tcase_add_test(tc, test_capacity);
	tcase_add_test(tc, test_drop_oldest);
	tcase_add_test(tc, test_wakes_sleeper);
	tcase_add_test(tc, test_consumer_restarts);
	tcase_add_test(tc, test_killed_owner_reaped);
	tcase_add_test(tc, test_killed_owner_revoked);
	tcase_add_test(tc, test_stopped_owner);
	tcase_add_test(tc, test_full_keeps_lane);
	tcase_add_test(tc, test_full_stopped_consumer);
	tcase_add_test(tc, test_full_owner_yields);
	tcase_add_test(tc, test_full_owner_killed);
	tcase_add_test(tc, test_hostile_words);
	tcase_add_test(tc, test_fork_child_of_owner);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(express_suite());
}
