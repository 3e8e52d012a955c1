/*
 * check_sup_start.c: what actord does before its first child, which every
 * start of the tree waits for (issue 13): nothing there that could wait
 * until a child needs it.  Spare mailboxes, for children added later, are
 * configured when a child takes one, so the arena's pages of an unused
 * spare are never written: they cost neither memory nor the time to touch
 * them.
 *
 * A program child has exec'd, or failed to, when its spawn returns
 * (vfork's way): no pipe to learn it from and no turn of the loop
 * between the fork and what follows (a ready = "exec" child running, the
 * next child of an ordered start forked, a failure's cause known).
 */
#include <sys/stat.h>

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"

#define SPARES	256

/* The memfd's allocated bytes of an actord whose tree has spares spares. */
static long long
arena_bytes(unsigned spares)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;
	struct stat st;
	long long bytes;

	spec->spare_mailboxes = spares;
	ad = ts_actord(spec);
	ck_assert_int_eq(fstat(ad->arena_fd, &st), 0);
	bytes = (long long)st.st_blocks * 512;
	actord_free(ad);
	return bytes;
}

START_TEST(unused_spares_touch_no_page)
{
	long long none = arena_bytes(0), many = arena_bytes(SPARES);

	/* A page each, when each was configured at the start. */
	ck_assert_msg(many - none < SPARES * 4096LL / 8,
	    "%d spares: %lld bytes of arena more than none", SPARES,
	    many - none);
}
END_TEST

/* A ready = "exec" child runs once actord_boot returns: no loop turn. */
START_TEST(exec_known_when_spawned)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;

	ts_add_exec(&spec->root, "a", ts_progs("tworker"), "run", NULL);
	ts_add_exec(&spec->root, "b", ts_progs("tworker"), "run", NULL);
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert_int_gt(ts_pid(ad, "/a"), 0);
	ck_assert_int_eq(ts_state(ad, "/a"), NS_RUNNING);
	/* The root's children start in order: the second follows at once. */
	ck_assert_int_eq(ts_state(ad, "/b"), NS_RUNNING);
	actord_free(ad);
}
END_TEST

/* Why a program did not start is known when its spawn returns. */
START_TEST(exec_failure_known_when_spawned)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;
	struct node *n;

	ts_add_exec(&spec->root, "nope", "/nonexistent/prog", NULL);
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert_ptr_nonnull(n = actord_find(ad, "/nope"));
	ck_assert_str_eq(n->start_cause,
	    "exec /nonexistent/prog: No such file or directory");
	/* Then its death (exit 127) fails the start with that cause. */
	ck_assert(ts_wait_done(ad, 10000));
	ck_assert_msg(strstr(ad->message, "exec /nonexistent/prog: No such "
	    "file or directory") != NULL, "%s", ad->message);
	actord_free(ad);
}
END_TEST

static Suite *
start_suite(void)
{
	Suite *s = suite_create("sup_start");
	TCase *tc = tcase_create("before the first child");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, unused_spares_touch_no_page);
	tcase_add_test(tc, exec_known_when_spawned);
	tcase_add_test(tc, exec_failure_known_when_spawned);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(start_suite());
}
