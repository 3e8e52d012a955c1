/*
 * check_examples.c: the seeds' programs in examples/, built by make, run
 * as real exec'd workers under an actord in the test process, driven and
 * SIGKILLed by a function child that is an actor too:
 *
 *   kv          put, get, delete, large values, the application's own
 *               "no such key", all of it surviving SIGKILLs;
 *   bank        thousands of transfers while accounts are SIGKILLed:
 *               no balance below zero, the total conserved;
 *   connection  10,000 random schedules of connect/close/crash races
 *               while the actor is SIGKILLed: every connection ends as
 *               the transition table says, and none half-open.
 *
 * Results travel on a shared page (check_actor_util.h); no assertion is
 * about time.
 */
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "examples/connection.h"
#include "shm/shm.h"
#include "tests/check_actor_util.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"
#include "worker/actor.h"

#define WAIT		20000		/* ms: a bound, never an expectation */
#define LONG_NS		30000000000LL

/* The examples' protocols, as examples/kv.c, bank.c and connection.c say. */
enum { KV_PUT = 1, KV_GET, KV_DEL, KV_KEYS };
enum { KV_NOKEY = 1 };
enum { B_DEBIT = 1, B_CREDIT, B_BALANCE, B_TRANSFER, B_PENDING };
enum { BANK_NSF = 1, BANK_STALE = 4 };
enum { C_EVENT = 1, C_STATE, C_ZOMBIES, C_DUMP };

#define ACCOUNTS	4
#define INITIAL		1000
#define TRANSFERS	3000
#define IN_FLIGHT	32
#define SCHEDULES	10000

struct xfer_req {
	uint32_t	 from, to;
	int64_t		 amount;
};

struct bank_op {
	uint64_t	 id;
	int64_t		 amount;
	uint32_t	 slot;
	uint32_t	 pad;
};

struct conn_ev {
	uint32_t	 conn;
	uint32_t	 event;
};

static bool
client_done(struct actord *ad, void *arg)
{
	(void)ad;
	(void)arg;
	return atomic_load(&sh->done) != 0;
}

static struct actord *
run(struct actord_spec *spec)
{
	struct actord *ad = ts_actord(spec);

	actord_boot(ad);
	ck_assert_msg(ts_run_sliced(ad, client_done, NULL, 240000),
	    "the client never finished (fail line %d)",
	    atomic_load(&sh->fail));
	ck_assert_msg(atomic_load(&sh->fail) == 0,
	    "client check failed at line %d", atomic_load(&sh->fail));
	return ad;
}

static struct child_spec *
add_example(struct sup_spec *s, const char *name, const char *prog)
{
	struct child_spec *c = ts_add_exec(s, name, ts_build(prog), NULL);

	c->ready = READY_ACTOR;
	c->has_mailbox = true;
	return c;
}

static struct child_spec *
add_client(struct sup_spec *s, child_fn fn)
{
	struct child_spec *c = ts_add_fn(s, "client", fn, NULL);

	c->ready = READY_ACTOR;
	c->has_mailbox = true;
	c->mailbox.capacity = 256;
	c->mailbox.cell = 4096;		/* answers as large as a cell */
	return c;
}

/* SIGKILL the actor at path and wait for its next incarnation. */
static void
kill_and_wait(struct actor *a, const char *path)
{
	struct actor_ref r;
	pid_t pid;

	CLIENT_CHECK(actor_lookup(a, path, &r) == 0);
	CLIENT_CHECK(wait_state(actor_arena(a), r.index, SHM_ACTOR_UP,
	    WAIT) == 0);
	r.incarnation = shm_actor_incarnation(actor_arena(a), r.index);
	pid = shm_actor_pid(actor_arena(a), r.index);
	CLIENT_CHECK(pid > 0 && kill(pid, SIGKILL) == 0);
	CLIENT_CHECK(wait_new_incarnation(actor_arena(a), r.index,
	    r.incarnation, WAIT) == 0);
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

/* --- kv ------------------------------------------------------------------------- */

static int
kv_put(struct actor *a, const char *key, const void *val, size_t vlen)
{
	static unsigned char buf[65536 + 64];
	struct actor_msg r;
	uint16_t kl = (uint16_t)strlen(key);

	if (2 + kl + vlen > sizeof(buf))
		return ACTOR_EINVAL;
	memcpy(buf, &kl, 2);
	memcpy(buf + 2, key, kl);
	memcpy(buf + 2 + kl, val, vlen);
	return actor_ask_path(a, "/kv", KV_PUT, buf, 2 + kl + vlen, LONG_NS,
	    &r);
}

static int
fn_kv_client(void *arg)
{
	struct actor *a = attach_or_die();
	unsigned char big[3000];
	struct actor_msg r;
	uint32_t n = 0;
	size_t i;

	(void)arg;
	(void)actor_ready(a);
	for (i = 0; i < sizeof(big); i++)
		big[i] = (unsigned char)(i * 7);
	CLIENT_CHECK(kv_put(a, "apples", "3", 1) == 0);
	CLIENT_CHECK(kv_put(a, "pears", "5", 1) == 0);
	CLIENT_CHECK(kv_put(a, "big", big, sizeof(big)) == 0);
	CLIENT_CHECK(actor_ask_path(a, "/kv", KV_DEL, "pears", 5, LONG_NS,
	    &r) == 0);
	kill_and_wait(a, "/kv");
	/* Committed before the kill: all there, the deleted one gone. */
	CLIENT_CHECK(actor_ask_path(a, "/kv", KV_GET, "apples", 6, LONG_NS,
	    &r) == 0 && r.len == 1 && memcmp(r.data, "3", 1) == 0);
	CLIENT_CHECK(actor_ask_path(a, "/kv", KV_GET, "big", 3, LONG_NS,
	    &r) == 0 && r.len == sizeof(big) &&
	    memcmp(r.data, big, sizeof(big)) == 0);
	atomic_store(&sh->rc[0], actor_ask_path(a, "/kv", KV_GET, "pears", 5,
	    LONG_NS, &r));
	atomic_store(&sh->rc[1], actor_error_code(&r));
	snprintf(sh->text, sizeof(sh->text), "%s", actor_error_text(&r));
	CLIENT_CHECK(actor_ask_path(a, "/kv", KV_KEYS, NULL, 0, LONG_NS,
	    &r) == 0 && r.len == sizeof(n));
	memcpy(&n, r.data, sizeof(n));
	atomic_store(&sh->val[0], n);
	return client_finish(a);
}

START_TEST(kv_survives_sigkill)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;
	struct actord *ad;

	spec->root.intensity = 100;
	c = add_example(&spec->root, "kv", "examples/kv");
	c->mailbox.capacity = 64;
	c->mailbox.cell = 4096;
	c->mailbox.state = 65536;
	add_client(&spec->root, fn_kv_client);
	ad = run(spec);
	ck_assert_int_eq(sh->rc[0], ACTOR_EREPLY);
	ck_assert_int_eq(sh->rc[1], KV_NOKEY);
	ck_assert_str_eq(sh->text, "no such key: pears");
	ck_assert_int_eq(sh->val[0], 2);
	actord_free(ad);
}
END_TEST

/*
 * Values of 32 to 60 KiB, larger than the cell (4,096 bytes) and below
 * the mailbox's max_message (the default, 64 KiB), put and read back
 * whole across a SIGKILL of kv: through kv's main lane, its committed
 * state, and the client's reply lane.  One put is killed in hand
 * (SIGKILL while the next incarnation is asked at once): it is given
 * again, whole, and applied once.
 */
#define KV_LARGE_N	4
static const size_t kv_large_len[KV_LARGE_N] = {
	32768, 40000, 49152, 61440
};

static void
kv_large_fill(unsigned char *v, size_t len, unsigned k)
{
	size_t i;

	for (i = 0; i < len; i++)
		v[i] = (unsigned char)(k * 131 + i * 7 + (i >> 9));
}

static int
fn_kv_large_client(void *arg)
{
	struct actor *a = attach_or_die();
	static unsigned char v[65536];
	struct actor_msg r;
	char key[16];
	unsigned k, round;

	(void)arg;
	(void)actor_ready(a);
	for (round = 0; round < 2; round++) {
		for (k = 0; k < KV_LARGE_N; k++) {
			snprintf(key, sizeof(key), "big%u", k);
			kv_large_fill(v, kv_large_len[k], k + round);
			CLIENT_CHECK(kv_put(a, key, v, kv_large_len[k]) == 0);
		}
		kill_and_wait(a, "/kv");
		for (k = 0; k < KV_LARGE_N; k++) {
			snprintf(key, sizeof(key), "big%u", k);
			kv_large_fill(v, kv_large_len[k], k + round);
			CLIENT_CHECK(actor_ask_path(a, "/kv", KV_GET, key,
			    strlen(key), LONG_NS, &r) == 0);
			CLIENT_CHECK(r.len == kv_large_len[k] &&
			    memcmp(r.data, v, r.len) == 0);
		}
	}
	/* Larger than max_message: refused, never truncated. */
	atomic_store(&sh->rc[0], kv_put(a, "huge", v, 65536 - 5));
	return client_finish(a);
}

START_TEST(kv_large_values_survive_sigkill)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;
	struct actord *ad;

	spec->root.intensity = 100;
	c = add_example(&spec->root, "kv", "examples/kv");
	c->mailbox.capacity = 64;
	c->mailbox.cell = 4096;
	c->mailbox.state = 524288;
	ck_assert_uint_ge(c->mailbox.max_message, 65536);	/* the default */
	add_client(&spec->root, fn_kv_large_client);
	ad = run(spec);
	ck_assert_int_eq(sh->rc[0], ACTOR_EOVERSIZE);
	actord_free(ad);
}
END_TEST

/* --- bank ----------------------------------------------------------------------- */

/*
 * TRANSFERS random transfers, IN_FLIGHT at a time, while every 100th
 * answer SIGKILLs a random account; then, once nothing moves, the
 * balances.
 */
static int
fn_bank_client(void *arg)
{
	struct actor *a = attach_or_die();
	struct actor_ref coord, acct;
	struct xfer_req rq;
	struct actor_msg r;
	uint64_t corr;
	unsigned sent = 0, answered = 0, seed = 12345, i;
	uint32_t moving = 1;
	int64_t total = 0, b;
	char path[64];
	pid_t pid;
	int rc;

	(void)arg;
	actor_set_wait(a, ACTOR_WAIT_SLEEP, 0);
	(void)actor_ready(a);
	CLIENT_CHECK(actor_lookup(a, "/bank/coordinator", &coord) == 0);
	coord.incarnation = ACTOR_ANY;
	while (answered < TRANSFERS) {
		while (sent < TRANSFERS && actor_asks_pending(a) < IN_FLIGHT) {
			rq.from = rand_r(&seed) % ACCOUNTS;
			rq.to = (rq.from + 1 + rand_r(&seed) % (ACCOUNTS - 1)) %
			    ACCOUNTS;
			rq.amount = 1 + rand_r(&seed) % 400;
			CLIENT_CHECK(actor_ask_send_with(a, coord, B_TRANSFER,
			    &rq, sizeof(rq), LONG_NS, ACTOR_ASK_WAIT_UP,
			    &corr) == 0);
			sent++;
		}
		rc = actor_ask_next(a, &r, LONG_NS, &corr);
		answered++;
		if (rc == 0)
			atomic_fetch_add(&sh->rc[0], 1);	/* moved */
		else if (rc == ACTOR_EREPLY && actor_error_code(&r) ==
		    BANK_NSF)
			atomic_fetch_add(&sh->rc[1], 1);	/* refused */
		else
			atomic_fetch_add(&sh->rc[2], 1);	/* other */
		if (answered % 100 == 0) {
			snprintf(path, sizeof(path), "/bank/account/%u",
			    rand_r(&seed) % ACCOUNTS);
			CLIENT_CHECK(actor_lookup(a, path, &acct) == 0);
			if ((pid = shm_actor_pid(actor_arena(a), acct.index)) >
			    0 && kill(pid, SIGKILL) == 0)
				atomic_fetch_add(&sh->rc[3], 1);
		}
	}
	/* Quiet: nothing left moving, then count the money. */
	while (moving != 0) {
		CLIENT_CHECK(actor_ask_with(a, coord, B_PENDING, NULL, 0,
		    LONG_NS, ACTOR_ASK_WAIT_UP, &r) == 0 && r.len == 4);
		memcpy(&moving, r.data, sizeof(moving));
		if (moving != 0)
			sleep_us(10000);
	}
	for (i = 0; i < ACCOUNTS; i++) {
		snprintf(path, sizeof(path), "/bank/account/%u", i);
		CLIENT_CHECK(actor_ask_with(a, (struct actor_ref){
		    (uint32_t)shm_lookup(actor_arena(a), path), ACTOR_ANY },
		    B_BALANCE, NULL, 0, LONG_NS, ACTOR_ASK_WAIT_UP, &r) == 0 &&
		    r.len == sizeof(b));
		memcpy(&b, r.data, sizeof(b));
		if (b < 0)
			atomic_fetch_add(&sh->rc[4], 1);	/* negative */
		total += b;
	}
	atomic_store(&sh->val[0], total);
	return client_finish(a);
}

/* One operation on /bank/account/0, as the coordinator asks it. */
static int
bank_op(struct actor *a, uint32_t tag, uint64_t id, int64_t amount,
    uint32_t slot)
{
	struct bank_op op = { id, amount, slot, 0 };
	struct actor_msg r;
	int rc;

	rc = actor_ask_path(a, "/bank/account/0", tag, &op, sizeof(op),
	    LONG_NS, &r);
	return rc == ACTOR_EREPLY ? actor_error_code(&r) : rc;
}

/*
 * An operation asked again after 1,100 others (an answer late by that
 * much) answers as the first time and is not applied again; an older
 * one of the same transfer slot is refused and not applied.
 */
static int
fn_bank_once(void *arg)
{
	struct actor *a = attach_or_die();
	struct actor_msg r;
	int64_t b = 0;
	uint64_t k;

	(void)arg;
	(void)actor_ready(a);
	CLIENT_CHECK(bank_op(a, B_CREDIT, 4, 10, 0) == 0);
	for (k = 1; k <= 1100; k++)
		CLIENT_CHECK(bank_op(a, B_CREDIT, 2 * k + 5, 1,
		    (uint32_t)(k % 255 + 1)) == 0);
	CLIENT_CHECK(bank_op(a, B_CREDIT, 4, 10, 0) == 0);
	CLIENT_CHECK(bank_op(a, B_DEBIT, 2, 10, 0) == BANK_STALE);
	CLIENT_CHECK(actor_ask_path(a, "/bank/account/0", B_BALANCE, NULL, 0,
	    LONG_NS, &r) == 0 && r.len == sizeof(b));
	memcpy(&b, r.data, sizeof(b));
	atomic_store(&sh->val[0], b);
	return client_finish(a);
}

START_TEST(bank_applies_an_operation_once_however_late)
{
	struct actord_spec *spec = ts_spec();
	struct sup_spec *bank;
	struct child_spec *c;
	struct actord *ad;

	bank = ts_add_sup(&spec->root, "bank", STRATEGY_ONE_FOR_ONE);
	c = add_example(bank, "account", "examples/bank");
	c->instances = 1;
	c->mailbox.state = 8192;
	add_client(&spec->root, fn_bank_once);
	ad = run(spec);
	ck_assert_int_eq(sh->val[0], 10 + 1100);	/* BANK_INITIAL unset: 0 */
	actord_free(ad);
}
END_TEST

START_TEST(bank_conserves_money_under_sigkill)
{
	struct actord_spec *spec = ts_spec();
	struct sup_spec *bank;
	struct child_spec *c;
	struct actord *ad;
	char init[16];

	spec->root.intensity = 1000;
	spec->root.period = 60;
	bank = ts_add_sup(&spec->root, "bank", STRATEGY_ONE_FOR_ONE);
	bank->intensity = 1000;
	bank->period = 60;
	c = add_example(bank, "account", "examples/bank");
	c->instances = ACCOUNTS;
	c->mailbox.capacity = 256;
	c->mailbox.state = 20480;
	snprintf(init, sizeof(init), "%d", INITIAL);
	c->env = calloc(1, sizeof(*c->env));
	ck_assert_ptr_nonnull(c->env);
	c->env[0].name = strdup("BANK_INITIAL");
	c->env[0].value = strdup(init);
	c->nenv = 1;
	c = add_example(bank, "coordinator", "examples/bank");
	c->mailbox.capacity = 1024;
	c->mailbox.state = 16384;
	add_client(&spec->root, fn_bank_client);
	ad = run(spec);
	fprintf(stderr, "bank: %d transfers moved, %d refused (funds), %d "
	    "failed, %d accounts killed, total %lld\n", sh->rc[0], sh->rc[1],
	    sh->rc[2], sh->rc[3], (long long)sh->val[0]);
	ck_assert_int_eq(sh->rc[0] + sh->rc[1] + sh->rc[2], TRANSFERS);
	ck_assert_int_gt(sh->rc[0], TRANSFERS / 2);	/* most moved */
	ck_assert_int_gt(sh->rc[3], 0);			/* and kills happened */
	ck_assert_int_eq(sh->rc[4], 0);			/* none below zero */
	ck_assert_int_eq(sh->val[0], ACCOUNTS * INITIAL);	/* conserved */
	actord_free(ad);
}
END_TEST

/* --- connection ------------------------------------------------------------------- */

/*
 * SCHEDULES connections, each a random schedule of 2 to 6 events ending
 * with a SETTLE, interleaved at random (a connection's own events stay in
 * order: one sender, one mailbox), the actor SIGKILLed every 3,000 events.
 * The model replays the same table in this process.
 */
static int
fn_conn_client(void *arg)
{
	static uint8_t model[SCHEDULES], left[SCHEDULES], ev[SCHEDULES][7];
	static uint32_t live[SCHEDULES];
	struct actor *a = attach_or_die();
	struct actor_ref conn;
	struct conn_ev e;
	struct actor_msg r;
	unsigned seed = 777, nlive = SCHEDULES, sent = 0, i, k, n, c;
	uint32_t zombies = 0, bad = 0;
	uint8_t s;

	(void)arg;
	(void)actor_ready(a);
	for (c = 0; c < SCHEDULES; c++) {
		n = 2 + rand_r(&seed) % 5;
		for (k = 0; k < n; k++)
			ev[c][k] = (uint8_t)(rand_r(&seed) % E_SETTLE);
		ev[c][n] = E_SETTLE;
		left[c] = (uint8_t)(n + 1);
		live[c] = c;
	}
	CLIENT_CHECK(actor_lookup(a, "/connection", &conn) == 0);
	conn.incarnation = ACTOR_ANY;
	while (nlive > 0) {
		i = rand_r(&seed) % nlive;
		c = live[i];
		k = 0;
		while (k < 7 && ev[c][k] == 0xff)
			k++;
		e.conn = c;
		e.event = ev[c][k];
		model[c] = conn_step(model[c], ev[c][k]);
		ev[c][k] = 0xff;
		if (--left[c] == 0)
			live[i] = live[--nlive];
		CLIENT_CHECK(actor_tell_timeout(a, conn, C_EVENT, &e,
		    sizeof(e), ACTOR_FOREVER) == 0);
		if (++sent % 3000 == 0) {
			pid_t pid = shm_actor_pid(actor_arena(a), conn.index);

			if (pid > 0 && kill(pid, SIGKILL) == 0)
				atomic_fetch_add(&sh->rc[1], 1);
		}
	}
	atomic_store(&sh->rc[0], (int)sent);
	/* Asked after the last event: FIFO, so every event is in. */
	CLIENT_CHECK(actor_ask_with(a, conn, C_DUMP, NULL, 0, LONG_NS,
	    ACTOR_ASK_WAIT_UP, &r) == 0 && r.len == SCHEDULES / 4);
	for (c = 0; c < SCHEDULES && r.len == SCHEDULES / 4; c++) {
		s = (((const uint8_t *)r.data)[c / 4] >> (c % 4 * 2)) & 3;
		bad += s != model[c];
		zombies += conn_zombie(s);
	}
	atomic_store(&sh->val[0], bad);
	atomic_store(&sh->val[1], zombies);
	CLIENT_CHECK(actor_ask_with(a, conn, C_ZOMBIES, NULL, 0, LONG_NS,
	    ACTOR_ASK_WAIT_UP, &r) == 0 && r.len == 4);
	memcpy(&zombies, r.data, sizeof(zombies));
	atomic_store(&sh->val[2], zombies);
	return client_finish(a);
}

START_TEST(connection_random_schedules_no_zombie)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;
	struct actord *ad;

	spec->root.intensity = 1000;
	spec->root.period = 60;
	c = add_example(&spec->root, "connection", "examples/connection");
	c->mailbox.capacity = 1024;
	c->mailbox.cell = 4096;
	c->mailbox.state = 8192;
	add_client(&spec->root, fn_conn_client);
	ad = run(spec);
	fprintf(stderr, "connection: %d schedules, %d events, %d kills, %lld "
	    "off the table, %lld zombies\n", SCHEDULES, sh->rc[0], sh->rc[1],
	    (long long)sh->val[0], (long long)sh->val[1]);
	ck_assert_int_gt(sh->rc[0], 2 * SCHEDULES);	/* events sent */
	ck_assert_int_gt(sh->rc[1], 0);			/* kills */
	ck_assert_int_eq(sh->val[0], 0);		/* all as the table says */
	ck_assert_int_eq(sh->val[1], 0);		/* no zombie */
	ck_assert_int_eq(sh->val[2], 0);		/* the actor agrees */
	actord_free(ad);
}
END_TEST

static Suite *
examples_suite(void)
{
	Suite *s = suite_create("examples");
	TCase *tc = tcase_create("examples");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, kv_survives_sigkill);
	tcase_add_test(tc, kv_large_values_survive_sigkill);
	tcase_add_test(tc, bank_applies_an_operation_once_however_late);
	tcase_add_test(tc, bank_conserves_money_under_sigkill);
	tcase_add_test(tc, connection_random_schedules_no_zombie);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(examples_suite());
}
