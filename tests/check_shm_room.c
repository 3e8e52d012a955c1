/*
 * check_shm_room.c: a sender that finds a blocking main lane full while
 * its consumer is at work polls for the cell the consumer frees next
 * instead of queueing for a turn and sleeping (shm/ring.c, room_soon),
 * and one whose consumer is asleep, or that may not wait, still queues or
 * fails at once; with a real sender process and a consumer slower than
 * it, so that the lane is full at almost every send.
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include <check.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shm/shm.h"
#include "tests/check_shm_util.h"
#include "tests/lib/tcheck.h"

#define CAP		16	/* cells of the lane under test */
#define MSGS		4000	/* messages the sender sends */
#define WORK_NS		1000	/* the consumer's work per message */
#define WAIT_S		20	/* the most the stream may take */

static int64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Times this thread was preempted (involuntary context switches). */
static long
preemptions(void)
{
	struct rusage ru;

	ck_assert_int_eq(getrusage(RUSAGE_THREAD, &ru), 0);
	return ru.ru_nivcsw;
}

/* A handler slower than any send: WORK_NS of polling the clock. */
static int
slow_handler(void *arg, enum shm_lane lane, const struct shm_msg *m,
    const void *payload)
{
	int64_t	 until = mono_ns() + WORK_NS;
	unsigned *n = arg;

	(void)lane;
	(void)m;
	(void)payload;
	while (mono_ns() < until)
		continue;
	(*n)++;
	return 0;
}

/*
 * The first two CPUs this process may use, in cpus: 0, or -1 when it has
 * only one (the sender's poll needs its consumer running elsewhere: on
 * one CPU it only delays the consumer it waits for).
 */
static int
two_cpus(int cpus[2])
{
	cpu_set_t set;
	int	 i, k = 0;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return -1;
	for (i = 0; i < CPU_SETSIZE && k < 2; i++)
		if (CPU_ISSET(i, &set))
			cpus[k++] = i;
	return k == 2 ? 0 : -1;
}

static int
pin_to(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one);
}

/* A sender of MSGS messages on the second CPU; exits 0 when all went. */
static pid_t
spawn_pinned_sender(struct shm_arena *a, int cpu)
{
	struct shm_producer *p;
	struct shm_msg	 m;
	unsigned	 i;
	pid_t		 pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid != 0)
		return pid;
	if (pin_to(cpu) != 0 || shm_producer_open(a, &p) != 0)
		_exit(10);
	memset(&m, 0, sizeof(m));
	for (i = 0; i < MSGS; i++)
		if (shm_send(p, 0, SHM_LANE_MAIN, &m, NULL,
		    SHM_NO_TIMEOUT) != 0)
			_exit(11);
	shm_producer_close(p);
	_exit(0);
}

/*
 * A stream into a full lane whose consumer takes every message, awake
 * all along (it drains without ever sleeping) on another CPU: the sender
 * takes a ticket only when its consumer stopped for longer than the poll
 * (preempted): a few, plus two for each time the consumer was preempted
 * (a loaded machine: make -j2 check runs other tests beside this one).
 * Before room_soon, it queued at every full lane and slept until the lane
 * was half empty: some MSGS / (CAP / 2) tickets.
 */
START_TEST(test_stream_into_full_lane_no_line)
{
	struct shm_arena *a = shm_test_arena(1, CAP, 128, SHM_OVERFLOW_BLOCK);
	struct shm_counters c;
	uint32_t tickets;
	unsigned n = 0;
	long	 preempted;
	int64_t	 deadline = mono_ns() + (int64_t)WAIT_S * 1000000000;
	pid_t	 pid, got = 0;
	int	 st, cpus[2];

	if (two_cpus(cpus) != 0) {
		fprintf(stderr, "check_shm_room: one CPU, skipped\n");
		shm_detach(a);
		return;
	}
	pid = spawn_pinned_sender(a, cpus[1]);
	ck_assert_int_eq(pin_to(cpus[0]), 0);
	preempted = -preemptions();
	/* Until all came, the time is up, or the sender failed. */
	while (n < MSGS && mono_ns() < deadline && (got == 0 ||
	    (WIFEXITED(st) && WEXITSTATUS(st) == 0))) {
		if (shm_drain(a, 0, SHM_LANES_INBOX, 0, slow_handler, &n) < 0)
			break;
		if (got == 0)
			got = waitpid(pid, &st, WNOHANG);
	}
	preempted += preemptions();
	if (got == 0) {
		if (n < MSGS)
			kill(pid, SIGKILL);
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	}
	ck_assert_uint_eq(n, MSGS);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ck_assert_int_eq(shm_counters(a, 0, &c), 0);
	ck_assert_uint_eq(c.full, 0);
	tickets = atomic_load(&shm_mb(a, 0)->m->turn_next);
	ck_assert_msg(tickets < MSGS / CAP / 4 + 2 * preempted, "%u tickets, "
	    "%llu wake-ups for %u messages, the consumer preempted %ld times",
	    tickets, (unsigned long long)c.sender_wakeups, MSGS, preempted);
	shm_detach(a);
}
END_TEST

/*
 * A consumer asleep on the lane frees nothing soon: the sender queues at
 * once, as before (and one that may not wait fails at once: no poll).
 */
START_TEST(test_consumer_asleep_queues)
{
	struct shm_arena *a = shm_test_arena(1, CAP, 128, SHM_OVERFLOW_BLOCK);
	struct shm_producer *p;
	struct shm_msg	 m;
	unsigned	 i;
	pid_t		 pid;

	ck_assert_int_eq(shm_producer_open(a, &p), 0);
	memset(&m, 0, sizeof(m));
	for (i = 0; i < CAP; i++)
		ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0), 0);
	ck_assert_int_eq(shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, 0),
	    SHM_EFULL);
	ck_assert_int_eq(shm_offer(p, 0, SHM_LANE_MAIN, &m, NULL), SHM_EFULL);
	ck_assert_uint_eq(atomic_load(&shm_mb(a, 0)->m->turn_next), 0);
	/* As a consumer asleep on its main lane says so (wait.c). */
	atomic_store(&shm_mb(a, 0)->m->sleeping,
	    SHM_LANE_BIT(SHM_LANE_MAIN));
	pid = shm_test_spawn_sender(a, 0, 1, 1);
	ck_assert_msg(shm_test_sleeping_senders(a, 0, 10000),
	    "the sender never queued");
	atomic_store(&shm_mb(a, 0)->m->sleeping, 0);
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	shm_producer_close(p);
	shm_detach(a);
}
END_TEST

static Suite *
room_suite(void)
{
	Suite	*s = suite_create("shm_room");
	TCase	*tc = tcase_create("room");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_stream_into_full_lane_no_line);
	tcase_add_test(tc, test_consumer_asleep_queues);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(room_suite());
}
