/*
 * check_shm_coalesce.c: the coalesce overflow policy.  A tell flagged
 * SHM_MSG_COALESCE replaces in place the queued one with the same key
 * (corr), and is counted as replaced; across processes a producer sends
 * many updates of a few keys to a slow consumer, which finds the queue
 * bounded by the number of keys and sees every key's values in order,
 * ending with the latest, also while it is SIGKILLed and recovered again
 * and again (nothing is lost but replaced values).
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include <check.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm/shm.h"
#include "tests/check_shm_util.h"
#include "tests/lib/tcheck.h"

#define SEC		1000000000LL
#define NKEYS		4
#define CAP		16
#define TAG_UPDATE	1
#define TAG_DONE	99

struct update {
	uint32_t	 key;
	uint32_t	 pad;
	uint64_t	 value;
};

/* What consumers saw, in a shared mapping that outlives them. */
struct seen {
	_Atomic uint64_t n;		/* records written (after the record) */
	_Atomic uint64_t max_depth;	/* most messages queued at a take */
	_Atomic uint32_t done;		/* TAG_DONE taken */
	struct update	 rec[];
};

/* A consumer's handler argument. */
struct consumer {
	struct shm_arena *a;
	struct seen	*s;
};

static int
send_keyed(struct shm_producer *p, uint32_t key, uint64_t value,
    uint32_t flags)
{
	struct update u = { key, 0, value };
	struct shm_msg m;

	memset(&m, 0, sizeof(m));
	m.tag = TAG_UPDATE;
	m.len = sizeof(u);
	m.corr = key;
	m.flags = flags;
	return shm_send(p, 0, SHM_LANE_MAIN, &m, &u, 10 * SEC);
}

static void
recv_update(struct shm_arena *a, struct update *u, struct shm_msg *m)
{
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, m, u, sizeof(*u),
	    NULL), 0);
}

/*
 * In one process: replaced in place (keeps its place in the queue), the
 * newest value, counted; unkeyed tells, asks and other keys untouched.
 */
START_TEST(test_coalesce_in_place)
{
	struct shm_arena *a = shm_test_arena(1, CAP, 128,
	    SHM_OVERFLOW_COALESCE);
	struct shm_producer *p;
	struct shm_counters c;
	struct shm_msg	 m;
	struct update	 u;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	ck_assert_int_eq(send_keyed(p, 1, 10, SHM_MSG_COALESCE), 0);
	ck_assert_int_eq(send_keyed(p, 2, 20, SHM_MSG_COALESCE), 0);
	ck_assert_int_eq(send_keyed(p, 1, 11, SHM_MSG_COALESCE), 0);
	ck_assert_int_eq(send_keyed(p, 3, 30, 0), 0);	/* not keyed */
	ck_assert_int_eq(send_keyed(p, 3, 31, 0), 0);
	ck_assert_int_eq(send_keyed(p, 2, 21, SHM_MSG_COALESCE |
	    SHM_MSG_ASK), 0);				/* an ask: never */
	ck_assert_int_eq(send_keyed(p, 1, 12, SHM_MSG_COALESCE), 0);
	ck_assert_int_eq(send_keyed(p, 2, 22, SHM_MSG_COALESCE), 0);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.replaced, 3);
	ck_assert_uint_eq(c.depth, 5);
	recv_update(a, &u, &m);
	ck_assert_uint_eq(u.key, 1);
	ck_assert_uint_eq(u.value, 12);
	ck_assert_uint_eq(m.corr, 1);
	ck_assert_uint_ne(m.flags & SHM_MSG_COALESCE, 0);
	recv_update(a, &u, &m);
	ck_assert_uint_eq(u.value, 22);
	recv_update(a, &u, &m);
	ck_assert_uint_eq(u.value, 30);
	recv_update(a, &u, &m);
	ck_assert_uint_eq(u.value, 31);
	recv_update(a, &u, &m);
	ck_assert_uint_eq(u.value, 21);
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0, NULL),
	    SHM_EEMPTY);
	/* Taken already: a new update is queued, not lost in the old cell. */
	ck_assert_int_eq(send_keyed(p, 1, 13, SHM_MSG_COALESCE), 0);
	recv_update(a, &u, &m);
	ck_assert_uint_eq(u.value, 13);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.replaced, 3);
	ck_assert_uint_eq(c.dead_lettered, 0);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/* Under another policy the flag is ignored: every tell is queued. */
START_TEST(test_coalesce_other_policy)
{
	struct shm_arena *a = shm_test_arena(1, CAP, 128, SHM_OVERFLOW_BLOCK);
	struct shm_producer *p;
	struct shm_counters c;
	unsigned	 i;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(send_keyed(p, 1, i, SHM_MSG_COALESCE), 0);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.depth, 3);
	ck_assert_uint_eq(c.replaced, 0);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

static void
die_now(void *arg)
{
	(void)arg;
	_exit(9);
}

/*
 * A sender killed while it rewrites a queued tell (behind the head): the
 * consumer takes what is before it and waits there; shm_reap makes the
 * cell a dead letter "dropped as oldest" and frees it, and the lane goes
 * on.
 */
START_TEST(test_coalesce_sender_killed)
{
	struct shm_arena *a = shm_test_arena(1, CAP, 128,
	    SHM_OVERFLOW_COALESCE);
	struct shm_producer *p, *q;
	struct shm_dead_letter d;
	struct shm_counters c;
	struct shm_msg	 m;
	struct update	 u;
	uint64_t	 cur = 0;
	unsigned	 released;
	pid_t		 pid;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	ck_assert_int_eq(send_keyed(p, 1, 10, SHM_MSG_COALESCE), 0);
	ck_assert_int_eq(send_keyed(p, 2, 20, SHM_MSG_COALESCE), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (shm_producer_open(a, &q) != 0)
			_exit(2);
		shm_producer_set_steal_hook(q, die_now, NULL);
		(void)send_keyed(q, 2, 21, SHM_MSG_COALESCE);
		_exit(0);		/* the hook did not fire */
	}
	ck_assert_int_eq(shm_test_wait_exit(pid), 9);
	recv_update(a, &u, &m);
	ck_assert_uint_eq(u.value, 10);
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0, NULL),
	    SHM_EEMPTY);
	ck_assert_int_ge(shm_reap(a, pid, &released), 1);
	ck_assert_int_eq(shm_dl_read(a, &cur, &d), 1);
	ck_assert_uint_eq(d.reason, SHM_DL_DROPPED_OLDEST);
	ck_assert_uint_eq(d.msg.corr, 2);
	ck_assert_int_eq(shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0, NULL),
	    SHM_EEMPTY);
	ck_assert_int_eq(send_keyed(p, 2, 22, SHM_MSG_COALESCE), 0);
	recv_update(a, &u, &m);
	ck_assert_uint_eq(u.value, 22);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.replaced, 0);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/* A producer child: updates 1..n, key = i % NKEYS, then TAG_DONE. */
static pid_t
spawn_producer(struct shm_arena *a, uint64_t n)
{
	struct shm_producer *p;
	struct shm_msg	 m;
	uint64_t	 i;
	pid_t		 pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid != 0)
		return pid;
	if (shm_producer_open(a, &p) != 0)
		_exit(10);
	for (i = 1; i <= n; i++) {
		if (send_keyed(p, (uint32_t)(i % NKEYS), i,
		    SHM_MSG_COALESCE) != 0)
			_exit(11);
		if (i % 64 == 0)
			usleep(50);
	}
	memset(&m, 0, sizeof(m));
	m.tag = TAG_DONE;
	_exit(shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 10 * SEC) == 0 ? 0 : 12);
}

/*
 * The consumer's handler: the record is logged before the cell is freed
 * (a consumer killed after the log and before the free sees it again:
 * a repeat, never a loss), then a slow handler's 20 us.
 */
static int
log_cb(void *arg, enum shm_lane lane, const struct shm_msg *m,
    const void *payload)
{
	struct consumer	*k = arg;
	struct seen	*s = k->s;
	struct shm_counters c;
	uint64_t	 n;

	(void)lane;
	if (shm_counters(k->a, 0, &c) == 0 && c.depth > atomic_load(
	    &s->max_depth))
		atomic_store(&s->max_depth, c.depth);
	if (m->tag == TAG_DONE) {
		atomic_store(&s->done, 1);
		return 1;
	}
	if (m->tag != TAG_UPDATE || m->len != sizeof(struct update))
		_exit(30);
	n = atomic_load(&s->n);
	memcpy(&s->rec[n], payload, sizeof(struct update));
	atomic_store(&s->n, n + 1);
	usleep(20);
	return 1;
}

static pid_t
spawn_consumer(struct shm_arena *a, struct seen *s)
{
	struct consumer	 k = { a, s };
	pid_t		 pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid != 0)
		return pid;
	while (!atomic_load(&s->done)) {
		if (shm_wait(a, 0, SHM_LANES_INBOX, SHM_WAIT_SLEEP, 0,
		    20 * SEC) < 0)
			_exit(20);
		if (shm_drain(a, 0, SHM_LANES_INBOX, 1, log_cb, &k) < 0)
			_exit(21);
	}
	_exit(0);
}

/*
 * Every key's values never go back (a repeat after a kill is allowed
 * when kills happen), and the last one seen is the last one sent.
 */
static void
check_seen(const struct seen *s, uint64_t n, bool kills)
{
	uint64_t last[NKEYS] = { 0 }, i, want;
	const struct update *u;

	for (i = 0; i < atomic_load(&s->n); i++) {
		u = &s->rec[i];
		ck_assert_uint_lt(u->key, NKEYS);
		ck_assert_uint_eq(u->value % NKEYS, u->key);
		if (kills)
			ck_assert_uint_ge(u->value, last[u->key]);
		else
			ck_assert_uint_gt(u->value, last[u->key]);
		last[u->key] = u->value;
	}
	for (i = 0; i < NKEYS; i++) {
		want = n - ((n - i) % NKEYS);	/* the last i mod NKEYS */
		ck_assert_uint_eq(last[i], want);
	}
}

static struct seen *
map_seen(uint64_t n)
{
	size_t	 sz = sizeof(struct seen) + (n + 64) * sizeof(struct update);
	void	*p;

	p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	    -1, 0);
	ck_assert_ptr_ne(p, MAP_FAILED);
	return p;
}

/*
 * Across processes, no crash: the queue never held more than one message
 * per key (plus the one in the consumer's hands and the end marker),
 * where block would have filled all CAP cells; every update was either
 * received or replaced.
 */
START_TEST(test_coalesce_processes)
{
	uint64_t	 n = 100000 / shm_test_scale();
	struct shm_arena *a = shm_test_arena(1, CAP, 128,
	    SHM_OVERFLOW_COALESCE);
	struct seen	*s;
	struct shm_counters c;
	pid_t		 prod, cons;

	s = map_seen(n);
	cons = spawn_consumer(a, s);
	prod = spawn_producer(a, n);
	ck_assert_int_eq(shm_test_wait_exit(prod), 0);
	ck_assert_int_eq(shm_test_wait_exit(cons), 0);
	check_seen(s, n, false);
	ck_assert_uint_le(atomic_load(&s->max_depth), NKEYS + 2);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_gt(c.replaced, 0);
	ck_assert_uint_eq(c.replaced + atomic_load(&s->n), n);
	ck_assert_uint_eq(c.dead_lettered, 0);
	shm_detach(a);
}
END_TEST

/*
 * The consumer SIGKILLed at random moments while the producer sends, and
 * recovered as actord does (shm_reap, shm_consumer_recover) before the
 * next one starts: values still never go back and the last one arrives.
 */
START_TEST(test_coalesce_consumer_killed)
{
	uint64_t	 n = 100000 / shm_test_scale();
	struct shm_arena *a = shm_test_arena(1, CAP, 128,
	    SHM_OVERFLOW_COALESCE);
	struct seen	*s;
	struct shm_counters c;
	unsigned	 released, kills = 0;
	pid_t		 prod, cons;
	int		 st;

	srand(15);
	s = map_seen(n + 4096);
	cons = spawn_consumer(a, s);
	prod = spawn_producer(a, n);
	for (;;) {
		usleep(200 + (unsigned)(rand() % 2000));
		ck_assert_int_eq(kill(cons, SIGKILL), 0);
		if ((st = shm_test_wait_exit(cons)) == 0)
			break;		/* it took the end marker first */
		ck_assert_int_eq(st, 128 + SIGKILL);
		ck_assert_int_ge(shm_reap(a, cons, &released), 0);
		ck_assert_int_ge(shm_consumer_recover(a, 0), 0);
		kills++;
		cons = spawn_consumer(a, s);
	}
	ck_assert_int_eq(shm_test_wait_exit(prod), 0);
	ck_assert_uint_gt(kills, 0);
	check_seen(s, n, true);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_gt(c.replaced, 0);
	ck_assert_uint_eq(c.dead_lettered, 0);
	shm_detach(a);
}
END_TEST

static Suite *
coalesce_suite(void)
{
	Suite	*s = suite_create("shm_coalesce");
	TCase	*tc = tcase_create("coalesce");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_coalesce_in_place);
	tcase_add_test(tc, test_coalesce_other_policy);
	tcase_add_test(tc, test_coalesce_sender_killed);
	tcase_add_test(tc, test_coalesce_processes);
	tcase_add_test(tc, test_coalesce_consumer_killed);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(coalesce_suite());
}
