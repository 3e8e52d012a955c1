/*
 * check_sup_stop.c: the signals of a worker's stop (supervisor/worker.c,
 * group_kill): SIGCONT first, so that a stopped worker hears the SIGTERM,
 * and no SIGCONT after the SIGTERM.
 *
 * A SIGCONT sent after the SIGTERM (as actord did, and as systemd, s6
 * and runit do) discards every stop signal pending at that moment: one
 * a worker's exit path has just asked for is lost.  LeakSanitizer's
 * check at exit is such a path: its tracer's PTRACE_ATTACH queues a
 * SIGSTOP and waits for the stop, the SIGCONT discards it, and the worker
 * spins for ever (until the SIGKILL), as would a crash reporter or a
 * debugger attaching then.  Seen as sanitized workers "still alive 2000
 * ms after SIGTERM" on a busy machine.
 *
 * killpg is wrapped here (this program's definition takes the place of
 * libc's for actord's code linked into it) to see the order the signals
 * are sent in; the stopped worker's test is a real stop of a real process.
 */
#include <sys/syscall.h>
#include <sys/wait.h>

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"

#define WAIT	10000		/* ms: a bound, never an expectation */
#define LONG	60000		/* ms: a shutdown timeout no test reaches */
#define MAXSIG	16

/* The signals killpg sent to the watched group, in order. */
static struct {
	pid_t	 pgrp;
	int	 sig[MAXSIG];
	int	 n;
} sent;

int
killpg(pid_t pgrp, int sig)
{
	if (pgrp == sent.pgrp && sent.n < MAXSIG)
		sent.sig[sent.n++] = sig;
	return (int)syscall(SYS_kill, -pgrp, sig);
}

static void
setup(void)
{
	ts_record_open();
	memset(&sent, 0, sizeof(sent));
}

static void
teardown(void)
{
	ts_record_close();
}

/* /w, a function worker that records "stop" on SIGTERM and exits 0. */
static struct actord *
one_worker(void)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;
	struct actord *ad;

	c = ts_add_fn(&spec->root, "w", ts_fn_run, NULL);
	c->shutdown = LONG;
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert(ts_wait_state(ad, "/w", NS_RUNNING, WAIT));
	return ad;
}

static bool
stopped(struct actord *ad, void *arg)
{
	return ts_state(ad, arg) == NS_STOPPED;
}

/* Stop /w and wait for it; its SIGTERM handler recorded "stop". */
static void
stop_worker(struct actord *ad)
{
	ck_assert_int_eq(actord_stop_node(ad, "/w", NULL, NULL), 0);
	ck_assert_msg(ts_run_until(ad, stopped, "/w", WAIT), "/w is still "
	    "%d after %d ms (its shutdown timeout: %d ms)",
	    (int)ts_state(ad, "/w"), WAIT, LONG);
	ck_assert_int_eq(ts_record_count("stop /w"), 1);
}

/* The order: a SIGCONT, then the SIGTERM, and no SIGCONT after it. */
START_TEST(sigcont_comes_before_sigterm)
{
	struct actord *ad = one_worker();
	int i, term = -1, cont = -1, after = 0;

	sent.pgrp = ts_pid(ad, "/w");
	stop_worker(ad);
	for (i = 0; i < sent.n; i++) {
		if (sent.sig[i] == SIGTERM && term == -1)
			term = i;
		if (sent.sig[i] == SIGCONT && term == -1)
			cont = i;
		after += sent.sig[i] == SIGCONT && term != -1;
	}
	ck_assert_msg(term != -1, "no SIGTERM sent (%d signals)", sent.n);
	ck_assert_msg(cont != -1 && cont < term, "SIGCONT at %d, SIGTERM at "
	    "%d: a stop asked for after the SIGTERM would be discarded",
	    cont, term);
	/* The group's SIGKILL once its leader is reaped may follow. */
	ck_assert_msg(after == 0, "%d SIGCONT after the SIGTERM", after);
	actord_free(ad);
}
END_TEST

/* A worker stopped (SIGSTOP) when told to stop still hears its SIGTERM. */
START_TEST(a_stopped_worker_hears_sigterm)
{
	struct actord *ad = one_worker();
	pid_t pid = ts_pid(ad, "/w");
	int i;

	ck_assert_int_eq(kill(pid, SIGSTOP), 0);
	for (i = 0; i < WAIT && tcheck_proc_state(pid) != 'T'; i += 5)
		ts_sleep_ms(5);
	ck_assert_msg(tcheck_proc_state(pid) == 'T', "pid %d not stopped: %c",
	    (int)pid, tcheck_proc_state(pid));
	stop_worker(ad);
	actord_free(ad);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("sup_stop");
	TCase *tc = tcase_create("stop");

	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, sigcont_comes_before_sigterm);
	tcase_add_test(tc, a_stopped_worker_hears_sigterm);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
