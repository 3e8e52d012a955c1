/*
 * check_scale.c: a tree past the sizes that once had hard limits (issue
 * 13), under a real actord run in the test process, with function children
 * as actors (forked, not exec'd: a fork costs least on a small machine).
 *
 * 2,500 actors (three groups of instances) and one client actor, started
 * last: every actor is told, asked, SIGKILLed, and asked and told again
 * in its next incarnation.  With two producer slots per actor taken from a
 * pool of 4,096 (the layout before issue 13), the 2,049th actor's run loop
 * found no slot and the client found none to attach with.
 *
 * The client writes what it saw to a shared page; the test process runs
 * actord until the client is done.  No assertion is about time.
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

#ifndef NACTORS
#define NACTORS		2500
#endif
#define GROUP		1000		/* instances per group */
#define NGROUPS		((NACTORS + GROUP - 1) / GROUP)
#define WAIT		60000		/* ms: a bound, never an expectation */
#define LONG_NS		60000000000LL	/* an ask timeout nobody should reach */

enum {
	T_NOTE = 1,		/* count it in handled[own index] */
	T_GET			/* ask: answers its own index */
};

static int
echo(struct actor *a, const struct actor_msg *m, void *arg)
{
	uint32_t self = actor_self(a).index;

	(void)arg;
	if (m->tag == T_NOTE && self < NWORK)
		atomic_fetch_add(&sh->handled[self], 1);
	else if (m->tag == T_GET)
		(void)actor_reply(a, T_GET, &self, sizeof(self));
	return 0;
}

static int
fn_echo(void *arg)
{
	struct actor *a = attach_or_die();

	(void)arg;
	(void)actor_ready(a);
	(void)actor_run(a, echo, NULL, NULL);
	actor_close(a);
	return 0;
}

/* Until every actor has handled `want` notes, or the bound. */
static int
wait_handled(const uint32_t *idx, uint32_t want)
{
	int i, k;

	for (i = 0; i < WAIT; i++) {
		for (k = 0; k < NACTORS; k++)
			if (atomic_load(&sh->handled[idx[k]]) < want)
				break;
		if (k == NACTORS)
			return 0;
		sleep_us(1000);
	}
	return -1;
}

/* A tell and an ask to every actor; the answers name the right one. */
static void
tell_and_ask(struct actor *a, const uint32_t *idx, int *bad)
{
	struct actor_ref r;
	struct actor_msg m;
	uint32_t got;
	int k;

	for (k = 0; k < NACTORS; k++) {
		r.index = idx[k];
		r.incarnation = ACTOR_ANY;
		if (actor_tell(a, r, T_NOTE, NULL, 0) != 0 ||
		    actor_ask_with(a, r, T_GET, NULL, 0, LONG_NS,
		    ACTOR_ASK_WAIT_UP, &m) != 0 || m.len != sizeof(got)) {
			(*bad)++;
			continue;
		}
		memcpy(&got, m.data, sizeof(got));
		if (got != idx[k])
			(*bad)++;
	}
}

static int
fn_client(void *arg)
{
	static uint32_t idx[NACTORS], inc[NACTORS];
	struct actor *a = attach_or_die();
	struct shm_arena *ar = actor_arena(a);
	struct actor_ref r;
	char path[32];
	int k, bad = 0, lost = 0;
	pid_t pid;

	(void)arg;
	(void)actor_ready(a);
	for (k = 0; k < NACTORS; k++) {
		snprintf(path, sizeof(path), "/g%d/%d", k / GROUP, k % GROUP);
		CLIENT_CHECK(actor_lookup(a, path, &r) == 0);
		idx[k] = r.index;
	}
	tell_and_ask(a, idx, &bad);
	CLIENT_CHECK(wait_handled(idx, 1) == 0);
	for (k = 0; k < NACTORS; k++) {
		inc[k] = shm_actor_incarnation(ar, idx[k]);
		pid = shm_actor_pid(ar, idx[k]);
		CLIENT_CHECK(pid > 0 && kill(pid, SIGKILL) == 0);
	}
	for (k = 0; k < NACTORS; k++)
		if (wait_new_incarnation(ar, idx[k], inc[k], WAIT) != 0)
			lost++;
	tell_and_ask(a, idx, &bad);
	CLIENT_CHECK(wait_handled(idx, 2) == 0);
	atomic_store(&sh->rc[0], bad);
	atomic_store(&sh->rc[1], lost);
	return client_finish(a);
}

static bool
client_done(struct actord *ad, void *arg)
{
	(void)ad;
	(void)arg;
	return atomic_load(&sh->done) != 0;
}

START_TEST(thousands_of_actors_live_die_and_answer)
{
	struct actord_spec *spec;
	struct child_spec *c;
	struct actord *ad;
	char name[16];
	int g;

	sh_map();
	spec = ts_spec();
	spec->root.intensity = 2 * NACTORS;
	spec->root.period = 600;
	spec->root.backoff_min = spec->root.backoff_max = 0;
	spec->shutdown_timeout = WAIT;
	for (g = 0; g < NGROUPS; g++) {
		snprintf(name, sizeof(name), "g%d", g);
		c = ts_add_fn(&spec->root, name, fn_echo, NULL);
		c->ready = READY_ACTOR;
		c->has_mailbox = true;
		c->start_timeout = WAIT;	/* a loaded machine, SAN=1 */
		c->instances = (unsigned)(NACTORS - g * GROUP < GROUP ?
		    NACTORS - g * GROUP : GROUP);
		/* Small: the test is about counts, not about room. */
		c->mailbox.capacity = 16;
		c->mailbox.cell = 64;
		c->mailbox.watchers = 4;
	}
	c = ts_add_fn(&spec->root, "client", fn_client, NULL);
	c->ready = READY_ACTOR;
	c->start_timeout = WAIT;
	c->has_mailbox = true;
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert_msg(ts_run_sliced(ad, client_done, NULL, 4 * WAIT),
	    "the client never finished (fail line %d)",
	    atomic_load(&sh->fail));
	ck_assert_msg(atomic_load(&sh->fail) == 0, "client check failed at "
	    "line %d", atomic_load(&sh->fail));
	ck_assert_int_eq(atomic_load(&sh->rc[0]), 0);	/* wrong answers */
	ck_assert_int_eq(atomic_load(&sh->rc[1]), 0);	/* never came back */
	actord_free(ad);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("scale");
	TCase *tc = tcase_create("scale");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, thousands_of_actors_live_die_and_answer);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
