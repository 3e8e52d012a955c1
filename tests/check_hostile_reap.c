/*
 * check_hostile_reap.c: what a death's settling and the blocked senders'
 * line do when a worker lies, or when the honest parties move at the
 * worst moment:
 *
 *   - a replier reaped while its asker takes the answer it sent
 *     (slot_release_dead against slot_answered): the asker gets that
 *     answer, once, and its reply slot is free again;
 *   - a hostile replier that scribbles what actord reads at its death
 *     (its in-hand record, its deferred set, its asker's reply slots and
 *     reply lane) and dies by SIGKILL, under the real actord (in this
 *     process): actord stays up, frees only the dead incarnation's own
 *     claims (not a live replier's, caught between claim and publish),
 *     and the honest asker gets exactly one answer or ACTOR_EDIED;
 *   - a hostile worker that keeps rewriting the line's words (turn_next,
 *     turn_grant, turn_out, turn_cell, turn_left) while honest senders
 *     block on the mailbox: every sender returns by its deadline, and
 *     actord's grants, reaps and repairs return;
 *   - a hostile producer that forges enq_ns (SHM_ENQ_UNTIMED | position,
 *     or a time) at the head of the lane of a consumer that dies with a
 *     message in hand: the reap's still_queued tells them apart, and
 *     the honest ask is answered once.
 *
 * Every wait is bounded; what a test forks it kills and reaps by pid.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/check_shm_util.h"
#include "tests/lib/tcheck.h"
#include "worker/actor.h"
/* shm_impl.h's producer slots' SLOT_FREE is not libactor's reply slots'. */
#undef SLOT_FREE
#include "worker/actor_impl.h"

#define WAIT_MS		10000	/* the most any step may take */
#define ASK_NS		(10 * 1000000000LL)

/* --- a replier reaped while its answer is being taken ------------------------ */

/*
 * Two actors up: 0 answers, 1 asks.  An ask from 1 to 0, taken by 0,
 * answered ("A") and committed; 0 dies holding it (SIGKILL before it
 * marked the message done).
 */
static struct shm_arena *
answered_then_died(struct actor **c, uint64_t *corr)
{
	struct shm_arena *ar = shm_test_actors_up(&(struct shm_test_actors){
	    .n = 2, .cap = 16, .rcap = 16, .ov = SHM_OVERFLOW_BLOCK,
	    .block_ms = 10, .watchers = 16 });
	struct actor_ref to = { 0, ACTOR_ANY };
	struct actor *w;
	struct actor_msg m;

	*c = shm_test_open(ar, 1);
	w = shm_test_open(ar, 0);
	ck_assert_int_eq(actor_ask_send(*c, to, 1, "a", 1, ASK_NS, corr), 0);
	ck_assert_int_eq(actor_recv(w, &m, 0), 0);
	ck_assert_int_eq(actor_reply(w, 1, "A", 1), 0);
	ck_assert_int_eq(actor_commit(w, "one", 4), 0);
	w->holding = false;		/* the process dies holding it */
	actor_close(w);
	return ar;
}

/*
 * The asker takes the answer off its reply lane (shm_recv), and actord
 * reaps the replier before the asker reads the answer's reply slot
 * (slot_answered): the lane no longer holds the answer, so actord frees
 * the dead replier's claim.  The answer is still the ask's: the asker
 * keeps it, and the slot is free again.  Before, slot_answered found the
 * slot waiting, not claimed, and dropped the answer as late: the ask
 * waited out its timeout for an answer it had had (actord sends no
 * ACTOR_EDIED: the dead had answered), and actor_ask's slot stayed taken
 * for good.
 */
START_TEST(answer_taken_while_replier_reaped)
{
	struct actor *c;
	uint64_t corr;
	struct shm_arena *ar = answered_then_died(&c, &corr);
	struct actor_stats st;
	struct shm_msg m;
	char buf[64];

	ck_assert_int_eq(shm_recv(ar, 1, SHM_LANE_BIT(SHM_LANE_REPLY), &m,
	    buf, sizeof(buf), NULL), 0);
	ck_assert_uint_eq(m.corr, corr);
	ck_assert_int_eq(actor_reaped(ar, 0, 0, 9, NULL), 0);
	ck_assert_int_eq(slot_answered(c, &m), 1);
	ck_assert_uint_eq(c->nslots, 0);
	/* Nothing else comes for it: no ACTOR_EDIED after the answer. */
	ck_assert_int_eq(shm_pending(ar, 1, SHM_LANE_BIT(SHM_LANE_REPLY)),
	    0);
	ck_assert_int_eq(actor_stats(ar, 1, &st), 0);
	ck_assert_uint_eq(st.late_replies, 0);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

static Suite *
hostile_reap_suite(void)
{
	Suite	*s = suite_create("hostile_reap");
	TCase	*tc = tcase_create("slots");

	tcase_add_test(tc, answer_taken_while_replier_reaped);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(hostile_reap_suite());
}
