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
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
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

/* --- the line's words rewritten while a sender is at its front ---------------- */

#define LINE_CAP	8	/* cells of the lane under test */
#define LINE_FULL	6	/* over half full: a sender may not pass the line */
#define LINE_NS		(100 * 1000000LL)	/* the sender's timeout */

static struct shm_mbox *rw_m;		/* the sender child's mailbox */
static volatile sig_atomic_t rw_armed;	/* the handler rewinds */
static volatile sig_atomic_t rw_traps;

/*
 * Every futex call of the sender child traps here, between a grant and
 * the sender's next look at the line, where a hostile worker spinning on
 * the line's words lands its stores sooner or later: deterministically.
 * The line is rewound as that worker would: the grant back to the
 * sender's ticket (0), a ticket nobody holds behind it (turn_next 2),
 * nothing owed.  So the sender is at the front again, and its grant
 * finds room and grants again, each time.
 */
static void
on_futex_rewind(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	rw_traps++;
	if (!rw_armed)
		return;
	atomic_store(&rw_m->turn_grant, 0);
	atomic_store(&rw_m->turn_next, 2);
	atomic_store(&rw_m->turn_out, 0);
}

/* From now on, every futex call of this process traps (SIGSYS). */
static void
trap_futex(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_futex, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_futex_rewind;
	sa.sa_flags = SA_SIGINFO;
	if (sigaction(SIGSYS, &sa, NULL) == -1 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == -1)
		_exit(90);
}

/*
 * A sender in line whose front keeps being rewound (above) returns by its
 * deadline: it leaves the line and has its last look for a cell.  Before,
 * the front that granted a turn looked at the line again without looking
 * at the clock, and a worker that kept rewinding the line kept it there,
 * spinning, for as long as it liked (here: until the alarm, 2 s for a
 * 100 ms timeout).
 */
START_TEST(front_rewound_leaves_at_deadline)
{
	struct shm_arena *a = shm_test_arena(1, LINE_CAP, 128,
	    SHM_OVERFLOW_BLOCK);
	struct shm_mbox_local *mb = shm_mb(a, 0);
	struct shm_producer *p;
	struct shm_msg m;
	unsigned i;
	pid_t pid;
	int rc;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	memset(&m, 0, sizeof(m));
	for (i = 0; i < LINE_FULL; i++)
		ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0), 0);
	/* A line nobody stands in, owing the free cells: queue behind it. */
	atomic_store(&mb->m->turn_out, LINE_CAP - LINE_FULL);
	atomic_store(&mb->lane[SHM_LANE_MAIN].ctl->queued, 1);
	if ((pid = fork()) == 0) {
		struct shm_producer *q;

		/* Check's SIGALRM handler would kill the whole group. */
		signal(SIGALRM, SIG_DFL);
		alarm(2);
		if (shm_producer_open(a, &q) != 0)
			_exit(10);
		rw_m = mb->m;
		trap_futex();
		rw_armed = 1;
		rc = shm_send(q, 0, SHM_LANE_MAIN, &m, NULL, LINE_NS);
		rw_armed = 0;
		if (rw_traps == 0)
			_exit(3);	/* the line was never rewound */
		_exit(rc == 0 ? 0 : rc == SHM_EFULL ? 1 : 11);
	}
	ck_assert_int_gt(pid, 0);
	rc = shm_test_wait_exit(pid);
	ck_assert_msg(rc == 0 || rc == 1, "the sender %s (status %d)",
	    rc == 128 + SIGALRM ? "never returned" : "failed", rc);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

static Suite *
hostile_reap_suite(void)
{
	Suite	*s = suite_create("hostile_reap");
	TCase	*tc = tcase_create("slots");

	tcase_add_test(tc, answer_taken_while_replier_reaped);
	suite_add_tcase(s, tc);
	tc = tcase_create("line");
	tcase_add_test(tc, front_rewound_leaves_at_deadline);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(hostile_reap_suite());
}
