/*
 * check_actor_large.c: messages larger than a cell through libactor and a
 * real actord, between real processes: tells, asks and answers up to the
 * mailbox's max_message, whole; a worker SIGKILLed while it handles a
 * large tell gets it again whole; above max_message a tell, an ask and an
 * answer are each refused with ACTOR_EOVERSIZE and a dead letter
 * "oversize", never cut.
 *
 * The actors are function children; results travel on a shared page
 * (check_actor_util.h); no assertion is about time.
 */
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm/shm.h"
#include "tests/check_actor_util.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"
#include "worker/actor.h"

#define CELL		256		/* the default cell */
#define MAXMSG		65536		/* the default max_message */
#define WAIT		20000		/* ms: a bound, never an expectation */
#define LONG_NS		30000000000LL

enum { T_TELL = 1, T_ECHO = 2 };
#define TELLS		3
static const size_t tell_len[TELLS] = { 60000, CELL, MAXMSG };

/*
 * The sink.  T_TELL (its content seeded by its length): the first large
 * one SIGKILLs the worker halfway through reading it; every delivery
 * counted whole or torn.  T_ECHO, an ask of u32 size and a payload seeded
 * by its length: answered with size bytes seeded by size + 1.
 */
static int
sink_handle(struct actor *a, const struct actor_msg *m, void *arg)
{
	static unsigned char out[MAXMSG + 64];
	volatile unsigned char sum = 0;
	uint32_t size;
	size_t i;
	int rc;

	(void)arg;
	if (m->flags & ACTOR_MSG_SYSTEM)
		return 0;
	if (m->tag == T_TELL) {
		if (m->len > CELL && atomic_exchange(&sh->gate, 1) == 0) {
			for (i = 0; i < m->len / 2; i++)
				sum += ((const unsigned char *)m->data)[i];
			raise(SIGKILL);
		}
		if (tcheck_intact(m->data, m->len, (uint32_t)m->len))
			atomic_fetch_add(&sh->val[0], 1);
		else
			atomic_fetch_add(&sh->val[1], 1);
		if (m->flags & ACTOR_MSG_REDELIVERED)
			atomic_fetch_add(&sh->val[2], 1);
		return 0;
	}
	if (m->tag == T_ECHO && m->len >= sizeof(size)) {
		memcpy(&size, m->data, sizeof(size));
		if (!tcheck_intact((const unsigned char *)m->data +
		    sizeof(size), m->len - sizeof(size), (uint32_t)m->len) ||
		    size > sizeof(out)) {
			(void)actor_reply_error(a, 1, "torn request");
			return 0;
		}
		tcheck_fill(out, size, size + 1);
		if ((rc = actor_reply(a, T_ECHO, out, size)) < 0)
			atomic_store(&sh->rc[3], rc);
	}
	return 0;
}

static int
fn_sink(void *arg)
{
	struct actor *a = attach_or_die();

	(void)arg;
	(void)actor_ready(a);
	(void)actor_run(a, sink_handle, NULL, NULL);
	actor_close(a);
	return 0;
}

/* An ask of a request of qlen bytes for an answer of alen. */
static int
echo(struct actor *a, size_t qlen, uint32_t alen, struct actor_msg *r)
{
	static unsigned char q[MAXMSG + 64];

	tcheck_fill(q + sizeof(alen), qlen - sizeof(alen), (uint32_t)qlen);
	memcpy(q, &alen, sizeof(alen));
	return actor_ask_path(a, "/sink", T_ECHO, q, qlen, LONG_NS, r);
}

static int
fn_client(void *arg)
{
	static unsigned char b[MAXMSG + 64];
	static const uint32_t alen[] = { 0, CELL, 5000, 40000, MAXMSG };
	struct actor *a = attach_or_die();
	struct actor_ref sink;
	struct actor_msg r;
	unsigned i, k;

	(void)arg;
	(void)actor_ready(a);
	CLIENT_CHECK(actor_lookup(a, "/sink", &sink) == 0);
	sink.incarnation = ACTOR_ANY;
	for (i = 0; i < TELLS; i++) {
		tcheck_fill(b, tell_len[i], (uint32_t)tell_len[i]);
		CLIENT_CHECK(actor_tell(a, sink, T_TELL, b, tell_len[i]) == 0);
	}
	for (i = 0; i < WAIT * 10 && atomic_load(&sh->val[0]) +
	    atomic_load(&sh->val[1]) < TELLS; i++)
		sleep_us(100);
	/* Asks and answers of every size, both ways. */
	for (i = 0; i < 5; i++)
		for (k = 0; k < 5; k++) {
			CLIENT_CHECK(echo(a, alen[i] < 4 ? 4 : alen[i], alen[k],
			    &r) == 0);
			CLIENT_CHECK(r.len == alen[k] &&
			    tcheck_intact(r.data, r.len, alen[k] + 1));
		}
	/* Above max_message: refused at once, never cut. */
	atomic_store(&sh->rc[0], actor_tell(a, sink, T_TELL, b, MAXMSG + 1));
	atomic_store(&sh->rc[1], echo(a, MAXMSG + 1, 8, &r));
	return client_finish(a);
}

/* The asker's max_message is 8,192 bytes: a larger answer fails its ask. */
static int
fn_small_client(void *arg)
{
	struct actor *a = attach_or_die();
	struct actor_msg r;

	(void)arg;
	(void)actor_ready(a);
	CLIENT_CHECK(echo(a, 100, 8192, &r) == 0 && r.len == 8192 &&
	    tcheck_intact(r.data, r.len, 8193));
	atomic_store(&sh->rc[0], echo(a, 100, 8193, &r));
	atomic_store(&sh->rc[1], echo(a, 8193, 10, &r));
	return client_finish(a);
}

static bool
client_done(struct actord *ad, void *arg)
{
	(void)ad;
	(void)arg;
	return atomic_load(&sh->done) != 0;
}

static struct actord *
run(child_fn client, uint32_t client_max)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;
	struct actord *ad;

	spec->root.intensity = 100;
	c = ts_add_fn(&spec->root, "sink", fn_sink, NULL);
	c->ready = READY_ACTOR;
	c->has_mailbox = true;
	c = ts_add_fn(&spec->root, "client", client, NULL);
	c->ready = READY_ACTOR;
	c->has_mailbox = true;
	c->mailbox.max_message = client_max;
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert_msg(ts_run_sliced(ad, client_done, NULL, 120000),
	    "the client never finished (fail line %d)",
	    atomic_load(&sh->fail));
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

START_TEST(large_tells_asks_answers)
{
	struct actord *ad = run(fn_client, MAXMSG);
	int sink = shm_lookup(ad->arena, "/sink");

	ck_assert_int_eq(sh->val[0], TELLS);	/* every tell whole */
	ck_assert_int_eq(sh->val[1], 0);	/* none torn */
	ck_assert_int_eq(sh->val[2], 1);	/* the killed one, again */
	ck_assert_int_eq(sh->rc[0], ACTOR_EOVERSIZE);
	ck_assert_int_eq(sh->rc[1], ACTOR_EOVERSIZE);
	ck_assert_int_eq(sh->rc[3], 0);
	ck_assert_int_ge(sink, 0);
	ck_assert_int_eq(count_dl(ad->arena, (uint32_t)sink,
	    SHM_DL_OVERSIZE), 2);
	actord_free(ad);
}
END_TEST

START_TEST(large_answer_over_askers_max)
{
	struct actord *ad = run(fn_small_client, 8192);

	ck_assert_int_eq(sh->rc[0], ACTOR_EOVERSIZE);	/* the answer */
	ck_assert_int_eq(sh->rc[1], 0);		/* the sink's limit is its own */
	ck_assert_int_eq(sh->rc[3], ACTOR_EOVERSIZE);	/* the replier's */
	actord_free(ad);
}
END_TEST

static Suite *
large_suite(void)
{
	Suite *s = suite_create("actor_large");
	TCase *tc = tcase_create("large");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, large_tells_asks_answers);
	tcase_add_test(tc, large_answer_over_askers_max);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(large_suite());
}
