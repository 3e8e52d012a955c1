/*
 * check_sup_policy.c: unit tests of the pure supervision rules (policy.c):
 * backoff delays with a fixed random source, the clean-exit rule, the
 * restart-type rule, the intensity window, death descriptions; and the
 * deadline heap and event batches of the event loop.
 */
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/actord.h"
#include "tests/lib/tcheck.h"

/* Wait statuses built by hand, as the kernel encodes them. */
#define EXITED(n)	(((n) & 0xff) << 8)
#define SIGNALED(s)	((s) & 0x7f)

START_TEST(backoff_first_is_min_to_one_and_a_half)
{
	ck_assert_uint_eq(backoff_delay(50, 1000, 0, 0), 50);
	ck_assert_uint_eq(backoff_delay(50, 1000, 0, 25), 75);
	ck_assert_uint_eq(backoff_delay(50, 1000, 0, 26), 50);	/* wraps */
}
END_TEST

START_TEST(backoff_doubles)
{
	ck_assert_uint_eq(backoff_delay(50, 1000, 1, 0), 100);
	ck_assert_uint_eq(backoff_delay(50, 1000, 2, 0), 200);
	ck_assert_uint_eq(backoff_delay(50, 1000, 3, 0), 400);
	ck_assert_uint_eq(backoff_delay(50, 1000, 3, 200), 600);
	ck_assert_uint_eq(backoff_delay(50, 1000, 4, 0), 800);
}
END_TEST

START_TEST(backoff_never_past_max)
{
	uint64_t rng = 12345;
	unsigned attempt;
	uint32_t d, r;
	int i;

	for (attempt = 0; attempt < 40; attempt++)
		for (i = 0; i < 200; i++) {
			r = rng_next(&rng);
			d = backoff_delay(50, 1000, attempt, r);
			ck_assert_uint_le(d, 1000);
			ck_assert_uint_ge(d, 50);
		}
	/* At the cap the jitter stays in [0.75 max, max]. */
	ck_assert_uint_eq(backoff_delay(50, 1000, 10, 0), 750);
	ck_assert_uint_eq(backoff_delay(50, 1000, 10, 250), 1000);
	ck_assert_uint_eq(backoff_delay(50, 1000, 10, 251), 750);
	/* 800 * 1.5 would pass max: capped. */
	ck_assert_uint_eq(backoff_delay(50, 1000, 4, 200), 1000);
	ck_assert_uint_eq(backoff_delay(50, 1000, 4, 201), 800);
}
END_TEST

START_TEST(backoff_zero_and_degenerate)
{
	ck_assert_uint_eq(backoff_delay(0, 0, 0, 7), 0);
	ck_assert_uint_eq(backoff_delay(0, 1000, 5, 7), 0);
	/* max below min: min wins, never below it. */
	ck_assert_uint_eq(backoff_delay(100, 10, 3, 0), 100);
	ck_assert_uint_eq(backoff_delay(100, 100, 0, 99), 100);
	/* A huge attempt count does not overflow. */
	ck_assert_uint_le(backoff_delay(1, 4000000000U, 1000, 0), 4000000000U);
}
END_TEST

START_TEST(clean_exit_rule)
{
	int ok[] = { 3, 7 };

	ck_assert(exit_is_clean(EXITED(0), false, NULL, 0));
	ck_assert(!exit_is_clean(EXITED(1), false, NULL, 0));
	ck_assert(exit_is_clean(EXITED(3), false, ok, 2));
	ck_assert(exit_is_clean(EXITED(7), true, ok, 2));
	ck_assert(!exit_is_clean(EXITED(4), false, ok, 2));
	ck_assert(exit_is_clean(SIGNALED(SIGTERM), false, NULL, 0));
	ck_assert(exit_is_clean(SIGNALED(SIGINT), false, NULL, 0));
	ck_assert(exit_is_clean(SIGNALED(SIGHUP), false, NULL, 0));
	ck_assert(exit_is_clean(SIGNALED(SIGPIPE), false, NULL, 0));
	/* The same signals sent by actord are not a clean exit. */
	ck_assert(!exit_is_clean(SIGNALED(SIGTERM), true, NULL, 0));
	ck_assert(!exit_is_clean(SIGNALED(SIGKILL), false, NULL, 0));
	ck_assert(!exit_is_clean(SIGNALED(SIGSEGV), false, NULL, 0));
}
END_TEST

START_TEST(restart_type_rule)
{
	ck_assert(restart_wanted(RESTART_PERMANENT, true));
	ck_assert(restart_wanted(RESTART_PERMANENT, false));
	ck_assert(!restart_wanted(RESTART_TRANSIENT, true));
	ck_assert(restart_wanted(RESTART_TRANSIENT, false));
	ck_assert(!restart_wanted(RESTART_TEMPORARY, true));
	ck_assert(!restart_wanted(RESTART_TEMPORARY, false));
}
END_TEST

START_TEST(window_edge_is_inside)
{
	uint64_t t[] = { 100, 200, 300, 400 };

	/* now 1200, period 1000: t >= 200 stays, 200 included. */
	ck_assert_uint_eq(window_prune(t, 4, 1200, 1000), 3);
	ck_assert_uint_eq(t[0], 200);
	ck_assert_uint_eq(t[2], 400);
	ck_assert_uint_eq(window_prune(t, 3, 1201, 1000), 2);
	ck_assert_uint_eq(t[0], 300);
	ck_assert_uint_eq(window_prune(t, 2, 50, 1000), 2);
	ck_assert_uint_eq(window_prune(t, 2, 100000, 1000), 0);
}
END_TEST

START_TEST(describe_deaths)
{
	char buf[128];

	exit_describe(EXITED(3), buf, sizeof(buf));
	ck_assert_str_eq(buf, "exited 3");
	exit_describe(SIGNALED(SIGKILL), buf, sizeof(buf));
	ck_assert_str_eq(buf, "killed by signal 9 (Killed)");
}
END_TEST

static int fired[8];
static int nfired;

static void
fire(void *arg)
{
	fired[nfired++] = (int)(intptr_t)arg;
}

START_TEST(timers_fire_in_deadline_order)
{
	struct loop l;
	struct timer t[5];
	uint64_t now;
	int i;

	ck_assert_int_eq(loop_init(&l), 0);
	for (i = 0; i < 5; i++)
		timer_init(&t[i], fire, (void *)(intptr_t)i);
	now = now_ms();
	timer_at(&l, &t[0], now + 40);
	timer_at(&l, &t[1], now + 10);
	timer_at(&l, &t[2], now + 30);
	timer_at(&l, &t[3], now + 20);
	timer_at(&l, &t[4], now + 5);
	timer_cancel(&l, &t[2]);
	ck_assert(!timer_pending(&t[2]));
	while (nfired < 4)
		ck_assert_int_ge(loop_once(&l, 2000), 1);
	ck_assert_int_eq(fired[0], 4);
	ck_assert_int_eq(fired[1], 1);
	ck_assert_int_eq(fired[2], 3);
	ck_assert_int_eq(fired[3], 0);
	/* Nothing armed: an idle loop times out with no event. */
	ck_assert_int_eq(loop_once(&l, 50), 0);
	loop_close(&l);
}
END_TEST

/* Two readable pipes; the first handler run swaps the other's for another. */
struct swap_arg {
	struct loop	*l;
	struct ev	*ev[2];
	int		 fresh;		/* an empty pipe's read end */
	int		 calls;
};

static struct swap_arg swap;

static void
on_readable(void *arg, uint32_t events)
{
	int me = (int)(intptr_t)arg;
	struct swap_arg *sa = &swap;
	struct ev *other = sa->ev[1 - me];

	(void)events;
	if (sa->calls++ > 0)
		return;
	loop_del(sa->l, other);
	ck_assert_int_eq(loop_add(sa->l, other, sa->fresh, EPOLLIN,
	    on_readable, (void *)(intptr_t)(1 - me)), 0);
}

/*
 * A handler that removes another ev and adds it again with a descriptor
 * that is not ready (a worker reaped and restarted: its new pidfd) must
 * not see that ev called for the old descriptor's event in the same
 * batch: the old worker's death taken for the new one's.
 */
START_TEST(stale_event_of_a_swapped_descriptor_skipped)
{
	struct loop l;
	struct ev ev[2];
	int a[2], b[2], c[2];

	ck_assert_int_eq(loop_init(&l), 0);
	ck_assert_int_eq(pipe(a), 0);
	ck_assert_int_eq(pipe(b), 0);
	ck_assert_int_eq(pipe(c), 0);
	ck_assert_int_eq(write(a[1], "x", 1), 1);
	ck_assert_int_eq(write(b[1], "x", 1), 1);
	memset(&swap, 0, sizeof(swap));
	swap.l = &l;
	swap.ev[0] = &ev[0];
	swap.ev[1] = &ev[1];
	swap.fresh = c[0];
	ck_assert_int_eq(loop_add(&l, &ev[0], a[0], EPOLLIN, on_readable,
	    (void *)(intptr_t)0), 0);
	ck_assert_int_eq(loop_add(&l, &ev[1], b[0], EPOLLIN, on_readable,
	    (void *)(intptr_t)1), 0);
	/* Both were ready before the wait: one batch returns both. */
	ck_assert_int_eq(loop_once(&l, 1000), 2);
	ck_assert_int_eq(swap.calls, 1);
	/* The swapped-in pipe is empty: only the other is still ready. */
	ck_assert_int_eq(loop_once(&l, 0), 1);
	ck_assert_int_eq(swap.calls, 2);
	ck_assert_int_eq(write(c[1], "x", 1), 1);
	ck_assert_int_eq(loop_once(&l, 1000), 2);
	ck_assert_int_eq(swap.calls, 4);
	close(a[0]); close(a[1]); close(b[1]); close(b[0]);
	close(c[0]); close(c[1]);
	loop_close(&l);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("sup_policy");
	TCase *tc = tcase_create("policy");

	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, backoff_first_is_min_to_one_and_a_half);
	tcase_add_test(tc, backoff_doubles);
	tcase_add_test(tc, backoff_never_past_max);
	tcase_add_test(tc, backoff_zero_and_degenerate);
	tcase_add_test(tc, clean_exit_rule);
	tcase_add_test(tc, restart_type_rule);
	tcase_add_test(tc, window_edge_is_inside);
	tcase_add_test(tc, describe_deaths);
	tcase_add_test(tc, timers_fire_in_deadline_order);
	tcase_add_test(tc, stale_event_of_a_swapped_descriptor_skipped);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
