/*
 * check_hostile_wake.c: a sender that wakes a sleeping consumer
 * (shm_wake_consumer) must come back however the consumer's "sleeping"
 * word changes under it.  The word is in the arena, so a worker can
 * rewrite its own at will; actord is one of the senders that wake it.
 * The worst a worker can do is change the word between every two of
 * the sender's instructions: here a tracer single-steps the sender and
 * writes a new value, always asleep on the sender's lane, before each
 * step, so that every compare-and-swap of the word fails.  Deterministic:
 * no race to win, no timing.
 */
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "tests/check_shm_util.h"
#include "tests/lib/tcheck.h"

#define MAX_STEPS	200000	/* a sender held for good takes them all */

/*
 * The sender: stops for its tracer, then wakes mailbox 0's consumer on
 * the main lane as a send does when it finds it asleep.
 */
static void
sender(struct shm_arena *a)
{
	int	 bellfd = -1;

	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == -1)
		_exit(10);
	raise(SIGSTOP);
	shm_wake_consumer(a, 0, shm_mb(a, 0)->m, SHM_LANE_MAIN, &bellfd);
	_exit(0);
}

/*
 * Step pid until it exits or MAX_STEPS, writing a value never seen
 * before into "sleeping" (the lane's bit set, no doorbell) before each
 * step.  The steps it took, or -1 if it never came back.
 */
static long
step_while_lying(pid_t pid, _Atomic uint32_t *sleeping)
{
	uint32_t lie = 0;
	long	 steps;
	int	 st;

	for (steps = 0; steps < MAX_STEPS; steps++) {
		lie++;
		atomic_store(sleeping, SHM_LANE_BIT(SHM_LANE_MAIN) |
		    (lie << 12));
		ck_assert_int_eq(ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL),
		    0);
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		if (WIFEXITED(st)) {
			ck_assert_int_eq(WEXITSTATUS(st), 0);
			return steps;
		}
		ck_assert_msg(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP,
		    "sender: status %#x", st);
	}
	return -1;
}

START_TEST(wake_comes_back_from_a_word_that_lies)
{
	struct shm_arena *a = shm_test_arena(1, 16, 128, SHM_OVERFLOW_BLOCK);
	struct shm_mbox	*m = shm_mb(a, 0)->m;
	long		 steps;
	pid_t		 pid;
	int		 st;

	atomic_store(&m->sleeping, SHM_LANE_BIT(SHM_LANE_MAIN));
	if ((pid = fork()) == 0)
		sender(a);
	ck_assert_int_ge(pid, 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP,
	    "sender did not stop for its tracer: status %#x", st);
	steps = step_while_lying(pid, &m->sleeping);
	if (steps < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	ck_assert_msg(steps >= 0, "the sender was still waking after %d "
	    "instructions", MAX_STEPS);
	/* It woke the consumer: the futex word moved. */
	ck_assert_uint_eq(atomic_load(&m->wake_word), 1);
	shm_detach(a);
}
END_TEST

static Suite *
hostile_wake_suite(void)
{
	Suite *s = suite_create("hostile_wake");
	TCase *tc = tcase_create("wake");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, wake_comes_back_from_a_word_that_lies);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(hostile_wake_suite());
}
