/*
 * check_actor_unit.c: libactor without actord, in one process where the
 * order of events is ours: what actor_reaped() does with the message in
 * hand (still in its cell, taken, committed), late answers, the ask table
 * with many asks in flight, overflow policies through actor_tell, and
 * stale-reference dead letters.  Deaths are simulated by closing a handle
 * at a chosen point and calling actor_reaped() as actord would.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shm/shm.h"
#include "tests/check_shm_util.h"
#include "tests/lib/tcheck.h"
#include "worker/actor.h"
/* shm_impl.h's producer slots' SLOT_FREE is not libactor's reply slots'. */
#undef SLOT_FREE
#include "worker/actor_impl.h"

/* n actors up, their main lanes cap cells by policy ov, reply lanes rcap. */
static struct shm_arena *
arena_reply(uint32_t n, enum shm_overflow ov, uint32_t cap, uint32_t rcap)
{
	/* Room for 256 watchers, should a test configure them. */
	return shm_test_actors_up(&(struct shm_test_actors){ .n = n,
	    .cap = cap, .rcap = rcap, .ov = ov, .block_ms = 10,
	    .watchers = 256 });
}

static struct shm_arena *
arena(uint32_t n, enum shm_overflow ov, uint32_t cap)
{
	return arena_reply(n, ov, cap, 2048);
}

/* Killed after marking the copy held, before the cell was freed. */
START_TEST(reaped_inhand_still_in_its_cell)
{
	struct shm_arena *ar = arena(2, SHM_OVERFLOW_BLOCK, 16);
	struct actor *c = shm_test_open(ar, 1), *w = shm_test_open(ar, 0);
	struct ar_hdr *h = ar_hdr(ar, 0, NULL);
	struct shm_msg q;
	struct actor_msg m;
	struct actor_ref to = { 0, ACTOR_ANY };
	uint32_t lane = SHM_LANE_MAIN;
	size_t len;
	unsigned char *slot = shm_inhand(ar, 0, &len);

	ck_assert_int_eq(actor_tell(c, to, 7, "x", 1), 0);
	/* What take_cb does before shm frees the cell, and no more. */
	ck_assert_int_eq(shm_head_msg(ar, 0, SHM_LANE_MAIN, &q), 1);
	memcpy(slot, &q, sizeof(q));
	memcpy(slot + sizeof(q), &lane, sizeof(lane));
	atomic_store(&h->inhand, IH_HELD);
	actor_close(w);
	ck_assert_int_eq(actor_reaped(ar, 0, 0, 9, NULL), 0);
	ck_assert_uint_eq(atomic_load(&h->inhand), IH_EMPTY);
	shm_actor_set_state(ar, 0, SHM_ACTOR_UP);
	w = shm_test_open(ar, 0);
	ck_assert_int_eq(actor_recv(w, &m, 0), 0);
	ck_assert_uint_eq(m.tag, 7);
	ck_assert_uint_eq(m.attempts, 1);
	ck_assert_int_eq(actor_recv(w, &m, 0), ACTOR_ETIMEDOUT);
	actor_close(w);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

/*
 * Actor 0 (w) dies by SIGKILL holding the message it received: reaped,
 * up again, and opened anew.
 */
static struct actor *
died_holding(struct shm_arena *ar, struct actor *w)
{
	w->holding = false;		/* the process dies holding it */
	actor_close(w);
	ck_assert_int_eq(actor_reaped(ar, 0, 0, 9, NULL), 0);
	shm_actor_set_state(ar, 0, SHM_ACTOR_UP);
	return shm_test_open(ar, 0);
}

/* Receive a keyed tell: its key, its value. */
static void
recv_keyed(struct actor *w, uint64_t key, char value, bool redelivered)
{
	struct actor_msg m;

	ck_assert_int_eq(actor_recv(w, &m, 0), 0);
	ck_assert_uint_ne(m.flags & ACTOR_MSG_KEYED, 0);
	ck_assert_uint_eq(m.corr, key);
	ck_assert_uint_eq(m.len, 1);
	ck_assert_int_eq(((const char *)m.data)[0], value);
	ck_assert(((m.flags & ACTOR_MSG_REDELIVERED) != 0) == redelivered);
}

/*
 * actor_tell_keyed to a coalesce mailbox: the queued tell of a key is
 * replaced, counted; one in hand is not, and a death while holding it
 * gives it again before the newer one.
 */
START_TEST(tell_keyed_coalesces)
{
	struct shm_arena *ar = arena(2, SHM_OVERFLOW_COALESCE, 16);
	struct actor *c = shm_test_open(ar, 1), *w = shm_test_open(ar, 0);
	struct actor_ref to = { 0, ACTOR_ANY };
	struct shm_counters sc;
	struct actor_msg m;

	ck_assert_int_eq(actor_tell_keyed(c, to, 7, ACTOR_KEY_MAX + 1, "x",
	    1), ACTOR_EINVAL);
	ck_assert_int_eq(actor_tell_keyed(c, to, 7, 5, "1", 1), 0);
	ck_assert_int_eq(actor_tell_keyed(c, to, 7, ACTOR_KEY_MAX, "a", 1),
	    0);
	ck_assert_int_eq(actor_tell_keyed(c, to, 7, 5, "2", 1), 0);
	ck_assert_int_eq(actor_tell_keyed(c, to, 7, 5, "3", 1), 0);
	ck_assert_int_eq(shm_counters(ar, 0, &sc), 0);
	ck_assert_uint_eq(sc.replaced, 2);
	ck_assert_uint_eq(sc.depth, 2);
	recv_keyed(w, 5, '3', false);
	recv_keyed(w, ACTOR_KEY_MAX, 'a', false);
	ck_assert_int_eq(actor_tell_keyed(c, to, 7, 5, "4", 1), 0);
	recv_keyed(w, 5, '4', false);
	ck_assert_int_eq(actor_tell_keyed(c, to, 7, 5, "5", 1), 0);
	w = died_holding(ar, w);
	recv_keyed(w, 5, '4', true);
	recv_keyed(w, 5, '5', false);
	ck_assert_int_eq(actor_recv(w, &m, 0), ACTOR_ETIMEDOUT);
	ck_assert_int_eq(shm_counters(ar, 0, &sc), 0);
	ck_assert_uint_eq(sc.replaced, 2);
	ck_assert_uint_eq(sc.dead_lettered, 0);
	actor_close(w);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

/* Killed while handling: redelivered first, one attempt more. */
START_TEST(reaped_inhand_redelivered)
{
	struct shm_arena *ar = arena(2, SHM_OVERFLOW_BLOCK, 16);
	struct actor *c = shm_test_open(ar, 1), *w = shm_test_open(ar, 0);
	struct actor_ref to = { 0, ACTOR_ANY };
	struct actor_msg m;
	struct actor_stats st;

	ck_assert_int_eq(actor_tell(c, to, 1, "a", 1), 0);
	ck_assert_int_eq(actor_tell(c, to, 2, "b", 1), 0);
	ck_assert_int_eq(actor_recv(w, &m, 0), 0);
	ck_assert_uint_eq(m.tag, 1);
	w = died_holding(ar, w);
	ck_assert_int_eq(actor_recv(w, &m, 0), 0);
	ck_assert_uint_eq(m.tag, 1);
	ck_assert_uint_eq(m.attempts, 2);
	ck_assert(m.flags & ACTOR_MSG_REDELIVERED);
	ck_assert_int_eq(actor_recv(w, &m, 0), 0);
	ck_assert_uint_eq(m.tag, 2);
	ck_assert_uint_eq(m.attempts, 1);
	ck_assert_int_eq(actor_stats(ar, 0, &st), 0);
	ck_assert_uint_eq(st.deaths, 1);
	ck_assert_uint_eq(st.redelivered, 1);
	actor_close(w);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

/*
 * What a child of fork(2) does with its copy of a handle, as exit codes:
 * every call that would write the parent's mailbox, message in hand or
 * producer slot fails ACTOR_EFORKED and writes nothing; a client of its
 * own sends; its actor_close frees its copy only.
 */
static int
forked_child(struct shm_arena *ar, struct actor *w, struct actor *c)
{
	struct actor_ref to = { 0, ACTOR_ANY };
	struct actor_msg m;
	struct actor	*own;
	uint64_t	 corr;

	if (actor_tell(c, to, 9, "x", 1) != ACTOR_EFORKED ||
	    actor_tell(w, to, 9, "x", 1) != ACTOR_EFORKED)
		return 1;
	if (actor_recv(w, &m, 0) != ACTOR_EFORKED ||
	    actor_ask_next(w, &m, 0, &corr) != ACTOR_EFORKED)
		return 2;
	if (actor_watch(w, actor_self(c)) != ACTOR_EFORKED ||
	    actor_commit(w, "s", 1) != ACTOR_EFORKED ||
	    actor_reply(w, 9, "x", 1) != ACTOR_EFORKED ||
	    actor_reply_error(w, 1, "x") != ACTOR_EFORKED)
		return 3;
	actor_done(w);
	if ((own = shm_test_open(ar, -1)) == NULL ||
	    actor_tell(own, to, 3, "c", 1) != 0)
		return 4;
	actor_close(own);
	actor_close(w);
	actor_close(c);
	return 0;
}

/*
 * The parent after such a child: its message in hand stays in hand (a
 * death still redelivers it), nothing the child tried arrived, the
 * child's own client's message did, and the parent's producers are its
 * own still.
 */
START_TEST(fork_child_leaves_parent)
{
	struct shm_arena *ar = arena(2, SHM_OVERFLOW_BLOCK, 16);
	struct actor *c = shm_test_open(ar, 1), *w = shm_test_open(ar, 0);
	struct actor_ref to = { 0, ACTOR_ANY };
	struct actor_msg m;
	pid_t	 pid;

	ck_assert_int_eq(actor_tell(c, to, 1, "a", 1), 0);
	ck_assert_int_eq(actor_tell(c, to, 2, "b", 1), 0);
	ck_assert_int_eq(actor_recv(w, &m, 0), 0);
	ck_assert_uint_eq(m.tag, 1);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(forked_child(ar, w, c));
	ck_assert_int_eq(shm_test_wait_exit(pid), 0);
	ck_assert(w->holding);
	w = died_holding(ar, w);
	ck_assert_int_eq(actor_recv(w, &m, 0), 0);
	ck_assert_uint_eq(m.tag, 1);
	ck_assert(m.flags & ACTOR_MSG_REDELIVERED);
	ck_assert_int_eq(actor_recv(w, &m, 0), 0);
	ck_assert_uint_eq(m.tag, 2);
	ck_assert_int_eq(actor_recv(w, &m, 0), 0);
	ck_assert_uint_eq(m.tag, 3);
	ck_assert_int_eq(actor_tell(c, to, 4, "d", 1), 0);
	ck_assert_int_eq(actor_recv(w, &m, 0), 0);
	ck_assert_uint_eq(m.tag, 4);
	ck_assert_int_eq(actor_recv(w, &m, 0), ACTOR_ETIMEDOUT);
	actor_close(w);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

/*
 * The in-hand slot is two parts (actor_impl.h): a payload larger than a
 * cell goes to its far part, away from the control block, and what
 * actord finds after a death is still the whole message, wherever its
 * payload lies: a large tell and a small one, each killed in hand, come
 * again whole; the large one, killed at max_attempts, is a dead letter
 * "poison" carrying its own payload, not the head's bytes.
 */
START_TEST(reaped_large_inhand_redelivered)
{
	struct shm_arena *ar = shm_test_actors_up(&(struct shm_test_actors){
	    .n = 2, .cap = 16, .rcap = 16, .ov = SHM_OVERFLOW_BLOCK,
	    .block_ms = 10, .watchers = 16, .max_message = 8192 });
	struct actor *c = shm_test_open(ar, 1), *w = shm_test_open(ar, 0);
	struct actor_ref to = { 0, ACTOR_ANY };
	static unsigned char big[6000];
	struct shm_dead_letter dl;
	struct actor_msg m;
	uint64_t cur = shm_dl_head(ar);
	size_t	 len;
	int	 i;

	ck_assert_ptr_nonnull(shm_inhand_far(ar, 0, &len));
	ck_assert_uint_ge(len, 8192);
	tcheck_fill(big, sizeof(big), 6000);
	ck_assert_int_eq(actor_tell(c, to, 1, "small", 5), 0);
	ck_assert_int_eq(actor_tell(c, to, 2, big, sizeof(big)), 0);
	ck_assert_int_eq(actor_recv(w, &m, 0), 0);
	ck_assert_uint_eq(m.tag, 1);
	w = died_holding(ar, w);
	ck_assert_int_eq(actor_recv(w, &m, 0), 0);
	ck_assert_uint_eq(m.tag, 1);
	ck_assert_uint_eq(m.attempts, 2);
	ck_assert_uint_eq(m.len, 5);
	ck_assert_int_eq(memcmp(m.data, "small", 5), 0);
	for (i = 1; i <= ACTOR_MAX_ATTEMPTS_DEFAULT; i++) {
		ck_assert_int_eq(actor_recv(w, &m, 0), 0);
		ck_assert_uint_eq(m.tag, 2);
		ck_assert_uint_eq(m.attempts, (uint32_t)i);
		ck_assert_uint_eq(m.len, sizeof(big));
		ck_assert(tcheck_intact(m.data, m.len, 6000));
		w = died_holding(ar, w);
	}
	ck_assert_int_eq(actor_recv(w, &m, 0), ACTOR_ETIMEDOUT);
	while (shm_dl_read(ar, &cur, &dl) == 1 &&
	    dl.reason != SHM_DL_POISON)
		;
	ck_assert_uint_eq(dl.reason, SHM_DL_POISON);
	ck_assert_uint_eq(dl.msg.tag, 2);
	ck_assert_uint_gt(dl.payload_len, 0);
	ck_assert_int_eq(memcmp(dl.payload, big, dl.payload_len), 0);
	actor_close(w);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

/* Killed after committing with the message in hand: not redelivered. */
START_TEST(reaped_inhand_committed)
{
	struct shm_arena *ar = arena(2, SHM_OVERFLOW_BLOCK, 16);
	struct actor *c = shm_test_open(ar, 1), *w = shm_test_open(ar, 0);
	struct actor_ref to = { 0, ACTOR_ANY };
	struct actor_msg m;
	char buf[8];
	size_t len;

	ck_assert_int_eq(actor_tell(c, to, 1, "a", 1), 0);
	ck_assert_int_eq(actor_recv(w, &m, 0), 0);
	ck_assert_int_eq(actor_commit(w, "one", 4), 0);
	w = died_holding(ar, w);
	ck_assert_int_eq(actor_load(w, buf, sizeof(buf), &len), 0);
	ck_assert_str_eq(buf, "one");
	ck_assert_int_eq(actor_recv(w, &m, 0), ACTOR_ETIMEDOUT);
	actor_close(w);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

/*
 * Killed after committing with an ask in hand, before answering it: the
 * ask fails at once with ACTOR_EDIED (nobody will ever answer it); one
 * answered before the commit gets its answer and no error after it.
 */
START_TEST(reaped_committed_ask_fails_at_once)
{
	struct shm_arena *ar = arena(2, SHM_OVERFLOW_BLOCK, 16);
	struct actor *c = shm_test_open(ar, 1), *w = shm_test_open(ar, 0);
	struct actor_ref to = { 0, ACTOR_ANY };
	struct actor_msg m, r;
	struct actor_stats st;
	uint64_t c1, c2, got;

	ck_assert_int_eq(actor_ask_send(c, to, 1, "a", 1, 10000000000LL, &c1),
	    0);
	ck_assert_int_eq(actor_ask_send(c, to, 2, "b", 1, 10000000000LL, &c2),
	    0);
	ck_assert_int_eq(actor_recv(w, &m, 0), 0);
	ck_assert_int_eq(actor_commit(w, "one", 4), 0);
	w = died_holding(ar, w);
	ck_assert_int_eq(actor_ask_next(c, &r, 0, &got), ACTOR_EDIED);
	ck_assert_uint_eq(got, c1);
	ck_assert_str_eq(actor_error_text(&r), "the actor died after "
	    "committing, before it answered");
	/* The next one is answered, then committed: no error follows. */
	ck_assert_int_eq(actor_recv(w, &m, 0), 0);
	ck_assert_int_eq(actor_reply(w, 2, "B", 1), 0);
	ck_assert_int_eq(actor_commit(w, "two", 4), 0);
	w = died_holding(ar, w);
	ck_assert_int_eq(actor_ask_next(c, &r, 0, &got), 0);
	ck_assert_uint_eq(got, c2);
	ck_assert_int_eq(actor_ask_next(c, &r, 0, &got), ACTOR_EEMPTY);
	ck_assert_int_eq(actor_stats(ar, 1, &st), 0);
	ck_assert_uint_eq(st.late_replies, 0);
	actor_close(w);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

/*
 * An asker (actor 1) whose ask waits on actor 0: what the tests of a
 * replier dying with that ask in hand start from.
 */
struct asked {
	struct shm_arena *ar;
	struct actor	*c;		/* the asker */
	struct actor	*w;		/* the replier (NULL: not opened) */
	struct actor_msg m;		/* the ask, as the replier took it */
	uint64_t	 corr;		/* the ask's */
};

/* The ask sent; the replier not opened. */
static void
ask_sent(struct asked *k)
{
	struct actor_ref to = { 0, ACTOR_ANY };

	memset(k, 0, sizeof(*k));
	k->ar = arena(2, SHM_OVERFLOW_BLOCK, 16);
	k->c = shm_test_open(k->ar, 1);
	ck_assert_int_eq(actor_ask_send(k->c, to, 1, "a", 1, 10000000000LL,
	    &k->corr), 0);
}

/* The ask sent, and taken by the replier. */
static void
ask_in_hand(struct asked *k)
{
	ask_sent(k);
	k->w = shm_test_open(k->ar, 0);
	ck_assert_int_eq(actor_recv(k->w, &k->m, 0), 0);
}

/* The asker's next answer is ACTOR_EDIED, for that ask. */
static void
ask_failed_edied(struct asked *k)
{
	struct actor_msg r;
	uint64_t got;

	ck_assert_int_eq(actor_ask_next(k->c, &r, 0, &got), ACTOR_EDIED);
	ck_assert_uint_eq(got, k->corr);
}

/* The asker's next answer is the replier's "A", for that ask. */
static void
ask_answered_a(struct asked *k)
{
	struct actor_msg r;
	uint64_t got;

	ck_assert_int_eq(actor_ask_next(k->c, &r, 0, &got), 0);
	ck_assert_uint_eq(got, k->corr);
	ck_assert(r.len == 1 && memcmp(r.data, "A", 1) == 0);
}

static void
ask_done(struct asked *k)
{
	if (k->w != NULL)
		actor_close(k->w);
	actor_close(k->c);
	shm_detach(k->ar);
}

/* What a replier has done when it dies after claiming the answer's slot. */
static void
claim_answer(struct shm_arena *ar, struct actor *w, const struct shm_msg *ask)
{
	ck_assert(slot_claim(ar, ask, (uint32_t)w->idx, w->incarnation));
}

/*
 * Killed after committing with an ask in hand, its answer's slot claimed
 * but the answer not sent: the ask still fails at once with ACTOR_EDIED,
 * rather than wait out its timeout for an answer that never comes.
 */
START_TEST(reaped_committed_ask_claimed_fails_at_once)
{
	struct asked k;

	ask_in_hand(&k);
	ck_assert_int_eq(actor_commit(k.w, "one", 4), 0);
	claim_answer(k.ar, k.w, &k.w->cur);
	k.w = died_holding(k.ar, k.w);
	ask_failed_edied(&k);
	ask_done(&k);
}
END_TEST

static void
die_sending(void *arg)
{
	(void)arg;
	_exit(9);
}

/*
 * A worker SIGKILLed (here: _exit) inside actor_reply, between claiming
 * the answer's cell and publishing it, after committing: reaped, the ask
 * fails at once with ACTOR_EDIED.  Before, the ask was noted answered
 * before the answer went out, and its slot stayed claimed by the dead:
 * nobody answered, and the asker waited out its timeout (a bank
 * transfer's retry after it, too late for the account's memory of the
 * operation, debited twice).
 */
START_TEST(reaped_killed_sending_answer)
{
	struct asked k;
	struct actor_msg r;
	uint64_t got;
	pid_t pid;
	int st;

	ask_sent(&k);
	if ((pid = fork()) == 0) {
		k.w = shm_test_open(k.ar, 0);
		if (actor_recv(k.w, &k.m, 0) != 0 ||
		    actor_commit(k.w, "one", 4) != 0)
			_exit(1);
		shm_producer_set_hook(k.w->prod, die_sending, NULL);
		(void)actor_reply(k.w, 1, "A", 1);
		_exit(0);		/* the hook did not fire */
	}
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 9,
	    "the child did not die sending its answer (status %d)", st);
	ck_assert_int_eq(actor_reaped(k.ar, 0, pid, st, NULL), 0);
	ask_failed_edied(&k);
	ck_assert_int_eq(actor_ask_next(k.c, &r, 0, &got), ACTOR_EEMPTY);
	ask_done(&k);
}
END_TEST

/*
 * Killed after its answer reached the asker's lane, before it noted the
 * ask answered: the asker gets that answer, and no error after it.
 */
START_TEST(reaped_committed_ask_sent_answered_once)
{
	struct asked k;
	struct actor_msg r;
	struct actor_stats st;
	uint64_t got;

	ask_in_hand(&k);
	ck_assert_int_eq(actor_commit(k.w, "one", 4), 0);
	ck_assert_int_eq(send_answer(k.w, &k.w->cur, 1, "A", 1), 0);
	k.w = died_holding(k.ar, k.w);
	ask_answered_a(&k);
	ck_assert_int_eq(actor_ask_next(k.c, &r, 0, &got), ACTOR_EEMPTY);
	ck_assert_int_eq(actor_stats(k.ar, 1, &st), 0);
	ck_assert_uint_eq(st.late_replies, 0);
	ask_done(&k);
}
END_TEST

/*
 * Killed before committing, its answer's slot claimed but not sent: the
 * ask is given again, and the next incarnation's answer reaches the
 * asker.
 */
START_TEST(reaped_redelivered_ask_claimed_answered)
{
	struct asked k;

	ask_in_hand(&k);
	claim_answer(k.ar, k.w, &k.w->cur);
	k.w = died_holding(k.ar, k.w);
	ck_assert_int_eq(actor_recv(k.w, &k.m, 0), 0);
	ck_assert(k.m.flags & ACTOR_MSG_REDELIVERED);
	ck_assert_int_eq(actor_reply(k.w, 1, "A", 1), 0);
	ask_answered_a(&k);
	ask_done(&k);
}
END_TEST

/*
 * Killed in actor_answer, its deferred answer's slot claimed but not
 * sent: the ask fails at once with ACTOR_EDIED.
 */
START_TEST(deferred_claimed_fails_at_death)
{
	struct asked k;
	struct actor_caller d;

	ask_in_hand(&k);
	ck_assert_int_eq(actor_defer(k.w, &d), 0);
	ck_assert_int_eq(actor_recv(k.w, &k.m, 0), ACTOR_ETIMEDOUT);
	claim_answer(k.ar, k.w, &(struct shm_msg){ .sender = {
	    d.asker.index, d.asker.incarnation }, .corr = d.corr,
	    .flags = SHM_MSG_ASK });
	k.w = died_holding(k.ar, k.w);
	ask_failed_edied(&k);
	ask_done(&k);
}
END_TEST

/* An answer after its ask timed out is dropped, never given to the next. */
START_TEST(late_answer_is_dropped)
{
	struct shm_arena *ar = arena(2, SHM_OVERFLOW_BLOCK, 16);
	struct actor *asker = shm_test_open(ar, 0), *srv = shm_test_open(ar, 1);
	struct actor_ref to = { 1, ACTOR_ANY };
	struct actor_msg m, r;
	struct actor_stats st;
	uint64_t c1, c2, c;
	int v;

	v = 1;
	ck_assert_int_eq(actor_ask_send(asker, to, 1, &v, sizeof(v), 1000,
	    &c1), 0);
	ck_assert_int_eq(actor_ask_next(asker, &r, -1, &c), ACTOR_ETIMEDOUT);
	ck_assert_uint_eq(c, c1);
	ck_assert_int_eq(actor_recv(srv, &m, 0), 0);
	ck_assert_int_eq(actor_reply(srv, 1, m.data, m.len), 0);
	v = 2;
	ck_assert_int_eq(actor_ask_send(asker, to, 1, &v, sizeof(v),
	    1000000000, &c2), 0);
	ck_assert_int_eq(actor_recv(srv, &m, 0), 0);
	ck_assert_int_eq(actor_reply(srv, 1, m.data, m.len), 0);
	ck_assert_int_eq(actor_ask_next(asker, &r, -1, &c), 0);
	ck_assert_uint_eq(c, c2);
	memcpy(&v, r.data, sizeof(v));
	ck_assert_int_eq(v, 2);
	ck_assert_int_eq(actor_stats(ar, 0, &st), 0);
	ck_assert_uint_eq(st.late_replies, 1);
	ck_assert_int_eq(actor_ask_next(asker, &r, 0, &c), ACTOR_EEMPTY);
	actor_close(asker);
	actor_close(srv);
	shm_detach(ar);
}
END_TEST

/*
 * An application's error keeps its own code (>= 0, ACTOR_EREPLY for the
 * ask) and a text longer than the old 60 bytes; a runtime code comes back
 * as itself; a text longer than the asker's cell is cut, and still ends.
 */
START_TEST(application_error_code_and_text)
{
	struct shm_arena *ar = arena(2, SHM_OVERFLOW_BLOCK, 16);
	struct actor *asker = shm_test_open(ar, 0), *srv = shm_test_open(ar, 1);
	struct actor_ref to = { 1, ACTOR_ANY };
	const char *key = "no such key: a key that is longer than sixty bytes!";
	char longtext[200];
	struct actor_msg m, r;
	uint64_t c1, c2, c3;

	memset(longtext, 'x', sizeof(longtext) - 1);
	longtext[sizeof(longtext) - 1] = '\0';
	ck_assert_int_eq(actor_ask_send(asker, to, 1, NULL, 0, 10000000000LL,
	    &c1), 0);
	ck_assert_int_eq(actor_ask_send(asker, to, 2, NULL, 0, 10000000000LL,
	    &c2), 0);
	ck_assert_int_eq(actor_ask_send(asker, to, 3, NULL, 0, 10000000000LL,
	    &c3), 0);
	ck_assert_int_eq(actor_recv(srv, &m, 0), 0);
	ck_assert_int_eq(actor_reply_error(srv, ACTOR_ELAST - 1, "x"),
	    ACTOR_EINVAL);
	ck_assert_int_eq(actor_reply_error(srv, 404, key), 0);
	ck_assert_int_eq(actor_recv(srv, &m, 0), 0);
	ck_assert_int_eq(actor_reply_error(srv, ACTOR_ENOENT, NULL), 0);
	ck_assert_int_eq(actor_recv(srv, &m, 0), 0);
	ck_assert_int_eq(actor_reply_error(srv, 7, longtext), 0);
	ck_assert_int_eq(actor_ask_next(asker, &r, 0, NULL), ACTOR_EREPLY);
	ck_assert_int_eq(actor_error_code(&r), 404);
	ck_assert_str_eq(actor_error_text(&r), key);
	ck_assert_int_eq(actor_ask_next(asker, &r, 0, NULL), ACTOR_ENOENT);
	ck_assert_int_eq(actor_error_code(&r), ACTOR_ENOENT);
	ck_assert_int_eq(actor_ask_next(asker, &r, 0, NULL), ACTOR_EREPLY);
	ck_assert_int_eq(actor_error_code(&r), 7);
	/* A 128-byte cell: 80 bytes of payload, the code and 75 of text. */
	ck_assert_uint_eq(strlen(actor_error_text(&r)),
	    shm_payload_max(ar, 0) - sizeof(int32_t) - 1);
	actor_close(asker);
	actor_close(srv);
	shm_detach(ar);
}
END_TEST

/* 1,500 asks in flight, answered in reverse order, each matched. */
START_TEST(many_asks_in_flight)
{
	struct shm_arena *ar = arena(2, SHM_OVERFLOW_BLOCK, 2048);
	struct actor *asker = shm_test_open(ar, 0), *srv = shm_test_open(ar, 1);
	struct actor_ref to = { 1, ACTOR_ANY };
	struct actor_msg m, r;
	static uint64_t corr[1500];
	static unsigned char seen[1500];
	uint64_t c;
	int i, v, n = 1500;

	for (i = 0; i < n; i++)
		ck_assert_int_eq(actor_ask_send(asker, to, 1, &i, sizeof(i),
		    10000000000LL, &corr[i]), 0);
	ck_assert_uint_eq(actor_asks_pending(asker), n);
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(actor_recv(srv, &m, 0), 0);
		ck_assert_int_eq(actor_reply(srv, 1, m.data, m.len), 0);
	}
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(actor_ask_next(asker, &r, 0, &c), 0);
		memcpy(&v, r.data, sizeof(v));
		ck_assert_int_ge(v, 0);
		ck_assert_int_lt(v, n);
		ck_assert_uint_eq(corr[v], c);
		ck_assert_int_eq(seen[v], 0);
		seen[v] = 1;
	}
	ck_assert_uint_eq(actor_asks_pending(asker), 0);
	actor_close(asker);
	actor_close(srv);
	shm_detach(ar);
}
END_TEST

/*
 * ACTOR_ASK_NO_WAIT: an ask to a full "block" mailbox fails at once with
 * ACTOR_EFULL and a dead letter, whatever its timeout, and leaves no ask
 * in flight; with room, it is sent and its timeout bounds the answer.
 */
START_TEST(ask_no_wait_refused_when_full)
{
	struct shm_arena *ar = arena(2, SHM_OVERFLOW_BLOCK, 2);
	struct actor *c = shm_test_open(ar, 1), *w = shm_test_open(ar, 0);
	struct actor_ref to = { 0, ACTOR_ANY };
	struct actor_dl_counters dc;
	struct actor_msg m;
	struct timespec t0, t1;
	uint64_t corr;

	ck_assert_int_eq(actor_tell(c, to, 1, NULL, 0), 0);
	ck_assert_int_eq(actor_tell(c, to, 2, NULL, 0), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(actor_ask_send_with(c, to, 3, "q", 1,
	    10000000000LL, ACTOR_ASK_NO_WAIT, &corr), ACTOR_EFULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* A correctness bound: the 10 s timeout was not waited for. */
	ck_assert_int_lt(t1.tv_sec - t0.tv_sec, 5);
	ck_assert_uint_eq(actor_asks_pending(c), 0);
	actor_dl_counters(ar, &dc);
	ck_assert_uint_eq(dc.total, 1);
	ck_assert_int_eq(actor_recv(w, &m, 0), 0);
	ck_assert_uint_eq(m.tag, 1);
	ck_assert_int_eq(actor_ask_send_with(c, to, 3, "q", 1,
	    10000000000LL, ACTOR_ASK_NO_WAIT, &corr), 0);
	ck_assert_uint_eq(actor_asks_pending(c), 1);
	actor_close(w);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

/* tell follows the mailbox policy: reject fails at once, and dead-letters. */
START_TEST(tell_by_policy)
{
	struct shm_arena *ar = arena(2, SHM_OVERFLOW_REJECT, 2);
	struct actor *c = shm_test_open(ar, 1);
	struct actor_ref to = { 0, ACTOR_ANY }, stale = { 0, 7 };
	struct actor_dl_counters dc;
	struct actor_dead_letter d;
	uint64_t cur = 0;

	ck_assert_int_eq(actor_tell(c, to, 1, NULL, 0), 0);
	ck_assert_int_eq(actor_tell(c, to, 2, NULL, 0), 0);
	ck_assert_int_eq(actor_tell(c, to, 3, NULL, 0), ACTOR_EFULL);
	ck_assert_int_eq(actor_tell(c, stale, 4, "zz", 2), ACTOR_ESTALE);
	ck_assert_int_eq(actor_tell_path(c, "/nobody", 5, NULL, 0),
	    ACTOR_ENOENT);
	actor_dl_counters(ar, &dc);
	ck_assert_uint_eq(dc.total, 2);
	ck_assert_int_eq(actor_dl_read(ar, &cur, &d), 1);
	ck_assert_uint_eq(d.reason, SHM_DL_FULL);
	ck_assert_uint_eq(d.tag, 3);
	ck_assert_int_eq(actor_dl_read(ar, &cur, &d), 1);
	ck_assert_uint_eq(d.reason, SHM_DL_STALE_REF);
	ck_assert_str_eq(d.reason_name, "stale reference");
	ck_assert_uint_eq(d.payload_len, 2);
	ck_assert_int_eq(actor_dl_read(ar, &cur, &d), 0);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

/* While down: tells queued or refused by while_down, asks fail at once. */
START_TEST(while_down_policies)
{
	struct shm_arena *ar = arena(3, SHM_OVERFLOW_BLOCK, 16);
	struct actor_policy rej = { 3, ACTOR_ON_DOWN_KEEP,
	    ACTOR_WHILE_DOWN_REJECT, 0, 0 };
	struct actor *c = shm_test_open(ar, 2);
	struct actor_ref q = { 0, ACTOR_ANY }, r = { 1, ACTOR_ANY };
	struct actor_msg m;

	ck_assert_int_eq(actor_configure(ar, 1, &rej), 0);
	shm_actor_set_state(ar, 0, SHM_ACTOR_DOWN);
	shm_actor_set_state(ar, 1, SHM_ACTOR_DOWN);
	ck_assert_int_eq(actor_tell(c, q, 1, NULL, 0), 0);
	ck_assert_int_eq(actor_tell(c, r, 1, NULL, 0), ACTOR_EDOWN);
	ck_assert_int_eq(actor_ask(c, q, 1, NULL, 0, 10000000000LL, &m),
	    ACTOR_EDOWN);
	ck_assert_int_eq(actor_ask(c, q, 1, NULL, 0, -1, &m), ACTOR_EINVAL);
	ck_assert_int_eq(actor_ask_next(c, &m, 0, NULL), ACTOR_EEMPTY);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

/* A commit torn by a crash at any point leaves the previous snapshot. */
static void
die_now(void *arg)
{
	(void)arg;
	_exit(0);
}

START_TEST(torn_commit_keeps_previous)
{
	struct shm_arena *ar = arena(1, SHM_OVERFLOW_BLOCK, 16);
	struct actor *w = shm_test_open(ar, 0);
	char buf[16];
	size_t len;
	pid_t pid;
	int st;

	ck_assert_int_eq(actor_load(w, buf, sizeof(buf), &len),
	    ACTOR_ENOSTATE);
	ck_assert_int_eq(actor_commit(w, "first", 6), 0);
	ck_assert_int_eq(actor_commit(w, "second", 7), 0);
	if ((pid = fork()) == 0) {
		/* A handle of its own: the parent's copy is not for a child. */
		struct actor *cw = shm_test_open(ar, 0);

		actor_set_commit_hook(cw, die_now, NULL);
		(void)actor_commit(cw, "third", 6);
		_exit(1);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	ck_assert_int_eq(actor_snapshot_read(ar, 0, buf, sizeof(buf), &len),
	    0);
	ck_assert_str_eq(buf, "second");
	ck_assert_int_eq(actor_commit(w, "fourth", 7), 0);
	ck_assert_int_eq(actor_load(w, buf, sizeof(buf), &len), 0);
	ck_assert_str_eq(buf, "fourth");
	/* A scribbled slot fails its checksum and is never loaded. */
	ar_snapdata(w->hdr, &w->caps, w->snap_latest)[0] ^= 0xff;
	ck_assert_int_eq(actor_load(w, buf, sizeof(buf), &len), 0);
	ck_assert_str_eq(buf, "second");
	actor_close(w);
	shm_detach(ar);
}
END_TEST

/*
 * actor_ask keeps its ask out of the table: the answer to one that timed
 * out must still be dropped as late by the next actor_ask (which then
 * times out itself: nobody answers it), never returned as its answer.
 */
START_TEST(late_answer_never_answers_next_ask)
{
	struct shm_arena *ar = arena(2, SHM_OVERFLOW_BLOCK, 16);
	struct actor *asker = shm_test_open(ar, 0), *srv = shm_test_open(ar, 1);
	struct actor_ref to = { 1, ACTOR_ANY };
	struct actor_msg m, r;
	struct actor_stats st;
	int v = 1;

	ck_assert_int_eq(actor_ask(asker, to, 1, &v, sizeof(v), 1000000, &r),
	    ACTOR_ETIMEDOUT);
	ck_assert_int_eq(actor_recv(srv, &m, 0), 0);
	ck_assert_int_eq(actor_reply(srv, 1, m.data, m.len), 0);
	v = 2;
	ck_assert_int_eq(actor_ask(asker, to, 1, &v, sizeof(v), 1000000, &r),
	    ACTOR_ETIMEDOUT);
	ck_assert_int_eq(actor_stats(ar, 0, &st), 0);
	ck_assert_uint_eq(st.late_replies, 1);
	ck_assert_uint_eq(actor_asks_pending(asker), 0);
	actor_close(asker);
	actor_close(srv);
	shm_detach(ar);
}
END_TEST

/*
 * An answer to an ask in flight (actor_ask_send) that comes while
 * actor_ask waits for its own is kept for actor_ask_next, not dropped;
 * and the deadline of an actor_ask counts from its send.
 */
START_TEST(sync_ask_keeps_async_answers)
{
	struct shm_arena *ar = arena(2, SHM_OVERFLOW_BLOCK, 16);
	struct actor *asker = shm_test_open(ar, 0), *srv = shm_test_open(ar, 1);
	struct actor_ref to = { 1, ACTOR_ANY };
	struct actor_msg m, r;
	struct actor_stats st;
	uint64_t c1, c;
	uint64_t t0;
	int v = 1;

	ck_assert_int_eq(actor_ask_send(asker, to, 1, &v, sizeof(v),
	    1000000000, &c1), 0);
	ck_assert_int_eq(actor_recv(srv, &m, 0), 0);
	ck_assert_int_eq(actor_reply(srv, 1, m.data, m.len), 0);
	v = 2;
	t0 = shm_now_ns();
	ck_assert_int_eq(actor_ask(asker, to, 1, &v, sizeof(v), 20000000, &r),
	    ACTOR_ETIMEDOUT);
	ck_assert_uint_ge(shm_now_ns() - t0, 20000000);
	ck_assert_uint_eq(actor_asks_pending(asker), 1);
	ck_assert_int_eq(actor_ask_next(asker, &r, 0, &c), 0);
	ck_assert_uint_eq(c, c1);
	memcpy(&v, r.data, sizeof(v));
	ck_assert_int_eq(v, 1);
	ck_assert_int_eq(actor_stats(ar, 0, &st), 0);
	ck_assert_uint_eq(st.late_replies, 0);
	actor_close(asker);
	actor_close(srv);
	shm_detach(ar);
}
END_TEST

/* The take hook of the child below: die at the chosen point. */
static void
die_at(void *arg, int where)
{
	if (where == *(int *)arg)
		_exit(9);
}

/*
 * A worker SIGKILLed (here: _exit) inside the take of a message from a
 * drop_oldest mailbox, after its CAS made the cell its own and before
 * (or just after) the message was marked in hand: once reaped, the next
 * incarnation gets every message, in order, each handled once, and no
 * dead letter is written.  Without the CONSUMING mark the first message
 * was freed with nobody holding it, lost without a trace.
 */
static void
killed_while_taking(int where)
{
	struct shm_arena *ar = arena(2, SHM_OVERFLOW_DROP_OLDEST, 4);
	struct actor *c = shm_test_open(ar, 1), *w;
	struct actor_ref to = { 0, ACTOR_ANY };
	struct actor_msg m;
	struct actor_dl_counters dl;
	uint32_t tag;
	pid_t pid;
	int st;

	for (tag = 1; tag <= 3; tag++)
		ck_assert_int_eq(actor_tell(c, to, tag, "x", 1), 0);
	if ((pid = fork()) == 0) {
		w = shm_test_open(ar, 0);
		shm_consumer_set_hook(ar, die_at, &where);
		(void)actor_recv(w, &m, 0);
		_exit(0);		/* the hook did not fire */
	}
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 9,
	    "the child did not die inside the take (status %d)", st);
	ck_assert_int_eq(actor_reaped(ar, 0, pid, st, NULL), 0);
	shm_actor_set_state(ar, 0, SHM_ACTOR_UP);
	w = shm_test_open(ar, 0);
	for (tag = 1; tag <= 3; tag++) {
		ck_assert_int_eq(actor_recv(w, &m, 0), 0);
		ck_assert_uint_eq(m.tag, tag);
		ck_assert_uint_eq(m.attempts, 1);
	}
	ck_assert_int_eq(actor_recv(w, &m, 0), ACTOR_ETIMEDOUT);
	actor_dl_counters(ar, &dl);
	ck_assert_uint_eq(dl.total, 0);
	actor_close(w);
	actor_close(c);
	shm_detach(ar);
}

START_TEST(drop_oldest_killed_after_take)
{
	killed_while_taking(SHM_HOOK_TAKEN);
}
END_TEST

START_TEST(drop_oldest_killed_after_handover)
{
	killed_while_taking(SHM_HOOK_HANDED);
}
END_TEST

#define BURST		20	/* deaths at once, more than a system lane holds */

/*
 * Take every Terminated from watcher w now: mark each dead index in seen
 * (failing on a second one) and check its exit status; how many came.
 */
static int
take_terminated(struct actor *w, int *seen, int nseen)
{
	struct actor_terminated t;
	struct actor_msg m;
	int n = 0;

	while (actor_recv(w, &m, 0) == 0) {
		ck_assert(m.flags & ACTOR_MSG_SYSTEM);
		ck_assert_uint_eq(m.tag, ACTOR_SYS_TERMINATED);
		ck_assert_uint_eq(m.len, sizeof(t));
		memcpy(&t, m.data, sizeof(t));
		ck_assert_int_lt(t.who.index, nseen);
		ck_assert_msg(seen[t.who.index] == 0,
		    "a second Terminated for actor %u", t.who.index);
		seen[t.who.index] = 1;
		ck_assert_int_eq(t.exit_status, (int)t.who.index);
		n++;
	}
	return n;
}

/* w watches actors first..last (their current incarnations). */
static void
watch_range(struct actor *w, uint32_t first, uint32_t last)
{
	uint32_t i;

	for (i = first; i <= last; i++)
		ck_assert_int_eq(actor_watch(w,
		    (struct actor_ref){ i, ACTOR_ANY }), 0);
}

/* Actors first..last die, each with exit status its index. */
static void
reap_range(struct shm_arena *ar, uint32_t first, uint32_t last,
    struct actor_owed **owed)
{
	uint32_t i;

	for (i = first; i <= last; i++)
		ck_assert_int_eq(actor_reaped(ar, i, 0, (int)i << 8, owed), 0);
}

/*
 * BURST watched actors die at once while their watcher reads nothing:
 * its system lane (16 cells) takes the first ones and the rest are owed,
 * delivered once it has room; none is lost, none comes twice, no dead
 * letter.
 */
START_TEST(terminated_burst_is_owed_not_lost)
{
	struct shm_arena *ar = arena(BURST + 1, SHM_OVERFLOW_BLOCK, 16);
	struct actor *w = shm_test_open(ar, 0);
	struct actor_owed *owed = NULL;
	struct actor_dl_counters dl;
	int seen[BURST + 1] = { 0 }, got, rounds = 0;

	watch_range(w, 1, BURST);
	reap_range(ar, 1, BURST, &owed);
	ck_assert_ptr_nonnull(owed);
	ck_assert_int_eq(actor_deliver_owed(ar, &owed), BURST - 16);
	got = 0;
	while (got < BURST) {
		ck_assert_int_lt(rounds++, 4);
		got += take_terminated(w, seen, BURST + 1);
		(void)actor_deliver_owed(ar, &owed);
	}
	ck_assert_int_eq(got, BURST);
	ck_assert_ptr_null(owed);
	actor_dl_counters(ar, &dl);
	ck_assert_uint_eq(dl.total, 0);
	actor_close(w);
	shm_detach(ar);
}
END_TEST

/*
 * More Terminated than the watcher's system lane and the owed list's cap
 * hold: the lane takes 16, OWED_CAP are owed, the rest are dead letters
 * "owed list full" at once, counted (actor_owed_over, the watcher's
 * dead letters in its stats); the sender never holds more than the cap.  Once
 * the watcher reads, every owed one comes, once, and the list (made by
 * actor_owed_init) stays, empty.
 */
START_TEST(owed_list_capped)
{
	enum { OWED_CAP = 3, OVER = BURST - 16 - OWED_CAP };
	struct shm_arena *ar = arena(BURST + 1, SHM_OVERFLOW_BLOCK, 16);
	struct actor *w = shm_test_open(ar, 0);
	struct actor_owed *owed = NULL;
	struct actor_dead_letter d;
	struct shm_counters c;
	uint64_t	 cur = 0;
	int		 seen[BURST + 1] = { 0 }, got = 0, rounds = 0, full = 0;

	ck_assert_int_eq(actor_owed_init(&owed, OWED_CAP), 0);
	watch_range(w, 1, BURST);
	reap_range(ar, 1, BURST, &owed);
	ck_assert_uint_eq(actor_owed_count(owed), OWED_CAP);
	ck_assert_uint_eq(actor_owed_over(owed), OVER);
	while (actor_dl_read(ar, &cur, &d) == 1) {
		ck_assert_uint_eq(d.reason, SHM_DL_OWED_FULL);
		ck_assert_str_eq(d.reason_name, "owed list full");
		ck_assert_uint_eq(d.recipient, 0);
		ck_assert_uint_eq(d.lane, SHM_LANE_SYSTEM);
		full++;
	}
	ck_assert_int_eq(full, OVER);
	ck_assert_int_eq(shm_counters(ar, 0, &c), 0);
	ck_assert_uint_eq(c.dead_lettered, OVER);
	/* A flush while the lane is still full: nothing moves. */
	ck_assert_int_eq(actor_deliver_owed(ar, &owed), OWED_CAP);
	while (got < 16 + OWED_CAP) {
		ck_assert_int_lt(rounds++, 4);
		got += take_terminated(w, seen, BURST + 1);
		(void)actor_deliver_owed(ar, &owed);
	}
	ck_assert_int_eq(got, 16 + OWED_CAP);
	ck_assert_int_eq(take_terminated(w, seen, BURST + 1), 0);
	ck_assert_ptr_nonnull(owed);
	ck_assert_uint_eq(actor_owed_count(owed), 0);
	actor_owed_free(&owed);
	actor_close(w);
	shm_detach(ar);
}
END_TEST

/* Owed to a watcher that died meanwhile: dropped with its watches. */
START_TEST(owed_dropped_when_watcher_dies)
{
	struct shm_arena *ar = arena(BURST + 1, SHM_OVERFLOW_BLOCK, 16);
	struct actor *w = shm_test_open(ar, 0);
	struct actor_owed *owed = NULL;
	struct actor_msg m;

	watch_range(w, 1, BURST);
	reap_range(ar, 1, BURST, &owed);
	ck_assert_int_eq(actor_deliver_owed(ar, &owed), BURST - 16);
	actor_close(w);
	ck_assert_int_eq(actor_reaped(ar, 0, 0, 9, &owed), 0);
	ck_assert_int_eq(actor_deliver_owed(ar, &owed), 0);
	ck_assert_ptr_null(owed);
	/* Nor do the 16 queued before it died reach its next incarnation. */
	ck_assert_uint_eq(actor_prepare_start(ar, 0), 2);
	shm_actor_set_state(ar, 0, SHM_ACTOR_UP);
	w = shm_test_open(ar, 0);
	ck_assert_int_eq(actor_recv(w, &m, 0), ACTOR_ETIMEDOUT);
	actor_close(w);
	shm_detach(ar);
}
END_TEST

/*
 * Watching an incarnation already dead sends the Terminated at once, to
 * the caller itself: with its system lane full it is owed, and the next
 * receive that finds room sends it.
 */
START_TEST(watch_of_the_dead_with_full_lane)
{
	struct shm_arena *ar = arena(BURST + 1, SHM_OVERFLOW_BLOCK, 16);
	struct actor *w = shm_test_open(ar, 0);
	struct actor_owed *owed = NULL;
	struct actor_dl_counters dl;
	int seen[BURST + 1] = { 0 }, got = 0, rounds = 0;

	watch_range(w, 1, 16);
	reap_range(ar, 1, 17, &owed);
	ck_assert_ptr_null(owed);	/* 16 watched, 16 cells */
	/* Incarnation 1 of actor 17 is dead: its Terminated comes at once. */
	ck_assert_int_eq(actor_watch(w, (struct actor_ref){ 17, 1 }), 0);
	while (got < 17) {
		ck_assert_int_lt(rounds++, 4);
		got += take_terminated(w, seen, BURST + 1);
	}
	ck_assert_int_eq(got, 17);
	actor_dl_counters(ar, &dl);
	ck_assert_uint_eq(dl.total, 0);
	actor_close(w);
	shm_detach(ar);
}
END_TEST

/*
 * The actor dies with an ask queued (on_down = fail) while the asker's
 * reply lane is full of answers it has not read yet: the error answer is
 * owed, not dead-lettered, and the ask fails as soon as there is room,
 * not by its timeout.
 */
START_TEST(error_answer_owed_when_reply_lane_full)
{
	struct shm_arena *ar = arena_reply(2, SHM_OVERFLOW_BLOCK, 16, 64);
	struct actor_policy fail = { 3, ACTOR_ON_DOWN_FAIL,
	    ACTOR_WHILE_DOWN_QUEUE, 0, 0 };
	struct actor *c = shm_test_open(ar, 0);
	struct actor_ref to = { 1, ACTOR_ANY };
	struct actor_owed *owed = NULL;
	struct actor_dead_letter d;
	struct shm_producer *p;
	struct actor_msg m;
	struct shm_msg fake;
	uint64_t corr, got, cur = 0;
	int i, full = 0;

	ck_assert_int_eq(actor_configure(ar, 1, &fail), 0);
	ck_assert_int_eq(actor_ask_send(c, to, 1, "q", 1, 10000000000LL,
	    &corr), 0);
	ck_assert_int_eq(shm_producer_open(ar, &p), 0);
	memset(&fake, 0, sizeof(fake));
	fake.flags = SHM_MSG_REPLY;
	fake.corr = corr + 1;		/* answers nobody waits for */
	for (i = 0; i < 64; i++)
		ck_assert_int_eq(shm_send(p, 0, SHM_LANE_REPLY, &fake, NULL,
		    0), 0);
	shm_producer_close(p);
	ck_assert_int_eq(actor_reaped(ar, 1, 0, 9, &owed), 0);
	ck_assert_int_eq(actor_deliver_owed(ar, &owed), 1);
	ck_assert_int_eq(actor_ask_next(c, &m, 0, &got), ACTOR_EAGAIN);
	ck_assert_int_eq(actor_deliver_owed(ar, &owed), 0);
	ck_assert_int_eq(actor_ask_next(c, &m, 0, &got), ACTOR_EFAILED);
	ck_assert_uint_eq(got, corr);
	while (actor_dl_read(ar, &cur, &d) == 1)
		full += d.reason == SHM_DL_FULL;
	ck_assert_int_eq(full, 0);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

/* A handle closed while it still owes a message: a dead letter, not silence. */
START_TEST(owed_at_close_is_a_dead_letter)
{
	struct shm_arena *ar = arena(18, SHM_OVERFLOW_BLOCK, 16);
	struct actor *w = shm_test_open(ar, 0);
	struct actor_owed *owed = NULL;
	struct actor_dead_letter d;
	uint64_t cur = 0;
	int full = 0;

	watch_range(w, 1, 16);
	reap_range(ar, 1, 17, &owed);
	ck_assert_ptr_null(owed);
	/* Owed to itself: its system lane holds 16 Terminated already. */
	ck_assert_int_eq(actor_watch(w, (struct actor_ref){ 17, 1 }), 0);
	actor_close(w);
	while (actor_dl_read(ar, &cur, &d) == 1)
		full += d.reason == SHM_DL_FULL && d.recipient == 0;
	ck_assert_int_eq(full, 1);
	shm_detach(ar);
}
END_TEST

/*
 * A client that watches a long-lived actor and restarts again and again:
 * the watches of its dead incarnations do not fill the actor's watcher
 * set (64 entries), and the actor's death reaches the live one once.
 */
START_TEST(watches_of_dead_watchers_are_reclaimed)
{
	struct shm_arena *ar = arena(2, SHM_OVERFLOW_BLOCK, 16);
	struct actor *w = shm_test_open(ar, 0);
	struct actor_owed *owed = NULL;
	struct actor_ref t = { 1, ACTOR_ANY };
	int seen[2] = { 0 };
	uint32_t i;

	for (i = 0; i < 3 * ACTOR_WATCHERS; i++) {
		ck_assert_int_eq(actor_watch(w, t), 0);
		actor_close(w);
		ck_assert_int_eq(actor_reaped(ar, 0, 0, 9, &owed), 0);
		ck_assert_uint_eq(actor_prepare_start(ar, 0), i + 2);
		shm_actor_set_state(ar, 0, SHM_ACTOR_UP);
		w = shm_test_open(ar, 0);
	}
	ck_assert_int_eq(actor_watch(w, t), 0);
	ck_assert_int_eq(actor_reaped(ar, 1, 0, 1 << 8, &owed), 0);
	ck_assert_ptr_null(owed);
	ck_assert_int_eq(take_terminated(w, seen, 2), 1);
	actor_close(w);
	shm_detach(ar);
}
END_TEST

/*
 * The watcher set holds as many watches as the mailbox's `watchers` key
 * says: 64 by default, here 200, each an entry until its death or an
 * unwatch, and one more is refused with ACTOR_EFULL.
 */
START_TEST(watcher_set_sized_by_config)
{
	struct shm_arena *ar = arena(3, SHM_OVERFLOW_BLOCK, 16);
	struct actor_policy many = { 3, ACTOR_ON_DOWN_KEEP,
	    ACTOR_WHILE_DOWN_QUEUE, 200, 0 };
	struct actor *w = shm_test_open(ar, 0);
	struct actor_ref dflt = { 1, ACTOR_ANY }, big = { 2, ACTOR_ANY };
	size_t len = 0;
	uint32_t i;

	ck_assert_ptr_nonnull(shm_state(ar, 2, &len));
	ck_assert_uint_ge(len, actor_region_size(0, 200, 2048));
	ck_assert_int_eq(actor_configure(ar, 2, &many), 0);
	for (i = 0; i < ACTOR_WATCHERS; i++)
		ck_assert_int_eq(actor_watch(w, dflt), 0);
	ck_assert_int_eq(actor_watch(w, dflt), ACTOR_EFULL);
	for (i = 0; i < 200; i++)
		ck_assert_int_eq(actor_watch(w, big), 0);
	ck_assert_int_eq(actor_watch(w, big), ACTOR_EFULL);
	ck_assert_int_eq(actor_unwatch(w, big), 200);
	ck_assert_int_eq(actor_watch(w, big), 0);
	/* Too many for the region: refused, the old set kept. */
	many.watchers = 100000;
	ck_assert_int_eq(actor_configure(ar, 2, &many), ACTOR_EINVAL);
	actor_close(w);
	shm_detach(ar);
}
END_TEST

/*
 * No more asks in flight than the reply lane holds answers: one more is
 * refused at once, instead of its answer becoming a dead letter "mailbox
 * full" and the ask waiting for its timeout.
 */
START_TEST(asks_in_flight_bounded_by_reply_lane)
{
	struct shm_arena *ar = arena_reply(2, SHM_OVERFLOW_BLOCK, 256, 64);
	struct actor *c, *s;
	struct actor_ref to = { 1, ACTOR_ANY };
	struct actor_msg m;
	struct actor_dl_counters dl;
	uint64_t corr;
	uint32_t i;

	c = shm_test_open(ar, 0);
	s = shm_test_open(ar, 1);
	/* 64 unanswered: a slot each, and no 65th. */
	for (i = 0; i < 64; i++)
		ck_assert_int_eq(actor_ask_send(c, to, 1, &i, sizeof(i),
		    10000000000LL, &corr), 0);
	ck_assert_int_eq(actor_ask_send(c, to, 1, &i, sizeof(i),
	    10000000000LL, &corr), ACTOR_EFULL);
	ck_assert_int_eq(actor_ask(c, to, 1, &i, sizeof(i), 1000000000LL,
	    &m), ACTOR_EFULL);
	/* Answered, in the lane: the next ask takes them off, and goes. */
	for (i = 0; i < 64; i++) {
		ck_assert_int_eq(actor_recv(s, &m, 0), 0);
		ck_assert_int_eq(actor_reply(s, 2, m.data, m.len), 0);
	}
	ck_assert_int_eq(actor_ask_send(c, to, 1, &i, sizeof(i),
	    10000000000LL, &corr), 0);
	for (i = 0; i < 64; i++)
		ck_assert_int_eq(actor_ask_next(c, &m, 0, &corr), 0);
	ck_assert_uint_eq(actor_asks_pending(c), 1);
	actor_dl_counters(ar, &dl);
	ck_assert_uint_eq(dl.total, 0);
	actor_close(s);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

/*
 * Late answers never crowd out live ones: 64 asks time out, 64 more go
 * out, the callee answers all 128 on a 64-cell reply lane: the 64 that
 * matter are all there (the late ones are dropped before they take a
 * cell), and none is a dead letter.
 */
START_TEST(late_answers_never_crowd_out_live_ones)
{
	struct shm_arena *ar = arena_reply(2, SHM_OVERFLOW_BLOCK, 256, 64);
	struct actor *c = shm_test_open(ar, 0), *s = shm_test_open(ar, 1);
	struct actor_ref to = { 1, ACTOR_ANY };
	struct actor_dl_counters dl;
	struct actor_stats st;
	struct actor_msg m;
	uint64_t corr;
	uint32_t i, v;

	for (i = 0; i < 64; i++)
		ck_assert_int_eq(actor_ask_send(c, to, 1, &i, sizeof(i), 1000,
		    &corr), 0);
	for (i = 0; i < 64; i++)
		ck_assert_int_eq(actor_ask_next(c, &m, ACTOR_FOREVER, &corr),
		    ACTOR_ETIMEDOUT);
	for (i = 64; i < 128; i++)
		ck_assert_int_eq(actor_ask_send(c, to, 1, &i, sizeof(i),
		    10000000000LL, &corr), 0);
	for (i = 0; i < 128; i++) {
		ck_assert_int_eq(actor_recv(s, &m, 0), 0);
		ck_assert_int_eq(actor_reply(s, 1, m.data, m.len), 0);
	}
	for (i = 64; i < 128; i++) {
		ck_assert_int_eq(actor_ask_next(c, &m, 0, &corr), 0);
		memcpy(&v, m.data, sizeof(v));
		ck_assert_uint_ge(v, 64);
	}
	ck_assert_int_eq(actor_ask_next(c, &m, 0, &corr), ACTOR_EEMPTY);
	ck_assert_int_eq(actor_stats(ar, 0, &st), 0);
	ck_assert_uint_eq(st.late_replies, 64);
	actor_dl_counters(ar, &dl);
	ck_assert_uint_eq(dl.total, 0);
	actor_close(s);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

/*
 * A ghost (an ask that timed out after its answer was claimed) keeps its
 * slot while the answer may still come, and is freed once its replier
 * is seen dead; the next incarnation of the asker frees what still waits.
 */
START_TEST(ghost_slots_are_reclaimed)
{
	struct shm_arena *ar = arena_reply(3, SHM_OVERFLOW_BLOCK, 256, 64);
	struct actor *c = shm_test_open(ar, 0), *s = shm_test_open(ar, 1);
	struct actor_ref to = { 1, ACTOR_ANY };
	struct actor_msg m;
	struct shm_msg ask;
	uint64_t corr;
	uint32_t i;

	for (i = 0; i < 64; i++)
		ck_assert_int_eq(actor_ask_send(c, to, 1, &i, sizeof(i), 1000,
		    &corr), 0);
	/* Mailbox 2 claims every answer, and never sends one. */
	for (i = 0; i < 64; i++) {
		ck_assert_int_eq(actor_recv(s, &m, 0), 0);
		memset(&ask, 0, sizeof(ask));
		ask.sender.index = m.sender.index;
		ask.sender.incarnation = m.sender.incarnation;
		ask.corr = m.corr;
		ask.flags = SHM_MSG_ASK;
		ck_assert(slot_claim(ar, &ask, 2, shm_actor_incarnation(ar,
		    2)));
	}
	for (i = 0; i < 64; i++)
		ck_assert_int_eq(actor_ask_next(c, &m, ACTOR_FOREVER, &corr),
		    ACTOR_ETIMEDOUT);
	ck_assert_uint_eq(c->nslots, 64);
	ck_assert_int_eq(actor_ask_send(c, to, 1, &i, sizeof(i),
	    10000000000LL, &corr), ACTOR_EFULL);
	shm_actor_set_state(ar, 2, SHM_ACTOR_DOWN);
	ck_assert_int_eq(actor_ask_send(c, to, 1, &i, sizeof(i),
	    10000000000LL, &corr), 0);
	ck_assert_uint_eq(c->nslots, 1);
	/* The next incarnation: the ask still waiting is nobody's now. */
	actor_close(c);
	c = shm_test_open(ar, 0);
	ck_assert_uint_eq(c->nslots, 0);
	actor_close(s);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

/* An ask kept with actor_defer is answered later, from another call. */
START_TEST(deferred_answer_later)
{
	struct shm_arena *ar = arena(2, SHM_OVERFLOW_BLOCK, 16);
	struct actor *c = shm_test_open(ar, 0), *s = shm_test_open(ar, 1);
	struct actor_ref to = { 1, ACTOR_ANY };
	struct actor_caller k;
	struct actor_msg m, r;
	uint64_t corr, got;

	ck_assert_int_eq(actor_ask_send(c, to, 5, "q", 1, 10000000000LL,
	    &corr), 0);
	ck_assert_int_eq(actor_tell(c, to, 6, "t", 1), 0);
	ck_assert_int_eq(actor_recv(s, &m, 0), 0);
	ck_assert_int_eq(actor_defer(s, &k), 0);
	ck_assert_uint_eq(k.tag, 5);
	ck_assert_int_eq(actor_recv(s, &m, 0), 0);	/* the tell */
	ck_assert_int_eq(actor_defer(s, &k), ACTOR_ENOTASK);
	ck_assert_int_eq(actor_ask_next(c, &r, 0, &got), ACTOR_EAGAIN);
	ck_assert_int_eq(actor_answer(s, &k, 7, "later", 5), 0);
	ck_assert_int_eq(actor_answer(s, &k, 7, "twice", 5), ACTOR_EINVAL);
	ck_assert_int_eq(actor_ask_next(c, &r, 0, &got), 0);
	ck_assert_uint_eq(got, corr);
	ck_assert_uint_eq(r.tag, 7);
	ck_assert(r.len == 5 && memcmp(r.data, "later", 5) == 0);
	actor_close(s);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

/*
 * The actor dies holding two deferred asks, the second still in hand:
 * the first fails at once (ACTOR_EDIED), the second is given again and
 * answered by the next incarnation.
 */
START_TEST(deferred_fail_at_death)
{
	struct shm_arena *ar = arena(2, SHM_OVERFLOW_BLOCK, 16);
	struct actor *c = shm_test_open(ar, 1), *w = shm_test_open(ar, 0);
	struct actor_ref to = { 0, ACTOR_ANY };
	struct actor_caller k1, k2;
	struct actor_msg m, r;
	uint64_t c1, c2, got;

	ck_assert_int_eq(actor_ask_send(c, to, 1, "a", 1, 10000000000LL, &c1),
	    0);
	ck_assert_int_eq(actor_ask_send(c, to, 2, "b", 1, 10000000000LL, &c2),
	    0);
	ck_assert_int_eq(actor_recv(w, &m, 0), 0);
	ck_assert_int_eq(actor_defer(w, &k1), 0);
	ck_assert_int_eq(actor_recv(w, &m, 0), 0);
	ck_assert_int_eq(actor_defer(w, &k2), 0);
	w = died_holding(ar, w);
	ck_assert_int_eq(actor_ask_next(c, &r, 0, &got), ACTOR_EDIED);
	ck_assert_uint_eq(got, c1);
	ck_assert_str_eq(actor_error_text(&r), "the actor died holding its "
	    "deferred answer");
	ck_assert_int_eq(actor_ask_next(c, &r, 0, &got), ACTOR_EAGAIN);
	ck_assert_int_eq(actor_recv(w, &m, 0), 0);
	ck_assert_uint_eq(m.tag, 2);
	ck_assert(m.flags & ACTOR_MSG_REDELIVERED);
	ck_assert_int_eq(actor_reply(w, 2, "B", 1), 0);
	ck_assert_int_eq(actor_ask_next(c, &r, 0, &got), 0);
	ck_assert_uint_eq(got, c2);
	actor_close(w);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

/* The deferred set is full; entries whose asks timed out are taken back. */
START_TEST(deferred_set_reclaims_asks_that_are_over)
{
	struct shm_arena *ar = arena_reply(2, SHM_OVERFLOW_BLOCK, 256, 64);
	struct actor *c = shm_test_open(ar, 0), *s = shm_test_open(ar, 1);
	struct actor_ref to = { 1, ACTOR_ANY };
	struct actor_caller k;
	struct actor_msg m;
	uint64_t corr;
	uint32_t i;

	for (i = 0; i < 64; i++)
		ck_assert_int_eq(actor_ask_send(c, to, 1, &i, sizeof(i), 1000,
		    &corr), 0);
	for (i = 0; i < 64; i++) {
		ck_assert_int_eq(actor_recv(s, &m, 0), 0);
		ck_assert_int_eq(actor_defer(s, &k), 0);
	}
	ck_assert_int_eq(actor_ask_send(c, to, 1, &i, sizeof(i),
	    10000000000LL, &corr), ACTOR_EFULL);
	for (i = 0; i < 64; i++)
		ck_assert_int_eq(actor_ask_next(c, &m, ACTOR_FOREVER, &corr),
		    ACTOR_ETIMEDOUT);
	ck_assert_int_eq(actor_ask_send(c, to, 1, &i, sizeof(i),
	    10000000000LL, &corr), 0);
	ck_assert_int_eq(actor_recv(s, &m, 0), 0);
	ck_assert_int_eq(actor_defer(s, &k), 0);
	ck_assert_int_eq(actor_answer(s, &k, 1, "ok", 2), 0);
	ck_assert_int_eq(actor_ask_next(c, &m, 0, &corr), 0);
	actor_close(s);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

/*
 * Asks to a down actor fail at once, counted, and make no dead letter
 * (a retry loop must not flood the ring: a real dead letter written
 * before 1000 of them is still there); with ACTOR_ASK_WAIT_UP one is
 * queued for the next incarnation, unless the actor is gone for good.
 */
START_TEST(asks_while_down)
{
	struct shm_arena *ar = arena(2, SHM_OVERFLOW_BLOCK, 16);
	struct actor *c = shm_test_open(ar, 1), *w = shm_test_open(ar, 0);
	struct actor_ref to = { 0, ACTOR_ANY }, old = actor_self(w);
	struct actor_dl_counters dl;
	struct actor_dead_letter d;
	struct actor_stats st;
	struct actor_msg m, r;
	uint64_t corr, got, cursor = 0;
	int i;

	actor_close(w);
	ck_assert_int_eq(actor_reaped(ar, 0, 0, 9, NULL), 0);
	/* A real dead letter: a tell to the incarnation that died. */
	ck_assert_int_eq(actor_tell(c, old, 4, "real", 4), ACTOR_ESTALE);
	/* 1000 failed asks, the ring holds 64: the real one stays. */
	for (i = 0; i < 1000; i++)
		ck_assert_int_eq(actor_ask(c, to, 1, "x", 1, 10000000000LL,
		    &r), ACTOR_EDOWN);
	actor_dl_counters(ar, &dl);
	ck_assert_uint_eq(dl.total, 1);
	ck_assert_int_eq(actor_dl_read(ar, &cursor, &d), 1);
	ck_assert_uint_eq(d.reason, SHM_DL_STALE_REF);
	ck_assert_uint_eq(d.tag, 4);
	ck_assert_int_eq(actor_dl_read(ar, &cursor, &d), 0);
	ck_assert_int_eq(actor_stats(ar, 0, &st), 0);
	ck_assert_uint_eq(st.asks_failed, 1000);
	ck_assert_int_eq(actor_ask_send_with(c, to, 2, "y", 1, 10000000000LL,
	    ACTOR_ASK_WAIT_UP, &corr), 0);
	/* The restart. */
	ck_assert_uint_gt(actor_prepare_start(ar, 0), 0);
	shm_actor_set_state(ar, 0, SHM_ACTOR_UP);
	w = shm_test_open(ar, 0);
	ck_assert_int_eq(actor_recv(w, &m, 0), 0);
	ck_assert_uint_eq(m.tag, 2);
	ck_assert_int_eq(actor_reply(w, 2, "Y", 1), 0);
	ck_assert_int_eq(actor_ask_next(c, &r, 0, &got), 0);
	ck_assert_uint_eq(got, corr);
	/* Gone for good: even a waiting ask fails at once. */
	actor_close(w);
	ck_assert_int_eq(actor_reaped(ar, 0, 0, 0, NULL), 0);
	ck_assert_int_eq(actor_gone(ar, 0, ACTOR_GONE_EXITED, NULL), 0);
	ck_assert_int_eq(actor_ask_with(c, to, 3, "z", 1, 10000000000LL,
	    ACTOR_ASK_WAIT_UP, &r), ACTOR_EDOWN);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

/*
 * An answer larger than the asker's reply cell cannot travel: the replier
 * gets ACTOR_EOVERSIZE, and the asker the same at once, not its timeout;
 * the answer is a dead letter.
 */
START_TEST(oversized_answer_fails_the_ask_at_once)
{
	struct shm_arena *ar = arena(2, SHM_OVERFLOW_BLOCK, 16);
	struct actor *c = shm_test_open(ar, 0), *s = shm_test_open(ar, 1);
	struct actor_ref to = { 1, ACTOR_ANY };
	struct actor_dl_counters dl;
	size_t big = shm_payload_max(ar, 0) + 1;
	struct actor_msg m, r;
	uint64_t corr, got;
	char *buf;

	ck_assert_ptr_nonnull(buf = calloc(1, big));
	ck_assert_int_eq(actor_ask_send(c, to, 5, "q", 1, 10000000000LL,
	    &corr), 0);
	ck_assert_int_eq(actor_recv(s, &m, 0), 0);
	ck_assert_int_eq(actor_reply(s, 5, buf, big), ACTOR_EOVERSIZE);
	ck_assert_int_eq(actor_ask_next(c, &r, 0, &got), ACTOR_EOVERSIZE);
	ck_assert_uint_eq(got, corr);
	actor_dl_counters(ar, &dl);
	ck_assert_uint_eq(dl.total, 1);
	/* One byte less travels. */
	ck_assert_int_eq(actor_ask_send(c, to, 6, "q", 1, 10000000000LL,
	    &corr), 0);
	ck_assert_int_eq(actor_recv(s, &m, 0), 0);
	ck_assert_int_eq(actor_reply(s, 6, buf, big - 1), 0);
	ck_assert_int_eq(actor_ask_next(c, &r, 0, &got), 0);
	ck_assert_uint_eq(r.len, big - 1);
	free(buf);
	actor_close(s);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

/*
 * With actor_recv_answers, actor_recv hands over the answers to asks sent
 * with actor_ask_send as messages, and an ask past its deadline as an
 * ACTOR_ETIMEDOUT error message: one loop for both.
 */
START_TEST(recv_hands_answers_over)
{
	struct shm_arena *ar = arena(2, SHM_OVERFLOW_BLOCK, 16);
	struct actor *c = shm_test_open(ar, 0), *s = shm_test_open(ar, 1);
	struct actor_ref to = { 1, ACTOR_ANY }, back = { 0, ACTOR_ANY };
	struct actor_msg m;
	uint64_t c1, c2, c3;

	actor_recv_answers(c, true);
	ck_assert_int_eq(actor_ask_send(c, to, 5, "q", 1, 10000000000LL, &c1),
	    0);
	ck_assert_int_eq(actor_ask_send(c, to, 6, "r", 1, 10000000000LL, &c2),
	    0);
	ck_assert_int_eq(actor_recv(s, &m, 0), 0);
	ck_assert_int_eq(actor_reply(s, 5, "A", 1), 0);
	ck_assert_int_eq(actor_recv(s, &m, 0), 0);
	ck_assert_int_eq(actor_reply_error(s, 42, "no"), 0);
	ck_assert_int_eq(actor_tell(s, back, 9, NULL, 0), 0);
	ck_assert_int_eq(actor_recv(c, &m, 0), 0);
	ck_assert(m.flags & ACTOR_MSG_REPLY);
	ck_assert_uint_eq(m.corr, c1);
	ck_assert_uint_eq(m.tag, 5);
	ck_assert_int_eq(actor_reply_status(&m), 0);
	ck_assert_int_eq(actor_recv(c, &m, 0), 0);
	ck_assert_uint_eq(m.corr, c2);
	ck_assert_int_eq(actor_reply_status(&m), ACTOR_EREPLY);
	ck_assert_int_eq(actor_error_code(&m), 42);
	ck_assert_int_eq(actor_recv(c, &m, 0), 0);
	ck_assert_uint_eq(m.tag, 9);
	ck_assert((m.flags & ACTOR_MSG_REPLY) == 0);
	/* Past its deadline, with nothing else coming: a timeout message. */
	ck_assert_int_eq(actor_ask_send(c, to, 7, "t", 1, 1000000, &c3), 0);
	ck_assert_int_eq(actor_recv(c, &m, 10000000000LL), 0);
	ck_assert_uint_eq(m.corr, c3);
	ck_assert_int_eq(actor_reply_status(&m), ACTOR_ETIMEDOUT);
	ck_assert_int_eq(actor_recv(c, &m, 1000000), ACTOR_ETIMEDOUT);
	actor_close(s);
	actor_close(c);
	shm_detach(ar);
}
END_TEST

static Suite *
unit_suite(void)
{
	Suite *s = suite_create("actor_unit");
	TCase *tc = tcase_create("unit");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, reaped_inhand_still_in_its_cell);
	tcase_add_test(tc, reaped_inhand_redelivered);
	tcase_add_test(tc, fork_child_leaves_parent);
	tcase_add_test(tc, reaped_large_inhand_redelivered);
	tcase_add_test(tc, tell_keyed_coalesces);
	tcase_add_test(tc, reaped_inhand_committed);
	tcase_add_test(tc, reaped_committed_ask_fails_at_once);
	tcase_add_test(tc, reaped_committed_ask_claimed_fails_at_once);
	tcase_add_test(tc, reaped_killed_sending_answer);
	tcase_add_test(tc, reaped_committed_ask_sent_answered_once);
	tcase_add_test(tc, reaped_redelivered_ask_claimed_answered);
	tcase_add_test(tc, late_answer_is_dropped);
	tcase_add_test(tc, late_answer_never_answers_next_ask);
	tcase_add_test(tc, sync_ask_keeps_async_answers);
	tcase_add_test(tc, drop_oldest_killed_after_take);
	tcase_add_test(tc, drop_oldest_killed_after_handover);
	tcase_add_test(tc, many_asks_in_flight);
	tcase_add_test(tc, application_error_code_and_text);
	tcase_add_test(tc, tell_by_policy);
	tcase_add_test(tc, ask_no_wait_refused_when_full);
	tcase_add_test(tc, torn_commit_keeps_previous);
	tcase_add_test(tc, while_down_policies);
	tcase_add_test(tc, terminated_burst_is_owed_not_lost);
	tcase_add_test(tc, owed_dropped_when_watcher_dies);
	tcase_add_test(tc, owed_list_capped);
	tcase_add_test(tc, watch_of_the_dead_with_full_lane);
	tcase_add_test(tc, asks_in_flight_bounded_by_reply_lane);
	tcase_add_test(tc, late_answers_never_crowd_out_live_ones);
	tcase_add_test(tc, ghost_slots_are_reclaimed);
	tcase_add_test(tc, deferred_answer_later);
	tcase_add_test(tc, deferred_fail_at_death);
	tcase_add_test(tc, deferred_claimed_fails_at_death);
	tcase_add_test(tc, deferred_set_reclaims_asks_that_are_over);
	tcase_add_test(tc, asks_while_down);
	tcase_add_test(tc, oversized_answer_fails_the_ask_at_once);
	tcase_add_test(tc, recv_hands_answers_over);
	tcase_add_test(tc, watches_of_dead_watchers_are_reclaimed);
	tcase_add_test(tc, watcher_set_sized_by_config);
	tcase_add_test(tc, error_answer_owed_when_reply_lane_full);
	tcase_add_test(tc, owed_at_close_is_a_dead_letter);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(unit_suite());
}
