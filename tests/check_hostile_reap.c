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
#include <sched.h>
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

#include "tests/check_actor_util.h"
#include "tests/check_shm_util.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"
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
	if (shm_test_trap_syscall(SYS_futex, on_futex_rewind) == -1)
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

/* --- a worker that keeps lying about the line, senders blocked ------------- */

#define NSENDERS	6
#define NSENDS		30
#define SEND_NS		(20 * 1000000LL)

/* xorshift: the liar's choices, the same every run. */
static uint32_t
next_rand(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/*
 * Until killed, rewrite the line's words of mailbox 0 with lies near
 * the truth (so that they are believed) and far from it: the next
 * ticket and the grant moved back and forth, turns owed from -2^31 to
 * 2^31, futex cells bumped, tickets said to have left, the hint flipped.
 */
static pid_t
line_liar(struct shm_arena *a)
{
	struct shm_mbox_local *mb = shm_mb(a, 0);
	struct shm_mbox *m = mb->m;
	uint32_t x = 2463534242u, r, g;
	pid_t pid;

	if ((pid = fork()) != 0) {
		ck_assert_int_gt(pid, 0);
		return pid;
	}
	for (;;) {
		r = next_rand(&x);
		g = atomic_load(&m->turn_grant);
		switch (r % 7) {
		case 0:
			atomic_store(&m->turn_grant, g - (r >> 8) % 4);
			break;
		case 1:
			atomic_store(&m->turn_next, g + (r >> 8) % 3);
			break;
		case 2:
			atomic_store(&m->turn_out, (r >> 3) % 5 == 0 ? r :
			    (r >> 8) % 5 - 2);
			break;
		case 3:
			atomic_fetch_add(&m->turn_cell[(r >> 8) %
			    SHM_TURN_CELLS], 1);
			break;
		case 4:
			atomic_store(&m->turn_left[(r >> 8) % SHM_TURN_LEFT],
			    (r >> 12) % 3 == 0 ? 0 : g + (r >> 16) % 4);
			break;
		case 5:
			atomic_store(&mb->lane[SHM_LANE_MAIN].ctl->queued,
			    (r >> 8) & 1);
			break;
		default:
			atomic_store(&m->turn_next, r);
			break;
		}
		if ((r & 1023) == 0)
			sched_yield();
	}
}

/*
 * A sender of NSENDS messages to mailbox 0, each waiting at most SEND_NS
 * for room: exits 0 once every send returned (in, or full), 11 on any
 * other failure.
 */
static pid_t
patient_sender(struct shm_arena *a, uint32_t id)
{
	struct shm_producer *p;
	struct shm_msg m;
	unsigned i;
	pid_t pid;
	int rc;

	if ((pid = fork()) != 0) {
		ck_assert_int_gt(pid, 0);
		return pid;
	}
	if (shm_producer_open(a, &p) != 0)
		_exit(10);
	memset(&m, 0, sizeof(m));
	m.tag = 7;
	m.sender.index = id;
	for (i = 0; i < NSENDS; i++)
		if ((rc = shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, SEND_NS)) !=
		    0 && rc != SHM_EFULL)
			_exit(11);
	_exit(0);
}

/*
 * Senders blocked on a full mailbox that nobody empties, while a worker
 * keeps lying about their line (line_liar), one of them SIGKILLed in
 * line and reaped: every sender is done, each send failed as full at its
 * deadline, while the liar still lies, and what actord does meanwhile
 * (the dead sender's reap, waking the blocked senders, grants) returns.
 */
START_TEST(line_lied_about_senders_done)
{
	struct shm_arena *a = shm_test_arena(1, LINE_CAP, 128,
	    SHM_OVERFLOW_BLOCK);
	struct timespec ms = { 0, 1000000 };
	struct shm_producer *p;
	struct shm_msg m;
	pid_t senders[NSENDERS], liar;
	unsigned i, released, left = NSENDERS, waited;
	bool done[NSENDERS] = { false };
	int rc;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	memset(&m, 0, sizeof(m));
	for (i = 0; i < LINE_CAP; i++)
		ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0), 0);
	for (i = 0; i < NSENDERS; i++)
		senders[i] = patient_sender(a, i);
	(void)shm_test_waiting_senders(a, 0, 1, WAIT_MS);
	liar = line_liar(a);
	/* One sender killed in line; actord reaps its slot. */
	nanosleep(&ms, NULL);
	ck_assert_int_eq(kill(senders[0], SIGKILL), 0);
	ck_assert_int_eq(shm_test_wait_exit(senders[0]), 128 + SIGKILL);
	(void)shm_reap(a, senders[0], &released);
	done[0] = true;
	left--;
	/*
	 * Nobody takes a message: the lane stays full, and a sender is done
	 * only by its deadlines, each send's.
	 */
	for (waited = 0; left > 0 && waited < WAIT_MS; waited++) {
		if (waited % 16 == 0) {
			shm_wake_blocked(a, 0);
			(void)shm_turns_grant(shm_mb(a, 0));
		}
		for (i = 1; i < NSENDERS; i++) {
			if (done[i] || !shm_test_exited(senders[i]))
				continue;
			rc = shm_test_wait_exit(senders[i]);
			ck_assert_msg(rc == 0, "sender %u: status %d", i, rc);
			done[i] = true;
			left--;
		}
		nanosleep(&ms, NULL);
	}
	ck_assert_msg(!shm_test_exited(liar), "the liar stopped lying");
	kill(liar, SIGKILL);
	(void)shm_test_wait_exit(liar);
	for (i = 1; i < NSENDERS; i++)
		if (!done[i]) {
			kill(senders[i], SIGKILL);
			(void)shm_test_wait_exit(senders[i]);
		}
	ck_assert_msg(left == 0, "%u senders still sending after %u ms of "
	    "lies", left, waited);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

/* Reap pid, which must have died by SIGKILL: its wait status. */
static int
killed(pid_t pid, const char *who)
{
	int st;

	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	    "%s did not die as planned (status %d)", who, st);
	return st;
}

/* --- a hostile replier scribbles what its reap reads ----------------------- */

#define BAD		0	/* the hostile replier */
#define ASKER		1	/* the honest asker (this process) */
#define GOOD		2	/* an honest replier, caught mid-answer */
#define HOSTILE_NS	(5 * 1000000000LL)

/*
 * A reply slot's claim as replyslots.c encodes it (claimed_by): the
 * value a hostile worker forges, here in another incarnation's name.
 */
static uint64_t
forged_claim(uint32_t who, uint32_t inc, uint64_t id)
{
	uint32_t tag = inc == 0 ? 0 : (inc - 1) % 127 + 1;

	return 1ULL << 63 | (uint64_t)(who & 0xffff) << 40 |
	    (uint64_t)tag << 56 | (id & CORR_ID_MASK);
}

static void
stop_self(void *arg)
{
	(void)arg;
	raise(SIGSTOP);
}

/* Wait until pid is stopped (1) or WAIT_MS passed (0). */
static int
stopped(pid_t pid)
{
	struct timespec ts = { 0, 1000000 };
	int i;

	for (i = 0; i < WAIT_MS; i++) {
		if (tcheck_proc_state(pid) == 'T')
			return 1;
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* GOOD takes its ask, claims its answer's slot and cell, and stops. */
static pid_t
good_stopped_mid_answer(struct shm_arena *ar)
{
	struct actor *w;
	struct actor_msg m;
	pid_t pid;

	if ((pid = fork()) == 0) {
		w = shm_test_open(ar, GOOD);
		if (actor_recv(w, &m, WAIT_MS * 1000000LL) != 0)
			_exit(1);
		shm_producer_set_hook(w->prod, stop_self, NULL);
		_exit(actor_reply(w, 7, "G", 1) == 0 ? 0 : 2);
	}
	ck_assert_int_gt(pid, 0);
	ck_assert_msg(stopped(pid), "GOOD never stopped mid-answer");
	return pid;
}

/*
 * BAD takes the ask in hand, then lies in everything actord reads at its
 * death: its deferred set (asks of others, ours, a mailbox past the
 * arena, an id nobody waits for, the same live claim many times), the
 * asker's free reply slots (claims in the name of another incarnation of
 * BAD, and of its own), the asker's reply lane (its free cells marked
 * with positions laps away, as answers to the ask; its tail far ahead),
 * claims the asker's slot for the ask it holds, and dies by SIGKILL.
 */
static pid_t
bad_scribbles_and_dies(struct shm_arena *ar, uint64_t good_corr,
    uint32_t asker_inc, uint64_t *forged, uint32_t nforged)
{
	struct shm_lane_local *l = &shm_mb(ar, ASKER)->lane[SHM_LANE_REPLY];
	struct ar_caps caps, ac;
	struct ar_hdr *h, *ah;
	struct ar_defer *d;
	struct actor *w;
	struct actor_msg m;
	_Atomic uint64_t *slots;
	uint64_t who = (uint64_t)ASKER << 32 | asker_inc, t, pos;
	uint32_t i, mask;
	pid_t pid;

	if ((pid = fork()) != 0) {
		ck_assert_int_gt(pid, 0);
		return pid;
	}
	w = shm_test_open(ar, BAD);
	if (actor_recv(w, &m, WAIT_MS * 1000000LL) != 0)
		_exit(1);
	if ((h = ar_hdr(ar, BAD, &caps)) == NULL ||
	    (ah = ar_hdr(ar, ASKER, &ac)) == NULL)
		_exit(2);
	d = ar_defers(h, &caps);
	slots = ar_asks(ah, &ac);
	mask = ac.ask_cap - 1;
	for (i = 0; i < caps.ask_cap; i++) {
		switch (i % 5) {
		case 0:		/* GOOD's live claim, again and again */
			atomic_store(&d[i].who, who);
			atomic_store(&d[i].corr, good_corr);
			break;
		case 1:		/* the ask in hand, as if deferred too */
			atomic_store(&d[i].who, who);
			atomic_store(&d[i].corr, m.corr);
			break;
		case 2:		/* a mailbox past the arena */
			atomic_store(&d[i].who, 0xfffffff0ULL << 32 | 1);
			atomic_store(&d[i].corr, 77);
			break;
		case 3:		/* an id nobody waits for */
			atomic_store(&d[i].who, who);
			atomic_store(&d[i].corr, ~0ULL);
			break;
		default:	/* the forged claims' ids */
			atomic_store(&d[i].who, who);
			atomic_store(&d[i].corr, forged[i % nforged] &
			    CORR_ID_MASK);
			break;
		}
	}
	for (i = 0; i < nforged; i++)
		atomic_store(&slots[forged[i] & CORR_ID_MASK & mask],
		    forged[i]);
	t = atomic_load(&l->ctl->tail);
	for (pos = t; pos < t + l->cap; pos++) {
		struct shm_cell *c = lane_cell(l, pos);

		c->msg.flags = SHM_MSG_REPLY;
		c->msg.corr = m.corr;
		cell_seq_set(l, pos, pos + 1 + 7 * (uint64_t)l->cap,
		    memory_order_release);
	}
	atomic_store(&l->ctl->tail, t + (1ULL << 40));
	/* Dies as if between claiming its answer's slot and sending it. */
	if (!slot_claim(ar, &(struct shm_msg){ .sender = { ASKER, asker_inc },
	    .corr = m.corr, .flags = SHM_MSG_ASK }, BAD, w->incarnation))
		_exit(3);
	raise(SIGKILL);
	_exit(4);
}

/*
 * The reap of a hostile replier that lied in everything its reap reads
 * (bad_scribbles_and_dies), while GOOD is stopped between claiming its
 * answer and sending it: the reap returns; the claims in the name of
 * BAD's other incarnations and GOOD's live claim are left as they are;
 * the ask BAD held is given again, and each of the asker's two asks gets
 * exactly one answer, the right one: nothing else, no error.
 */
START_TEST(hostile_replier_reaped)
{
	struct shm_arena *ar = shm_test_actors_up(&(struct shm_test_actors){
	    .n = 3, .cap = 16, .rcap = 16, .ov = SHM_OVERFLOW_BLOCK,
	    .block_ms = 10, .watchers = 16 });
	struct actor *c = shm_test_open(ar, ASKER), *w;
	struct actor_msg m, r;
	_Atomic uint64_t *slots = ar_asks(c->hdr, &c->caps);
	uint32_t mask = c->reply_cap - 1, inc, i;
	uint64_t gc, bc, got, gv, forged[4], fv[4];
	struct shm_lane_local *l = &shm_mb(ar, ASKER)->lane[SHM_LANE_REPLY];
	uint64_t tail, seqs[16];
	pid_t good, bad;
	int st, seen_g = 0, seen_b = 0, rc;

	ck_assert_int_eq(actor_ask_send(c, (struct actor_ref){ GOOD,
	    ACTOR_ANY }, 1, "g", 1, HOSTILE_NS, &gc), 0);
	good = good_stopped_mid_answer(ar);
	gv = atomic_load(&slots[gc & mask]);
	ck_assert_uint_ne(gv & (1ULL << 63), 0);	/* GOOD's claim */
	ck_assert_int_eq(actor_ask_send(c, (struct actor_ref){ BAD,
	    ACTOR_ANY }, 2, "b", 1, HOSTILE_NS, &bc), 0);
	/* Claims on free slots, in BAD's name: other incarnations, its own. */
	inc = shm_actor_incarnation(ar, BAD);
	for (i = 0; i < 4; i++) {
		uint64_t id = (bc + 3 + i) & CORR_ID_MASK;

		forged[i] = forged_claim(BAD, i < 3 ? inc + 1 + i : inc, id);
	}
	tail = atomic_load(&l->ctl->tail);
	ck_assert_uint_eq(l->cap, 16);
	for (i = 0; i < l->cap; i++)
		seqs[i] = atomic_load(&lane_cell(l, i)->seq);
	bad = bad_scribbles_and_dies(ar, gc, c->incarnation, forged, 4);
	st = killed(bad, "BAD");
	for (i = 0; i < 4; i++)
		fv[i] = atomic_load(&slots[forged[i] & CORR_ID_MASK & mask]);

	ck_assert_int_eq(actor_reaped(ar, BAD, bad, st, NULL), 0);

	/* Only the dead incarnation's own claims were freed. */
	ck_assert_msg(atomic_load(&slots[gc & mask]) == gv,
	    "GOOD's live claim was freed");
	for (i = 0; i < 3; i++)
		ck_assert_uint_eq(fv[i], forged[i]);
	for (i = 0; i < 3; i++)
		ck_assert_msg(atomic_load(&slots[forged[i] & CORR_ID_MASK &
		    mask]) == forged[i], "another incarnation's claim %u freed",
		    i);
	/*
	 * The asker's lane as it was (BAD's lies undone): a lane a worker
	 * scribbled on is repaired at its consumer's reap, not this one.
	 */
	atomic_store(&l->ctl->tail, tail);
	for (i = 0; i < l->cap; i++)
		atomic_store(&lane_cell(l, i)->seq, seqs[i]);
	ck_assert_int_eq(kill(good, SIGCONT), 0);
	ck_assert_int_eq(shm_test_wait_exit(good), 0);
	/* BAD's next incarnation is given the ask again, and answers it. */
	shm_actor_set_state(ar, BAD, SHM_ACTOR_UP);
	w = shm_test_open(ar, BAD);
	ck_assert_int_eq(actor_recv(w, &m, WAIT_MS * 1000000LL), 0);
	ck_assert_uint_ne(m.flags & ACTOR_MSG_REDELIVERED, 0);
	ck_assert_int_eq(actor_reply(w, 8, "B", 1), 0);
	for (i = 0; i < 2; i++) {
		rc = actor_ask_next(c, &r, WAIT_MS * 1000000LL, &got);
		ck_assert_msg(rc == 0, "ask %llu: %d (%s)",
		    (unsigned long long)got, rc, actor_error_text(&r));
		ck_assert_uint_eq(r.len, 1);
		if (got == gc && ((const char *)r.data)[0] == 'G')
			seen_g++;
		else if (got == bc && ((const char *)r.data)[0] == 'B')
			seen_b++;
	}
	ck_assert_int_eq(seen_g, 1);
	ck_assert_int_eq(seen_b, 1);
	ck_assert_int_eq(actor_ask_next(c, &r, 0, &got), ACTOR_EEMPTY);
	actor_close(w);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

/* --- a deferred set of lies as long as it can be ---------------------------- */

#define BIG_LANE	65536	/* reply cells, and so deferred entries */

/*
 * The replier (0) takes the asker's (1) ask and defers it, claims its
 * slot, fills the asker's reply lane with answers to other asks and then
 * the one to this ask, last, and fills every entry of its deferred set
 * (65,536 of them, as many as its reply lane has cells) with this same
 * ask; then it dies by SIGKILL.  Each entry names a slot the dead
 * claimed, whose answer is in the lane: found, but only at the end of a
 * scan of the whole lane.
 */
static pid_t
long_lies_then_died(struct shm_arena *ar)
{
	struct actor_caller k;
	struct ar_caps caps;
	struct ar_hdr *h;
	struct ar_defer *d;
	struct shm_msg q, ask;
	struct actor *w;
	struct actor_msg m;
	uint64_t who;
	uint32_t i;
	pid_t pid;

	if ((pid = fork()) != 0) {
		ck_assert_int_gt(pid, 0);
		return pid;
	}
	w = shm_test_open(ar, BAD);
	if (actor_recv(w, &m, 0) != 0 || actor_defer(w, &k) != 0 ||
	    actor_recv(w, &m, 0) != ACTOR_ETIMEDOUT ||
	    (h = ar_hdr(ar, BAD, &caps)) == NULL || caps.ask_cap != BIG_LANE)
		_exit(1);
	memset(&ask, 0, sizeof(ask));
	ask.sender.index = k.asker.index;
	ask.sender.incarnation = k.asker.incarnation;
	ask.corr = k.corr;
	ask.flags = SHM_MSG_ASK;
	if (!slot_claim(ar, &ask, BAD, w->incarnation))
		_exit(2);
	memset(&q, 0, sizeof(q));
	q.flags = SHM_MSG_REPLY;
	for (i = 0; i < BIG_LANE; i++) {
		q.corr = i == BIG_LANE - 1 ? k.corr : k.corr + 1 + i;
		if (shm_send(w->prod, ASKER, SHM_LANE_REPLY, &q, NULL, 0) != 0)
			_exit(3);
	}
	d = ar_defers(h, &caps);
	who = (uint64_t)ASKER << 32 | k.asker.incarnation;
	for (i = 0; i < caps.ask_cap; i++) {
		atomic_store(&d[i].who, who);
		atomic_store(&d[i].corr, k.corr);
	}
	raise(SIGKILL);
	_exit(4);
}

/*
 * The reap of long_lies_then_died: each entry cost a scan of the asker's
 * 65,536-cell lane, 2^32 cells in all (minutes of actord's loop); it now
 * returns long before the alarm (10 s), and the asker gets its answer,
 * once, behind the others, dropped as late.
 */
START_TEST(long_deferred_lie_reaped_at_once)
{
	struct shm_arena *ar = shm_test_actors_up(&(struct shm_test_actors){
	    .n = 2, .cap = 16, .rcap = BIG_LANE, .ov = SHM_OVERFLOW_BLOCK,
	    .block_ms = 10, .watchers = 16 });
	struct actor *c = shm_test_open(ar, ASKER);
	struct actor_msg r;
	uint64_t corr, got;
	pid_t bad, reaper;
	int st;

	ck_assert_int_eq(actor_ask_send(c, (struct actor_ref){ BAD,
	    ACTOR_ANY }, 1, "a", 1, HOSTILE_NS, &corr), 0);
	bad = long_lies_then_died(ar);
	st = killed(bad, "the liar");
	/* actord's reap, in a child under an alarm. */
	if ((reaper = fork()) == 0) {
		signal(SIGALRM, SIG_DFL);
		alarm(10);
		_exit(actor_reaped(ar, BAD, bad, st, NULL) == 0 ? 0 : 1);
	}
	ck_assert_int_gt(reaper, 0);
	st = shm_test_wait_exit(reaper);
	ck_assert_msg(st == 0, "the reap %s (status %d)", st == 128 +
	    SIGALRM ? "never returned" : "failed", st);
	ck_assert_int_eq(actor_ask_next(c, &r, 0, &got), 0);
	ck_assert_uint_eq(got, corr);
	ck_assert_int_eq(actor_ask_next(c, &r, 0, &got), ACTOR_EEMPTY);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

/* --- the same under the real actord -------------------------------------- */

#define T_ASK		1
#define NFORGED		3	/* claims forged on the asker's free slots */

/*
 * /bad, at its first ask (its first incarnation): lies in its deferred
 * set (the ask in hand again, a mailbox past the arena, an id nobody
 * waits for, the ids below), forges claims on free reply slots of the
 * asker in the name of its other incarnations (each and its id noted in
 * sh->val for the test), claims the slot of the ask in hand as its own
 * (as if killed sending the answer), and dies by SIGKILL.
 */
static void
bad_lies_and_dies(struct actor *a)
{
	struct shm_arena *ar = a->arena;
	uint32_t asker = a->cur.sender.index, i, k;
	uint64_t who = (uint64_t)asker << 32 | a->cur.sender.incarnation, id;
	struct ar_caps caps, ac;
	struct ar_hdr *h = ar_hdr(ar, (uint32_t)a->idx, &caps);
	struct ar_hdr *ah = ar_hdr(ar, asker, &ac);
	struct ar_defer *d;

	if (h == NULL || ah == NULL)
		_exit(2);
	d = ar_defers(h, &caps);
	if (ac.ask_cap < 8)
		_exit(5);
	/* Slots the asker's two asks (consecutive ids) never use. */
	for (i = 0; i < NFORGED; i++) {
		id = ac.ask_cap + ((a->cur.corr + 4 + i) & (ac.ask_cap - 1));
		atomic_store(&sh->val[4 + i], (int64_t)id);
		atomic_store(&sh->val[i], (int64_t)forged_claim((uint32_t)
		    a->idx, a->incarnation + 1 + i, id));
		atomic_store(&ar_asks(ah, &ac)[id & (ac.ask_cap - 1)],
		    (uint64_t)atomic_load(&sh->val[i]));
	}
	for (i = 0; i < caps.ask_cap; i++) {
		k = i % (3 + NFORGED);
		atomic_store(&d[i].who, k == 1 ? 0xfffffff0ULL << 32 : who);
		atomic_store(&d[i].corr, k == 0 ? a->cur.corr : k == 1 ? 77 :
		    k == 2 ? ~0ULL : (uint64_t)atomic_load(&sh->val[4 + k -
		    3]));
	}
	if (!slot_claim(ar, &a->cur, (uint32_t)a->idx, a->incarnation))
		_exit(3);
	raise(SIGKILL);
	_exit(4);
}

static int
bad_handle(struct actor *a, const struct actor_msg *m, void *arg)
{
	(void)arg;
	if (m->tag != T_ASK)
		return 0;
	if (atomic_fetch_add(&sh->notes, 1) == 0)
		bad_lies_and_dies(a);
	(void)actor_reply(a, T_ASK, "B", 1);
	return 0;
}

static int
fn_bad(void *arg)
{
	struct actor *a = attach_or_die();

	(void)arg;
	if (actor_ready(a) < 0)
		_exit(97);
	(void)actor_run(a, bad_handle, NULL, NULL);
	actor_close(a);
	return 0;
}

/* Two asks of /bad, one after the other: each one's rc and first byte. */
static int
fn_asker(void *arg)
{
	struct actor *a = attach_or_die();
	struct actor_msg r;
	int i;

	(void)arg;
	(void)actor_ready(a);
	for (i = 0; i < 2; i++) {
		atomic_store(&sh->rc[i], actor_ask_path(a, "/bad", T_ASK, "x",
		    1, HOSTILE_NS, &r));
		atomic_store(&sh->val[8 + i], r.len == 1 ?
		    ((const char *)r.data)[0] : -1);
	}
	return client_finish(a);
}

static bool
asker_done(struct actord *ad, void *arg)
{
	(void)ad;
	(void)arg;
	return atomic_load(&sh->done) != 0;
}

static struct child_spec *
add_actor(struct sup_spec *s, const char *name, child_fn fn)
{
	struct child_spec *c = ts_add_fn(s, name, fn, NULL);

	c->ready = READY_ACTOR;
	c->has_mailbox = true;
	c->mailbox.capacity = 16;
	c->mailbox.cell = 256;
	c->mailbox.block_timeout = 100;
	return c;
}

/*
 * bad_lies_and_dies under the real actord: actord reaps /bad, restarts
 * it and stays up; the ask /bad died holding is given again and
 * answered once by the next incarnation, the next ask too; the claims
 * forged in the name of /bad's other incarnations are left as they are.
 */
START_TEST(hostile_replier_under_actord)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;
	struct ar_caps ac;
	struct ar_hdr *ah;
	struct node *asker;
	uint32_t i;

	sh_map();
	ts_record_open();
	spec->root.intensity = 1000;
	spec->root.period = 60;
	add_actor(&spec->root, "bad", fn_bad);
	add_actor(&spec->root, "asker", fn_asker);
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert_msg(ts_run_sliced(ad, asker_done, NULL, 40000),
	    "the asker never finished: rc %d %d", sh->rc[0], sh->rc[1]);
	ck_assert_int_eq(ts_state(ad, "/"), NS_RUNNING);
	ck_assert_int_eq(sh->rc[0], 0);
	ck_assert_int_eq(sh->val[8], 'B');
	ck_assert_int_eq(sh->rc[1], 0);
	ck_assert_int_eq(sh->val[9], 'B');
	ck_assert_ptr_nonnull(asker = actord_find(ad, "/asker"));
	ck_assert_ptr_nonnull(ah = ar_hdr(ad->arena, (uint32_t)asker->mbox,
	    &ac));
	for (i = 0; i < NFORGED; i++)
		ck_assert_msg(atomic_load(&ar_asks(ah, &ac)[sh->val[4 + i] &
		    (ac.ask_cap - 1)]) == (uint64_t)sh->val[i], "another "
		    "incarnation's claim %u freed", i);
	actord_free(ad);
	ts_record_close();
}
END_TEST

/* --- enq_ns, forged, and the reap's identity check ---------------------- */

/*
 * Actor 0 is sent three tells alike by actor 1 (the same tag, payload
 * and sender: a "tick"), at positions 0, 1 and 2 of its main lane (0
 * timed, 1 and 2 carrying SHM_ENQ_UNTIMED | position).  A real worker
 * takes the first two, the second still in hand when it is SIGKILLed.
 * Returns the dead worker's pid and status.
 */
static pid_t
ticks_then_died(struct shm_arena *ar, struct actor *c, int *st)
{
	struct actor_ref to = { 0, ACTOR_ANY };
	struct actor *w;
	struct actor_msg m;
	unsigned i;
	pid_t pid;

	for (i = 0; i < 3; i++)
		ck_assert_int_eq(actor_tell(c, to, 5, "tick", 4), 0);
	if ((pid = fork()) == 0) {
		w = shm_test_open(ar, 0);
		if (actor_recv(w, &m, 0) != 0 || actor_recv(w, &m, 0) != 0)
			_exit(1);
		raise(SIGKILL);
		_exit(2);
	}
	ck_assert_int_gt(pid, 0);
	*st = killed(pid, "the worker holding its tick");
	return pid;
}

/* The next incarnation receives n ticks, the first given again. */
static void
ticks_delivered(struct shm_arena *ar, unsigned n)
{
	struct actor *w;
	struct actor_msg m;
	unsigned i;

	shm_actor_set_state(ar, 0, SHM_ACTOR_UP);
	w = shm_test_open(ar, 0);
	for (i = 0; i < n; i++) {
		ck_assert_msg(actor_recv(w, &m, 0) == 0, "tick %u of %u lost",
		    i + 1, n);
		ck_assert_uint_eq(m.tag, 5);
		ck_assert(((m.flags & ACTOR_MSG_REDELIVERED) != 0) == (i == 0));
	}
	ck_assert_int_eq(actor_recv(w, &m, 0), ACTOR_ETIMEDOUT);
	actor_close(w);
}

/*
 * The tick in hand and the one queued behind it are alike but for
 * enq_ns, their positions (SHM_ENQ_UNTIMED | 1 and | 2): the reap tells
 * the one in hand from the one still queued, and both are delivered.
 * With every untimed message's enq_ns the same (SHM_ENQ_UNTIMED alone),
 * the reap took the tick in hand for the one queued, and lost it.
 */
START_TEST(ticks_alike_told_apart_at_reap)
{
	struct shm_arena *ar = shm_test_actors_up(&(struct shm_test_actors){
	    .n = 2, .cap = 16, .rcap = 16, .ov = SHM_OVERFLOW_BLOCK,
	    .block_ms = 10, .watchers = 16 });
	struct actor *c = shm_test_open(ar, 1);
	pid_t pid;
	int st;

	pid = ticks_then_died(ar, c, &st);
	ck_assert_int_eq(actor_reaped(ar, 0, pid, st, NULL), 0);
	ticks_delivered(ar, 2);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

/*
 * A hostile producer rewrites the enq_ns of the tick queued at the head
 * (behind the one in hand) and of messages of its own after it: a time
 * far ahead, a position past any lane, 0, the largest time.  The reap
 * and the next incarnation's receives take them as what they are: the
 * tick in hand is given again, everything else delivered once, and the
 * wait histogram counts the sampled ones in its buckets.
 */
START_TEST(forged_enq_ns_at_reap)
{
	static const uint64_t lies[] = { UINT64_MAX >> 1, SHM_ENQ_UNTIMED |
	    (UINT64_MAX >> 2), 0, 1ULL << 62 };
	struct shm_arena *ar = shm_test_actors_up(&(struct shm_test_actors){
	    .n = 2, .cap = 16, .rcap = 16, .ov = SHM_OVERFLOW_BLOCK,
	    .block_ms = 10, .watchers = 16 });
	struct shm_lane_local *l = &shm_mb(ar, 0)->lane[SHM_LANE_MAIN];
	struct actor *c = shm_test_open(ar, 1), *w;
	struct actor_msg m;
	struct shm_counters k;
	uint64_t h, t, pos, total = 0;
	unsigned i;
	pid_t pid, liar;
	int st;

	pid = ticks_then_died(ar, c, &st);
	if ((liar = fork()) == 0) {
		struct shm_producer *p;
		struct shm_msg q;

		if (shm_producer_open(ar, &p) != 0)
			_exit(10);
		memset(&q, 0, sizeof(q));
		q.tag = 6;
		for (i = 0; i < 6; i++)
			if (shm_send(p, 0, SHM_LANE_MAIN, &q, NULL, 0) != 0)
				_exit(11);
		/* Position 8 is in the histogram's sample: a time ahead. */
		h = atomic_load(&l->ctl->head);
		t = atomic_load(&l->ctl->tail);
		for (pos = h, i = 0; pos < t; pos++, i++)
			lane_cell(l, pos)->msg.enq_ns = (pos &
			    (SHM_STAMP_EVERY - 1)) == 0 ? lies[0] : lies[i % 4];
		_exit(0);
	}
	ck_assert_int_gt(liar, 0);
	ck_assert_int_eq(shm_test_wait_exit(liar), 0);
	ck_assert_int_eq(actor_reaped(ar, 0, pid, st, NULL), 0);
	shm_actor_set_state(ar, 0, SHM_ACTOR_UP);
	w = shm_test_open(ar, 0);
	for (i = 0; i < 8; i++) {
		ck_assert_msg(actor_recv(w, &m, 0) == 0, "message %u lost", i);
		ck_assert_uint_eq(m.tag, i < 2 ? 5 : 6);
		ck_assert(((m.flags & ACTOR_MSG_REDELIVERED) != 0) == (i == 0));
	}
	ck_assert_int_eq(actor_recv(w, &m, 0), ACTOR_ETIMEDOUT);
	ck_assert_int_eq(shm_counters(ar, 0, &k), 0);
	for (i = 0; i < SHM_HIST_BUCKETS; i++)
		total += k.wait_hist[i];
	ck_assert_uint_le(total, 9);
	ck_assert_uint_ge(k.wait_hist[0], 1);	/* the time ahead: waited 0 */
	actor_close(w);
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
	tcase_add_test(tc, hostile_replier_reaped);
	tcase_add_test(tc, hostile_replier_under_actord);
	tcase_add_test(tc, long_deferred_lie_reaped_at_once);
	tcase_add_test(tc, ticks_alike_told_apart_at_reap);
	tcase_add_test(tc, forged_enq_ns_at_reap);
	suite_add_tcase(s, tc);
	tc = tcase_create("line");
	tcase_add_test(tc, front_rewound_leaves_at_deadline);
	tcase_add_test(tc, line_lied_about_senders_done);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(hostile_reap_suite());
}
