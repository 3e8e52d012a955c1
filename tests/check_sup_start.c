/*
 * check_sup_start.c: what actord does before its first child, which every
 * start of the tree waits for (issue 13): nothing there that could wait
 * until a child needs it.  Spare mailboxes, for children added later, are
 * configured when a child takes one, so the arena's pages of an unused
 * spare are never written: they cost neither memory nor the time to touch
 * them.
 */
#include <sys/stat.h>

#include <check.h>
#include <stdio.h>

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

static Suite *
start_suite(void)
{
	Suite *s = suite_create("sup_start");
	TCase *tc = tcase_create("before the first child");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, unused_spares_touch_no_page);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(start_suite());
}
