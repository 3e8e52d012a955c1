/*
 * check_actor.c: libactor's semantics across processes, under a real
 * actord running in the test process, with function children as actors:
 * the seeds' scenarios (four asks and a crash, asks during backoff, stale
 * references, poison messages with max_attempts 1 and 3, on_down keep and
 * fail, Terminated exactly once, snapshots across SIGKILL).
 *
 * A "client" child runs each scenario and writes what it saw to a shared
 * page; the test process runs actord until the client is done, then checks
 * the page and the arena.  No assertion is about time: "at once" is shown
 * by answers that are errors, never ACTOR_ETIMEDOUT, with long timeouts.
 */
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shm/shm.h"
#include "tests/check_actor_util.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"
#include "worker/actor.h"

#define WAIT		20000		/* ms: a bound, never an expectation */
#define LONG_NS		20000000000LL	/* an ask timeout nobody should reach */

enum {
	T_GET = 1,		/* ask: int n -> n * 10; n == 2 crashes */
	T_CRASH,		/* SIGKILL itself */
	T_NOTE,			/* count it */
	T_BLOCK,		/* wait for the gate, then SIGKILL itself */
	T_EXIT,			/* _exit(int) */
	T_WORK,			/* uint32 i: i % 1000 == 500 crashes */
	T_COMMIT,		/* commit the string */
	T_COMMIT_KILL,		/* commit the string, SIGKILL mid-commit */
	T_SLOW,			/* wait for the gate, then count a note */
	T_COMMIT_DIE,		/* ask: commit, then SIGKILL before answering */
	T_QUIT,			/* actor_exit(0): on purpose, not a crash */
	T_DEFER,		/* ask: keep it for the next T_ANSWER */
	T_ANSWER		/* answer the kept ask with 77 */
};

/* The ask a T_DEFER kept (one per kv process). */
static struct actor_caller kept;

static void
die(void)
{
	raise(SIGKILL);
	_exit(98);
}

static void
wait_gate(void)
{
	int i;

	for (i = 0; i < WAIT * 10 && atomic_load(&sh->gate) == 0; i++)
		sleep_us(100);
}

/* Until the kv actor says it is inside a blocking handler. */
static void
wait_blocked(void)
{
	int i;

	for (i = 0; i < WAIT * 10 && atomic_load(&sh->blocked) == 0; i++)
		sleep_us(100);
}

/* SIGTERM to actor idx while its handler waits for the gate; open it. */
static void
sigterm_mid_handler(struct shm_arena *ar, uint32_t idx)
{
	CLIENT_CHECK(kill(shm_actor_pid(ar, idx), SIGTERM) == 0);
	sleep_us(20000);	/* let the signal land mid-handler */
	atomic_store(&sh->gate, 1);
}

/* --- the actors ------------------------------------------------------------- */

static int
kv_handle(struct actor *a, const struct actor_msg *m, void *arg)
{
	int n = 0;
	int64_t v;

	(void)arg;
	switch (m->tag) {
	case T_GET:
		if (m->len >= sizeof(n))
			memcpy(&n, m->data, sizeof(n));
		if (n == 2)
			die();
		if (n == 1)
			wait_gate();
		v = (int64_t)n * 10;
		(void)actor_reply(a, T_GET, &v, sizeof(v));
		break;
	case T_CRASH:
		die();
		break;
	case T_COMMIT_DIE:
		if (actor_commit(a, "done", 5) < 0)
			_exit(96);
		die();
		break;
	case T_QUIT:
		actor_exit(a, 0);
	case T_DEFER:
		if (actor_defer(a, &kept) < 0)
			_exit(95);
		break;
	case T_ANSWER:
		v = 77;
		(void)actor_answer(a, &kept, T_ANSWER, &v, sizeof(v));
		break;
	case T_NOTE:
		atomic_fetch_add(&sh->notes, 1);
		break;
	case T_SLOW:
		atomic_store(&sh->blocked, 1);
		wait_gate();
		atomic_fetch_add(&sh->notes, 1);
		break;
	case T_BLOCK:
		atomic_store(&sh->blocked, 1);
		wait_gate();
		die();
		break;
	case T_EXIT:
		if (m->len >= sizeof(n))
			memcpy(&n, m->data, sizeof(n));
		_exit(n);
	case T_WORK: {
		uint32_t i = 0;

		if (m->len >= sizeof(i))
			memcpy(&i, m->data, sizeof(i));
		if (i >= NWORK)
			break;
		if (i % 1000 == 500) {
			uint32_t k = i / 1000, seen;

			seen = atomic_load(&sh->poison_attempts[k]);
			if (m->attempts > seen)
				atomic_store(&sh->poison_attempts[k],
				    m->attempts);
			die();
		}
		atomic_fetch_add(&sh->handled[i], 1);
		atomic_fetch_add(&sh->handled_total, 1);
		break;
	}
	default:
		break;
	}
	return 0;
}

static void
kv_stop(struct actor *a, void *arg)
{
	(void)a;
	(void)arg;
	/* After the message in hand: the note it counts is already there. */
	atomic_store(&sh->val[15], atomic_load(&sh->notes) + 100);
}

static int
fn_kv(void *arg)
{
	struct actor *a = attach_or_die();

	(void)arg;
	actor_set_wait(a, ACTOR_WAIT_SLEEP, 0);
	if (actor_ready(a) < 0)
		_exit(97);
	(void)actor_run(a, kv_handle, kv_stop, NULL);
	actor_close(a);
	return 0;
}

/* --- the spec --------------------------------------------------------------- */

static struct child_spec *
add_actor(struct sup_spec *s, const char *name, child_fn fn)
{
	struct child_spec *c = ts_add_fn(s, name, fn, NULL);

	c->ready = READY_ACTOR;
	c->has_mailbox = true;
	c->mailbox.capacity = 256;
	c->mailbox.cell = 256;
	c->mailbox.block_timeout = 100;
	return c;
}

static struct actord_spec *
spec_kv(uint32_t max_attempts, enum on_down od, child_fn client)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;

	spec->root.intensity = 1000;
	spec->root.period = 60;
	c = add_actor(&spec->root, "kv", fn_kv);
	c->mailbox.max_attempts = max_attempts;
	c->mailbox.on_down = od;
	add_actor(&spec->root, "client", client);
	return spec;
}

static bool
client_done(struct actord *ad, void *arg)
{
	(void)ad;
	(void)arg;
	return atomic_load(&sh->done) != 0;
}

static struct actord *
run_scenario(struct actord_spec *spec)
{
	struct actord *ad = ts_actord(spec);

	actord_boot(ad);
	if (!ts_run_sliced(ad, client_done, NULL, 40000)) {
		struct shm_counters c0, c1;
		struct actor_stats s0;

		(void)shm_counters(ad->arena, 0, &c0);
		(void)shm_counters(ad->arena, 1, &c1);
		(void)actor_stats(ad->arena, 0, &s0);
		ck_abort_msg("the client never finished (fail line %d): rc "
		    "%d %d %d %d %d; mbox0 enq %llu deq %llu depth %llu; "
		    "mbox1 enq %llu deq %llu depth %llu; deaths %llu "
		    "handled %llu poison %llu late %llu",
		    atomic_load(&sh->fail), sh->rc[0], sh->rc[1], sh->rc[2],
		    sh->rc[3], sh->rc[4],
		    (unsigned long long)c0.enqueued,
		    (unsigned long long)c0.dequeued,
		    (unsigned long long)c0.depth,
		    (unsigned long long)c1.enqueued,
		    (unsigned long long)c1.dequeued,
		    (unsigned long long)c1.depth,
		    (unsigned long long)s0.deaths,
		    (unsigned long long)s0.handled,
		    (unsigned long long)s0.poison,
		    (unsigned long long)s0.late_replies);
	}
	ck_assert_msg(atomic_load(&sh->fail) == 0,
	    "client check failed at line %d", atomic_load(&sh->fail));
	return ad;
}

static void
setup(void)
{
	sh_map();
	ts_record_open();
}

static void
teardown(void)
{
	ts_record_close();
}

/* --- four concurrent asks, the second crashes the actor (seed 003) ----------- */

static int
fn_four_asks(void *arg)
{
	struct actor *a = attach_or_die();
	struct actor_ref kv;
	struct actor_msg r;
	uint64_t corr[5], c;
	int n, k, rc;
	int64_t v;

	(void)arg;
	actor_set_wait(a, ACTOR_WAIT_SLEEP, 0);
	(void)actor_ready(a);
	CLIENT_CHECK(actor_lookup(a, "/kv", &kv) == 0);
	kv.incarnation = ACTOR_ANY;
	for (n = 1; n <= 4; n++)
		CLIENT_CHECK(actor_ask_send(a, kv, T_GET, &n, sizeof(n),
		    LONG_NS, &corr[n]) == 0);
	atomic_store(&sh->gate, 1);
	for (k = 0; k < 4; k++) {
		rc = actor_ask_next(a, &r, LONG_NS, &c);
		for (n = 1; n <= 4; n++)
			if (corr[n] == c)
				break;
		CLIENT_CHECK(n <= 4);
		if (n > 4)
			continue;
		atomic_store(&sh->rc[n], rc);
		if (rc == 0 && r.len == sizeof(v)) {
			memcpy(&v, r.data, sizeof(v));
			atomic_store(&sh->val[n], v);
		}
	}
	CLIENT_CHECK(actor_asks_pending(a) == 0);
	return client_finish(a);
}

START_TEST(four_asks_second_crashes_keep)
{
	struct actord *ad = run_scenario(spec_kv(1, ON_DOWN_KEEP,
	    fn_four_asks));

	ck_assert_int_eq(sh->rc[1], 0);
	ck_assert_int_eq(sh->val[1], 10);
	ck_assert_int_eq(sh->rc[2], ACTOR_EPOISON);
	/* Queued behind the crash: the next incarnation answers them. */
	ck_assert_int_eq(sh->rc[3], 0);
	ck_assert_int_eq(sh->val[3], 30);
	ck_assert_int_eq(sh->rc[4], 0);
	ck_assert_int_eq(sh->val[4], 40);
	ck_assert_int_eq(count_dl(ad->arena, 0, SHM_DL_POISON), 1);
	actord_free(ad);
}
END_TEST

START_TEST(four_asks_second_crashes_fail)
{
	struct actord *ad = run_scenario(spec_kv(1, ON_DOWN_FAIL,
	    fn_four_asks));
	struct actor_stats st;

	ck_assert_int_eq(sh->rc[1], 0);
	ck_assert_int_eq(sh->val[1], 10);
	ck_assert_int_eq(sh->rc[2], ACTOR_EPOISON);
	ck_assert_int_eq(sh->rc[3], ACTOR_EFAILED);
	ck_assert_int_eq(sh->rc[4], ACTOR_EFAILED);
	ck_assert_int_eq(actor_stats(ad->arena, 0, &st), 0);
	ck_assert_uint_eq(st.asks_failed, 2);
	ck_assert_uint_eq(st.poison, 1);
	actord_free(ad);
}
END_TEST

/* With the default max_attempts (3) the crashing ask is tried three times. */
START_TEST(four_asks_second_crashes_redelivered)
{
	struct actord *ad = run_scenario(spec_kv(3, ON_DOWN_KEEP,
	    fn_four_asks));
	struct actor_stats st;

	ck_assert_int_eq(sh->rc[1], 0);
	ck_assert_int_eq(sh->rc[2], ACTOR_EPOISON);
	ck_assert_int_eq(sh->rc[3], 0);
	ck_assert_int_eq(sh->rc[4], 0);
	ck_assert_int_eq(actor_stats(ad->arena, 0, &st), 0);
	ck_assert_uint_eq(st.deaths, 3);
	ck_assert_uint_eq(st.redelivered, 2);
	actord_free(ad);
}
END_TEST

/* --- an ask whose actor commits and dies before answering fails at once ---- */

static int
fn_commit_die(void *arg)
{
	struct actor *a = attach_or_die();
	struct actor_ref kv;
	struct actor_msg r;
	int n = 3;

	(void)arg;
	(void)actor_ready(a);
	CLIENT_CHECK(actor_lookup(a, "/kv", &kv) == 0);
	atomic_store(&sh->rc[0], actor_ask_path(a, "/kv", T_COMMIT_DIE, NULL,
	    0, LONG_NS, &r));
	snprintf(sh->text, sizeof(sh->text), "%s", actor_error_text(&r));
	/* Done with: not given again, the next incarnation answers on. */
	CLIENT_CHECK(wait_new_incarnation(actor_arena(a), kv.index,
	    kv.incarnation, WAIT) == 0);
	atomic_store(&sh->rc[1], actor_ask_path(a, "/kv", T_GET, &n,
	    sizeof(n), LONG_NS, &r));
	return client_finish(a);
}

START_TEST(ask_committed_then_died_fails_at_once)
{
	struct actord_spec *spec = spec_kv(3, ON_DOWN_KEEP, fn_commit_die);
	struct actord *ad;
	struct actor_stats st;

	spec->root.children->mailbox.state = 64;
	ad = run_scenario(spec);
	ck_assert_int_eq(sh->rc[0], ACTOR_EDIED);
	ck_assert_str_eq(sh->text, "the actor died after committing, before "
	    "it answered");
	ck_assert_int_eq(sh->rc[1], 0);
	ck_assert_int_eq(actor_stats(ad->arena, 0, &st), 0);
	ck_assert_uint_eq(st.redelivered, 0);
	actord_free(ad);
}
END_TEST

/* --- a deliberate exit is not a crash; watching a name ----------------------- */

/* The next system message: its tag and payload, or tag 0. */
static uint32_t
next_system(struct actor *a, struct actor_terminated *t)
{
	struct actor_msg m;

	memset(t, 0, sizeof(*t));
	if (actor_recv(a, &m, (int64_t)WAIT * 1000000) < 0)
		return 0;
	if ((m.flags & ACTOR_MSG_SYSTEM) && m.len == sizeof(*t))
		memcpy(t, m.data, sizeof(*t));
	return m.tag;
}

static int
fn_quit(void *arg)
{
	struct actor *a = attach_or_die();
	struct actor_terminated t;
	struct actor_ref kv;

	(void)arg;
	actor_set_wait(a, ACTOR_WAIT_SLEEP, 0);
	(void)actor_ready(a);
	CLIENT_CHECK(actor_lookup(a, "/kv", &kv) == 0);
	CLIENT_CHECK(actor_watch_name(a, "/kv") == 0);
	CLIENT_CHECK(actor_watch(a, kv) == 0);
	kv.incarnation = ACTOR_ANY;
	CLIENT_CHECK(actor_tell(a, kv, T_QUIT, NULL, 0) == 0);
	/* The incarnation's death first, then the name's end. */
	atomic_store(&sh->rc[0], (int)next_system(a, &t));
	atomic_store(&sh->val[0], t.exit_status);
	atomic_store(&sh->rc[1], (int)next_system(a, &t));
	atomic_store(&sh->val[1], t.gone);
	return client_finish(a);
}

/*
 * actor_exit(0) in a handler: a clean exit, the message in hand finished
 * (not given again), so a transient child is not restarted: gone for
 * good, and a watch of its name says so.
 */
START_TEST(deliberate_exit_is_not_a_crash)
{
	struct actord_spec *spec = spec_kv(3, ON_DOWN_KEEP, fn_quit);
	struct actor_stats st;
	struct actord *ad;

	spec->root.children[0].restart = RESTART_TRANSIENT;
	ad = run_scenario(spec);
	ck_assert_uint_eq((uint32_t)sh->rc[0], ACTOR_SYS_TERMINATED);
	ck_assert_int_eq(sh->val[0], 0);
	ck_assert_uint_eq((uint32_t)sh->rc[1], ACTOR_SYS_GONE);
	ck_assert_int_eq(sh->val[1], ACTOR_GONE_EXITED);
	ck_assert_int_eq(actor_stats(ad->arena, 0, &st), 0);
	ck_assert_uint_eq(st.deaths, 1);
	ck_assert_uint_eq(st.redelivered, 0);
	ck_assert_uint_eq(st.poison, 0);
	ck_assert(ts_state(ad, "/kv") == NS_STOPPED);
	actord_free(ad);
}
END_TEST

static int
fn_quit_permanent(void *arg)
{
	struct actor *a = attach_or_die();
	struct actor_ref kv;
	struct actor_msg r;
	int n = 3;

	(void)arg;
	(void)actor_ready(a);
	CLIENT_CHECK(actor_lookup(a, "/kv", &kv) == 0);
	CLIENT_CHECK(actor_tell_path(a, "/kv", T_QUIT, NULL, 0) == 0);
	CLIENT_CHECK(actor_tell_path(a, "/kv", T_NOTE, NULL, 0) == 0);
	CLIENT_CHECK(wait_new_incarnation(actor_arena(a), kv.index,
	    kv.incarnation, WAIT) == 0);
	atomic_store(&sh->rc[0], actor_ask_path(a, "/kv", T_GET, &n,
	    sizeof(n), LONG_NS, &r));
	return client_finish(a);
}

/* Permanent: restarted, and the message it left on is not given again. */
START_TEST(deliberate_exit_finishes_the_message)
{
	struct actord *ad = run_scenario(spec_kv(3, ON_DOWN_KEEP,
	    fn_quit_permanent));
	struct actor_stats st;

	ck_assert_int_eq(sh->rc[0], 0);
	ck_assert_int_eq(sh->notes, 1);
	ck_assert_int_eq(actor_stats(ad->arena, 0, &st), 0);
	ck_assert_uint_eq(st.redelivered, 0);
	actord_free(ad);
}
END_TEST

static int
fn_gave_up(void *arg)
{
	struct actor *a = attach_or_die();
	struct actor_terminated t;
	struct actor_ref kv;
	uint32_t tag;
	int i, n = 3;
	struct actor_msg r;

	(void)arg;
	actor_set_wait(a, ACTOR_WAIT_SLEEP, 0);
	(void)actor_ready(a);
	CLIENT_CHECK(actor_lookup(a, "/sub/kv", &kv) == 0);
	CLIENT_CHECK(actor_watch_name(a, "/sub/kv") == 0);
	/* Crashes until /sub gives up (intensity 1): no Gone before. */
	for (i = 0; i < 2; i++) {
		CLIENT_CHECK(wait_state(actor_arena(a), kv.index,
		    SHM_ACTOR_UP, WAIT) == 0);
		CLIENT_CHECK(actor_tell_path(a, "/sub/kv", T_CRASH, NULL,
		    0) == 0);
		CLIENT_CHECK(wait_new_incarnation(actor_arena(a), kv.index,
		    kv.incarnation, WAIT) == 0 || i == 1);
		kv.incarnation = shm_actor_incarnation(actor_arena(a),
		    kv.index);
	}
	tag = next_system(a, &t);
	atomic_store(&sh->rc[0], (int)tag);
	atomic_store(&sh->val[0], t.gone);
	/* The root restarts /sub: the name is back, and asks reach it. */
	for (i = 0; i < WAIT / 10; i++) {
		atomic_store(&sh->rc[1], actor_ask_path(a, "/sub/kv", T_GET,
		    &n, sizeof(n), LONG_NS, &r));
		if (atomic_load(&sh->rc[1]) == 0)
			break;
		sleep_us(10000);
	}
	return client_finish(a);
}

/* A watch of a name passes restarts by, and ends when its supervisor gives up. */
START_TEST(watch_name_gone_when_supervisor_gives_up)
{
	struct actord_spec *spec = ts_spec();
	struct sup_spec *sub;
	struct child_spec *c;
	struct actord *ad;

	spec->root.intensity = 100;
	spec->root.period = 60;
	sub = ts_add_sup(&spec->root, "sub", STRATEGY_ONE_FOR_ONE);
	sub->intensity = 1;
	sub->period = 60;
	c = add_actor(sub, "kv", fn_kv);
	c->mailbox.max_attempts = 1;
	add_actor(&spec->root, "client", fn_gave_up);
	ad = run_scenario(spec);
	ck_assert_uint_eq((uint32_t)sh->rc[0], ACTOR_SYS_GONE);
	ck_assert_int_eq(sh->val[0], ACTOR_GONE_GAVE_UP);
	ck_assert_int_eq(sh->rc[1], 0);
	actord_free(ad);
}
END_TEST

/* --- deferred answers across processes; asks that ride out a restart ------- */

static int
fn_defer(void *arg)
{
	struct actor *a = attach_or_die();
	struct actor_ref kv;
	struct actor_msg r;
	uint64_t c1, c2, got;
	int64_t v = 0;
	int rc;

	(void)arg;
	actor_set_wait(a, ACTOR_WAIT_SLEEP, 0);
	(void)actor_ready(a);
	CLIENT_CHECK(actor_lookup(a, "/kv", &kv) == 0);
	kv.incarnation = ACTOR_ANY;
	/* Kept, then answered from a later handler call. */
	CLIENT_CHECK(actor_ask_send(a, kv, T_DEFER, NULL, 0, LONG_NS,
	    &c1) == 0);
	CLIENT_CHECK(actor_tell(a, kv, T_ANSWER, NULL, 0) == 0);
	rc = actor_ask_next(a, &r, LONG_NS, &got);
	if (rc == 0 && r.len == sizeof(v))
		memcpy(&v, r.data, sizeof(v));
	atomic_store(&sh->rc[0], rc);
	atomic_store(&sh->val[0], v);
	/* Kept, then the actor dies: the ask fails at once. */
	CLIENT_CHECK(actor_ask_send(a, kv, T_DEFER, NULL, 0, LONG_NS,
	    &c2) == 0);
	CLIENT_CHECK(actor_tell(a, kv, T_CRASH, NULL, 0) == 0);
	atomic_store(&sh->rc[1], actor_ask_next(a, &r, LONG_NS, &got));
	CLIENT_CHECK(got == c2);
	/* Down, in its backoff: a plain ask fails, a waiting one is answered. */
	CLIENT_CHECK(wait_state(actor_arena(a), kv.index, SHM_ACTOR_DOWN,
	    WAIT) == 0);
	atomic_store(&sh->rc[2], actor_ask(a, kv, T_GET, &rc, sizeof(rc),
	    LONG_NS, &r));
	atomic_store(&sh->rc[3], actor_ask_with(a, kv, T_GET, &rc,
	    sizeof(rc), LONG_NS, ACTOR_ASK_WAIT_UP, &r));
	return client_finish(a);
}

START_TEST(deferred_answers_and_waiting_asks)
{
	struct actord_spec *spec = spec_kv(1, ON_DOWN_KEEP, fn_defer);
	struct actord *ad;

	spec->root.backoff_min = spec->root.backoff_max = 1000;
	ad = run_scenario(spec);
	ck_assert_int_eq(sh->rc[0], 0);
	ck_assert_int_eq(sh->val[0], 77);
	ck_assert_int_eq(sh->rc[1], ACTOR_EDIED);
	ck_assert_int_eq(sh->rc[2], ACTOR_EDOWN);
	ck_assert_int_eq(sh->rc[3], 0);
	ck_assert_int_eq(count_dl(ad->arena, 0, SHM_DL_ASK_FAILED), 0);
	actord_free(ad);
}
END_TEST

/* --- an ask during backoff fails at once; a tell waits for the restart ------ */

static int
fn_backoff(void *arg)
{
	struct actor *a = attach_or_die();
	struct shm_arena *ar = actor_arena(a);
	struct actor_ref kv, old;
	struct actor_msg r;
	int n = 3;

	(void)arg;
	(void)actor_ready(a);
	CLIENT_CHECK(actor_lookup(a, "/kv", &kv) == 0);
	old = kv;
	kv.incarnation = ACTOR_ANY;
	CLIENT_CHECK(actor_ask(a, kv, T_GET, &n, sizeof(n), LONG_NS, &r) == 0);
	CLIENT_CHECK(actor_tell(a, kv, T_CRASH, NULL, 0) == 0);
	CLIENT_CHECK(wait_state(ar, kv.index, SHM_ACTOR_DOWN, WAIT) == 0);
	/* Down, in a long backoff: an ask fails at once, with its own error. */
	atomic_store(&sh->rc[0], actor_ask(a, kv, T_GET, &n, sizeof(n),
	    LONG_NS, &r));
	atomic_store(&sh->rc[1], actor_ask(a, old, T_GET, &n, sizeof(n),
	    LONG_NS, &r));
	/* A tell is queued (while_down = queue) for the next incarnation. */
	atomic_store(&sh->rc[2], actor_tell(a, kv, T_NOTE, NULL, 0));
	CLIENT_CHECK(wait_new_incarnation(ar, kv.index, old.incarnation,
	    WAIT) == 0);
	atomic_store(&sh->rc[3], actor_ask(a, kv, T_GET, &n, sizeof(n),
	    LONG_NS, &r));
	return client_finish(a);
}

START_TEST(ask_during_backoff_fails_at_once)
{
	/*
	 * max_attempts = 1: the crashing tell is not redelivered, so the next
	 * incarnation stays up for the last ask (with 3, it could die again
	 * first and the ask would rightly fail as "down").
	 */
	struct actord_spec *spec = spec_kv(1, ON_DOWN_KEEP, fn_backoff);
	struct actord *ad;

	spec->root.backoff_min = spec->root.backoff_max = 1500;
	ad = run_scenario(spec);
	ck_assert_int_eq(sh->rc[0], ACTOR_EDOWN);
	ck_assert_int_eq(sh->rc[1], ACTOR_ESTALE);
	ck_assert_int_eq(sh->rc[2], 0);
	ck_assert_int_eq(sh->rc[3], 0);
	ck_assert_int_eq(sh->notes, 1);
	/* Failed at once, counted, no dead letter: the asker has the error. */
	ck_assert_int_eq(count_dl(ad->arena, 0, SHM_DL_ASK_FAILED), 0);
	actord_free(ad);
}
END_TEST

/* --- a stale reference reaches nobody; the path reaches the new one -------- */

static int
fn_stale(void *arg)
{
	struct actor *a = attach_or_die();
	struct shm_arena *ar = actor_arena(a);
	struct actor_ref r1, r2;
	struct actor_msg r;
	int n = 5;

	(void)arg;
	(void)actor_ready(a);
	CLIENT_CHECK(actor_lookup(a, "/kv", &r1) == 0);
	CLIENT_CHECK(r1.incarnation != 0);
	CLIENT_CHECK(actor_ask(a, r1, T_GET, &n, sizeof(n), LONG_NS, &r) == 0);
	CLIENT_CHECK(r.sender.incarnation == r1.incarnation);
	CLIENT_CHECK(actor_tell(a, r1, T_CRASH, NULL, 0) == 0);
	CLIENT_CHECK(wait_new_incarnation(ar, r1.index, r1.incarnation,
	    WAIT) == 0);
	atomic_store(&sh->rc[0], actor_tell(a, r1, T_NOTE, NULL, 0));
	atomic_store(&sh->rc[1], actor_ask(a, r1, T_GET, &n, sizeof(n),
	    LONG_NS, &r));
	atomic_store(&sh->rc[2], actor_ask_path(a, "/kv", T_GET, &n,
	    sizeof(n), LONG_NS, &r));
	CLIENT_CHECK(actor_lookup(a, "/kv", &r2) == 0);
	CLIENT_CHECK(r2.incarnation != r1.incarnation);
	CLIENT_CHECK(r.sender.incarnation == r2.incarnation);
	atomic_store(&sh->rc[3], actor_tell_path(a, "/kv", T_NOTE, NULL, 0));
	atomic_store(&sh->rc[4], actor_ask(a, r2, T_GET, &n, sizeof(n),
	    LONG_NS, &r));
	return client_finish(a);
}

START_TEST(stale_reference_after_restart)
{
	struct actord *ad = run_scenario(spec_kv(1, ON_DOWN_KEEP, fn_stale));
	struct actor_stats st;

	ck_assert_int_eq(sh->rc[0], ACTOR_ESTALE);
	ck_assert_int_eq(sh->rc[1], ACTOR_ESTALE);
	ck_assert_int_eq(sh->rc[2], 0);
	ck_assert_int_eq(sh->rc[3], 0);
	ck_assert_int_eq(sh->rc[4], 0);
	/* The note by path was handled (the ask after it was answered). */
	ck_assert_int_eq(sh->notes, 1);
	ck_assert_int_eq(count_dl(ad->arena, 0, SHM_DL_STALE_REF), 2);
	ck_assert_int_eq(actor_stats(ad->arena, 0, &st), 0);
	ck_assert_uint_eq(st.stale, 2);
	actord_free(ad);
}
END_TEST

/* --- 10,000 messages, 10 of them poison (seed 001) -------------------------- */

static int
fn_flood(void *arg)
{
	struct actor *a = attach_or_die();
	struct actor_ref p;
	uint32_t i;
	int rc;

	(void)arg;
	(void)actor_ready(a);
	CLIENT_CHECK(actor_lookup(a, "/kv", &p) == 0);
	p.incarnation = ACTOR_ANY;
	for (i = 0; i < NWORK; i++) {
		while ((rc = actor_tell(a, p, T_WORK, &i, sizeof(i))) ==
		    ACTOR_EFULL)
			;	/* blocked 100 ms: the actor is restarting */
		CLIENT_CHECK(rc == 0);
	}
	return client_finish(a);
}

static bool
flood_done(struct actord *ad, void *arg)
{
	struct actor_stats st;
	uint64_t poison = (uint64_t)(uintptr_t)arg;

	(void)actor_stats(ad->arena, 0, &st);
	return atomic_load(&sh->done) && st.poison == poison &&
	    atomic_load(&sh->handled_total) == NWORK - poison &&
	    ts_state(ad, "/kv") == NS_RUNNING;
}

static void
poison_run(uint32_t max_attempts)
{
	struct actord *ad = ts_actord(spec_kv(max_attempts, ON_DOWN_KEEP,
	    fn_flood));
	struct actor_stats st;
	uint64_t sum;
	uint32_t i;

	actord_boot(ad);
	ck_assert_msg(ts_run_sliced(ad, flood_done, (void *)(uintptr_t)10,
	    60000), "handled %llu of %d, fail line %d",
	    (unsigned long long)sh->handled_total, NWORK - 10, sh->fail);
	ck_assert_int_eq(sh->fail, 0);
	/* Nothing lost, nothing handled twice. */
	for (i = 0; i < NWORK; i++)
		if (i % 1000 != 500)
			ck_assert_msg(sh->handled[i] == 1, "message %u handled "
			    "%u times", i, sh->handled[i]);
	for (i = 0; i < 10; i++)
		ck_assert_uint_eq(sh->poison_attempts[i], max_attempts);
	ck_assert_int_eq(actor_stats(ad->arena, 0, &st), 0);
	ck_assert_uint_eq(st.poison, 10);
	ck_assert_uint_eq(st.deaths, 10 * max_attempts);
	ck_assert_uint_eq(st.redelivered, 10 * (max_attempts - 1));
	ck_assert_int_eq(count_dl(ad->arena, 0, SHM_DL_POISON), 10);
	ck_assert_uint_eq(actord_find(ad, "/kv")->restarts, 10 * max_attempts);
	/* Handler durations: one message in 8 of each incarnation sampled. */
	for (i = 0, sum = 0; i < ACTOR_HIST_BUCKETS; i++)
		sum += st.handler_hist[i];
	ck_assert_uint_ge(sum, (NWORK - 10) / 8 - 8 * (10 * max_attempts + 1));
	ck_assert_uint_le(sum, NWORK / 8 + 1);
	actord_free(ad);
}

START_TEST(poison_max_attempts_1)
{
	poison_run(1);
}
END_TEST

START_TEST(poison_max_attempts_3)
{
	poison_run(3);
}
END_TEST

/* --- on_down: queued messages kept for the next incarnation, or failed ------ */

static int
fn_queued(void *arg)
{
	struct actor *a = attach_or_die();
	struct shm_arena *ar = actor_arena(a);
	struct actor_ref q;
	struct actor_msg r;
	int i, n = 1;

	(void)arg;
	(void)actor_ready(a);
	CLIENT_CHECK(actor_lookup(a, "/kv", &q) == 0);
	CLIENT_CHECK(actor_tell(a, q, T_BLOCK, NULL, 0) == 0);
	wait_blocked();
	q.incarnation = ACTOR_ANY;
	for (i = 0; i < 5; i++)
		CLIENT_CHECK(actor_tell(a, q, T_NOTE, NULL, 0) == 0);
	CLIENT_CHECK(actor_ask_send(a, q, T_GET, &n, sizeof(n), LONG_NS,
	    NULL) == 0);
	atomic_store(&sh->gate, 1);
	atomic_store(&sh->rc[0], actor_ask_next(a, &r, LONG_NS, NULL));
	CLIENT_CHECK(wait_state(ar, q.index, SHM_ACTOR_UP, WAIT) == 0);
	/* FIFO: once this ask is answered, the queue before it is done. */
	n = 3;
	atomic_store(&sh->rc[1], actor_ask(a, q, T_GET, &n, sizeof(n),
	    LONG_NS, &r));
	return client_finish(a);
}

START_TEST(on_down_keep)
{
	struct actord *ad = run_scenario(spec_kv(1, ON_DOWN_KEEP, fn_queued));

	ck_assert_int_eq(sh->rc[0], 0);		/* answered after restart */
	ck_assert_int_eq(sh->rc[1], 0);
	ck_assert_int_eq(sh->notes, 5);
	ck_assert_int_eq(count_dl(ad->arena, 0, SHM_DL_ACTOR_DOWN), 0);
	ck_assert_int_eq(count_dl(ad->arena, 0, SHM_DL_POISON), 1);
	actord_free(ad);
}
END_TEST

START_TEST(on_down_fail)
{
	struct actord *ad = run_scenario(spec_kv(1, ON_DOWN_FAIL, fn_queued));

	ck_assert_int_eq(sh->rc[0], ACTOR_EFAILED);
	ck_assert_int_eq(sh->rc[1], 0);
	ck_assert_int_eq(sh->notes, 0);
	ck_assert_int_eq(count_dl(ad->arena, 0, SHM_DL_ACTOR_DOWN), 5);
	ck_assert_int_eq(count_dl(ad->arena, 0, SHM_DL_ASK_FAILED), 1);
	actord_free(ad);
}
END_TEST

/* --- Terminated, exactly once per watched death ----------------------------- */

static void
take_terminated(struct actor *a)
{
	struct actor_msg m;
	int k;

	if (actor_recv(a, &m, LONG_NS) != 0)
		return;
	CLIENT_CHECK(m.tag == ACTOR_SYS_TERMINATED);
	CLIENT_CHECK(m.flags & ACTOR_MSG_SYSTEM);
	CLIENT_CHECK(m.len == sizeof(struct actor_terminated));
	k = atomic_fetch_add(&sh->nterm, 1);
	if (k < 8 && m.len == sizeof(struct actor_terminated))
		memcpy(&sh->term[k], m.data, m.len);
}

static int
fn_watcher(void *arg)
{
	struct actor *a = attach_or_die();
	struct shm_arena *ar = actor_arena(a);
	struct actor_ref t1, t2, t3;
	struct actor_msg m;
	int code = 7;

	(void)arg;
	(void)actor_ready(a);
	CLIENT_CHECK(actor_lookup(a, "/kv", &t1) == 0);
	CLIENT_CHECK(actor_watch(a, t1) == 0);
	CLIENT_CHECK(actor_tell(a, t1, T_EXIT, &code, sizeof(code)) == 0);
	take_terminated(a);
	CLIENT_CHECK(wait_new_incarnation(ar, t1.index, t1.incarnation,
	    WAIT) == 0);
	CLIENT_CHECK(actor_lookup(a, "/kv", &t2) == 0);
	CLIENT_CHECK(actor_watch(a, t2) == 0);
	CLIENT_CHECK(actor_tell(a, t2, T_CRASH, NULL, 0) == 0);
	take_terminated(a);
	CLIENT_CHECK(wait_new_incarnation(ar, t1.index, t2.incarnation,
	    WAIT) == 0);
	/* Watching a dead incarnation: its Terminated comes at once. */
	CLIENT_CHECK(actor_watch(a, t1) == 0);
	take_terminated(a);
	/* Unwatched: no Terminated for this death. */
	CLIENT_CHECK(actor_lookup(a, "/kv", &t3) == 0);
	CLIENT_CHECK(actor_watch(a, t3) == 0);
	CLIENT_CHECK(actor_unwatch(a, t3) == 1);
	CLIENT_CHECK(actor_tell(a, t3, T_CRASH, NULL, 0) == 0);
	CLIENT_CHECK(wait_new_incarnation(ar, t1.index, t3.incarnation,
	    WAIT) == 0);
	/* Nothing more may come: no second Terminated for any death. */
	atomic_store(&sh->rc[0], actor_recv(a, &m, 300000000LL));
	return client_finish(a);
}

START_TEST(terminated_exactly_once)
{
	struct actord *ad = run_scenario(spec_kv(1, ON_DOWN_KEEP,
	    fn_watcher));

	ck_assert_int_eq(sh->nterm, 3);
	ck_assert_int_eq(sh->rc[0], ACTOR_ETIMEDOUT);
	ck_assert_int_eq(sh->term[0].exit_status, 7);
	ck_assert_int_eq(sh->term[0].signal, 0);
	ck_assert_uint_eq(sh->term[0].who.index, 0);
	ck_assert_int_eq(sh->term[1].exit_status, -1);
	ck_assert_int_eq(sh->term[1].signal, SIGKILL);
	ck_assert_uint_eq(sh->term[1].who.incarnation,
	    sh->term[0].who.incarnation + 1);
	ck_assert_uint_eq(sh->term[2].who.incarnation,
	    sh->term[0].who.incarnation);
	actord_free(ad);
}
END_TEST

/*
 * More watched deaths at once than a system lane has cells (16): the
 * watcher, busy elsewhere, reads nothing until every one has restarted.
 */
#define BURST		20

static int
fn_burst_watcher(void *arg)
{
	struct actor *a = attach_or_die();
	struct shm_arena *ar = actor_arena(a);
	struct actor_ref r[BURST];
	struct actor_terminated t;
	struct actor_msg m;
	char path[32];
	uint32_t seen[BURST] = { 0 };
	int j, n = 0, distinct = 0;
	pid_t pid;

	(void)arg;
	(void)actor_ready(a);
	for (j = 0; j < BURST; j++) {
		snprintf(path, sizeof(path), "/kv/%d", j);
		CLIENT_CHECK(actor_lookup(a, path, &r[j]) == 0);
		CLIENT_CHECK(actor_watch(a, r[j]) == 0);
	}
	for (j = 0; j < BURST; j++) {
		pid = shm_actor_pid(ar, r[j].index);
		CLIENT_CHECK(pid > 0 && kill(pid, SIGKILL) == 0);
	}
	for (j = 0; j < BURST; j++)
		CLIENT_CHECK(wait_new_incarnation(ar, r[j].index,
		    r[j].incarnation, WAIT) == 0);
	while (n < BURST && actor_recv(a, &m, LONG_NS) == 0) {
		CLIENT_CHECK(m.tag == ACTOR_SYS_TERMINATED &&
		    m.len == sizeof(t));
		memcpy(&t, m.data, sizeof(t));
		for (j = 0; j < BURST; j++)
			if (r[j].index == t.who.index &&
			    r[j].incarnation == t.who.incarnation &&
			    seen[j]++ == 0)
				distinct++;
		n++;
	}
	atomic_store(&sh->val[0], n);
	atomic_store(&sh->val[1], distinct);
	/* Nothing more may come. */
	atomic_store(&sh->rc[0], actor_recv(a, &m, 300000000LL));
	return client_finish(a);
}

START_TEST(terminated_burst_none_lost)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;
	struct actord *ad;
	uint32_t i;

	spec->root.intensity = 1000;
	spec->root.period = 60;
	c = add_actor(&spec->root, "kv", fn_kv);
	c->instances = BURST;
	add_actor(&spec->root, "client", fn_burst_watcher);
	ad = run_scenario(spec);
	ck_assert_int_eq(sh->val[0], BURST);
	ck_assert_int_eq(sh->val[1], BURST);
	ck_assert_int_eq(sh->rc[0], ACTOR_ETIMEDOUT);
	for (i = 0; i <= BURST; i++)
		ck_assert_int_eq(count_dl(ad->arena, i, SHM_DL_FULL), 0);
	actord_free(ad);
}
END_TEST

/*
 * A server watched more often than the default 64 (`watchers = 100`):
 * every watch is taken, one more is refused, and one death brings all
 * 100 Terminated, none lost to the 16-cell system lane.
 */
#define MANY_WATCHES	100

static int
fn_many_watches(void *arg)
{
	struct actor *a = attach_or_die();
	struct actor_ref kv;
	struct actor_msg m;
	int j, n = 0;
	pid_t pid;

	(void)arg;
	(void)actor_ready(a);
	CLIENT_CHECK(actor_lookup(a, "/kv", &kv) == 0);
	for (j = 0; j < MANY_WATCHES && actor_watch(a, kv) == 0; j++)
		;
	atomic_store(&sh->val[0], j);
	atomic_store(&sh->rc[0], actor_watch(a, kv));
	pid = shm_actor_pid(actor_arena(a), kv.index);
	CLIENT_CHECK(pid > 0 && kill(pid, SIGKILL) == 0);
	while (n < MANY_WATCHES && actor_recv(a, &m, LONG_NS) == 0) {
		CLIENT_CHECK(m.tag == ACTOR_SYS_TERMINATED);
		n++;
	}
	atomic_store(&sh->val[1], n);
	return client_finish(a);
}

START_TEST(watchers_key_sizes_the_set)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;
	struct actord *ad;

	spec->root.intensity = 1000;
	spec->root.period = 60;
	c = add_actor(&spec->root, "kv", fn_kv);
	c->mailbox.watchers = MANY_WATCHES;
	add_actor(&spec->root, "client", fn_many_watches);
	ad = run_scenario(spec);
	ck_assert_int_eq(sh->val[0], MANY_WATCHES);
	ck_assert_int_eq(sh->rc[0], ACTOR_EFULL);
	ck_assert_int_eq(sh->val[1], MANY_WATCHES);
	actord_free(ad);
}
END_TEST

/* --- SIGTERM: the message in hand is finished, on_stop runs, exit 0 ------- */

/*
 * SIGTERM while the actor's system lane is full: its loop, busy, sees the
 * signal after the message in hand, and nothing becomes a dead letter
 * (SIGTERM sends no Stop: worker/recv.c).
 */
static int
fn_sigterm_full_lane(void *arg)
{
	struct actor *a = attach_or_die();
	struct shm_arena *ar = actor_arena(a);
	struct shm_producer *p;
	struct actor_ref kv;
	struct shm_msg sm;
	int sent = 0;

	(void)arg;
	(void)actor_ready(a);
	CLIENT_CHECK(actor_lookup(a, "/kv", &kv) == 0);
	CLIENT_CHECK(actor_watch(a, kv) == 0);
	CLIENT_CHECK(actor_tell(a, kv, T_SLOW, NULL, 0) == 0);
	wait_blocked();
	CLIENT_CHECK(shm_producer_open(ar, &p) == 0);
	memset(&sm, 0, sizeof(sm));
	sm.tag = 99;			/* the handler ignores it */
	while (shm_offer(p, kv.index, SHM_LANE_SYSTEM, &sm, NULL) == 0)
		sent++;
	shm_producer_close(p);
	atomic_store(&sh->val[2], sent);
	sigterm_mid_handler(ar, kv.index);
	take_terminated(a);
	return client_finish(a);
}

START_TEST(sigterm_with_full_system_lane)
{
	struct actord *ad = run_scenario(spec_kv(3, ON_DOWN_KEEP,
	    fn_sigterm_full_lane));

	ck_assert_int_eq(sh->val[2], 16);
	ck_assert_int_eq(sh->notes, 1);
	ck_assert_int_eq(sh->val[15], 101);	/* on_stop ran after it */
	ck_assert_int_eq(sh->nterm, 1);
	ck_assert_int_eq(sh->term[0].exit_status, 0);
	ck_assert_int_eq(count_dl(ad->arena, 0, SHM_DL_FULL), 0);
	actord_free(ad);
}
END_TEST

static int
fn_sigterm(void *arg)
{
	struct actor *a = attach_or_die();
	struct shm_arena *ar = actor_arena(a);
	struct actor_ref kv;
	struct actor_msg r;
	int n;

	(void)arg;
	(void)actor_ready(a);
	CLIENT_CHECK(actor_lookup(a, "/kv", &kv) == 0);
	CLIENT_CHECK(actor_watch(a, kv) == 0);
	CLIENT_CHECK(actor_tell(a, kv, T_SLOW, NULL, 0) == 0);
	wait_blocked();
	sigterm_mid_handler(ar, kv.index);
	take_terminated(a);
	/* The next incarnation answers ... */
	CLIENT_CHECK(wait_new_incarnation(ar, kv.index, kv.incarnation,
	    WAIT) == 0);
	kv.incarnation = ACTOR_ANY;
	n = 4;
	atomic_store(&sh->rc[0], actor_ask(a, kv, T_GET, &n, sizeof(n),
	    LONG_NS, &r));
	/* ... and, idle, asleep on its futex, wakes for SIGTERM at once. */
	CLIENT_CHECK(actor_lookup(a, "/kv", &kv) == 0);
	CLIENT_CHECK(actor_watch(a, kv) == 0);
	CLIENT_CHECK(kill(shm_actor_pid(ar, kv.index), SIGTERM) == 0);
	take_terminated(a);
	return client_finish(a);
}

START_TEST(sigterm_finishes_the_message_in_hand)
{
	struct actord *ad = run_scenario(spec_kv(3, ON_DOWN_KEEP,
	    fn_sigterm));
	struct actor_stats st;

	ck_assert_int_eq(sh->notes, 1);
	ck_assert_int_eq(sh->val[15], 101);	/* on_stop ran after it */
	ck_assert_int_eq(sh->nterm, 2);
	ck_assert_int_eq(sh->term[0].exit_status, 0);
	ck_assert_int_eq(sh->term[0].signal, 0);
	ck_assert_int_eq(sh->rc[0], 0);
	ck_assert_int_eq(sh->term[1].exit_status, 0);
	ck_assert_int_eq(sh->term[1].signal, 0);
	ck_assert_int_eq(actor_stats(ad->arena, 0, &st), 0);
	ck_assert_uint_eq(st.redelivered, 0);
	actord_free(ad);
}
END_TEST

/* --- committed snapshots across SIGKILL ------------------------------------- */

static void
hook_kill(void *arg)
{
	(void)arg;
	die();
}

static int
snap_handle(struct actor *a, const struct actor_msg *m, void *arg)
{
	char buf[32];
	size_t n = m->len < sizeof(buf) - 1 ? m->len : sizeof(buf) - 1;

	(void)arg;
	memcpy(buf, m->data, n);
	buf[n] = '\0';
	switch (m->tag) {
	case T_COMMIT_KILL:
		actor_set_commit_hook(a, hook_kill, NULL);
		/* FALLTHROUGH */
	case T_COMMIT:
		(void)actor_commit(a, buf, n + 1);
		break;
	case T_CRASH:
		die();
		break;
	default:
		break;
	}
	return 0;
}

static int
fn_snap(void *arg)
{
	struct actor *a = attach_or_die();
	char buf[32] = "none";
	size_t len;
	int k;

	(void)arg;
	if (actor_load(a, buf, sizeof(buf) - 1, &len) < 0)
		strcpy(buf, "none");
	buf[sizeof(buf) - 1] = '\0';
	k = atomic_fetch_add(&sh->nloaded, 1);
	if (k < 8)
		snprintf(sh->loaded[k], sizeof(sh->loaded[k]), "%s", buf);
	(void)actor_ready(a);
	(void)actor_run(a, snap_handle, NULL, NULL);
	actor_close(a);
	return 0;
}

static int
fn_snap_client(void *arg)
{
	struct actor *a = attach_or_die();
	struct shm_arena *ar = actor_arena(a);
	struct actor_ref s;
	char buf[32];
	size_t len = 0;
	uint32_t inc;

	(void)arg;
	(void)actor_ready(a);
	CLIENT_CHECK(actor_lookup(a, "/snap", &s) == 0);
	s.incarnation = ACTOR_ANY;
	inc = shm_actor_incarnation(ar, s.index);
	CLIENT_CHECK(actor_tell(a, s, T_COMMIT, "alpha", 5) == 0);
	CLIENT_CHECK(actor_tell(a, s, T_CRASH, NULL, 0) == 0);
	CLIENT_CHECK(wait_new_incarnation(ar, s.index, inc, WAIT) == 0);
	inc = shm_actor_incarnation(ar, s.index);
	CLIENT_CHECK(actor_tell(a, s, T_COMMIT_KILL, "beta", 4) == 0);
	CLIENT_CHECK(wait_new_incarnation(ar, s.index, inc, WAIT) == 0);
	CLIENT_CHECK(actor_tell(a, s, T_COMMIT, "gamma", 5) == 0);
	/* Read from outside: the committed snapshot, as anyone sees it. */
	for (int i = 0; i < WAIT * 10; i++) {
		if (actor_snapshot_read(ar, s.index, buf, sizeof(buf), &len)
		    == 0 && strcmp(buf, "gamma") == 0)
			break;
		sleep_us(100);
	}
	snprintf(sh->text, sizeof(sh->text), "%s", buf);
	return client_finish(a);
}

START_TEST(snapshot_survives_sigkill)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;
	struct child_spec *c;

	spec->root.intensity = 100;
	c = add_actor(&spec->root, "snap", fn_snap);
	c->mailbox.max_attempts = 1;
	c->mailbox.state = 4096;
	add_actor(&spec->root, "client", fn_snap_client);
	ad = run_scenario(spec);
	ck_assert_int_eq(sh->nloaded, 3);
	ck_assert_str_eq(sh->loaded[0], "none");
	ck_assert_str_eq(sh->loaded[1], "alpha");
	/* Killed during the commit of "beta": the previous one stands. */
	ck_assert_str_eq(sh->loaded[2], "alpha");
	ck_assert_str_eq(sh->text, "gamma");
	actord_free(ad);
}
END_TEST

/* --- an exec'd worker: examples/counter, a shard group of two ------------- */

static int
fn_counter_client(void *arg)
{
	struct actor *a = attach_or_die();
	struct shm_arena *ar = actor_arena(a);
	struct actor_ref r;
	struct actor_msg m;
	uint64_t n = 0;
	uint32_t inc;
	pid_t pid;
	int i;

	(void)arg;
	(void)actor_ready(a);
	CLIENT_CHECK(actor_shard(a, "/counter", "apples", 6, &r) >= 0);
	for (i = 0; i < 3; i++)
		CLIENT_CHECK(actor_tell(a, r, 1, "apples", 6) == 0);
	CLIENT_CHECK(actor_ask(a, r, 2, "apples", 6, LONG_NS, &m) == 0);
	if (m.len == sizeof(n))
		memcpy(&n, m.data, sizeof(n));
	atomic_store(&sh->val[0], (int64_t)n);
	inc = shm_actor_incarnation(ar, r.index);
	pid = shm_actor_pid(ar, r.index);
	CLIENT_CHECK(pid > 0 && kill(pid, SIGKILL) == 0);
	CLIENT_CHECK(wait_new_incarnation(ar, r.index, inc, WAIT) == 0);
	CLIENT_CHECK(actor_tell(a, r, 1, "apples", 6) == 0);
	n = 0;
	atomic_store(&sh->rc[0], actor_ask(a, r, 2, "apples", 6, LONG_NS,
	    &m));
	if (m.len == sizeof(n))
		memcpy(&n, m.data, sizeof(n));
	atomic_store(&sh->val[1], (int64_t)n);
	return client_finish(a);
}

START_TEST(exec_worker_counter)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;
	struct actord *ad;

	c = ts_add_exec(&spec->root, "counter", ts_build("examples/counter"),
	    NULL);
	c->ready = READY_ACTOR;
	c->has_mailbox = true;
	c->instances = 2;
	c->mailbox.state = 8192;
	add_actor(&spec->root, "client", fn_counter_client);
	ad = run_scenario(spec);
	ck_assert_int_eq(sh->val[0], 3);
	ck_assert_int_eq(sh->rc[0], 0);
	ck_assert_int_eq(sh->val[1], 4);	/* committed state survived */
	actord_free(ad);
}
END_TEST

/* CK_TEST=name runs that test alone (debugging). */
#define ADD(tc, t) do {							\
	const char *only = getenv("CK_TEST");				\
	if (only == NULL || strcmp(only, #t) == 0)			\
		tcase_add_test(tc, t);					\
} while (0)

static Suite *
actor_suite(void)
{
	Suite *s = suite_create("actor");
	TCase *tc = tcase_create("semantics");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	ADD(tc, four_asks_second_crashes_keep);
	ADD(tc, four_asks_second_crashes_fail);
	ADD(tc, four_asks_second_crashes_redelivered);
	ADD(tc, ask_committed_then_died_fails_at_once);
	ADD(tc, deliberate_exit_is_not_a_crash);
	ADD(tc, deliberate_exit_finishes_the_message);
	ADD(tc, watch_name_gone_when_supervisor_gives_up);
	ADD(tc, deferred_answers_and_waiting_asks);
	ADD(tc, ask_during_backoff_fails_at_once);
	ADD(tc, stale_reference_after_restart);
	ADD(tc, poison_max_attempts_1);
	ADD(tc, poison_max_attempts_3);
	ADD(tc, on_down_keep);
	ADD(tc, on_down_fail);
	ADD(tc, terminated_exactly_once);
	ADD(tc, terminated_burst_none_lost);
	ADD(tc, watchers_key_sizes_the_set);
	ADD(tc, snapshot_survives_sigkill);
	ADD(tc, exec_worker_counter);
	ADD(tc, sigterm_finishes_the_message_in_hand);
	ADD(tc, sigterm_with_full_system_lane);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(actor_suite());
}
