/*
 * check_adv_repair.c: an adversary's pass over the repair at a consumer's
 * reap (shm/repair.c, shm/turns.c's shm_turns_repair).  A hostile worker
 * writes plausible lies into a mailbox's words (ends, cells, the turn
 * queue, producer slots); the consumer dies; actord repairs the mailbox;
 * the next incarnation drains it.  Whatever was written, the repaired
 * lane must then take as many sends that may not wait (actord's asks:
 * timeout 0) as it has cells, and give each of them back.
 *
 * The lies are drawn from a fixed list of seeds, so a failure is the same
 * on every run and names its seed.  The sweeps found no lane left
 * refusing sends (a repair broken on purpose fails thousands of seeds);
 * the case after them is a lie about the turn queue that the repair
 * kept: a line note in a slot no live process holds.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shm/shm.h"
#include "tests/check_shm_util.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tlies.h"

#define CAP	16		/* as check_e2e_hostile's victims */
#define SEEDS	4000

static struct shm_lane_local *
lane_of(struct shm_arena *a, unsigned lane)
{
	return &shm_mb(a, 0)->lane[lane];
}

static int
count_one(void *arg, enum shm_lane lane, const struct shm_msg *m,
    const void *payload)
{
	(void)lane;
	(void)m;
	(void)payload;
	(*(unsigned *)arg)++;
	return 0;
}

/*
 * Take everything the lanes give, as libactor's receive does (one at a
 * time, shm_take_one); bounded: a lie may loop.
 */
static unsigned
drain(struct shm_arena *a)
{
	unsigned n = 0, tries;

	for (tries = 0; tries < 4 * CAP; tries++)
		if (shm_take_one(a, 0, SHM_LANES_INBOX, count_one, &n) == 0 &&
		    !shm_pending(a, 0, SHM_LANES_INBOX))
			break;
	return n;
}

/*
 * The lane takes CAP sends that may not wait, and gives them back; twice,
 * so that a second lap over the cells is checked too.  0, or the number
 * of the send that failed, + 1000 * the lap.
 */
static int
takes_cap(struct shm_arena *a, struct shm_producer *p)
{
	struct shm_msg m;
	unsigned lap, i;
	int rc;

	for (lap = 0; lap < 3; lap++) {
		for (i = 0; i < CAP; i++) {
			memset(&m, 0, sizeof(m));
			m.tag = 1000 + i;
			if ((rc = shm_send(p, 0, SHM_LANE_MAIN, &m, NULL,
			    0)) != 0)
				return (int)(1000 * lap + i + 1);
		}
		if (drain(a) != CAP)
			return (int)(1000 * lap + 999);
	}
	return 0;
}

/*
 * Seed s: a lane used for a while (heads and tails somewhere in a lap),
 * then lies written while its consumer and a sender go on (as the
 * scribbler does to a live victim); the consumer "dies", actord
 * recovers and repairs, the next incarnation drains.
 */
static int
one_seed(unsigned s, enum shm_overflow pol, int mode)
{
	struct shm_arena *a = shm_test_arena(1, CAP, 128, pol);
	struct shm_producer *p;
	struct shm_repair r;
	struct shm_msg m;
	unsigned i, n, queued = 0;
	int bad;

	tlies_seed(s);
	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	memset(&m, 0, sizeof(m));
	n = (unsigned)(tlies_rnd() % (3 * CAP));
	for (i = 0; i < n; i++) {
		if (queued < CAP) {
			ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m,
			    NULL, 0), 0);
			queued++;
		}
		if (tlies_rnd() % 3 != 0 && shm_recv(a, 0, SHM_LANES_INBOX, &m,
		    NULL, 0, NULL) == 0)
			queued--;
	}
	n = 1 + (unsigned)(tlies_rnd() % 12);
	for (i = 0; i < n; i++) {
		switch (tlies_rnd() % 4) {
		case 0:
			(void)shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0);
			break;
		case 1:
			(void)shm_recv(a, 0, SHM_LANES_INBOX, &m, NULL, 0,
			    NULL);
			break;
		default:
			tlies_lie(a, 0, mode);
			break;
		}
	}
	(void)shm_consumer_recover(a, 0);
	(void)shm_mailbox_repair(a, 0, &r);
	/* The slots' turn notes are a dead worker's: reaped by now. */
	for (i = 0; i < 2; i++)
		atomic_store(&a->slots[a->nslots - 1 - i].turn_mbox, 0);
	(void)shm_consumer_recover(a, 0);
	(void)drain(a);
	bad = takes_cap(a, p);
	shm_producer_close(p);
	shm_detach(a);
	return bad;
}

static void
sweep(enum shm_overflow pol, int mode)
{
	unsigned s, fails = 0, first = 0;
	int bad, first_bad = 0;

	for (s = 0; s < SEEDS / shm_test_scale(); s++)
		if ((bad = one_seed(s, pol, mode)) != 0 && fails++ == 0) {
			first = s;
			first_bad = bad;
		}
	ck_assert_msg(fails == 0, "%u of %u seeds leave a lane that refuses "
	    "sends after its repair; first: seed %u, send %d", fails,
	    SEEDS / shm_test_scale(), first, first_bad);
}

START_TEST(test_sweep_block)
{
	sweep(SHM_OVERFLOW_BLOCK, 0);
}
END_TEST

START_TEST(test_sweep_reject)
{
	sweep(SHM_OVERFLOW_REJECT, 0);
}
END_TEST

START_TEST(test_sweep_any_lane)
{
	sweep(SHM_OVERFLOW_BLOCK, 1);
}
END_TEST

START_TEST(test_sweep_scribbler)
{
	sweep(SHM_OVERFLOW_BLOCK, 2);
}
END_TEST

/*
 * The queue's words a sane lie (a line of thousands nobody stands in,
 * every cell owed, the hint set), and a free producer slot, one no
 * process holds, noting a ticket of this mailbox: the repair counted it
 * as a sender in line and kept the lie, at this reap and every later
 * one, so that every sender that may wait, into a lane more than half
 * full, queued behind nobody (a wait of up to 230 ms per send,
 * turns.c).  Only a live sender stands in line: the queue is reset, and
 * the next send takes the last free cell without a ticket.
 */
START_TEST(test_line_note_of_nobody)
{
	struct shm_arena *a = shm_test_arena(1, CAP, 128, SHM_OVERFLOW_BLOCK);
	struct shm_mbox	*m = shm_mb(a, 0)->m;
	struct shm_slot	*s = &a->slots[a->nslots - 1];
	struct shm_producer *p;
	struct shm_repair r;
	struct shm_msg	 msg;
	uint32_t	 next;
	unsigned	 i;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	ck_assert_int_eq(atomic_load(&s->pid), 0);
	for (i = 0; i < CAP - 1; i++) {
		memset(&msg, 0, sizeof(msg));
		ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &msg, NULL, 0),
		    0);
	}
	atomic_fetch_add(&m->turn_next, 5000);
	atomic_store(&m->turn_out, 2);
	atomic_store(&lane_of(a, SHM_LANE_MAIN)->ctl->queued, 1);
	atomic_store(&s->turn_mbox, 1);
	atomic_store(&s->turn_ticket, atomic_load(&m->turn_grant) + 3);
	ck_assert_int_gt(shm_mailbox_repair(a, 0, &r), 0);
	ck_assert_uint_eq(atomic_load(&lane_of(a, SHM_LANE_MAIN)->ctl->queued),
	    0);
	ck_assert_uint_eq(atomic_load(&m->turn_out), 0);
	/* The last free cell goes to a send that may wait, without a line. */
	next = atomic_load(&m->turn_next);
	memset(&msg, 0, sizeof(msg));
	ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &msg, NULL,
	    2000 * 1000000LL), 0);
	ck_assert_uint_eq(atomic_load(&m->turn_next), next);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

static Suite *
adv_repair_suite(void)
{
	Suite	*s = suite_create("adv_repair");
	TCase	*tc = tcase_create("lies");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_sweep_block);
	tcase_add_test(tc, test_sweep_reject);
	tcase_add_test(tc, test_sweep_any_lane);
	tcase_add_test(tc, test_sweep_scribbler);
	tcase_add_test(tc, test_line_note_of_nobody);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(adv_repair_suite());
}
