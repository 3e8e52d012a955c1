/*
 * check_chaos.c: the tree stays up whatever happens at once.  A real
 * actord ($ACTORD_BUILD/actord) runs a tree of every strategy (one_for_one,
 * one_for_all ordered and parallel, rest_for_one, nested supervisors, a
 * group of instances, a worker that keeps crashing) of libactor actors
 * (tests/progs/actor_echo) and plain workers (tests/progs/tworker).  For
 * CHAOS_MS milliseconds (default 12,000; `make soak-chaos` runs minutes)
 * three forked agents, each with its own seeded random schedule, go at it
 * together through the control socket and with real signals:
 *
 *   signaller	SIGKILL, SIGTERM, SIGSTOP then SIGCONT, SIGKILL of the
 *		whole process group, of workers taken from status
 *   operator	stop, start, restart, kill, add, remove of random nodes,
 *		and reloads to one of three configurations (written
 *		whole, then renamed into place, as an operator's tool does)
 *   messenger	floods (an actor asked to tell another 1,000 messages back
 *		to back: a hot producer, which takes that mailbox's main
 *		lane, shm/express.c, while the others kill either end),
 *		asks (answered, never answered, crashing the actor with
 *		the message in hand) and tells to random actors
 *
 * What must hold: actord never exits; every request gets an answer (a
 * closed connection or a malformed answer is counted, and must be 0);
 * every answered ask carries its own payload back (never another's).
 * Then the chaos stops, the first configuration is reloaded (through the
 * second, so that /pool is rebuilt as the file has it), every node
 * stopped by hand is started, and the tree must converge: every node of
 * the first configuration running, every actor answering an ask.  Last,
 * SIGTERM: actord exits 0, and no worker it ever ran (each known by pid
 * and start time, so a reused pid is not mistaken for it) is left alive.
 *
 * CHAOS_SEED replays a schedule's random choices (the timing still
 * differs); the seed is printed first.  Every wait is bounded; every
 * process is stopped by pid.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/ctlproto.h"
#include "tests/lib/ctltest.h"
#include "tests/lib/tagent.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"

#define WAIT		30000	/* ms: a bound for anything, never expected */
#define NAGENTS		3
#define CONF_LEN	8192

enum agent { SIGNALLER, OPERATOR, MESSENGER };
static const char *const agent_name[NAGENTS] = {
	"signaller", "operator", "messenger"
};

/* What the agents report, in a page they share with the test. */

struct chaos_shared {
	atomic_int		 stop;
	atomic_uint		 actions[NAGENTS];
	atomic_uint		 unanswered[NAGENTS];	/* no answer, or garbage */
	atomic_uint		 asks_answered;
	atomic_uint		 wrong_answers;		/* another's payload */
	struct tagent_seen	 seen;
};

/* The test's one piece of state, shared with its forked agents. */
static struct {
	struct ts_daemon	 d;
	char			 sock[128];
	char			 conf[3][CONF_LEN];	/* the three trees */
	struct chaos_shared	*sh;
	uint64_t		 seed;
	pid_t			 agents[NAGENTS];
} chaos;

/* The actors of the first configuration: each answers tag 1 asks. */
static const char *const actors[] = {
	"/solo", "/pair/p", "/pair/c", "/chain/a", "/chain/c", "/par/x",
	"/par/y", "/par/z", "/pool/0", "/pool/1", "/pool/2",
	"/deep/inner/w",
};
#define NACTORS	(sizeof(actors) / sizeof(actors[0]))

/* Every node of the first configuration, each running once it converged. */
static const char *const nodes[] = {
	"/solo", "/pair", "/pair/p", "/pair/c", "/chain", "/chain/a",
	"/chain/b", "/chain/c", "/par", "/par/x", "/par/y", "/par/z", "/pool",
	"/pool/0", "/pool/1", "/pool/2", "/deep", "/deep/inner",
	"/deep/inner/w", "/deep/inner/t",
};
#define NNODES	(sizeof(nodes) / sizeof(nodes[0]))

/* --- the three configurations --------------------------------------------- */

/*
 * variant 0 is the tree the test converges back to; 1 drops /par,
 * reorders /pair, makes /chain one_for_all and grows /pool; 2 adds
 * /extra, makes /deep/inner one_for_one and shrinks /pool.  The
 * sub-supervisors give up easily (3 restarts in 5 s) and escalate; the
 * root never does, so actord itself stays up by its own rules.
 */
static void
conf_text(int variant, char *buf, size_t len)
{
	const char *echo = ts_progs("actor_echo"), *tw = ts_progs("tworker");
	char w[3][256];
	const char *pair[2];

	snprintf(w[0], sizeof(w[0]), "exec = [\"%s\"]; ready = \"actor\"; "
	    "mailbox = { capacity = 16; };", echo);
	snprintf(w[1], sizeof(w[1]), "exec = [\"%s\", \"run\"];", tw);
	snprintf(w[2], sizeof(w[2]), "exec = [\"%s\", \"crash\", \"150\"];",
	    tw);
	pair[0] = variant == 1 ? "c" : "p";
	pair[1] = variant == 1 ? "p" : "c";
	snprintf(buf, len,
	    "runtime_dir = \"%s/run\";\n"
	    "shutdown_timeout = 10000;\n"
	    "spare_mailboxes = 16;\n"
	    "supervisor = {\n"
	    " strategy = \"one_for_one\"; intensity = 10000; period = 1;\n"
	    " backoff_min = 0; backoff_max = 50;\n"
	    " children = (\n"
	    "  { name = \"solo\"; %s },\n"
	    "  { name = \"pair\"; supervisor = { strategy = \"one_for_all\";\n"
	    "    intensity = 3; period = 5; backoff_min = 0; backoff_max = 20;\n"
	    "    children = ( { name = \"%s\"; %s }, { name = \"%s\"; %s } );"
	    " }; },\n"
	    "  { name = \"chain\"; supervisor = { strategy = \"%s\";\n"
	    "    intensity = 3; period = 5; backoff_min = 0; backoff_max = 20;\n"
	    "    children = ( { name = \"a\"; %s }, { name = \"b\"; %s },\n"
	    "      { name = \"c\"; %s } ); }; },\n"
	    "%s"
	    "  { name = \"pool\"; instances = %d; %s },\n"
	    "  { name = \"deep\"; supervisor = { children = (\n"
	    "    { name = \"inner\"; supervisor = { strategy = \"%s\";\n"
	    "      intensity = 3; period = 5; backoff_min = 0; backoff_max = 20;\n"
	    "      children = (\n"
	    "      { name = \"w\"; %s }, { name = \"t\"; %s } ); }; } ); }; },\n"
	    "%s"
	    "  { name = \"flaky\"; %s }\n"
	    " );\n"
	    "};\n",
	    chaos.d.dir, w[0], pair[0], w[0], pair[1], w[0],
	    variant == 1 ? "one_for_all" : "rest_for_one", w[0], w[1], w[0],
	    variant == 1 ? "" :
	    "  { name = \"par\"; supervisor = { strategy = \"one_for_all\";\n"
	    "    start = \"parallel\"; intensity = 3; period = 5;\n"
	    "    backoff_min = 0; backoff_max = 20; children = (\n"
	    "    { name = \"x\"; ECHO }, { name = \"y\"; ECHO },\n"
	    "    { name = \"z\"; ECHO } ); }; },\n",
	    variant == 1 ? 5 : variant == 2 ? 2 : 3, w[0],
	    variant == 2 ? "one_for_one" : "rest_for_one", w[0], w[1],
	    variant == 2 ? "  { name = \"extra\"; ECHO },\n" : "", w[2]);
	/* ECHO: the actor's settings, where a literal could not hold them. */
	for (char *p; (p = strstr(buf, "ECHO")) != NULL;) {
		size_t tail = strlen(p + 4), wl = strlen(w[0]);

		ck_assert(strlen(buf) - 4 + wl < len);
		memmove(p + wl, p + 4, tail + 1);
		memcpy(p, w[0], wl);
	}
}

/* Written whole, then renamed: a reload never reads half a file. */
static void
conf_install(int variant)
{
	tagent_conf_install(&chaos.d, chaos.conf[variant]);
}

/* The end of actord's log, where a failure's story is. */
static const char *
log_tail(void)
{
	return tagent_log_tail(&chaos.d);
}

/* --- requests ------------------------------------------------------------- */

/*
 * One request; its answer in *r (the caller frees it).  -1 when actord
 * gave no answer or a malformed one: counted against the agent.
 */
static int
request(enum agent who, struct ctl_request *q, struct ctl_response *r)
{
	memset(r, 0, sizeof(*r));
	if (ctltest_request(chaos.sock, q, r) != 0) {
		atomic_fetch_add(&chaos.sh->unanswered[who], 1);
		return -1;
	}
	return 0;
}

static void
simple(enum agent who, uint16_t cmd, const char *path)
{
	struct ctl_request q;
	struct ctl_response r;

	memset(&q, 0, sizeof(q));
	q.cmd = cmd;
	if (path != NULL) {
		snprintf(q.path, sizeof(q.path), "%s", path);
		q.present = 1u << CTL_F_PATH;
	}
	if (request(who, &q, &r) == 0)
		ctl_response_free(&r);
}

/* The tree as status shows it; NULL when actord did not answer. */
static struct ctl_response *
status(enum agent who)
{
	static struct ctl_response r;
	struct ctl_request q;

	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_STATUS;
	if (request(who, &q, &r) != 0)
		return NULL;
	return &r;
}


/* Remember a worker's incarnation, for the check after the shutdown. */
static void
remember(pid_t pid)
{
	tagent_remember(&chaos.sh->seen, pid);
}




/* --- the agents ----------------------------------------------------------- */

static void
signal_one(unsigned *rnd)
{
	struct ctl_response *t = status(SIGNALLER);
	const struct ctl_node *n = tagent_pick(t, true, rnd);
	pid_t pid;

	if (n != NULL) {
		pid = n->pid;
		remember(pid);
		switch (rand_r(rnd) % 8) {
		case 0: case 1: case 2:
			kill(pid, SIGKILL);
			break;
		case 3:
			kill(pid, SIGTERM);
			break;
		case 4:
			kill(-pid, SIGKILL);	/* the worker's group */
			break;
		default:
			/* Stopped for a while, never for good. */
			kill(pid, SIGSTOP);
			tagent_nap(rnd, 60);
			kill(pid, SIGCONT);
			break;
		}
	}
	if (t != NULL)
		ctl_response_free(t);
}

static void
operate_one(unsigned *rnd)
{
	struct ctl_response *t = status(OPERATOR);
	const struct ctl_node *n = tagent_pick(t, false, rnd);
	struct ctl_request q;
	struct ctl_response r;
	char path[CTL_PATH_MAX];
	static const uint16_t cmds[] = {
		CTL_CMD_STOP, CTL_CMD_START, CTL_CMD_START, CTL_CMD_RESTART,
		CTL_CMD_KILL, CTL_CMD_ADD, CTL_CMD_REMOVE, CTL_CMD_RELOAD,
	};
	uint16_t cmd = cmds[(size_t)rand_r(rnd) % (sizeof(cmds) /
	    sizeof(cmds[0]))];

	snprintf(path, sizeof(path), "%s", n != NULL ? n->path : "/solo");
	if (t != NULL)
		ctl_response_free(t);
	memset(&q, 0, sizeof(q));
	q.cmd = cmd;
	switch (cmd) {
	case CTL_CMD_RELOAD:
		conf_install(rand_r(rnd) % 3);
		break;
	case CTL_CMD_ADD:
		snprintf(q.path, sizeof(q.path), "/pool");
		q.present = 1u << CTL_F_PATH;
		break;
	case CTL_CMD_KILL:
		snprintf(q.path, sizeof(q.path), "%s", path);
		q.signo = rand_r(rnd) % 2 ? SIGKILL : SIGTERM;
		q.tree = true;
		q.present = 1u << CTL_F_PATH | 1u << CTL_F_SIGNAL |
		    1u << CTL_F_TREE;
		break;
	default:
		snprintf(q.path, sizeof(q.path), "%s", path);
		q.present = 1u << CTL_F_PATH;
		break;
	}
	if (request(OPERATOR, &q, &r) == 0)
		ctl_response_free(&r);
}

/* An ask whose answer must be its own payload back. */
static void
ask_echo(enum agent who, const char *path, int timeout_ms, unsigned seq)
{
	struct ctl_request q;
	struct ctl_response r;
	char data[48];

	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_ASK;
	snprintf(q.path, sizeof(q.path), "%s", path);
	snprintf(data, sizeof(data), "%s#%u#%d", path, seq, (int)getpid());
	q.tag = 1;
	q.data = (const uint8_t *)data;
	q.datalen = (uint32_t)strlen(data);
	q.timeout_ms = (uint32_t)timeout_ms;
	q.present = 1u << CTL_F_PATH | 1u << CTL_F_TAG | 1u << CTL_F_DATA |
	    1u << CTL_F_TIMEOUT;
	if (request(who, &q, &r) != 0)
		return;
	if (r.status == CTL_OK) {
		atomic_fetch_add(&chaos.sh->asks_answered, 1);
		if (!r.has_data || r.datalen != q.datalen ||
		    memcmp(r.data, data, q.datalen) != 0)
			atomic_fetch_add(&chaos.sh->wrong_answers, 1);
	}
	ctl_response_free(&r);
}

/*
 * path tells another actor FLOOD messages back to back (actor_echo's tag
 * 41), answered when they went in (or failed: a lane full or a target
 * gone are counted by the actor, not here).
 */
#define FLOOD	1000

static void
flood(unsigned *rnd, const char *path)
{
	struct ctl_request q;
	struct ctl_response r;
	char data[64];

	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_ASK;
	snprintf(q.path, sizeof(q.path), "%s", path);
	snprintf(data, sizeof(data), "%s %d",
	    actors[(size_t)rand_r(rnd) % NACTORS], FLOOD);
	q.tag = 41;
	q.data = (const uint8_t *)data;
	q.datalen = (uint32_t)strlen(data);
	q.timeout_ms = 1000;
	q.present = 1u << CTL_F_PATH | 1u << CTL_F_TAG | 1u << CTL_F_DATA |
	    1u << CTL_F_TIMEOUT;
	if (request(MESSENGER, &q, &r) == 0)
		ctl_response_free(&r);
}

static void
message_one(unsigned *rnd, unsigned seq)
{
	const char *path = actors[(size_t)rand_r(rnd) % NACTORS];
	struct ctl_request q;
	struct ctl_response r;
	int what = rand_r(rnd) % 12;

	if (what >= 10) {
		flood(rnd, path);
		return;
	}
	if (what < 6) {
		ask_echo(MESSENGER, path, 300, seq);
		return;
	}
	memset(&q, 0, sizeof(q));
	snprintf(q.path, sizeof(q.path), "%s", path);
	q.present = 1u << CTL_F_PATH | 1u << CTL_F_TAG | 1u << CTL_F_TIMEOUT;
	q.timeout_ms = 50;
	if (what < 8) {
		q.cmd = CTL_CMD_SEND;	/* ignored by the actor */
		q.tag = 99;
	} else if (what == 8) {
		q.cmd = CTL_CMD_ASK;	/* never answered: times out */
		q.tag = 2;
	} else {
		q.cmd = CTL_CMD_SEND;	/* crashes it, the message in hand */
		q.tag = 3;
	}
	if (request(MESSENGER, &q, &r) == 0)
		ctl_response_free(&r);
}

static void
agent_run(enum agent who)
{
	unsigned rnd = (unsigned)(chaos.seed * 2654435761u) + who, seq = 0;

	while (!atomic_load(&chaos.sh->stop)) {
		switch (who) {
		case SIGNALLER:
			signal_one(&rnd);
			tagent_nap(&rnd, 25);
			break;
		case OPERATOR:
			operate_one(&rnd);
			tagent_nap(&rnd, 40);
			break;
		case MESSENGER:
			message_one(&rnd, seq++);
			tagent_nap(&rnd, 5);
			break;
		}
		atomic_fetch_add(&chaos.sh->actions[who], 1);
	}
}

/* A forked agent's life (tagent_fork). */
static void
agent_main(int who)
{
	agent_run((enum agent)who);
}

/* --- convergence ---------------------------------------------------------- */


/*
 * One pass: every stopped or failed node of the first configuration is
 * started (parents come first in status), every stopped worker continued.
 * True once every node is running.
 */
static bool
converge_step(char *why, size_t len)
{
	struct ctl_response *t = status(OPERATOR);
	const struct ctl_node *n;
	bool all = true;
	size_t i;

	if (t == NULL) {
		snprintf(why, len, "no status");
		return false;
	}
	for (i = 0; i < t->nnodes; i++)
		if (tagent_is_worker(&t->nodes[i]) && t->nodes[i].pid > 0) {
			remember(t->nodes[i].pid);
			kill(t->nodes[i].pid, SIGCONT);
		}
	for (i = 0; i < NNODES; i++) {
		n = tagent_find(t, nodes[i]);
		if (n != NULL && strcmp(n->state, "running") == 0 &&
		    (!tagent_is_worker(n) || n->pid > 0))
			continue;
		if (all)
			snprintf(why, len, "%s %s", nodes[i],
			    n == NULL ? "missing" : n->state);
		all = false;
		if (n != NULL && (strcmp(n->state, "stopped") == 0 ||
		    strcmp(n->state, "failed") == 0))
			simple(OPERATOR, CTL_CMD_START, nodes[i]);
	}
	ctl_response_free(t);
	return all;
}

static void
converge(void)
{
	char why[CTL_PATH_MAX + 64] = "";
	int waited;

	/*
	 * The instances added by hand go first: they may hold every spare
	 * mailbox, and a reload refuses new workers without one (seed
	 * 1796244719: /chain's removed workers never came back).  Then
	 * through another tree: a group keeps the instances added and
	 * removed by hand until its spec changes, so only a change rebuilds
	 * /pool as the first tree has it (/pool/0 to /pool/2).
	 */
	ck_assert_msg(tagent_trim_group(chaos.sock, "/pool", 3, WAIT),
	    "the instances added to /pool were not removed (seed %llu)",
	    (unsigned long long)chaos.seed);
	conf_install(1);
	simple(OPERATOR, CTL_CMD_RELOAD, NULL);
	conf_install(0);
	simple(OPERATOR, CTL_CMD_RELOAD, NULL);
	for (waited = 0; waited < WAIT; waited += 50) {
		if (converge_step(why, sizeof(why))) {
			printf("chaos: converged in %d ms\n", waited);
			return;
		}
		ts_sleep_ms(50);
	}
	fprintf(stderr, "actord's log ends:\n%s\n", log_tail());
	ck_abort_msg("the tree did not converge in %d ms (seed %llu): %s",
	    WAIT, (unsigned long long)chaos.seed, why);
}

/* Every actor answers its own ask, bounded retries for a late restart. */
static void
every_actor_answers(void)
{
	unsigned before, i;
	int tries;

	for (i = 0; i < NACTORS; i++) {
		before = atomic_load(&chaos.sh->asks_answered);
		for (tries = 0; tries < 100; tries++) {
			ask_echo(OPERATOR, actors[i], 1000, i);
			if (atomic_load(&chaos.sh->asks_answered) != before)
				break;
			ts_sleep_ms(50);
		}
		ck_assert_msg(atomic_load(&chaos.sh->asks_answered) != before,
		    "%s never answered after the chaos (seed %llu)",
		    actors[i], (unsigned long long)chaos.seed);
	}
}

/* After the shutdown: no incarnation seen is still alive. */
static void
nothing_left(void)
{
	unsigned n, left = tagent_seen_left(&chaos.sh->seen, &n);

	printf("chaos: %u worker incarnations seen, %u left\n", n, left);
	ck_assert_msg(left == 0, "%u of %u workers outlived actord", left, n);
}

/* --- the test ------------------------------------------------------------- */

static void
setup(void)
{
	const char *s = getenv("CHAOS_SEED");
	int i;

	memset(&chaos, 0, sizeof(chaos));
	ts_daemon_init(&chaos.d);
	chaos.sh = mmap(NULL, sizeof(*chaos.sh), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(chaos.sh, MAP_FAILED);
	chaos.seed = s != NULL ? strtoull(s, NULL, 10) :
	    (uint64_t)time(NULL) ^ (uint64_t)getpid();
	printf("chaos: seed %llu\n", (unsigned long long)chaos.seed);
	fflush(stdout);
	for (i = 0; i < 3; i++)
		conf_text(i, chaos.conf[i], sizeof(chaos.conf[i]));
}

static void
teardown(void)
{
	int i;

	for (i = 0; i < NAGENTS; i++)
		if (chaos.agents[i] > 0) {
			kill(chaos.agents[i], SIGKILL);
			waitpid(chaos.agents[i], NULL, 0);
		}
	ts_daemon_cleanup(&chaos.d);
	munmap(chaos.sh, sizeof(*chaos.sh));
}

static int
chaos_ms(void)
{
	const char *s = getenv("CHAOS_MS");

	return s != NULL && atoi(s) > 0 ? atoi(s) : 12000;
}

START_TEST(tree_stays_up_through_chaos)
{
	int i, waited, st, ms = chaos_ms();
	unsigned total = 0;

	conf_install(0);
	ts_daemon_up(&chaos.d, WAIT, chaos.sock, sizeof(chaos.sock));
	for (i = 0; i < NAGENTS; i++)
		chaos.agents[i] = tagent_fork(agent_main, i);
	for (waited = 0; waited < ms; waited += 20) {
		if (waitpid(chaos.d.pid, &st, WNOHANG) != 0) {
			fprintf(stderr, "actord's log ends:\n%s\n",
			    log_tail());
			ck_abort_msg("actord exited during the chaos (seed "
			    "%llu, status %#x)", (unsigned long long)chaos.seed,
			    st);
		}
		ts_sleep_ms(20);
	}
	atomic_store(&chaos.sh->stop, 1);
	for (i = 0; i < NAGENTS; i++) {
		ck_assert_msg(tagent_end(chaos.agents[i], WAIT), "the %s did not end",
		    agent_name[i]);
		chaos.agents[i] = 0;
		total += atomic_load(&chaos.sh->actions[i]);
		printf("chaos: %s: %u actions, %u without an answer\n",
		    agent_name[i], atomic_load(&chaos.sh->actions[i]),
		    atomic_load(&chaos.sh->unanswered[i]));
	}
	printf("chaos: %u asks answered, %u wrong\n",
	    atomic_load(&chaos.sh->asks_answered),
	    atomic_load(&chaos.sh->wrong_answers));
	fflush(stdout);
	/* It did something: a schedule that never acts proves nothing. */
	ck_assert_uint_gt(atomic_load(&chaos.sh->actions[SIGNALLER]), 20);
	ck_assert_uint_gt(atomic_load(&chaos.sh->actions[OPERATOR]), 20);
	ck_assert_uint_gt(atomic_load(&chaos.sh->asks_answered), 20);
	for (i = 0; i < NAGENTS; i++)
		ck_assert_msg(atomic_load(&chaos.sh->unanswered[i]) == 0,
		    "%u requests of the %s got no answer (seed %llu)",
		    atomic_load(&chaos.sh->unanswered[i]), agent_name[i],
		    (unsigned long long)chaos.seed);
	ck_assert_uint_eq(atomic_load(&chaos.sh->wrong_answers), 0);
	converge();
	every_actor_answers();
	(void)converge_step((char[8]){ 0 }, 8);	/* the last pids seen */
	kill(chaos.d.pid, SIGTERM);
	ck_assert_int_eq(ts_daemon_wait(&chaos.d, WAIT), 0);
	nothing_left();
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("chaos");
	TCase *tc = tcase_create("chaos");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, chaos_ms() / 1000 + 3 * WAIT / 1000 + 30);
	tcase_add_test(tc, tree_stays_up_through_chaos);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
