/*
 * check_adv_slots.c: an adversary's pass over libactor's reply slots
 * (worker/replyslots.c) and what a reap decides from them
 * (slot_release_dead, from worker/reaped.c and worker/defer.c).
 *
 *   - claims a hostile worker writes into an asker's reply slots outlive
 *     the asker: its next incarnation takes each over as a "ghost" whose
 *     answer is still to come.  A claim in the name of nobody (a mailbox
 *     past the arena, actord's tag on another mailbox), of actord, or of
 *     a live actor was kept for ever: every slot taken, every ask of that
 *     actor failed "mailbox full" for as long as it ran, long after the
 *     hostile worker was gone.  Now an impossible claim is freed at once
 *     and any ghost once it is older than an honest answer can be late.
 *   - a reply header forged in an asker's reply lane at the reap of a
 *     replier that claimed its slot and died: the reap takes it for the
 *     dead replier's answer and sends no ACTOR_EDIED; the asker waits out
 *     its own timeout at worst, and its slot is free again afterwards.
 *
 * No actord here: the arena is made as actord makes it (check_shm_util.h),
 * the "dead" replier is a forked child killed by SIGKILL and reaped here.
 */
#include <sys/wait.h>

#include <check.h>
#include <signal.h>
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

#define ASKER		0
#define REPLIER		1
#define OTHER		2
#define WAIT_MS		10000

/* A reply slot's claim as replyslots.c encodes it (claimed_by). */
static uint64_t
claim_value(uint32_t who, uint32_t inc, uint64_t id)
{
	uint32_t tag = inc == 0 ? 0 : (inc - 1) % 127 + 1;

	return 1ULL << 63 | (uint64_t)(who & 0xffff) << 40 |
	    (uint64_t)tag << 56 | (id & CORR_ID_MASK);
}

static struct shm_arena *
arena(void)
{
	return shm_test_actors_up(&(struct shm_test_actors){ .n = 3,
	    .cap = 16, .rcap = 8, .ov = SHM_OVERFLOW_BLOCK, .block_ms = 10,
	    .watchers = 4 });
}

/*
 * Every reply slot of the asker claimed as kind says, by a worker, before
 * the asker's next incarnation opens its handle.
 */
static void
forge_claims(struct shm_arena *ar, int kind)
{
	struct ar_caps c;
	struct ar_hdr *h = ar_hdr(ar, ASKER, &c);
	_Atomic uint64_t *s;
	uint32_t i, inc = shm_actor_incarnation(ar, OTHER);
	uint64_t v;

	ck_assert_ptr_nonnull(h);
	s = ar_asks(h, &c);
	for (i = 0; i < c.ask_cap; i++) {
		switch (kind) {
		case 0:		/* a mailbox past the arena */
			v = claim_value(0x7000 + i, 5, 100 + i);
			break;
		case 1:		/* actord's tag, on a mailbox not actord's */
			v = claim_value(OTHER, 0, 100 + i);
			break;
		case 2:		/* actord's own name */
			v = claim_value(0, 0, 100 + i);
			break;
		default:	/* a live actor's, its incarnation now */
			v = claim_value(OTHER, inc, 100 + i);
			break;
		}
		atomic_store(&s[i], v);
	}
}

/*
 * The asker asks OTHER (which never answers) once per slot and more:
 * ACTOR_EFULL, or 0, within bound_ms of opening; the first error after
 * the bound fails the test.
 */
static void
asks_get_slots(struct shm_arena *ar, int kind, int64_t bound_ms)
{
	struct actor *c;
	uint64_t corr;
	int64_t start;
	int rc = ACTOR_EFULL;

	forge_claims(ar, kind);
	c = shm_test_open(ar, ASKER);
	start = tcheck_mono_ms();
	while (tcheck_mono_ms() - start <= bound_ms) {
		rc = actor_ask_send(c, (struct actor_ref){ OTHER, ACTOR_ANY },
		    1, "x", 1, 1000000000LL, &corr);
		if (rc == 0)
			break;
		ck_assert_int_eq(rc, ACTOR_EFULL);
		nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
	}
	ck_assert_msg(rc == 0, "forged claims of kind %d still hold every "
	    "reply slot %lld ms after the asker started: %s", kind,
	    (long long)(tcheck_mono_ms() - start), actor_strerror(rc));
	actor_close(c);
	shm_detach(ar);
}

/* Claims nobody honest could have made: freed at the first ask. */
START_TEST(impossible_claims_freed)
{
	asks_get_slots(arena(), _i, 0);
}
END_TEST

/*
 * Claims in the name of actord or of a live actor: freed once older than
 * any honest answer can be late (replyslots.c, GHOST_MAX_MS).
 */
START_TEST(plausible_claims_bounded)
{
	asks_get_slots(arena(), _i, 3 * GHOST_MAX_MS);
}
END_TEST

/*
 * REPLIER takes the ask in hand, claims its answer's slot as an honest
 * replier does before it sends, and dies by SIGKILL without sending.
 */
static pid_t
replier_claims_and_dies(struct shm_arena *ar, uint32_t asker_inc)
{
	struct actor *w;
	struct actor_msg m;
	pid_t pid;

	if ((pid = fork()) != 0) {
		ck_assert_int_gt(pid, 0);
		return pid;
	}
	w = shm_test_open(ar, REPLIER);
	if (actor_recv(w, &m, WAIT_MS * 1000000LL) != 0)
		_exit(1);
	if (!slot_claim(ar, &(struct shm_msg){ .sender = { ASKER,
	    asker_inc }, .corr = m.corr, .flags = SHM_MSG_ASK }, REPLIER,
	    w->incarnation))
		_exit(2);
	raise(SIGKILL);
	_exit(3);
}

/* A published cell at the tail of the asker's reply lane, as an answer. */
static uint64_t
forge_answer(struct shm_arena *ar, uint64_t corr)
{
	struct shm_lane_local *l = &shm_mb(ar, ASKER)->lane[SHM_LANE_REPLY];
	uint64_t t = atomic_load(&l->ctl->tail);
	struct shm_cell *c = lane_cell(l, t);

	memset(&c->msg, 0, sizeof(c->msg));
	c->msg.flags = SHM_MSG_REPLY;
	c->msg.corr = corr;
	c->msg.sender.index = REPLIER;
	cell_seq_set(l, t, t + 1, memory_order_release);
	atomic_store(&l->ctl->tail, t + 1);
	return t;
}

/*
 * A reply header forged in the asker's reply lane while the replier that
 * claimed the ask's slot lies dead: its reap takes the forgery for the
 * dead one's answer (by the header alone), keeps the claim and answers
 * nothing.  The forger then changes the header: the asker takes a stale
 * message, and the ask redelivered to the replier's next incarnation
 * finds its slot claimed (its answer is dropped as late).  What the
 * forgery buys is bounded: the ask ends at its own timeout, and every
 * reply slot is free again afterwards (the claim names a dead
 * incarnation), so the asker's next asks all go out.
 */
START_TEST(forged_answer_at_reap_bounded)
{
	struct shm_arena *ar = arena();
	struct shm_lane_local *l = &shm_mb(ar, ASKER)->lane[SHM_LANE_REPLY];
	struct actor *c = shm_test_open(ar, ASKER), *w;
	struct actor_msg m;
	uint64_t corr, got, pos;
	int64_t start;
	uint32_t i;
	pid_t pid;
	int st, rc;

	ck_assert_int_eq(actor_ask_send(c, (struct actor_ref){ REPLIER,
	    ACTOR_ANY }, 1, "q", 1, 1000 * 1000000LL, &corr), 0);
	start = tcheck_mono_ms();
	pid = replier_claims_and_dies(ar, c->incarnation);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	pos = forge_answer(ar, corr);
	ck_assert_int_eq(actor_reaped(ar, REPLIER, pid, st, NULL), 0);
	/* The forgery withdrawn: the cell now answers nobody's ask. */
	lane_cell(l, pos)->msg.corr = corr + 1;
	/* The next incarnation gets the ask again; its answer is late. */
	shm_actor_set_state(ar, REPLIER, SHM_ACTOR_UP);
	w = shm_test_open(ar, REPLIER);
	ck_assert_int_eq(actor_recv(w, &m, WAIT_MS * 1000000LL), 0);
	ck_assert_uint_eq(m.corr, corr);
	(void)actor_reply(w, 2, "a", 1);
	rc = actor_ask_next(c, &m, WAIT_MS * 1000000LL, &got);
	ck_assert_msg(rc == ACTOR_ETIMEDOUT && got == corr,
	    "the ask ended with %d (%s)", rc, actor_strerror(rc));
	ck_assert_int_le(tcheck_mono_ms() - start, WAIT_MS);
	/* Every slot goes out again. */
	for (i = 0; i < c->reply_cap; i++)
		ck_assert_int_eq(actor_ask_send(c, (struct actor_ref){ OTHER,
		    ACTOR_ANY }, 1, "x", 1, 1000 * 1000000LL, &got), 0);
	actor_close(w);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

static Suite *
adv_slots_suite(void)
{
	Suite	*s = suite_create("adv_slots");
	TCase	*tc = tcase_create("claims");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, impossible_claims_freed, 0, 2);
	tcase_add_loop_test(tc, plausible_claims_bounded, 2, 4);
	tcase_add_test(tc, forged_answer_at_reap_bounded);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(adv_slots_suite());
}
