/*
 * check_adv_reload.c: reloads, many of them, never grow actord.  Found by
 * tests/check_adv_soak.c (actord's memory grew with time; its operator
 * alone grew it, a reload about a kilobyte each): every spec a reload
 * replaced was kept until actord exited, for fear a node still pointed
 * into it.  Now a replaced spec is freed at a later reload once no node
 * does (supervisor/reload.c, retired_sweep).
 *
 * The supervision core runs in this process (tests/lib/tsup.c) and is
 * reloaded between two trees that differ in every way a reload handles: a
 * group that grows and shrinks, a child changed (restarted with its new
 * spec), a child removed while it is slow to stop (it ignores SIGTERM)
 * and configured again before it is gone (it takes its place then), a
 * nested supervisor diffed in place.  Under SAN=1 a spec freed while a
 * node still used it would be a use after free.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>

#include "supervisor/spec.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"

#define WAIT		10000	/* ms: a bound, never an expectation */
#define RELOADS		60

static struct actord_spec *
tree(int variant)
{
	struct actord_spec *spec = ts_spec();
	struct sup_spec *s;
	struct child_spec *c;

	spec->shutdown_timeout = 3000;
	ts_add_fn(&spec->root, "a", ts_fn_run, NULL);
	ts_add_fn(&spec->root, "g", ts_fn_run, NULL)->instances =
	    variant == 0 ? 2 : 3;
	s = ts_add_sup(&spec->root, "s", STRATEGY_ONE_FOR_ALL);
	s->intensity = variant == 0 ? 10 : 20;
	/* Changed: restarted with the new spec. */
	ts_add_fn(s, "x", variant == 0 ? ts_fn_run : ts_fn_slowstop, NULL);
	if (variant == 0) {
		/* Gone in the other tree, and slow to go. */
		c = ts_add_fn(&spec->root, "slow", ts_fn_ignterm, NULL);
		c->shutdown = 30;
	}
	return spec;
}

static void
setup(void)
{
	ts_record_open();
}

static void
teardown(void)
{
	ts_record_close();
}

START_TEST(replaced_specs_freed)
{
	struct actord *ad;
	char err[256];
	int i;

	ad = ts_actord(tree(0));
	actord_boot(ad);
	ck_assert(ts_wait_state(ad, "/slow", NS_RUNNING, WAIT));
	for (i = 0; i < RELOADS; i++) {
		ck_assert_msg(actord_reload(ad, tree((i + 1) % 2), err,
		    sizeof(err)) == 0, "reload %d: %s", i, err);
		/* Now and then before the last one is done with. */
		ts_run_for(ad, i % 3 == 0 ? 0 : 40);
	}
	ck_assert(ts_wait_state(ad, "/slow", NS_RUNNING, WAIT));
	ck_assert(ts_wait_state(ad, "/s/x", NS_RUNNING, WAIT));
	ck_assert_msg(actord_reload(ad, tree(0), err, sizeof(err)) == 0, "%s",
	    err);
	printf("adv_reload: %zu specs kept after %d reloads\n", ad->nretired,
	    RELOADS + 1);
	/* The one just replaced, and at most one a node still used. */
	ck_assert_uint_le(ad->nretired, 2);
	actord_shutdown(ad);
	ck_assert(ts_wait_done(ad, WAIT));
	actord_free(ad);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("adv_reload");
	TCase *tc = tcase_create("reload");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, replaced_specs_freed);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
