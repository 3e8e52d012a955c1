/*
 * check_adv_ops.c: an adversary's pass over the operator's commands at
 * the worst moment.  The supervision core runs in this process (function
 * children it forks itself, tests/lib/tsup.c), and a schedule drawn from a
 * seed calls the API that actorctl's commands reach (start, stop,
 * restart, kill, add, remove, reload) on every node, while the tree is in
 * a restart storm, a one_for_all restart of children slow to stop, an
 * escalation, or its ordered shutdown, with children killed by real
 * signals in between.  What must hold, whatever the order:
 *
 *   - every call returns (0 or an errno), and one that returned 0 has its
 *     completion called exactly once, by the end of the shutdown at the
 *     latest: an operation never left hanging (actorctl would wait for
 *     ever), never completed twice;
 *   - the ordered shutdown ends (actord done) within its bound;
 *   - no child is left: once actord is done, this process has no child
 *     process at all (every one it forked was reaped);
 *   - nothing crashes (run under SAN=1 too).
 *
 * Each seed is printed; ADV_OPS_SEED replays one, ADV_OPS_VERBOSE lists
 * every call and how it completed.
 */
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/spec.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"

#define WAIT		20000	/* ms: a bound, never an expectation */
#define MAXOPS		400	/* calls per seed */
#define SEEDS		6

static const char *const paths[] = {
	"/", "/a", "/s1", "/s1/x", "/s1/y", "/s1/z", "/s2", "/s2/p",
	"/s2/q", "/s2/in", "/s2/in/m", "/g", "/g/0", "/g/1", "/g/2", "/g/3",
	"/nope", "/s1/nope"
};
#define NPATHS	(sizeof(paths) / sizeof(paths[0]))

struct op {
	int		 calls;		/* completions seen */
	int		 error;
	char		 what[48];
};

static struct op ops[MAXOPS];
static unsigned	 nops;
static uint64_t	 rnd_state;

static uint64_t
rnd(void)
{
	return tcheck_rnd(&rnd_state);
}

static void
on_done(void *arg, int error, const char *msg)
{
	struct op *o = arg;

	(void)msg;
	o->calls++;
	o->error = error;
}

/*
 * The tree under attack: a worker; a one_for_all supervisor of children
 * slow to stop (one ignores SIGTERM) and one that crashes soon after it
 * starts, with a low intensity (a storm that escalates); a rest_for_one
 * supervisor with a nested one; a group of instances.  variant 1 is the
 * configuration a reload swaps in: /a gone, /s1/z gone, /b new.
 */
static struct actord_spec *
tree(int variant)
{
	struct actord_spec *spec = ts_spec();
	struct sup_spec *s1, *s2, *in;
	struct child_spec *c;

	spec->shutdown_timeout = 3000;
	spec->root.intensity = 1000;
	spec->root.period = 1;
	spec->root.backoff_max = 5;
	if (variant == 0)
		ts_add_fn(&spec->root, "a", ts_fn_run, NULL);
	s1 = ts_add_sup(&spec->root, "s1", STRATEGY_ONE_FOR_ALL);
	s1->intensity = 3;
	s1->period = 1;
	ts_add_fn(s1, "x", ts_fn_slowstop, NULL);
	c = ts_add_fn(s1, "y", ts_fn_ignterm, NULL);
	c->shutdown = 50;
	if (variant == 0)
		ts_add_fn(s1, "z", ts_fn_crash_later, (void *)(intptr_t)40);
	s2 = ts_add_sup(&spec->root, "s2", STRATEGY_REST_FOR_ONE);
	ts_add_fn(s2, "p", ts_fn_run, NULL);
	ts_add_fn(s2, "q", ts_fn_slowstop, NULL);
	in = ts_add_sup(s2, "in", STRATEGY_ONE_FOR_ONE);
	ts_add_fn(in, "m", ts_fn_run, NULL)->restart = RESTART_TRANSIENT;
	ts_add_fn(&spec->root, "g", ts_fn_run, NULL)->instances = 2;
	if (variant == 1)
		ts_add_fn(&spec->root, "b", ts_fn_slowstop, NULL);
	return spec;
}

/* A completion slot for one call, noted by what it was. */
static struct op *
op_new(const char *verb, const char *path)
{
	struct op *o = &ops[nops++];

	memset(o, 0, sizeof(*o));
	snprintf(o->what, sizeof(o->what), "%s %s", verb, path);
	return o;
}

/* A call the API refused at once: its completion is never owed. */
static void
refused(struct op *o, int rc)
{
	ck_assert_msg(rc > 0, "%s returned %d", o->what, rc);
	o->calls = -1;
}

/* One step of the schedule: an operator's command, a signal, or time. */
static void
step(struct actord *ad)
{
	const char *path = paths[rnd() % NPATHS];
	struct actord_spec *spec;
	struct op *o;
	char err[256], added[64];
	unsigned sent;
	pid_t pid;
	int rc;

	switch (rnd() % 11) {
	case 0:
		o = op_new("start", path);
		if ((rc = actord_start_node(ad, path, on_done, o)) != 0)
			refused(o, rc);
		break;
	case 1:
		o = op_new("stop", path);
		if ((rc = actord_stop_node(ad, path, on_done, o)) != 0)
			refused(o, rc);
		break;
	case 2:
		o = op_new("restart", path);
		if ((rc = actord_restart_node(ad, path, on_done, o)) != 0)
			refused(o, rc);
		break;
	case 3:
		o = op_new("add", "/g");
		if ((rc = actord_add_instance(ad, "/g", on_done, o, added,
		    sizeof(added))) != 0)
			refused(o, rc);
		break;
	case 4:
		(void)actord_remove_node(ad, path);
		break;
	case 5:
		(void)actord_kill_node(ad, path, rnd() % 2 ? SIGKILL : SIGTERM,
		    &sent);
		break;
	case 6:
		spec = tree((int)(rnd() % 2));
		if (actord_reload(ad, spec, err, sizeof(err)) != 0)
			spec_free(spec);
		break;
	case 7:
		if ((pid = ts_pid(ad, path)) > 0)
			(void)kill(pid, SIGKILL);
		break;
	default:
		ts_run_for(ad, (int)(rnd() % 40));
		break;
	}
}

/* The first child process this process has (its /proc list), or -1. */
static pid_t
child_left(char *cmd, size_t len)
{
	char	 path[64];
	FILE	*f;
	long	 pid = -1;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children",
	    (int)getpid());
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	if (fscanf(f, "%ld", &pid) != 1)
		pid = -1;
	fclose(f);
	cmd[0] = '\0';
	if (pid > 0) {
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if ((f = fopen(path, "r")) != NULL) {
			if (fgets(cmd, (int)len, f) == NULL)
				cmd[0] = '\0';
			fclose(f);
		}
	}
	return (pid_t)pid;
}

static void
one_seed(unsigned long seed, bool shutdown_mid)
{
	struct actord *ad;
	unsigned i, k, n;
	char cmd[256];
	pid_t left;

	fprintf(stderr, "adv_ops: seed %lu%s\n", seed, shutdown_mid ?
	    " (shutdown mid-schedule)" : "");
	rnd_state = 0x9e3779b97f4a7c15ULL * (seed + 1);
	nops = 0;
	ad = ts_actord(tree(0));
	actord_boot(ad);
	n = 40 + (unsigned)(rnd() % (MAXOPS / 4 - 40));
	k = shutdown_mid ? (unsigned)(rnd() % n) : n;
	for (i = 0; i < n && nops < MAXOPS - 1; i++) {
		if (i == k)
			actord_shutdown(ad);
		step(ad);
	}
	if (!ad->shutting_down)
		actord_shutdown(ad);
	ck_assert_msg(ts_wait_done(ad, WAIT), "seed %lu: the shutdown never "
	    "ended", seed);
	for (i = 0; i < nops; i++)
		ck_assert_msg(ops[i].calls == -1 || ops[i].calls == 1,
		    "seed %lu: op %u (%s) completed %d times", seed, i,
		    ops[i].what, ops[i].calls);
	if (getenv("ADV_OPS_VERBOSE") != NULL)
		for (i = 0; i < nops; i++)
			fprintf(stderr, "  %s: %d %d\n", ops[i].what,
			    ops[i].calls, ops[i].error);
	actord_free(ad);
	ck_assert_msg((left = child_left(cmd, sizeof(cmd))) == -1, "seed %lu: "
	    "a child is left: %s", seed, cmd);
}

static unsigned long
seed_base(void)
{
	const char *s = getenv("ADV_OPS_SEED");

	return s != NULL ? strtoul(s, NULL, 10) : (unsigned long)time(NULL);
}

START_TEST(operator_at_worst_moment)
{
	unsigned long base = seed_base();
	unsigned i;

	for (i = 0; i < (getenv("ADV_OPS_SEED") != NULL ? 1u : SEEDS); i++)
		one_seed(base + i, false);
}
END_TEST

START_TEST(operator_during_shutdown)
{
	unsigned long base = seed_base();
	unsigned i;

	for (i = 0; i < (getenv("ADV_OPS_SEED") != NULL ? 1u : SEEDS); i++)
		one_seed(base + i, true);
}
END_TEST

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

static Suite *
adv_ops_suite(void)
{
	Suite	*s = suite_create("adv_ops");
	TCase	*tc = tcase_create("ops");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, operator_at_worst_moment);
	tcase_add_test(tc, operator_during_shutdown);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(adv_ops_suite());
}
