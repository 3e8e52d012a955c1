/*
 * check_sup_otp.c: the cases of issue 12 where actord and OTP's
 * supervisor.erl disagreed, each rebuilt with real (function and exec)
 * children: tree edits while a supervisor is in the middle of a boot or a
 * restart, retries of a failed restart under rest_for_one, stop and
 * start during a restart loop, temporary children and supervisors, a
 * failed add, and what RESTARTS and LAST EXIT say of a set restart; and
 * the core's bugs the simulator (check_sup_sim.c) found, with their seed.
 *
 * Children append "start /path" and "stop /path" to a record file, so the
 * order of events is read back from the file, never from timings.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"

#define WAIT	10000		/* ms: a bound, never an expectation */

static volatile sig_atomic_t go;

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

static void
on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

/* Records its start, and is ready only once it gets SIGUSR1. */
static int
fn_ready_on_usr1(void *arg)
{
	sigset_t none;

	(void)arg;
	sigemptyset(&none);
	signal(SIGUSR1, on_usr1);
	ts_record("start");
	while (!go)
		sigsuspend(&none);
	ts_ready();
	for (;;)
		pause();
	return 0;
}

static bool
restarts_at_least(struct actord *ad, void *arg)
{
	const char **want = arg;
	struct node *n = actord_find(ad, want[0]);

	return n != NULL && n->restarts >= (uint64_t)atoi(want[1]);
}

static bool
recorded(struct actord *ad, void *arg)
{
	(void)ad;
	return ts_record_count(arg) > 0;
}

static bool
gone(struct actord *ad, void *arg)
{
	return actord_find(ad, arg) == NULL;
}

struct done_rec {
	int	 calls;
	int	 error;
	char	 msg[256];
};

static void
on_done(void *arg, int error, const char *msg)
{
	struct done_rec *d = arg;

	d->calls++;
	d->error = error;
	snprintf(d->msg, sizeof(d->msg), "%s", msg != NULL ? msg : "");
}

static bool
done_called(struct actord *ad, void *arg)
{
	(void)ad;
	return ((struct done_rec *)arg)->calls > 0;
}

static char *
temp_dir(void)
{
	static char dir[64];

	snprintf(dir, sizeof(dir), "/tmp/ts-otp-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	return dir;
}

/*
 * Item 1: a child stopped and removed by hand while its supervisor still
 * boots (a later sibling not ready yet) leaves the boot going: the next
 * sibling starts when the slow one is ready, and the root runs.
 */
START_TEST(remove_during_boot_keeps_the_boot_going)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;
	spec->root.intensity = 100;
	spec->root.backoff_min = spec->root.backoff_max = 600000;
	ts_add_fn(&spec->root, "a", ts_fn_crash_later, (void *)(intptr_t)1);
	ts_add_fn(&spec->root, "b", fn_ready_on_usr1, NULL);
	ts_add_fn(&spec->root, "c", ts_fn_run, NULL);
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert(ts_wait_state(ad, "/a", NS_RESTARTING, WAIT));
	/* b is waiting for SIGUSR1 once it recorded its start. */
	ck_assert(ts_run_sliced(ad, recorded, "start /b", WAIT));
	ck_assert_int_eq(ts_state(ad, "/b"), NS_STARTING);
	ck_assert_int_eq(actord_stop_node(ad, "/a", NULL, NULL), 0);
	ck_assert_int_eq(ts_state(ad, "/a"), NS_STOPPED);
	ck_assert_int_eq(actord_remove_node(ad, "/a"), 0);
	ck_assert_ptr_null(actord_find(ad, "/a"));
	ck_assert_int_eq(kill(ts_pid(ad, "/b"), SIGUSR1), 0);
	ck_assert_msg(ts_wait_state(ad, "/", NS_RUNNING, WAIT),
	    "the boot hung: /c is %s", node_state_name(ts_state(ad, "/c")));
	ck_assert_int_eq(ts_state(ad, "/c"), NS_RUNNING);
	ck_assert(ad->booted);
	actord_free(ad);
}
END_TEST

static struct actord_spec *
xyz_spec(bool reordered)
{
	struct actord_spec *spec = ts_spec();
	struct sup_spec *s;

	spec->root.intensity = 100;
	s = ts_add_sup(&spec->root, "s", STRATEGY_REST_FOR_ONE);
	s->intensity = 100;
	s->backoff_min = 200;
	s->backoff_max = 300;
	if (reordered) {
		ts_add_fn(s, "z", ts_fn_run, NULL);
		ts_add_fn(s, "y", ts_fn_run, NULL);
		ts_add_fn(s, "x", ts_fn_run, NULL);
	} else {
		ts_add_fn(s, "x", ts_fn_run, NULL);
		ts_add_fn(s, "y", ts_fn_run, NULL);
		ts_add_fn(s, "z", ts_fn_run, NULL);
	}
	return spec;
}

static bool
all_running(struct actord *ad, void *arg)
{
	const char *const *p;

	for (p = arg; *p != NULL; p++)
		if (ts_state(ad, *p) != NS_RUNNING)
			return false;
	return true;
}

/*
 * Item 2: a reload that reorders the children of a rest_for_one
 * supervisor while it waits out the backoff of a set restart: the restart
 * completes, every child runs.
 */
START_TEST(reload_during_a_nested_restart)
{
	static const char *every[] = { "/s", "/s/x", "/s/y", "/s/z", NULL };
	struct actord *ad;
	char err[256];
	pid_t x;

	ad = ts_actord(xyz_spec(false));
	actord_boot(ad);
	ck_assert(ts_wait_state(ad, "/", NS_RUNNING, WAIT));
	x = ts_pid(ad, "/s/x");
	ck_assert_int_eq(kill(ts_pid(ad, "/s/y"), SIGKILL), 0);
	/* Stopped z, now waiting the backoff: y and z restarting. */
	ck_assert(ts_wait_state(ad, "/s/z", NS_RESTARTING, WAIT));
	ck_assert_int_eq(ts_state(ad, "/s/y"), NS_RESTARTING);
	ck_assert_int_eq(actord_reload(ad, xyz_spec(true), err, sizeof(err)),
	    0);
	ck_assert_msg(ts_run_until(ad, all_running, every, WAIT),
	    "wedged: y %s, z %s", node_state_name(ts_state(ad, "/s/y")),
	    node_state_name(ts_state(ad, "/s/z")));
	ck_assert_int_eq(ts_pid(ad, "/s/x"), x);
	ck_assert_str_eq(actord_find(ad, "/s")->kids[0]->name, "z");
	actord_free(ad);
}
END_TEST

/* c1 a function, c2 an exec child in dir, c3 a function. */
static struct actord_spec *
failing_restart_spec(enum strategy strat, const char *dir)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;

	spec->root.strategy = strat;
	spec->root.intensity = 1000;
	spec->root.backoff_min = 1;
	spec->root.backoff_max = 2;
	ts_add_fn(&spec->root, "c1", ts_fn_run, NULL);
	c = ts_add_exec(&spec->root, "c2", ts_progs("tworker"), "run", NULL);
	c->cwd = strdup(dir);
	ts_add_fn(&spec->root, "c3", ts_fn_run, NULL);
	return spec;
}

/*
 * Item 3 (OTP's restarting_started_child): under rest_for_one, c1 dies
 * and c2 then fails to start; each retry restarts c2 onward only, and c1
 * keeps the pid of its one restart.
 */
START_TEST(rest_for_one_retries_from_the_failed_child)
{
	const char *want[2] = { "/c2", "4" };
	struct actord *ad;
	char *dir = temp_dir();
	pid_t c1;

	ad = ts_actord(failing_restart_spec(STRATEGY_REST_FOR_ONE, dir));
	actord_boot(ad);
	ck_assert(ts_wait_state(ad, "/", NS_RUNNING, WAIT));
	ck_assert_int_eq(rmdir(dir), 0);
	c1 = ts_pid(ad, "/c1");
	ck_assert_int_eq(kill(c1, SIGKILL), 0);
	ck_assert(ts_run_until(ad, restarts_at_least, want, WAIT));
	ck_assert_msg(ts_record_count("start /c1") == 2,
	    "c1 cycled by the retries of c2: %s", ts_record_read());
	ck_assert_int_eq(ts_record_count("stop /c1"), 0);
	ck_assert_ptr_nonnull(strstr(actord_find(ad, "/c2")->last_exit,
	    "chdir"));
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	ck_assert(ts_wait_state(ad, "/c3", NS_RUNNING, WAIT));
	ck_assert_int_eq(ts_record_count("start /c1"), 2);
	ck_assert_int_eq(rmdir(dir), 0);
	actord_free(ad);
}
END_TEST

/* Item 4: stop ends a restart loop under rest_for_one and one_for_all. */
static void
stop_ends_loop(enum strategy strat)
{
	const char *want[2] = { "/c2", "3" };
	struct done_rec d = { 0, -1, "" };
	struct actord *ad;
	char *dir = temp_dir();
	uint64_t n;

	ad = ts_actord(failing_restart_spec(strat, dir));
	actord_boot(ad);
	ck_assert(ts_wait_state(ad, "/", NS_RUNNING, WAIT));
	ck_assert_int_eq(rmdir(dir), 0);
	ck_assert_int_eq(kill(ts_pid(ad, "/c1"), SIGKILL), 0);
	ck_assert(ts_run_until(ad, restarts_at_least, want, WAIT));
	ck_assert_int_eq(actord_stop_node(ad, "/c2", on_done, &d), 0);
	ck_assert(ts_run_until(ad, done_called, &d, WAIT));
	ck_assert_int_eq(d.error, 0);
	ck_assert(ts_wait_state(ad, "/c3", NS_RUNNING, WAIT));
	n = actord_find(ad, "/c2")->restarts;
	ts_run_for(ad, 100);	/* many backoffs: nothing may happen */
	ck_assert_int_eq(ts_state(ad, "/c2"), NS_STOPPED);
	ck_assert_uint_eq(actord_find(ad, "/c2")->restarts, n);
	ck_assert_int_eq(ts_state(ad, "/c1"), NS_RUNNING);
	ck_assert_int_eq(ts_state(ad, "/"), NS_RUNNING);
	actord_free(ad);
}

START_TEST(stop_ends_a_rest_for_one_restart_loop)
{
	stop_ends_loop(STRATEGY_REST_FOR_ONE);
}
END_TEST

START_TEST(stop_ends_a_one_for_all_restart_loop)
{
	stop_ends_loop(STRATEGY_ONE_FOR_ALL);
}
END_TEST

/*
 * Item 5: start and remove of a child in a restart loop answer
 * "restarting", whether it is waiting out its backoff or in a start.
 */
START_TEST(start_and_remove_in_a_loop_say_restarting)
{
	const char *want[2] = { "/c2", "2" };
	struct actord *ad;
	char *dir = temp_dir(), text[128];
	int e;

	ad = ts_actord(failing_restart_spec(STRATEGY_REST_FOR_ONE, dir));
	actord_boot(ad);
	ck_assert(ts_wait_state(ad, "/", NS_RUNNING, WAIT));
	ck_assert_int_eq(rmdir(dir), 0);
	ck_assert_int_eq(kill(ts_pid(ad, "/c1"), SIGKILL), 0);
	ck_assert(ts_run_until(ad, restarts_at_least, want, WAIT));
	e = actord_start_node(ad, "/c2", NULL, NULL);
	ck_assert_str_eq(actord_strerror(e, actord_find(ad, "/c2"), text,
	    sizeof(text)), "restarting");
	e = actord_remove_node(ad, "/c2");
	ck_assert_str_eq(actord_strerror(e, actord_find(ad, "/c2"), text,
	    sizeof(text)), "restarting (stop it first)");
	ck_assert_ptr_nonnull(actord_find(ad, "/c2"));
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	ck_assert(ts_wait_state(ad, "/c3", NS_RUNNING, WAIT));
	ck_assert_int_eq(rmdir(dir), 0);
	actord_free(ad);
}
END_TEST

/* Item 6: OTP deletes a temporary child's spec on terminate_child. */
START_TEST(stopped_temporary_child_is_gone)
{
	struct actord_spec *spec = ts_spec();
	struct done_rec d = { 0, -1, "" };
	struct actord *ad;

	ts_add_fn(&spec->root, "a", ts_fn_run, NULL);
	ts_add_fn(&spec->root, "t", ts_fn_run, NULL)->restart =
	    RESTART_TEMPORARY;
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert(ts_wait_state(ad, "/", NS_RUNNING, WAIT));
	ck_assert_int_eq(actord_stop_node(ad, "/t", on_done, &d), 0);
	ck_assert(ts_run_until(ad, done_called, &d, WAIT));
	ck_assert_int_eq(d.error, 0);
	ck_assert_int_eq(ts_record_count("stop /t"), 1);
	ck_assert_ptr_null(actord_find(ad, "/t"));
	ck_assert_int_eq(actord_start_node(ad, "/t", NULL, NULL), ENOENT);
	actord_free(ad);
}
END_TEST

/* Item 7: an add whose start fails leaves no node behind. */
START_TEST(failed_add_adds_nothing)
{
	struct actord_spec *spec = ts_spec();
	struct done_rec d = { 0, -1, "" };
	struct child_spec *c;
	struct actord *ad;
	char *dir = temp_dir(), path[64];

	c = ts_add_exec(&spec->root, "g", ts_progs("tworker"), "run", NULL);
	c->instances = 1;
	c->cwd = strdup(dir);
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert(ts_wait_state(ad, "/", NS_RUNNING, WAIT));
	ck_assert_int_eq(rmdir(dir), 0);
	ck_assert_int_eq(actord_add_instance(ad, "/g", on_done, &d, path,
	    sizeof(path)), 0);
	ck_assert_str_eq(path, "/g/1");
	ck_assert(ts_run_until(ad, done_called, &d, WAIT));
	ck_assert_int_eq(d.error, EIO);
	ck_assert_ptr_nonnull(strstr(d.msg, "chdir"));
	ck_assert_ptr_null(actord_find(ad, "/g/1"));
	ck_assert_uint_eq(actord_find(ad, "/g")->nkids, 1);
	ck_assert_int_eq(ts_state(ad, "/g/0"), NS_RUNNING);
	actord_free(ad);
}
END_TEST

/* Item 8: a temporary supervisor that gives up is removed, not restarted. */
START_TEST(temporary_supervisor_giving_up_is_removed)
{
	struct actord_spec *spec = ts_spec();
	struct sup_spec *mid;
	struct actord *ad;

	spec->root.intensity = 100;
	ts_add_fn(&spec->root, "a", ts_fn_run, NULL);
	mid = ts_add_sup(&spec->root, "mid", STRATEGY_ONE_FOR_ONE);
	mid->intensity = 0;		/* gives up at the first death */
	ts_add_fn(mid, "w", ts_fn_crash_later, (void *)(intptr_t)5);
	spec->root.children[1].restart = RESTART_TEMPORARY;
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert_msg(ts_run_until(ad, gone, "/mid", WAIT),
	    "/mid is still there: %s", ts_record_read());
	ts_run_for(ad, 50);
	ck_assert_int_eq(ts_record_count("start /mid/w"), 1);
	ck_assert_int_eq(ts_state(ad, "/"), NS_RUNNING);
	ck_assert_int_eq(ts_state(ad, "/a"), NS_RUNNING);
	actord_free(ad);
}
END_TEST

/*
 * Issue 16, item 10: a one_for_all restart counts a restart for every
 * child it restarts, and LAST EXIT of a sibling names the cause.
 */
START_TEST(one_for_all_counts_every_sibling)
{
	struct actord_spec *spec = ts_spec();
	struct actord *ad;
	struct node *a, *b, *c;
	pid_t pa;

	spec->root.strategy = STRATEGY_ONE_FOR_ALL;
	ts_add_fn(&spec->root, "a", ts_fn_run, NULL);
	ts_add_fn(&spec->root, "b", ts_fn_run, NULL);
	ts_add_fn(&spec->root, "c", ts_fn_run, NULL);
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert(ts_wait_state(ad, "/", NS_RUNNING, WAIT));
	pa = ts_pid(ad, "/a");
	ck_assert_int_eq(kill(ts_pid(ad, "/b"), SIGKILL), 0);
	ck_assert(ts_wait_new_pid(ad, "/a", pa, WAIT));
	ck_assert(ts_wait_state(ad, "/c", NS_RUNNING, WAIT));
	a = actord_find(ad, "/a");
	b = actord_find(ad, "/b");
	c = actord_find(ad, "/c");
	ck_assert_uint_eq(a->restarts, 1);
	ck_assert_uint_eq(b->restarts, 1);
	ck_assert_uint_eq(c->restarts, 1);
	ck_assert_str_eq(b->last_exit, "killed by signal 9 (Killed)");
	ck_assert_str_eq(a->last_exit,
	    "sibling /b killed by signal 9 (Killed)");
	ck_assert_str_eq(c->last_exit,
	    "sibling /b killed by signal 9 (Killed)");
	/* Still one decision for the supervisor's intensity. */
	ck_assert_uint_eq(sup_decisions_in_period(ad->root), 1);
	actord_free(ad);
}
END_TEST

static bool
start_failing(struct actord *ad, void *arg)
{
	struct node *n = actord_find(ad, arg);

	return n != NULL && n->state == NS_STOPPING && n->start_failing;
}

/*
 * Simulator seed 9: a stop by hand while a start timeout's SIGKILL is on
 * its way (the boot's child m never said it was ready) completes once m
 * is down, and m stays down (failed, saying why): no boot failure, the
 * boot goes on without it.  The loop is not run between the kill and
 * the stop, so the death is not reaped before the stop is asked.
 */
START_TEST(stop_during_a_start_timeout_kill_completes)
{
	struct actord_spec *spec = ts_spec();
	struct done_rec d = { 0, -1, "" };
	struct actord *ad;

	ts_add_fn(&spec->root, "a", ts_fn_run, NULL);
	ts_add_fn(&spec->root, "m", ts_fn_mute, NULL)->start_timeout = 100;
	ts_add_fn(&spec->root, "c", ts_fn_run, NULL);
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert(ts_run_until(ad, start_failing, "/m", WAIT));
	ck_assert_int_eq(actord_stop_node(ad, "/m", on_done, &d), 0);
	ck_assert_msg(ts_run_until(ad, done_called, &d, WAIT),
	    "the stop never completed: /m %s, actord %s",
	    node_state_name(ts_state(ad, "/m")), ad->message);
	ck_assert_int_eq(d.error, 0);
	ck_assert(ts_wait_state(ad, "/", NS_RUNNING, WAIT));
	ck_assert_int_eq(ts_state(ad, "/c"), NS_RUNNING);
	ck_assert_int_eq(ts_state(ad, "/m"), NS_FAILED);
	ck_assert_str_eq(actord_find(ad, "/m")->last_exit,
	    "not ready within 100 ms");
	ck_assert_int_eq(ts_record_count("start /m"), 1);
	actord_free(ad);
}
END_TEST

/*
 * Simulator seed 523: a stop by hand of a supervisor that is giving up
 * (waiting for a child that ignores SIGTERM) completes when it is down,
 * and its parent does not restart it: the stop ends the loop, as OTP's
 * terminate_child does.
 */
START_TEST(stop_of_a_supervisor_giving_up_completes)
{
	struct actord_spec *spec = ts_spec();
	struct done_rec d = { 0, -1, "" };
	struct sup_spec *mid;
	struct actord *ad;
	struct node *m;

	spec->root.intensity = 100;
	mid = ts_add_sup(&spec->root, "mid", STRATEGY_ONE_FOR_ONE);
	mid->intensity = 0;		/* gives up at the first death */
	ts_add_fn(mid, "a", ts_fn_run, NULL);
	ts_add_fn(mid, "b", ts_fn_ignterm, NULL)->shutdown = 600000;
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert(ts_wait_state(ad, "/", NS_RUNNING, WAIT));
	ck_assert_int_eq(kill(ts_pid(ad, "/mid/a"), SIGKILL), 0);
	ck_assert(ts_wait_state(ad, "/mid", NS_STOPPING, WAIT));
	ck_assert_int_eq(actord_find(ad, "/mid")->plan.kind, PLAN_GIVEUP);
	ck_assert_int_eq(actord_stop_node(ad, "/mid", on_done, &d), 0);
	ck_assert_int_eq(kill(ts_pid(ad, "/mid/b"), SIGKILL), 0);
	ck_assert_msg(ts_run_until(ad, done_called, &d, WAIT),
	    "the stop never completed: /mid %s",
	    node_state_name(ts_state(ad, "/mid")));
	ck_assert_int_eq(d.error, 0);
	m = actord_find(ad, "/mid");
	ck_assert_int_eq(m->state, NS_FAILED);
	ck_assert_ptr_nonnull(strstr(m->last_exit, "gave up"));
	ck_assert(!timer_pending(&m->backoff));
	ck_assert_uint_eq(sup_decisions_in_period(ad->root), 0);
	ck_assert_int_eq(ts_record_count("start /mid/a"), 1);
	actord_free(ad);
}
END_TEST

static struct actord_spec *
temp_spec(void)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *t;

	ts_add_fn(&spec->root, "a", ts_fn_run, NULL);
	t = ts_add_fn(&spec->root, "t", ts_fn_ignterm, NULL);
	t->restart = RESTART_TEMPORARY;
	t->shutdown = 600000;
	return spec;
}

static size_t
named(struct node *s, const char *name)
{
	size_t i, n = 0;

	for (i = 0; i < s->nkids; i++)
		n += strcmp(s->kids[i]->name, name) == 0;
	return n;
}

/*
 * Simulator seed 158: a reload that still configures a child whose node
 * is on its way out (a temporary child stopped by hand, slow to stop)
 * makes no second node of that path: the new one takes the old one's
 * place once it is down, and starts.
 */
START_TEST(reload_keeps_one_node_per_path)
{
	struct actord *ad;
	char err[256];
	pid_t t;

	ad = ts_actord(temp_spec());
	actord_boot(ad);
	ck_assert(ts_wait_state(ad, "/", NS_RUNNING, WAIT));
	t = ts_pid(ad, "/t");
	ck_assert_int_eq(actord_stop_node(ad, "/t", NULL, NULL), 0);
	ck_assert_int_eq(ts_state(ad, "/t"), NS_STOPPING);
	ck_assert_int_eq(actord_reload(ad, temp_spec(), err, sizeof(err)), 0);
	ck_assert_uint_eq(named(ad->root, "t"), 1);
	ck_assert_int_eq(ts_state(ad, "/t"), NS_STOPPING);
	ck_assert_int_eq(kill(t, SIGKILL), 0);
	ck_assert(ts_wait_new_pid(ad, "/t", t, WAIT));
	ck_assert_uint_eq(named(ad->root, "t"), 1);
	ck_assert_int_eq(ts_record_count("start /t"), 2);
	actord_free(ad);
}
END_TEST

static struct actord_spec *
slow_spec(bool with_a)
{
	struct actord_spec *spec = ts_spec();
	struct child_spec *c;

	if (with_a)
		ts_add_fn(&spec->root, "a", ts_fn_ignterm, NULL)->shutdown =
		    600000;
	c = ts_add_fn(&spec->root, "g", ts_fn_ignterm, NULL);
	c->instances = 1;
	c->shutdown = 600000;
	return spec;
}

/*
 * actorctl(8)'s words for a call that cannot start anything now: an add
 * to a group being stopped says its supervisor (the group) is stopping,
 * not that it is not running; a restart of a child that a reload is
 * taking away says so.
 */
START_TEST(refusals_say_why)
{
	struct actord *ad;
	struct node *g;
	char err[256], text[128], path[64];
	pid_t a, g0;
	int e;

	ad = ts_actord(slow_spec(true));
	actord_boot(ad);
	ck_assert(ts_wait_state(ad, "/", NS_RUNNING, WAIT));
	a = ts_pid(ad, "/a");
	g0 = ts_pid(ad, "/g/0");
	ck_assert_int_eq(actord_stop_node(ad, "/g", NULL, NULL), 0);
	g = actord_find(ad, "/g");
	ck_assert_int_eq(g->state, NS_STOPPING);
	e = actord_add_instance(ad, "/g", NULL, NULL, path, sizeof(path));
	ck_assert_int_eq(e, EAGAIN);
	ck_assert_str_eq(actord_strerror(e, g, text, sizeof(text)),
	    "its supervisor is stopping");
	ck_assert_int_eq(actord_reload(ad, slow_spec(false), err, sizeof(err)),
	    0);
	ck_assert_int_eq(ts_state(ad, "/a"), NS_STOPPING);
	e = actord_restart_node(ad, "/a", NULL, NULL);
	ck_assert_int_eq(e, EAGAIN);
	ck_assert_str_eq(actord_strerror(e, actord_find(ad, "/a"), text,
	    sizeof(text)), "removed from the configuration");
	ck_assert_int_eq(kill(a, SIGKILL), 0);
	ck_assert_int_eq(kill(g0, SIGKILL), 0);
	ck_assert(ts_run_until(ad, gone, "/a", WAIT));
	ck_assert(ts_wait_state(ad, "/g", NS_STOPPED, WAIT));
	actord_free(ad);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("sup_otp");
	TCase *tc;

	tc = tcase_create("edits");
	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, remove_during_boot_keeps_the_boot_going);
	tcase_add_test(tc, reload_during_a_nested_restart);
	tcase_add_test(tc, stopped_temporary_child_is_gone);
	tcase_add_test(tc, failed_add_adds_nothing);
	tcase_add_test(tc, refusals_say_why);
	suite_add_tcase(s, tc);

	tc = tcase_create("loops");
	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, rest_for_one_retries_from_the_failed_child);
	tcase_add_test(tc, stop_ends_a_rest_for_one_restart_loop);
	tcase_add_test(tc, stop_ends_a_one_for_all_restart_loop);
	tcase_add_test(tc, start_and_remove_in_a_loop_say_restarting);
	tcase_add_test(tc, temporary_supervisor_giving_up_is_removed);
	tcase_add_test(tc, one_for_all_counts_every_sibling);
	suite_add_tcase(s, tc);

	tc = tcase_create("sim");
	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, stop_during_a_start_timeout_kill_completes);
	tcase_add_test(tc, stop_of_a_supervisor_giving_up_completes);
	tcase_add_test(tc, reload_keeps_one_node_per_path);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
