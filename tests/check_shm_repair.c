/*
 * check_shm_repair.c: mailboxes that a worker wedged, and what actord's
 * repair (shm_mailbox_repair) makes of them; spares nobody prepared; and
 * drop_oldest senders facing a consumer stopped half-way.
 *
 * Each wedge is one a hostile or buggy worker can write, found to last
 * for ever without the repair: a tail moved by 2^40 ("full" for ever), a
 * head moved past queued messages, a claim without its record or a steal
 * mark that nobody owns (the consumer waits for them for ever while sends
 * still succeed), zeroed cells (a hole punched in the memfd).  After the
 * repair, every message that was not lost is delivered, every one lost is
 * a dead letter "garbled", and the lane takes as many messages as before.
 * What a live producer owns is never touched.
 */
#include <sys/resource.h>
#include <sys/stat.h>
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

#define CAP	8

static struct shm_arena *arena(enum shm_overflow);
static void	 send_tags(struct shm_producer *, unsigned, unsigned);
static unsigned	 recv_all(struct shm_arena *, unsigned *, unsigned);
static struct shm_lane_local *main_lane(struct shm_arena *);
static void	 fill_again(struct shm_arena *, struct shm_producer *);
static int64_t	 mono_ms(void);

static struct shm_arena *
arena(enum shm_overflow pol)
{
	return shm_test_arena(1, CAP, 128, pol);
}

static struct shm_lane_local *
main_lane(struct shm_arena *a)
{
	return &shm_mb(a, 0)->lane[SHM_LANE_MAIN];
}

/* Send tags [from, to), each must go in. */
static void
send_tags(struct shm_producer *p, unsigned from, unsigned to)
{
	struct shm_msg m;
	unsigned i;

	memset(&m, 0, sizeof(m));
	for (i = from; i < to; i++) {
		m.tag = i;
		ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0), 0);
	}
}

/* Receive what is there, tags in order into tags[]. */
static unsigned
recv_all(struct shm_arena *a, unsigned *tags, unsigned max)
{
	struct shm_msg m;
	unsigned n = 0;

	while (n < max && shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0,
	    NULL) == 0)
		tags[n++] = m.tag;
	return n;
}

/* The lane takes CAP messages again, and gives them back in order. */
static void
fill_again(struct shm_arena *a, struct shm_producer *p)
{
	unsigned tags[CAP + 1], i;

	send_tags(p, 100, 100 + CAP);
	ck_assert_uint_eq(recv_all(a, tags, CAP + 1), CAP);
	for (i = 0; i < CAP; i++)
		ck_assert_uint_eq(tags[i], 100 + i);
}

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Tail moved by 2^40: every send finds the cell at tail not free for it
 * and the lane "full", for ever.  The repair finds tail again from head's
 * cells; the two queued messages are delivered, nothing is lost.
 */
START_TEST(test_repair_tail_jump)
{
	struct shm_arena *a = arena(SHM_OVERFLOW_REJECT);
	struct shm_producer *p;
	struct shm_repair r;
	struct shm_msg	 m;
	unsigned	 tags[4];

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	send_tags(p, 1, 3);
	atomic_fetch_add(&main_lane(a)->ctl->tail, 1ULL << 40);
	memset(&m, 0, sizeof(m));
	ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0),
	    SHM_EFULL);
	ck_assert_int_gt(shm_mailbox_repair(a, 0, &r), 0);
	ck_assert_uint_eq(r.ends, 1);
	ck_assert_uint_eq(r.lost, 0);
	ck_assert_uint_eq(recv_all(a, tags, 4), 2);
	ck_assert_uint_eq(tags[0], 1);
	ck_assert_uint_eq(tags[1], 2);
	fill_again(a, p);
	/* Nothing more to do the second time. */
	ck_assert_int_eq(shm_mailbox_repair(a, 0, &r), 0);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * Head moved far past tail: the consumer looks at cells of positions
 * nobody will ever publish.  Tail's cell agrees with tail, so head is
 * found again below it, at the first queued message.
 */
START_TEST(test_repair_head_jump)
{
	struct shm_arena *a = arena(SHM_OVERFLOW_REJECT);
	struct shm_producer *p;
	struct shm_repair r;
	unsigned	 tags[4];

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	send_tags(p, 1, 4);
	ck_assert_uint_eq(recv_all(a, tags, 1), 1);	/* head 1, tail 3 */
	atomic_store(&main_lane(a)->ctl->head, 1ULL << 45);
	ck_assert_uint_eq(recv_all(a, tags, 4), 0);
	ck_assert_int_gt(shm_mailbox_repair(a, 0, &r), 0);
	ck_assert_uint_eq(r.lost, 0);
	ck_assert_uint_eq(atomic_load(&main_lane(a)->ctl->head), 1);
	ck_assert_uint_eq(recv_all(a, tags, 4), 2);
	ck_assert_uint_eq(tags[0], 2);
	ck_assert_uint_eq(tags[1], 3);
	fill_again(a, p);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * A consumer frees the cells of a batch before it stores head; SIGKILLed
 * in between, it leaves head behind the messages it took, and producers
 * refill the cells it freed.  That is no wedge: for every number of cells
 * refilled (none, some, all: tail a whole lap past head), the repair
 * loses nothing and the rest comes out in order.  With all refilled, the
 * repair once took the ends for garbage and reset the lane, losing every
 * message in it (check_examples, connection_random_schedules_no_zombie:
 * 1,024 messages "garbled").
 */
START_TEST(test_repair_consumer_died_mid_batch)
{
	struct shm_arena *a;
	struct shm_producer *p;
	struct shm_repair r;
	unsigned	 tags[2 * CAP], i, n, k = 3, j;

	for (j = 0; j <= k; j++) {
		a = arena(SHM_OVERFLOW_REJECT);
		ck_assert_int_eq(shm_producer_open(a, &p), 0);
		send_tags(p, 1, 1 + CAP);		/* full: tags 1..8 */
		for (i = 0; i < k; i++)		/* taken, head not moved */
			cell_seq_set(main_lane(a), i, i + CAP,
			    memory_order_release);
		send_tags(p, 1 + CAP, 1 + CAP + j);	/* refilled: j */
		(void)shm_mailbox_repair(a, 0, &r);
		ck_assert_msg(r.lost == 0, "%u refilled: %u lost", j, r.lost);
		ck_assert_uint_eq(shm_test_count_dl(a, SHM_DL_GARBLED), 0);
		n = recv_all(a, tags, 2 * CAP);
		ck_assert_msg(n == CAP - k + j, "%u refilled: %u out", j, n);
		for (i = 0; i < n; i++)
			ck_assert_uint_eq(tags[i], 1 + k + i);
		fill_again(a, p);
		shm_producer_close(p);
		shm_detach(a);
	}
}
END_TEST

/*
 * The same death, seen by what actord does at a reap (actor_reaped:
 * shm_consumer_recover, then the repair) before any cell it freed is
 * refilled: head must be past what the dead consumer took, for the
 * producers refill those cells for the next lap right after (the reap
 * wakes them), and the next incarnation took such a cell at the old head
 * for garbage: each refilled message lost, "garbled".
 */
START_TEST(test_recover_consumer_died_mid_batch)
{
	struct shm_arena *a = arena(SHM_OVERFLOW_REJECT);
	struct shm_producer *p;
	struct shm_repair r;
	unsigned	 tags[2 * CAP], i, n, k = 3;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	send_tags(p, 1, 1 + CAP);
	for (i = 0; i < k; i++)
		cell_seq_set(main_lane(a), i, i + CAP, memory_order_release);
	ck_assert_int_ge(shm_consumer_recover(a, 0), 0);
	(void)shm_mailbox_repair(a, 0, &r);
	ck_assert_uint_eq(r.lost, 0);
	ck_assert_uint_eq(atomic_load(&main_lane(a)->ctl->head), k);
	send_tags(p, 1 + CAP, 1 + CAP + k);	/* refilled after the reap */
	n = recv_all(a, tags, 2 * CAP);
	ck_assert_uint_eq(n, CAP);
	for (i = 0; i < n; i++)
		ck_assert_uint_eq(tags[i], 1 + k + i);
	ck_assert_uint_eq(shm_test_count_dl(a, SHM_DL_GARBLED), 0);
	fill_again(a, p);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * A CAS on tail without an INTENT record: the cell stays "claimed" and
 * the consumer waits for its publish for ever, while sends behind it
 * still succeed (silent loss).  Nobody owns the claim: released, one
 * dead letter "garbled", and what follows it is delivered.
 */
START_TEST(test_repair_claim_without_record)
{
	struct shm_arena *a = arena(SHM_OVERFLOW_REJECT);
	struct shm_producer *p;
	struct shm_repair r;
	unsigned	 tags[8];

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	send_tags(p, 1, 2);
	atomic_fetch_add(&main_lane(a)->ctl->tail, 1);	/* the wild claim */
	send_tags(p, 2, 4);
	ck_assert_uint_eq(recv_all(a, tags, 8), 1);
	ck_assert_uint_eq(recv_all(a, tags, 8), 0);	/* stuck */
	ck_assert_int_gt(shm_mailbox_repair(a, 0, &r), 0);
	ck_assert_uint_eq(r.released, 1);
	ck_assert_uint_eq(r.lost, 1);
	ck_assert_uint_eq(shm_test_count_dl(a, SHM_DL_GARBLED), 1);
	ck_assert_uint_eq(recv_all(a, tags, 8), 2);
	ck_assert_uint_eq(tags[0], 2);
	ck_assert_uint_eq(tags[1], 3);
	fill_again(a, p);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * A queued cell marked as being dropped by a drop_oldest sender, with no
 * sender: the consumer leaves such a cell to its stealer and stops there.
 * The mark nobody owns is released: that message is a dead letter, the
 * others are delivered.
 */
START_TEST(test_repair_stealing_mark)
{
	struct shm_arena *a = arena(SHM_OVERFLOW_DROP_OLDEST);
	struct shm_lane_local *l = main_lane(a);
	struct shm_producer *p;
	struct shm_repair r;
	unsigned	 tags[8];
	uint64_t	 h;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	send_tags(p, 1, 4);
	h = atomic_load(&l->ctl->head);
	cell_seq_set(l, h, (h + 1) | SEQ_TAKEN |
	    SEQ_STEALING, memory_order_seq_cst);
	ck_assert_uint_eq(recv_all(a, tags, 8), 0);
	send_tags(p, 4, 5);				/* still accepted */
	ck_assert_uint_eq(recv_all(a, tags, 8), 0);
	ck_assert_int_gt(shm_mailbox_repair(a, 0, &r), 0);
	ck_assert_uint_eq(r.released, 1);
	ck_assert_uint_eq(r.lost, 1);
	ck_assert_uint_eq(shm_test_count_dl(a, SHM_DL_GARBLED), 1);
	ck_assert_uint_eq(recv_all(a, tags, 8), 3);
	ck_assert_uint_eq(tags[0], 2);
	ck_assert_uint_eq(tags[2], 4);
	fill_again(a, p);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * Zeroed cells and ends (what fallocate(PUNCH_HOLE) on the ring's pages
 * leaves): each lane would take one message and then be full for ever.
 * Every cell is renumbered.
 */
START_TEST(test_repair_zeroed)
{
	struct shm_arena *a = arena(SHM_OVERFLOW_REJECT);
	struct shm_lane_local *l = main_lane(a);
	struct shm_producer *p;
	struct shm_repair r;
	unsigned	 tags[4];
	uint64_t	 i;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	send_tags(p, 1, 6);
	ck_assert_uint_eq(recv_all(a, tags, 4), 4);
	for (i = 0; i < CAP; i++)
		cell_seq_set(l, i, 0, memory_order_seq_cst);
	atomic_store(&l->ctl->head, 0);
	atomic_store(&l->ctl->tail, 0);
	ck_assert_int_gt(shm_mailbox_repair(a, 0, &r), 0);
	ck_assert_uint_eq(r.reset, CAP - 1);
	fill_again(a, p);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * Anything at all in the ends and the cells: the lane is usable again
 * after one repair, and a second repair finds nothing to do.
 */
START_TEST(test_repair_random)
{
	struct shm_arena *a = arena(SHM_OVERFLOW_REJECT);
	struct shm_lane_local *l = main_lane(a);
	struct shm_producer *p;
	unsigned	 tags[CAP + 1], round, i;
	uint64_t	 v;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	srandom(11);
	for (round = 0; round < 2000; round++) {
		send_tags(p, 1, 1 + (unsigned)random() % CAP);
		for (i = 0; i < 4; i++) {
			v = (uint64_t)random() << 33 ^ (uint64_t)random();
			switch (random() % 6) {
			case 0:
				atomic_store(&l->ctl->tail, v >> (random() %
				    64));
				break;
			case 1:
				atomic_store(&l->ctl->head, v >> (random() %
				    64));
				break;
			case 2:
				atomic_fetch_add(&l->ctl->tail, random() % 3);
				break;
			default:
				atomic_store(&lane_cell(l, (uint64_t)random())->
				    seq, random() % 2 ? v : (v & SEQ_FLAGS) |
				    (uint64_t)random() % (4 * CAP));
				break;
			}
		}
		(void)shm_mailbox_repair(a, 0, NULL);
		ck_assert_msg(shm_mailbox_repair(a, 0, NULL) == 0,
		    "round %u: a second repair still found work", round);
		(void)recv_all(a, tags, CAP + 1);
		fill_again(a, p);
	}
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

static void
stop_self(void *arg)
{
	(void)arg;
	raise(SIGSTOP);
}

/*
 * A live producer stopped between its claim and its publish: its claim
 * is exactly the "claimed, never published" state of a wedge, but its
 * record names it, so the repair leaves it; once it goes on, its message
 * is delivered.
 */
START_TEST(test_repair_spares_live_claim)
{
	struct shm_arena *a = arena(SHM_OVERFLOW_REJECT);
	struct shm_producer *p;
	struct shm_repair r;
	struct shm_msg	 m;
	unsigned	 tags[4];
	pid_t		 pid;
	int		 st;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (shm_producer_open(a, &p) != 0)
			_exit(10);
		shm_producer_set_hook(p, stop_self, NULL);
		memset(&m, 0, sizeof(m));
		m.tag = 7;
		_exit(shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0) == 0 ? 0 : 11);
	}
	ck_assert_int_eq(waitpid(pid, &st, WUNTRACED), pid);
	ck_assert(WIFSTOPPED(st));
	ck_assert_int_eq(shm_mailbox_repair(a, 0, &r), 0);
	ck_assert_uint_eq(r.released, 0);
	ck_assert_int_eq(kill(pid, SIGCONT), 0);
	ck_assert_int_eq(shm_test_wait_exit(pid), 0);
	ck_assert_uint_eq(recv_all(a, tags, 4), 1);
	ck_assert_uint_eq(tags[0], 7);
	shm_detach(a);
}
END_TEST

/* The memfd's allocated bytes. */
static long long
memfd_bytes(struct shm_arena *a)
{
	struct stat st;

	ck_assert_int_eq(fstat(shm_fd(a), &st), 0);
	return (long long)st.st_blocks * 512;
}

/*
 * A repair after each death must not make the mailbox resident: a read
 * of a memfd's hole allocates a page, and a lane of 4,096 cells of 128
 * bytes is 512 KiB of which an actor that heard two messages wrote one
 * page.  The pages never written are not read (they are free cells); a
 * cell scribbled far away is still found and fixed.
 */
START_TEST(test_repair_reads_no_hole)
{
	struct shm_arena *a = shm_test_arena(1, 4096, 128,
	    SHM_OVERFLOW_REJECT);
	struct shm_lane_local *l = main_lane(a);
	struct shm_producer *p;
	struct shm_repair r;
	unsigned tags[4];
	long long before;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	send_tags(p, 1, 3);
	ck_assert_uint_eq(recv_all(a, tags, 4), 2);
	before = memfd_bytes(a);
	ck_assert_int_eq(shm_mailbox_repair(a, 0, &r), 0);
	ck_assert_int_eq(shm_mailbox_repair(a, 0, &r), 0);
	ck_assert_msg(memfd_bytes(a) == before, "the repair allocated %lld "
	    "bytes", memfd_bytes(a) - before);
	/* A number scribbled in cell 3000, on a page never written. */
	atomic_store(&((struct shm_cell *)(void *)(l->cells + 3000 *
	    l->cell))->seq, 1);
	ck_assert_int_gt(shm_mailbox_repair(a, 0, &r), 0);
	ck_assert_uint_eq(r.reset, 1);
	fill_again(a, p);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * A spare laid out lazy and never prepared: a send fails at once with
 * SHM_ENOTREADY and a dead letter, instead of taking the one cell whose
 * fresh number happens to match and wedging the lane.  Prepared, the
 * lanes take their whole capacity.
 */
START_TEST(test_spare_unprepared)
{
	struct shm_mailbox_layout mb[2];
	struct shm_layout l = { 2, mb, 16, 16 };
	struct shm_arena *a;
	struct shm_producer *p;
	struct shm_msg	 m;
	char		 err[SHM_ERRBUF];
	unsigned	 i;

	mb[0] = shm_test_mbox(CAP, 128, SHM_OVERFLOW_REJECT);
	mb[1] = mb[0];
	mb[1].lazy = 1;
	ck_assert_msg(shm_create(&l, "check-spare", &a, err, sizeof(err)) == 0,
	    "%s", err);
	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	memset(&m, 0, sizeof(m));
	m.tag = 5;
	ck_assert_int_eq(shm_send(p, 1, SHM_LANE_MAIN, &m, NULL, 0),
	    SHM_ENOTREADY);
	ck_assert_int_eq(shm_send(p, 1, SHM_LANE_SYSTEM, &m, NULL, 0),
	    SHM_ENOTREADY);
	ck_assert_uint_eq(shm_test_count_dl(a, SHM_DL_NO_ACTOR), 2);
	ck_assert_str_eq(shm_strerror(SHM_ENOTREADY),
	    "mailbox not prepared: no actor owns it yet");
	ck_assert_int_eq(shm_mailbox_prepare(a, 1), 0);
	for (i = 0; i < CAP; i++)
		ck_assert_int_eq(shm_send(p, 1, SHM_LANE_MAIN, &m, NULL, 0), 0);
	ck_assert_int_eq(shm_send(p, 1, SHM_LANE_MAIN, &m, NULL, 0),
	    SHM_EFULL);
	for (i = 0; i < CAP; i++)
		ck_assert_int_eq(shm_recv(a, 1, SHM_LANES_INBOX, &m, NULL, 0,
		    NULL), 0);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/*
 * A drop_oldest consumer stopped after moving head and before freeing
 * the cell it took: a sender finding the lane full can neither steal the
 * head (the count says a cell is being freed) nor claim.  It used to
 * yield and retry for ever, at 100% CPU, whatever its timeout.  Now it
 * drops its own message at its deadline (at once for timeout 0), and
 * sleeps while it waits.
 */
START_TEST(test_drop_oldest_deadline)
{
	struct shm_arena *a = arena(SHM_OVERFLOW_DROP_OLDEST);
	struct shm_lane_local *l = main_lane(a);
	struct shm_producer *p;
	struct shm_msg	 m;
	struct rusage	 ru;
	uint64_t	 h;
	int64_t		 t0, waited, cpu;
	pid_t		 pid;
	int		 st, timeout_ms;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	send_tags(p, 1, 1 + CAP);
	/* What drain_take leaves between its head CAS and its free. */
	h = atomic_load(&l->ctl->head);
	cell_seq_set(l, h, (h + 1) | SEQ_TAKEN |
	    SEQ_CONSUMING, memory_order_seq_cst);
	atomic_store(&l->ctl->head, h + 1);
	for (timeout_ms = 0; timeout_ms <= 1000; timeout_ms += 1000) {
		t0 = mono_ms();
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			struct shm_producer *q;

			if (shm_producer_open(a, &q) != 0)
				_exit(10);
			memset(&m, 0, sizeof(m));
			m.tag = 99;
			_exit(shm_send(q, 0, SHM_LANE_MAIN, &m, NULL,
			    (int64_t)timeout_ms * 1000000) == SHM_EDROPPED ?
			    0 : 11);
		}
		/* Bounded: a sender that spins for ever is killed, and fails. */
		st = -1;
		while (mono_ms() - t0 < 20000 && waitpid(pid, &st, WNOHANG) == 0)
			usleep(10000);
		if (st == -1) {
			kill(pid, SIGKILL);
			(void)wait4(pid, &st, 0, &ru);
			ck_abort_msg("timeout %d ms: the sender never gave up",
			    timeout_ms);
		}
		ck_assert(WIFEXITED(st));
		ck_assert_int_eq(WEXITSTATUS(st), 0);
		waited = mono_ms() - t0;
		/* It gave up at its deadline, not before. */
		ck_assert_msg(waited >= timeout_ms, "timeout %d ms: gave up "
		    "after %lld ms", timeout_ms, (long long)waited);
		ck_assert_int_eq(getrusage(RUSAGE_CHILDREN, &ru), 0);
		cpu = (int64_t)ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec /
		    1000 + (int64_t)ru.ru_stime.tv_sec * 1000 +
		    ru.ru_stime.tv_usec / 1000;
		/* Sleeping: far less CPU than the time it waited. */
		if (timeout_ms > 0)
			ck_assert_msg(cpu * 2 < waited, "the sender used %lld "
			    "ms of CPU in %lld ms", (long long)cpu,
			    (long long)waited);
	}
	ck_assert_uint_eq(shm_test_count_dl(a, SHM_DL_DROPPED_NEWEST), 2);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

static Suite *
repair_suite(void)
{
	Suite	*s = suite_create("shm_repair");
	TCase	*tc = tcase_create("repair");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_repair_tail_jump);
	tcase_add_test(tc, test_repair_head_jump);
	tcase_add_test(tc, test_repair_consumer_died_mid_batch);
	tcase_add_test(tc, test_recover_consumer_died_mid_batch);
	tcase_add_test(tc, test_repair_claim_without_record);
	tcase_add_test(tc, test_repair_stealing_mark);
	tcase_add_test(tc, test_repair_zeroed);
	tcase_add_test(tc, test_repair_random);
	tcase_add_test(tc, test_repair_spares_live_claim);
	tcase_add_test(tc, test_repair_reads_no_hole);
	tcase_add_test(tc, test_spare_unprepared);
	tcase_add_test(tc, test_drop_oldest_deadline);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(repair_suite());
}
