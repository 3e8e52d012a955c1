/*
 * bench_seeds.c: the seeds' table side by side (make bench-seeds).  Each
 * pattern the seeds measured in one Python process (shared/seeds,
 * README.md there), measured here across processes, in one run:
 *
 *   mailbox	put + get of one 64-byte message, one process (shm_send,
 *		shm_take_one), ns per message
 *   ask	round trip to an echo actor in another process, sequential
 *		(mean us), and with 50,000 in flight (us per ask)
 *   failing	an always-failing worker for 3 s under the supervision
 *		core (run in this process), without backoff and with
 *		50 ms..1 s: restarts, and the CPU seconds actord used
 *   escalation	a supervisor allowing 5 restarts in 10 s, backoff
 *		50 ms..1 s, over an always-failing worker: on which crash
 *		it gives up, and the cause its parent sees
 *   poison	10,000 messages of which 10 crash the actor, under
 *		max_attempts 1 and 3: messages processed, restarts
 *   bounded	one actor with a 1 ms handler offered twice what it can
 *		take for LOAD_S seconds, a mailbox of 200 slots (block)
 *		against one of 100,000: p99 mailbox wait
 *   shards	a group of 1, 16 and 256 actors with a 1 ms handler:
 *		messages per second; and 256 shards with one key in five
 *		the same (the hot key), with that shard's share
 *
 * Prints the table (pattern, the seed's figure, actord's, how many times
 * better where more or less is better, not for counts that are to match)
 * and writes every figure as JSON to $BENCH_JSON and the table as a
 * gnuplot data file to $BUILD/bench/seeds.dat (tools/bench/seeds-charts
 * draws it).  Needs $BUILD/tests/progs/tworker.  The figures are
 * measured on whatever the machine gives: run it with nice, alone.
 */
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shm/shm.h"
#include "supervisor/actord.h"
#include "supervisor/config.h"
#include "supervisor/log.h"
#include "tools/bench/bench_arena.h"
#include "tools/bench/bench_common.h"
#include "worker/actor.h"

#define T_WORK		1
#define T_POISON	2
#define T_QUIT		3
#define MAILBOX_N	2000000		/* put + get in one process */
#define ASK_N		20000		/* sequential asks */
#define INFLIGHT	50000		/* asks in flight */
#define POISON_N	10000
#define POISON_BAD	10
#define LOAD_S		5		/* seconds of 2x load */
#define WAITS_MAX	(LOAD_S * 2000 + 16)
#define NKEYS		10000
#define HOT_EVERY	5		/* one message in 5 has the hot key */
#define MAXSHARDS	256

/* What the forked actors report, in a shared page. */
struct shared {
	_Atomic uint64_t processed;
	_Atomic uint64_t handled[MAXSHARDS];
	_Atomic uint32_t nwaits;
	uint64_t	 waits[WAITS_MAX];	/* ns, mailbox wait */
};

struct row {
	const char	*pattern;
	const char	*unit;
	double		 seed;		/* < 0: the seeds give none */
	double		 ours;
	int		 lower_better;
};

struct bench {
	char		 tworker[600];
	char		 dat[600];
	FILE		*json;
	int		 first;
	struct row	 rows[32];
	size_t		 nrows;
};

static struct shared *sh;

/* The handlers fn_actor runs, by its argument. */
#define H_POISON	((void *)(uintptr_t)0)
#define H_SHARD		((void *)(uintptr_t)1)
static int	 fn_actor(void *);

/* --- output --------------------------------------------------------------- */

static void
row(struct bench *b, const char *pattern, const char *unit, double seed,
    double ours, int lower_better, const char *key)
{
	struct row *r = &b->rows[b->nrows++];

	r->pattern = pattern;
	r->unit = unit;
	r->seed = seed;
	r->ours = ours;
	r->lower_better = lower_better;
	fprintf(b->json, "%s\n  \"%s\": %.3f", b->first ? "" : ",", key, ours);
	b->first = 0;
	printf("  %s: %.3f %s\n", pattern, ours, unit);
	fflush(stdout);
}

/*
 * How many times better actord is than the seed (> 1: better); -1 where
 * there is no better (lower_better < 0: a count to compare, not a score).
 */
static double
ratio(const struct row *r)
{
	if (r->seed <= 0 || r->ours <= 0 || r->lower_better < 0)
		return -1;
	return r->lower_better ? r->seed / r->ours : r->ours / r->seed;
}

static void
table(struct bench *b)
{
	FILE *d;
	size_t i;
	double x;

	if ((d = fopen("/proc/loadavg", "r")) != NULL) {
		if (fscanf(d, "%lf", &x) == 1)
			printf("\nload average when done: %.2f on %ld CPUs\n",
			    x, sysconf(_SC_NPROCESSORS_ONLN));
		fclose(d);
	}
	printf("\n%-52s %14s %14s %8s\n", "pattern", "seed", "actord",
	    "better");
	for (i = 0; i < b->nrows; i++) {
		const struct row *r = &b->rows[i];
		char s[32] = "-", o[32];

		if (r->seed >= 0)
			snprintf(s, sizeof(s), "%.6g", r->seed);
		snprintf(o, sizeof(o), "%.6g", r->ours);
		printf("%-52s %14s %14s", r->pattern, s, o);
		if ((x = ratio(r)) > 0)
			printf(" %7.2fx", x);
		printf("  %s\n", r->unit);
	}
	if ((d = fopen(b->dat, "w")) == NULL)
		return;
	fprintf(d, "# pattern\tunit\tseed\tactord\tbetter\n");
	for (i = 0; i < b->nrows; i++)
		fprintf(d, "\"%s\"\t\"%s\"\t%g\t%g\t%g\n", b->rows[i].pattern,
		    b->rows[i].unit, b->rows[i].seed, b->rows[i].ours,
		    ratio(&b->rows[i]));
	fclose(d);
}

/* --- helpers ---------------------------------------------------------------- */

static void
sleep_ns(int64_t ns)
{
	struct timespec ts = { ns / 1000000000, ns % 1000000000 };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* The 1 ms of I/O every handler of the seeds awaits. */
static void
io_1ms(void)
{
	sleep_ns(1000000);
}

static struct actor *
open_or_die(struct shm_arena *ar, int32_t idx)
{
	struct actor *a;
	char err[ACTOR_ERRBUF];

	if (actor_open(ar, idx, &a, err, sizeof(err)) < 0) {
		printf( "actor_open: %s\n", err);
		exit(1);
	}
	return a;
}

static pid_t
fork_or_die(void)
{
	pid_t pid = fork();

	if (pid == -1) {
		perror("fork");
		exit(1);
	}
	return pid;
}

static void
reap(pid_t pid)
{
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		;
}

/* --- mailbox and ask ---------------------------------------------------------- */

static int
drop(void *arg, enum shm_lane lane, const struct shm_msg *m, const void *p)
{
	(void)lane;
	memcpy(arg, p, m->len);
	return 0;
}

static void
bench_mailbox(struct bench *b)
{
	struct shm_arena *a = bench_arena("bench_seeds", 1, 1024, 128, 64);
	struct shm_producer *p;
	struct shm_msg m;
	unsigned char payload[PAYLOAD], out[PAYLOAD];
	uint64_t t0;
	long i;

	if (shm_producer_open(a, &p) < 0)
		exit(1);
	memset(&m, 0, sizeof(m));
	memset(payload, 7, sizeof(payload));
	m.tag = T_WORK;
	m.len = PAYLOAD;
	t0 = now_us();
	for (i = 0; i < MAILBOX_N; i++) {
		(void)shm_send(p, 0, SHM_LANE_MAIN, &m, payload, 0);
		(void)shm_take_one(a, 0, SHM_LANES_INBOX, drop, out);
	}
	row(b, "mailbox put+get", "ns/msg", 348, (double)(now_us() - t0) *
	    1000.0 / MAILBOX_N, 1, "mailbox_ns");
	shm_producer_close(p);
	shm_detach(a);
}

static void
echo_server(struct shm_arena *ar)
{
	bench_echo(open_or_die(ar, 1), T_WORK, T_QUIT);
}

static void
bench_ask(struct bench *b)
{
	struct shm_arena *ar = bench_arena("bench_seeds", 2, 65536, 128, 65536);
	struct actor_ref to = { 1, ACTOR_ANY };
	struct actor_msg r;
	struct actor *a;
	char payload[PAYLOAD];
	uint64_t t0, corr;
	pid_t pid;
	long i, ok = 0;

	if ((pid = fork_or_die()) == 0) {
		echo_server(ar);
		_exit(0);
	}
	a = open_or_die(ar, 0);
	memset(payload, 1, sizeof(payload));
	t0 = now_us();
	for (i = 0; i < ASK_N; i++)
		ok += actor_ask(a, to, T_WORK, payload, sizeof(payload),
		    5000000000LL, &r) == 0;
	row(b, "ask round trip, sequential", "us", 4.5,
	    (double)(now_us() - t0) / ASK_N, 1, "ask_seq_us");
	t0 = now_us();
	for (i = 0; i < INFLIGHT; i++)
		if (actor_ask_send(a, to, T_WORK, payload, sizeof(payload),
		    60000000000LL, &corr) < 0)
			break;
	while (actor_ask_next(a, &r, 60000000000LL, &corr) != ACTOR_EEMPTY)
		ok++;
	row(b, "ask round trip, 50,000 in flight", "us", 6.25,
	    (double)(now_us() - t0) / INFLIGHT, 1, "ask_inflight_us");
	if (ok != ASK_N + INFLIGHT)
		printf( "bench_seeds: %ld of %d asks answered\n", ok,
		    ASK_N + INFLIGHT);
	(void)actor_tell(a, to, T_QUIT, NULL, 0);
	reap(pid);
	actor_close(a);
	shm_detach(ar);
}

/* --- the supervision core, in this process ----------------------------------- */

static struct actord_spec *
spec_root(uint32_t bmin, uint32_t bmax)
{
	struct actord_spec *spec = spec_new();

	spec->shutdown_timeout = 2000;
	spec->root.intensity = 1000000;
	spec->root.period = 1;
	spec->root.backoff_min = bmin;
	spec->root.backoff_max = bmax;
	return spec;
}

static struct child_spec *
child_add(struct sup_spec *s, const char *name)
{
	struct child_spec *c;

	s->children = reallocarray(s->children, s->nchildren + 1, sizeof(*c));
	if (s->children == NULL)
		exit(1);
	c = &s->children[s->nchildren++];
	spec_child_init(c);
	c->name = strdup(name);
	c->shutdown = 1000;
	return c;
}

static void
child_failing(struct bench *b, struct child_spec *c)
{
	c->argv = calloc(4, sizeof(*c->argv));
	c->argv[0] = strdup(b->tworker);
	c->argv[1] = strdup("exit");
	c->argv[2] = strdup("1");
}

static void
child_actor(struct child_spec *c, child_fn fn, void *arg, uint32_t cap,
    uint32_t attempts, unsigned instances)
{
	c->fn = fn;
	c->fn_arg = arg;
	c->ready = READY_ACTOR;
	c->has_mailbox = true;
	c->mailbox.capacity = cap;
	c->mailbox.max_attempts = attempts;
	c->instances = instances;
	c->start_timeout = 30000;
}

static struct actord *
core(struct actord_spec *spec)
{
	struct actord *ad;
	char err[256];

	if ((ad = actord_new(spec, err, sizeof(err))) == NULL) {
		printf( "bench_seeds: %s\n", err);
		exit(1);
	}
	ad->free_spec = spec_free;
	actord_boot(ad);
	return ad;
}

/* Run the core until pred holds or ms pass; whether it held. */
static bool
run_until(struct actord *ad, bool (*pred)(struct actord *, void *),
    void *arg, int ms)
{
	uint64_t end = now_us() + (uint64_t)ms * 1000;

	while (!pred(ad, arg)) {
		if (now_us() >= end)
			return false;
		actord_run_once(ad, 10);
	}
	return true;
}

static bool
all_running(struct actord *ad, void *arg)
{
	const char *const *paths = arg;
	struct node *n;

	for (; *paths != NULL; paths++)
		if ((n = actord_find(ad, *paths)) == NULL ||
		    n->state != NS_RUNNING)
			return false;
	return true;
}

static void
bench_failing(struct bench *b, bool backoff)
{
	struct actord_spec *spec = spec_root(backoff ? 50 : 0,
	    backoff ? 1000 : 0);
	struct actord *ad;
	uint64_t end;
	double c0 = cpu_s();

	child_failing(b, child_add(&spec->root, "w"));
	ad = core(spec);
	end = now_us() + 3000000;
	while (now_us() < end)
		actord_run_once(ad, (int)((end - now_us()) / 1000) + 1);
	if (backoff) {
		row(b, "always failing 3 s, backoff 50 ms..1 s: restarts",
		    "restarts", 8, (double)actord_find(ad, "/w")->restarts, -1,
		    "failing_backoff_restarts");
		row(b, "  ... CPU of actord", "s", -1,
		    cpu_s() - c0, 1, "failing_backoff_cpu_s");
	} else {
		row(b, "always failing 3 s, no backoff: restarts",
		    "restarts", 19806, (double)actord_find(ad, "/w")->restarts,
		    -1, "failing_nobackoff_restarts");
		/* The seed's "a whole core" is its one process's. */
		row(b, "  ... CPU of actord (seed: a whole core)", "s", 3,
		    cpu_s() - c0, 1, "failing_nobackoff_cpu_s");
	}
	actord_free(ad);
}

struct escalation {
	uint64_t	 crashes;	/* of /s/w before /s gave up */
	uint64_t	 took_us;
};

static bool
escalated(struct actord *ad, void *arg)
{
	struct escalation *e = arg;
	struct node *s = actord_find(ad, "/s"), *w = actord_find(ad, "/s/w");

	if (s != NULL && s->restarts > 0)
		return true;
	if (w != NULL && w->restarts + 1 > e->crashes)
		e->crashes = w->restarts + 1;
	return false;
}

static void
bench_escalation(struct bench *b)
{
	struct actord_spec *spec = spec_root(1000, 1000);
	struct escalation e = { 0, 0 };
	struct child_spec *c;
	struct sup_spec *s;
	struct actord *ad;
	uint64_t t0 = now_us();

	c = child_add(&spec->root, "s");
	c->kind = CHILD_SUPERVISOR;
	c->sup = calloc(1, sizeof(*c->sup));
	s = c->sup;
	spec_sup_init(s);
	s->intensity = 5;
	s->period = 10;
	s->backoff_min = 50;
	s->backoff_max = 1000;
	child_failing(b, child_add(s, "w"));
	ad = core(spec);
	if (!run_until(ad, escalated, &e, 20000))
		e.crashes = 0;
	row(b, "5 restarts in 10 s allowed: escalation on crash", "crash",
	    6, (double)e.crashes, -1, "escalation_crash");
	row(b, "  ... after", "ms", -1, (double)(now_us() - t0) / 1000.0, 1,
	    "escalation_ms");
	printf("  the cause /s's parent saw: %s\n",
	    actord_find(ad, "/s")->last_exit);
	actord_free(ad);
}

/* --- poison ---------------------------------------------------------------- */

static int
poison_handle(struct actor *a, const struct actor_msg *m, void *arg)
{
	(void)a;
	(void)arg;
	if (m->tag == T_POISON)
		_exit(1);
	atomic_fetch_add(&sh->processed, 1);
	return 0;
}

static bool
poison_over(struct actord *ad, void *arg)
{
	struct node *n = actord_find(ad, "/p");
	struct shm_counters c;

	(void)arg;
	return atomic_load(&sh->processed) >= POISON_N - POISON_BAD &&
	    n->state == NS_RUNNING && shm_counters(ad->arena,
	    (uint32_t)n->mbox, &c) == 0 && c.depth == 0;
}

static void
bench_poison(struct bench *b, uint32_t attempts)
{
	static const char *const up[] = { "/p", NULL };
	struct actord_spec *spec = spec_root(0, 0);
	struct actor_ref to;
	struct actord *ad;
	struct actor *cl;
	char key[64], name[96];
	long i;

	child_actor(child_add(&spec->root, "p"), fn_actor, H_POISON, 16384,
	    attempts,
	    0);
	ad = core(spec);
	if (!run_until(ad, all_running, (void *)(uintptr_t)up, 10000))
		exit(1);
	atomic_store(&sh->processed, 0);
	cl = open_or_die(ad->arena, -1);
	to.index = (uint32_t)actord_find(ad, "/p")->mbox;
	to.incarnation = ACTOR_ANY;
	for (i = 0; i < POISON_N; i++)
		(void)actor_tell(cl, to, i % (POISON_N / POISON_BAD) == 7 ?
		    T_POISON : T_WORK, "x", 1);
	(void)run_until(ad, poison_over, NULL, 30000);
	snprintf(name, sizeof(name), "10,000 msgs, 10 poison, max_attempts %u:"
	    " processed", attempts);
	snprintf(key, sizeof(key), "poison_%u_processed", attempts);
	row(b, strdup(name), "msgs", 9990,
	    (double)atomic_load(&sh->processed), -1, strdup(key));
	snprintf(name, sizeof(name), "  ... restarts (max_attempts %u)",
	    attempts);
	snprintf(key, sizeof(key), "poison_%u_restarts", attempts);
	row(b, strdup(name), "restarts", attempts == 1 ? 10 : 30,
	    (double)actord_find(ad, "/p")->restarts, -1, strdup(key));
	actor_close(cl);
	actord_free(ad);
}

/* --- a bounded mailbox at twice the load ----------------------------------- */

static void
slow_consumer(struct shm_arena *a)
{
	struct shm_msg m;
	unsigned char buf[PAYLOAD];
	enum shm_lane lane;
	uint32_t k;

	for (;;) {
		if (shm_recv_wait(a, 0, SHM_LANES_INBOX, SHM_WAIT_SLEEP, 0, -1,
		    &m, buf, sizeof(buf), &lane) < 0)
			continue;
		if (m.tag == T_QUIT)
			return;
		/* Only a timed message has a wait (shm.h: a sample). */
		if (shm_enq_timed(m.enq_ns) &&
		    (k = atomic_fetch_add(&sh->nwaits, 1)) < WAITS_MAX)
			sh->waits[k] = shm_clock_ns(a) - m.enq_ns;
		io_1ms();
	}
}

/* p99 of the mailbox wait, ms, with a mailbox of slots. */
static double
bounded(uint32_t slots)
{
	struct shm_arena *a = bench_arena("bench_seeds", 1, 131072, 128, 64);
	struct shm_producer *p;
	struct shm_msg m;
	unsigned char payload[PAYLOAD];
	uint64_t t0, n, i;
	pid_t pid;

	if (shm_mailbox_configure(a, 0, slots, SHM_OVERFLOW_BLOCK, 60000) < 0 ||
	    shm_producer_open(a, &p) < 0)
		exit(1);
	atomic_store(&sh->nwaits, 0);
	if ((pid = fork_or_die()) == 0) {
		slow_consumer(a);
		_exit(0);
	}
	memset(&m, 0, sizeof(m));
	memset(payload, 3, sizeof(payload));
	m.tag = T_WORK;
	m.len = PAYLOAD;
	/* 2,000 offers a second: twice what a 1 ms handler takes. */
	n = LOAD_S * 2000;
	t0 = now_us();
	for (i = 0; i < n; i++) {
		int64_t ahead = (int64_t)(t0 + i * 500) - (int64_t)now_us();

		if (ahead > 0)
			sleep_ns(ahead * 1000);
		(void)shm_send(p, 0, SHM_LANE_MAIN, &m, payload, -1);
	}
	m.tag = T_QUIT;
	m.len = 0;
	(void)shm_send(p, 0, SHM_LANE_MAIN, &m, NULL, -1);
	reap(pid);
	shm_producer_close(p);
	shm_detach(a);
	n = atomic_load(&sh->nwaits);
	if (n > WAITS_MAX)
		n = WAITS_MAX;
	return pct(sh->waits, n, 0.99) / 1000.0;	/* us -> ms */
}

static void
bench_bounded(struct bench *b)
{
	row(b, "1 ms handler at 2x load 5 s, 200 slots: p99 wait", "ms", 220,
	    bounded(200), 1, "bounded_200_p99_ms");
	/* It grows with the length of the run (LOAD_S here). */
	row(b, "1 ms handler at 2x load 5 s, 100,000 slots: p99 wait", "ms",
	    4627, bounded(100000), -1, "bounded_100000_p99_ms");
}

/* --- shards ------------------------------------------------------------------ */

static int
shard_handle(struct actor *a, const struct actor_msg *m, void *arg)
{
	const char *p = strrchr(actor_name(a), '/');

	(void)m;
	(void)arg;
	io_1ms();
	atomic_fetch_add(&sh->handled[strtoul(p + 1, NULL, 10) % MAXSHARDS], 1);
	atomic_fetch_add(&sh->processed, 1);
	return 0;
}

static const actor_handler handlers[] = { poison_handle, shard_handle };

/* A function child: the actor whose handler arg names. */
static int
fn_actor(void *arg)
{
	struct actor *a;
	char err[ACTOR_ERRBUF];

	if (actor_attach(&a, err, sizeof(err)) < 0 || actor_ready(a) < 0)
		return 99;
	(void)actor_run(a, handlers[(uintptr_t)arg], NULL, NULL);
	return 0;
}

static bool
group_up(struct actord *ad, void *arg)
{
	unsigned n = (unsigned)(uintptr_t)arg, i;
	char path[32];
	struct node *x;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/s/%u", i);
		if ((x = actord_find(ad, path)) == NULL ||
		    x->state != NS_RUNNING)
			return false;
	}
	return true;
}

/* Messages per second through n shards; *hot_share: the top shard's. */
static double
shards(unsigned n, long msgs, bool hot, double *hot_share)
{
	struct actord_spec *spec = spec_root(0, 0);
	struct actor_ref ref;
	struct actord *ad;
	struct actor *cl;
	uint64_t t0, top = 0;
	char key[32];
	long i;
	unsigned k;
	int rc;

	child_actor(child_add(&spec->root, "s"), fn_actor, H_SHARD, 256, 3,
	    n);
	ad = core(spec);
	if (!run_until(ad, group_up, (void *)(uintptr_t)n, 60000)) {
		printf( "bench_seeds: %u shards did not start\n", n);
		exit(1);
	}
	memset(sh->handled, 0, sizeof(sh->handled));
	atomic_store(&sh->processed, 0);
	cl = open_or_die(ad->arena, -1);
	srand(42);
	t0 = now_us();
	for (i = 0; i < msgs; i++) {
		if (hot && i % HOT_EVERY == 0)
			snprintf(key, sizeof(key), "hot");
		else
			snprintf(key, sizeof(key), "k%d", rand() % NKEYS);
		if (actor_shard(cl, "/s", key, strlen(key), &ref) < 0)
			exit(1);
		while ((rc = actor_tell(cl, ref, T_WORK, key, strlen(key))) ==
		    ACTOR_EFULL)
			;
	}
	while (atomic_load(&sh->processed) < (uint64_t)msgs)
		sleep_ns(1000000);
	t0 = now_us() - t0;
	for (k = 0; k < n && k < MAXSHARDS; k++)
		if (atomic_load(&sh->handled[k]) > top)
			top = atomic_load(&sh->handled[k]);
	if (hot_share != NULL)
		*hot_share = 100.0 * (double)top / (double)msgs;
	actor_close(cl);
	actord_free(ad);
	return (double)msgs * 1e6 / (double)t0;
}

static void
bench_shards(struct bench *b)
{
	double share;

	row(b, "1 ms handler, 1 actor", "msg/s", 937, shards(1, 2000, false,
	    NULL), 0, "shards_1_msgs");
	row(b, "1 ms handler, 16 shards", "msg/s", -1, shards(16, 16000,
	    false, NULL), 0, "shards_16_msgs");
	row(b, "1 ms handler, 256 shards", "msg/s", 90931, shards(256, 100000,
	    false, NULL), 0, "shards_256_msgs");
	row(b, "256 shards, one key in 5 the same (hot key)", "msg/s", 4906,
	    shards(256, 20000, true, &share), 0, "hotkey_msgs");
	row(b, "  ... the hot shard's share of the messages", "%", -1, share,
	    0, "hotkey_share_pct");
}

int
main(void)
{
	struct bench b;
	const char *build = getenv("BUILD"), *jpath = getenv("BENCH_JSON");
	int devnull;

	memset(&b, 0, sizeof(b));
	if (build == NULL)
		build = "build";
	snprintf(b.tworker, sizeof(b.tworker), "%s/tests/progs/tworker",
	    build);
	snprintf(b.dat, sizeof(b.dat), "%s/bench/seeds.dat", build);
	if (access(b.tworker, X_OK) != 0) {
		printf( "bench_seeds: %s: build it first (make)\n",
		    b.tworker);
		return 1;
	}
	b.json = fopen(jpath != NULL ? jpath : "/dev/null", "w");
	if (b.json == NULL)
		return 1;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	/* actord's log (every crash of the failing workers) is not ours. */
	log_init("bench_seeds", -1);
	if ((devnull = open("/dev/null", O_WRONLY | O_CLOEXEC)) == -1 ||
	    dup2(devnull, STDERR_FILENO) == -1)
		return 1;
	fprintf(b.json, "{");
	b.first = 1;
	bench_mailbox(&b);
	bench_ask(&b);
	bench_failing(&b, false);
	bench_failing(&b, true);
	bench_escalation(&b);
	bench_poison(&b, 1);
	bench_poison(&b, 3);
	bench_bounded(&b);
	bench_shards(&b);
	fprintf(b.json, "\n}\n");
	fclose(b.json);
	table(&b);
	return 0;
}
