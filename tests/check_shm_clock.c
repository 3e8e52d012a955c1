/*
 * check_shm_clock.c: the arena clock's calibration (shm/arena.c).  Its
 * first reading may be a mark the creator took earlier (actord takes it as
 * it starts, so that what it does until the arena exists counts toward
 * the calibration's window and only the rest is slept), and a mark that
 * says the TSC is not to be used leaves the arena on clock_gettime.
 */
#include <check.h>
#include <time.h>

#include "shm/shm.h"
#include "tests/check_shm_util.h"
#include "tests/lib/tcheck.h"

static struct shm_arena *
arena_marked(const struct shm_clock_mark *m)
{
	struct shm_mailbox_layout mb = shm_test_mbox(16, 128,
	    SHM_OVERFLOW_REJECT);
	struct shm_layout l = { 1, &mb, 16, 16 };
	struct shm_arena *a;
	char err[SHM_ERRBUF];

	ck_assert_msg(shm_create_marked(&l, m, "check-shm-clock", &a, err,
	    sizeof(err)) == 0, "shm_create_marked: %s", err);
	return a;
}

/*
 * A mark taken 10 ms before the arena (more than the window: nothing is
 * left to sleep) is the calibration's first reading: the factor is the
 * one from the mark to the second reading, to the bit.
 */
START_TEST(first_reading_is_the_mark)
{
	struct timespec ts = { 0, 10000000 };
	struct shm_clock_mark m;
	struct shm_arena *a;
	uint64_t want;

	shm_clock_mark(&m);
	if (!m.ok)
		return;		/* this host's TSC is not used: no pair */
	nanosleep(&ts, NULL);
	a = arena_marked(&m);
	ck_assert_uint_eq(a->tsc_ok, 1);
	ck_assert_uint_gt(a->tsc_base, m.tsc);
	ck_assert_uint_gt(a->ns_base, m.ns);
	want = (uint64_t)(((unsigned __int128)(a->ns_base - m.ns) << 32) /
	    (a->tsc_base - m.tsc));
	ck_assert_uint_eq(a->tsc_mult, want);
	shm_detach(a);
}
END_TEST

/* A mark that says no: the arena clock is clock_gettime. */
START_TEST(mark_without_tsc_keeps_clock_gettime)
{
	struct shm_clock_mark m;
	struct shm_arena *a;

	memset(&m, 0, sizeof(m));
	a = arena_marked(&m);
	ck_assert_uint_eq(a->tsc_ok, 0);
	shm_detach(a);
}
END_TEST

static Suite *
clock_suite(void)
{
	Suite *s = suite_create("shm_clock");
	TCase *tc = tcase_create("calibration");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, first_reading_is_the_mark);
	tcase_add_test(tc, mark_without_tsc_keeps_clock_gettime);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(clock_suite());
}
