/*
 * check_adv_e2e.c: the repair at a consumer's reap, end to end.  A real
 * actord runs an echo actor /v (tests/progs/actor_echo, 16 cells) and a
 * hostile worker /liar (tests/progs/liar), which, asked, writes seeded
 * plausible lies into /v's mailbox while /v runs (tests/lib/tlies.h:
 * ends, cells, turn queue, line notes, words of the control block).
 * Then /v is SIGKILLed: actord reaps it, repairs its mailbox and starts
 * it again, and /v must answer more asks in a row than its lane has
 * cells.  A lane left as a lie wrote it would refuse them ("mailbox
 * full") or lose them (no answer).  A check_e2e_hostile run once saw
 * that after its random scribbler was stopped; this one replays the
 * lies one seed at a time ($ADV_E2E_SEED: the first), each failure
 * naming its seed.
 *
 * Every wait is bounded; actord is killed by pid at teardown.
 */
#include <sys/wait.h>

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/ctltest.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"

#define WAIT		10000	/* ms: a bound, never an expectation */
#define ROUNDS		24
#define ASKS		20	/* more than /v's 16 cells */
#define ASK_T		"3000"
#define RUN(o, ...)	ctltest_actorctl(&srv, NULL, o, __VA_ARGS__, (char *)NULL)

static struct ts_daemon	 d;
static struct ctltest_server srv;	/* only .sock is used */

/* ask path tag 1 data: answered with want, or the test fails. */
static void
ask_is(const char *path, const char *data, const char *want,
    unsigned long seed)
{
	struct ctltest_out o;

	RUN(&o, "ask", "-t", ASK_T, path, "1", data);
	ck_assert_msg(o.status == 0 && o.outlen == strlen(want) &&
	    memcmp(o.out, want, o.outlen) == 0, "seed %lu: ask %s %s: status "
	    "%d, answer \"%s\", error \"%s\"\nactord's log:\n%s", seed, path,
	    data, o.status, o.out, o.err, ts_daemon_log(&d));
	ctltest_out_free(&o);
}

/* SIGKILL /v and wait until it runs again. */
static void
restart_v(void)
{
	struct ctltest_out o;
	pid_t old;

	old = (pid_t)ctltest_node_num(&srv, "/v", "pid");
	ck_assert_int_gt(old, 0);
	RUN(&o, "kill", "-s", "KILL", "/v");
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	ck_assert_msg(ctltest_wait_new_pid(&srv, "/v", old, WAIT) > 0,
	    "/v did not come back: %s", ts_daemon_log(&d));
}

/* Lines of actord's log that say mailbox path was repaired. */
static unsigned
repairs_logged(const char *path)
{
	char	 line[1024], want[64];
	unsigned n = 0;
	FILE	*f;

	snprintf(want, sizeof(want), " %s: mailbox repaired:", path);
	if ((f = fopen(d.log, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		n += strstr(line, want) != NULL;
	fclose(f);
	return n;
}

static void
setup(void)
{
	ts_daemon_init(&d);
	memset(&srv, 0, sizeof(srv));
}

static void
teardown(void)
{
	ts_daemon_cleanup(&d);
}

START_TEST(lies_repaired_at_reap)
{
	unsigned long base, seed;
	char	 lie[128], data[16];
	unsigned r, i;
	int	 st;

	base = getenv("ADV_E2E_SEED") != NULL ?
	    strtoul(getenv("ADV_E2E_SEED"), NULL, 10) :
	    (unsigned long)getpid();
	fprintf(stderr, "lies_repaired_at_reap: seeds from %lu\n", base);
	ts_daemon_conf(&d,
	    "shutdown_timeout = 3000;\n"
	    "supervisor = {\n"
	    "  intensity = 10000; period = 1; backoff_min = 1;\n"
	    "  backoff_max = 5;\n"
	    "  children = (\n"
	    "    { name = \"v\"; exec = [\"%s\"]; ready = \"actor\";\n"
	    "      mailbox = { capacity = 16; }; },\n"
	    "    { name = \"liar\"; exec = [\"%s\"]; ready = \"actor\"; }\n"
	    "  );\n"
	    "};\n", ts_progs("actor_echo"), ts_progs("liar"));
	ts_daemon_up(&d, WAIT, srv.sock, sizeof(srv.sock));
	for (r = 0; r < ROUNDS; r++) {
		seed = base + r;
		/* Its positions somewhere in a lap. */
		for (i = 0; i < seed % 7; i++)
			ask_is("/v", "warm", "warm", seed);
		snprintf(lie, sizeof(lie), "/v %lu %lu %lu", seed,
		    1 + seed % 8, seed % 3);
		ask_is("/liar", lie, "ok", seed);
		restart_v();
		for (i = 0; i < ASKS; i++) {
			snprintf(data, sizeof(data), "a%u", i);
			ask_is("/v", data, data, seed);
		}
		ck_assert_int_eq(waitpid(d.pid, &st, WNOHANG), 0);
	}
	/* The lies were such that repairs had work to do. */
	fprintf(stderr, "lies_repaired_at_reap: %u of %u reaps repaired /v\n",
	    repairs_logged("/v"), ROUNDS);
	ck_assert_uint_gt(repairs_logged("/v"), 0);
	ck_assert_int_eq(kill(d.pid, SIGTERM), 0);
	ck_assert_int_eq(ts_daemon_wait(&d, 3 * WAIT), 0);
}
END_TEST

static Suite *
adv_e2e_suite(void)
{
	Suite	*s = suite_create("adv_e2e");
	TCase	*tc = tcase_create("lies");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, lies_repaired_at_reap);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(adv_e2e_suite());
}
