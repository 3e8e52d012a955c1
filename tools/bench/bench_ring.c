/*
 * bench_ring.c: how fast the shm mailboxes are, against what a user could
 * pick instead, between two processes pinned to CPUs 0 and 1, with 64-byte
 * payloads.
 *
 * One-way throughput (messages/s): a bare single-producer ring with
 * busy-polling and no wake-up support (written here: the physical limit of
 * this machine), the mailbox with busy-poll, with spin-then-sleep, with
 * futex sleep, two producers into one mailbox; pipe(2), a Unix stream
 * socket, ZeroMQ PUSH/PULL over ipc://.
 *
 * The ladder (tput_ladder_*): from the bare ring to the mailbox, one of the
 * mailbox's costs added per rung, each written here with the mailbox's
 * cells (MB_CELL bytes: sequence number, 40-byte header, payload) and the
 * bare ring's busy-polling consumer, so that the step between two rungs is
 * the price of what the upper one adds: a fence where a claim would be
 * (tput_ladder_fence, beside the others: the bare ring whose producer
 * waits for its stores before each message, as a locked CAS makes it),
 * the header alone (tput_ladder_spsc_hdr, beside them too: see the
 * paired slices below),
 * any producer (tail claimed by a CAS, the consumer publishing head once per batch, the producer asking
 * for the cell two ahead as the mailbox's does), a claim record in the
 * producer's own line, the header (the consumer fences its loads after the
 * cell's number while close behind, as the mailbox's does, copies and
 * checks it, and
 * counts the wait of every SHM_STAMP_EVERY-th message in a histogram),
 * the clock readings for those (enq_ns on the producer's side, the
 * wait's end on the consumer's: the others carry their position, as the
 * mailbox's do: shm.h, SHM_ENQ_UNTIMED), the look at the consumer's
 * sleeping word after publishing.  The mailbox in
 * busy-poll mode is the rung above the last, but not on the ladder's
 * path: its one producer takes the lane after SHM_OWN_STREAK messages
 * (shm/express.c), so every mailbox row with one producer, and the
 * paired slices' mailbox, measure the express path (plain stores, no
 * CAS, no claim record): the CAS rung is what it was before.  "2
 * producers" claims by CAS, each taking the lane from the other at most
 * once per SHM_OWN_STREAK messages.
 *
 * Round trip p50 and p99 (request in one mailbox, answer in the other
 * process's reply lane): the mailbox in spin-then-sleep and in pure futex
 * mode, the bare ring ping-pong, a pipe pair, a Unix socket pair, eventfd
 * ping-pong, ZeroMQ REQ/REP over ipc://.  The four where both sides
 * sleep (pipe pair, futex mailbox, Unix socket pair, eventfd) share two
 * processes and alternate round trip by round trip (sleep_group_run).
 *
 * Every throughput figure comes with its regime (struct regime): how far
 * the consumer ran behind its producer, its batches, the producer's
 * sleeps.  The same two processes do not always meet the same regime: the
 * bare ring here ran at some 200 M msg/s 30 messages behind, at 90 some
 * 500 behind, at 5 to 25 on a busy host, from one run to the next.  So
 * the paired slices (tput_pair) run the bare ring, the ladder's fence,
 * CAS and header rungs and the mailbox one right after the other, PAIRS
 * times a round, and give their ratios slice by slice with the regimes,
 * and their medians over the pairs whose bare ring ran close behind and
 * over those far behind.  The header rung (tput_ladder_spsc_hdr, off the
 * ladder's path) is what the express path is without its words: the bare
 * ring's one producer and per-message consumer over the mailbox's cells,
 * the header written, checked and its wait counted as the mailbox's
 * drain does.  Both rings' cells are 128 bytes and a message touches
 * two lines of each (the bare ring's 72 bytes straddle a line), so the
 * header rung shows the header's price, not the cell size's.
 *
 * One CPU (one_cpu: the cost of a message's instructions, apart from
 * the regime and the host's load): ONE_BATCH messages sent into the
 * mailbox (one producer: the express path) and then drained, and the same
 * through the bare ring, by one process, ONE_REPS times a round; the
 * fastest batch of each gives ns a message for the mailbox's send, its
 * drain, the bare ring's put and get.  The lines stay in one CPU's cache,
 * so this is what a message costs in instructions; the throughput cases
 * add the transfers between the two CPUs.
 *
 * Prints a table (absolute figures and ratios to the bare ring, ZeroMQ and
 * the pipe: value / baseline) and writes every case as JSON to $BENCH_JSON.
 * BENCH_QUICK=0.1 scales the counts down; BENCH_ONLY=tput runs only the
 * cases whose JSON name contains that string, or one of a comma-separated
 * list (rtt_sleep_group: the four sleeping round trips; tput_pair: the
 * paired slices; one_cpu: the one-CPU costs).
 * The machine is shared and noisy: every case runs ROUNDS times, the cases
 * interleaved round by round, and the median is reported; the issue's
 * targets are checked on the medians of the per-round ratios.
 * The parent is always the side that measures (the consumer, or the client
 * of a round trip); the child is the producer or the server.
 */
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "shm/shm.h"
#include "tools/bench/bench_common.h"

#define MB_CAP		1024
#define MB_CELL		128
#define CPU_PARENT	0
#define CPU_CHILD	1
#define WARMUP		500
#define LAG_EVERY	1024	/* messages between two looks at the lag */
#define POS_EVERY	64	/* messages between two notes of the position */
#define ROUNDS		5	/* the median of five runs is reported */
#define PAIRS		4	/* paired slices a round */
#define PAIR_SLICE	0.25	/* of a case's messages per slice */
#define LAG_FAR		64	/* a consumer this far behind: "far" */
#define ONE_BATCH	512	/* one_cpu_round: messages in, then out */
#define ONE_REPS	400	/* ... so many times; the fastest counts */

enum unit { UNIT_RATE, UNIT_LATENCY };

/*
 * The ladder's rungs: what each adds to the one below (the bare ring's
 * single producer and per-message free are the floor).
 */
#define LAD_MPSC	0x1u	/* tail claimed by CAS, head published per batch */
#define LAD_REC		0x2u	/* a claim record before the CAS, cleared after */
#define LAD_HDR		0x4u	/* header; consumer checks it, counts its wait */
#define LAD_WAKE	0x8u	/* producer looks at "sleeping" after publishing */
#define LAD_CLK		0x10u	/* the clock, as the mailbox reads it (sampled) */
#define LAD_FENCE	0x20u	/* alone: the bare ring, a full fence per claim */
#define LAD_INL		(MB_CELL - SHM_CELL_HDR)
#define LAD_LOOK	16	/* ring.c's FENCE_LOOK */

struct lad_cell {
	_Atomic uint64_t seq;
	struct shm_msg	 msg;
	unsigned char	 payload[LAD_INL];
};

/* A mailbox's lane as the ladder builds it, laid out as shm_impl.h's. */
struct ladder {
	_Alignas(64) _Atomic uint64_t tail;	/* the producers' line */
	_Alignas(64) _Atomic uint64_t head;	/* the consumer's line */
	_Alignas(64) _Atomic uint64_t rec_ring;	/* the producer's slot */
	_Atomic uint64_t rec_pos;
	_Alignas(64) _Atomic uint32_t sleeping;	/* the wake-up line */
	_Atomic uint32_t fence_mode;
	_Alignas(64) uint64_t hist[SHM_HIST_BUCKETS];	/* the consumer's */
	_Alignas(64) struct lad_cell cells[MB_CAP];
};

/*
 * What a throughput run met, to tell its regime: how far the consumer ran
 * behind its producer (the lag: messages published and not yet taken,
 * looked at every LAG_EVERY messages), how many it took per batch (the
 * mailbox's and the ladder's: drains that took something), and how often
 * the producer slept (voluntary context switches: a mailbox sender
 * blocked on a full lane).  The same two processes move between regimes
 * from one run to the next (the bare ring here: some 200 M msg/s with its
 * consumer 30 messages behind, 90 with it 500 behind, 5 to 25 under a
 * busy host), so every figure is printed with its regime.  The producer
 * writes its half once, at its end.
 */
struct regime {
	long		 n;
	long		 batches;	/* consumer: non-empty takes */
	long		 sleeps;	/* producer: voluntary switches */
	long		 lag;		/* consumer: sum of sampled lags */
	long		 lags;		/* its samples */
};

/* Everything the two processes share besides the arena. */
struct shared {
	struct bare_ring ring[2];
	struct ladder	 lad;
	_Alignas(64) _Atomic int ready;
	/* The regime a throughput run met (see struct regime). */
	_Alignas(64) struct regime reg;
	/* The producer's position, every POS_EVERY messages. */
	_Alignas(64) _Atomic long pos;
};

/* One benchmark process' state: the one named struct of this program. */
struct bench {
	struct shm_arena *arena;
	struct shared	*sh;
	char		 ipc[128];
	double		 scale;		/* < 1 for a quicker run */
	FILE		*json;
	int		 njson;
	double		 bare_rate, zmq_rate, pipe_rate;
	double		 bare_p50, zmq_p50, pipe_p50;
	double		 bare_p99, zmq_p99, pipe_p99;
	int		 fds[4];	/* the current fd case's, made before fork */
	int		 sg[7];		/* the sleep group's (sleep_group_run) */
	unsigned	 rung;		/* the current case's (the ladder's) */
	double		 slice;		/* of a case's messages per run: 1, or
					   PAIR_SLICE for the pairs */
	struct pair	*pairs;		/* ROUNDS * PAIRS of them */
	/* one_cpu_round's: ns a message, ONE_WAYS of them a round */
	double		 one[ROUNDS][4];
};

struct result {
	double		 v1, v2;	/* rate; or p50, p99 in ns */
	double		 lag, batch;	/* its regime (struct regime); -1: none */
	double		 sleeps;
};

/*
 * The paired slices (pair_round): the bare ring, the bare ring with a
 * full fence per message (what a claim's locked instruction orders: its
 * producer waits for its stores), the ladder's first rung (the bare ring
 * with its tail claimed by a CAS: what any producer's claim costs, the
 * floor of a ring many processes may send into) and the mailbox
 * (busy-poll), one right after the other, PAIRS times a round, each on
 * PAIR_SLICE of its case's messages, so that all four meet the same
 * host.
 */
struct pair {
	struct result	 bare, fence, cas, hdr, mb;
};

typedef void	(*side_fn)(struct bench *, long n, struct result *);

struct bcase {
	const char	*name;
	const char	*key;		/* JSON name */
	enum unit	 unit;
	long		 n;		/* messages or round trips */
	side_fn		 child;
	side_fn		 parent;
	int		 nchildren;
	int		 baseline;	/* 1 bare, 2 zmq, 3 pipe */
	unsigned	 rung;		/* the ladder's: LAD_* */
};

static uint64_t	 now_ns(void);
static pid_t	 spawn(struct bench *, side_fn, long);
static void	 reap(pid_t);
static void	 run_case(struct bench *, const struct bcase *,
		    struct result *);
static void	 emit(struct bench *, const struct bcase *, const char *,
		    double, const char *, double, double, double,
		    const struct result *);
static void	 percentiles(uint64_t *, long, struct result *);
static void	 arena_new(struct bench *);
static void	 setup_fds(struct bench *, const struct bcase *);
static void	 close_fds(struct bench *);
static int	 full_io(int, void *, size_t, int);
static int	 mb_handler(void *, enum shm_lane, const struct shm_msg *,
		    const void *);
static double	 median(double *, int);
static void	 report(struct bench *, const struct bcase *, struct result *,
		    int);
static void	 baselines(struct bench *, struct result (*)[ROUNDS]);
static int	 case_of(const char *);
static double	 round_ratio(struct result (*)[ROUNDS], const char *,
		    const char *);
static void	 targets(struct result (*)[ROUNDS]);
static int	 picked(const char *, const char *);
static void	 pair_round(struct bench *, int);
static void	 pair_report(struct bench *);
static void	 one_cpu_round(struct bench *, int);
static void	 one_cpu_report(struct bench *);

/* bare ring */
static void	 bare_prod(struct bench *, long, struct result *);
static void	 bare_cons(struct bench *, long, struct result *);
static void	 bare_pong(struct bench *, long, struct result *);
static void	 bare_ping(struct bench *, long, struct result *);
/* the ladder */
static void	 lad_prod(struct bench *, long, struct result *);
static void	 lad_cons(struct bench *, long, struct result *);
static void	 lad_reset(struct ladder *);
/* mailbox */
static void	 mb_prod(struct bench *, long, struct result *);
static void	 mb_cons(struct bench *, long, struct result *,
		    enum shm_wait_mode, int);
static void	 mb_cons_busy(struct bench *, long, struct result *);
static void	 mb_cons_spin(struct bench *, long, struct result *);
static void	 mb_cons_sleep(struct bench *, long, struct result *);
static void	 mb_cons_two(struct bench *, long, struct result *);
static void	 mb_pong(struct bench *, long, enum shm_wait_mode);
static void	 mb_ping(struct bench *, long, struct result *,
		    enum shm_wait_mode);
static void	 mb_pong_spin(struct bench *, long, struct result *);
static void	 mb_ping_spin(struct bench *, long, struct result *);
/* fds */
static void	 fd_prod(int, long);
static void	 fd_cons(int, long, struct result *);
static void	 pipe_prod(struct bench *, long, struct result *);
static void	 pipe_cons(struct bench *, long, struct result *);
static void	 unix_prod(struct bench *, long, struct result *);
static void	 unix_cons(struct bench *, long, struct result *);
static int	 sg_serve(struct bench *, struct shm_producer *, int);
static int	 sg_call(struct bench *, struct shm_producer *, int);
static void	 sg_pong(struct bench *, long, struct result *);
static void	 sleep_group_run(struct bench *, long, struct result *);
static void	 sleep_round(struct bench *, struct result (*)[ROUNDS], int);
/* zmq */
static void	 zmq_prod(struct bench *, long, struct result *);
static void	 zmq_cons(struct bench *, long, struct result *);
static void	 zmq_pong(struct bench *, long, struct result *);
static void	 zmq_ping(struct bench *, long, struct result *);


static const struct bcase cases[] = {
	{ "bare ring, busy-poll (limit)", "tput_bare_ring", UNIT_RATE,
	    2000000, bare_prod, bare_cons, 1, 1, 0 },
	{ "zeromq push/pull ipc", "tput_zmq_ipc", UNIT_RATE,
	    600000, zmq_prod, zmq_cons, 1, 2, 0 },
	{ "pipe", "tput_pipe", UNIT_RATE,
	    150000, pipe_prod, pipe_cons, 1, 3, 0 },
	{ "ladder: bare + a fence per claim", "tput_ladder_fence", UNIT_RATE,
	    2000000, lad_prod, lad_cons, 1, 0, LAD_FENCE },
	{ "ladder: bare + header (one producer)", "tput_ladder_spsc_hdr",
	    UNIT_RATE, 2000000, lad_prod, lad_cons, 1, 0, LAD_HDR },
	{ "ladder: any producer (CAS on tail)", "tput_ladder_mpsc", UNIT_RATE,
	    2000000, lad_prod, lad_cons, 1, 0, LAD_MPSC },
	{ "ladder: + claim record", "tput_ladder_rec", UNIT_RATE,
	    2000000, lad_prod, lad_cons, 1, 0, LAD_MPSC | LAD_REC },
	{ "ladder: + header", "tput_ladder_hdr", UNIT_RATE,
	    2000000, lad_prod, lad_cons, 1, 0, LAD_MPSC | LAD_REC | LAD_HDR },
	{ "ladder: + clock", "tput_ladder_clk", UNIT_RATE,
	    2000000, lad_prod, lad_cons, 1, 0, LAD_MPSC | LAD_REC | LAD_HDR | LAD_CLK },
	{ "ladder: + wake check", "tput_ladder_wake", UNIT_RATE,
	    2000000, lad_prod, lad_cons, 1, 0,
	    LAD_MPSC | LAD_REC | LAD_HDR | LAD_CLK | LAD_WAKE },
	{ "mailbox, busy-poll", "tput_mailbox_busy", UNIT_RATE,
	    2000000, mb_prod, mb_cons_busy, 1, 0, 0 },
	{ "mailbox, spin-then-sleep", "tput_mailbox_spin_sleep", UNIT_RATE,
	    2000000, mb_prod, mb_cons_spin, 1, 0, 0 },
	{ "mailbox, futex sleep", "tput_mailbox_sleep", UNIT_RATE,
	    1000000, mb_prod, mb_cons_sleep, 1, 0, 0 },
	{ "mailbox, 2 producers", "tput_mailbox_2prod", UNIT_RATE,
	    1000000, mb_prod, mb_cons_two, 2, 0, 0 },
	{ "unix stream socket", "tput_unix_stream", UNIT_RATE,
	    100000, unix_prod, unix_cons, 1, 0, 0 },
	{ "bare ring ping-pong (limit)", "rtt_bare_ring", UNIT_LATENCY,
	    50000, bare_pong, bare_ping, 1, 1, 0 },
	{ "zeromq req/rep ipc", "rtt_zmq_ipc", UNIT_LATENCY,
	    3000, zmq_pong, zmq_ping, 1, 2, 0 },
	{ "pipe pair", "rtt_pipe", UNIT_LATENCY,
	    6000, NULL, NULL, 1, 3, 0 },
	{ "mailbox, spin-then-sleep", "rtt_mailbox_spin_sleep", UNIT_LATENCY,
	    50000, mb_pong_spin, mb_ping_spin, 1, 0, 0 },
	{ "mailbox, futex sleep", "rtt_mailbox_sleep", UNIT_LATENCY,
	    6000, NULL, NULL, 1, 0, 0 },
	{ "unix socket pair", "rtt_unix_socketpair", UNIT_LATENCY,
	    6000, NULL, NULL, 1, 0, 0 },
	{ "eventfd ping-pong", "rtt_eventfd", UNIT_LATENCY,
	    6000, NULL, NULL, 1, 0, 0 },
};
/*
 * The cases above without sides of their own (parent NULL) are the round
 * trips where both sides sleep: sleep_group_run measures them together,
 * in this order.
 */
static const char *const sleep_keys[] = {
	"rtt_pipe", "rtt_mailbox_sleep", "rtt_unix_socketpair", "rtt_eventfd"
};
#define NSLEEP	4
#define NCASES	(sizeof(cases) / sizeof(cases[0]))

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static pid_t
spawn(struct bench *b, side_fn fn, long n)
{
	struct result r;
	pid_t	 pid;

	fflush(NULL);
	if ((pid = fork()) == -1) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		pin(CPU_CHILD);
		fn(b, n, &r);
		_exit(0);
	}
	return pid;
}

static void
reap(pid_t pid)
{
	int	 st;

	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		continue;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fprintf(stderr, "bench_ring: child %d failed (%#x)\n",
		    (int)pid, st);
}

static void
percentiles(uint64_t *s, long n, struct result *r)
{
	qsort(s, (size_t)n, sizeof(*s), cmp_u64);
	r->v1 = (double)s[n / 2];
	r->v2 = (double)s[(n * 99) / 100];
}

static void
arena_new(struct bench *b)
{
	struct shm_mailbox_layout m = {
		.capacity = MB_CAP, .cell = MB_CELL, .sys_capacity = 16,
		.reply_capacity = MB_CAP, .overflow = SHM_OVERFLOW_BLOCK,
		.block_timeout_ms = 1000, .state_size = 0,
		.max_message = 65536	/* large slots on, as actord's default */
	};
	struct shm_mailbox_layout ms[2] = { m, m };
	struct shm_layout l = { 2, ms, 8, 64 };
	char	 err[SHM_ERRBUF];

	if (b->arena != NULL)
		shm_detach(b->arena);
	if (shm_create(&l, "bench-ring", &b->arena, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_ring: %s\n", err);
		exit(1);
	}
}

/* --- the bare ring: SPSC, per-cell sequence numbers, no wake-ups -------- */

/* The producer's half of the regime, at its end. */
static void
prod_done(struct bench *b)
{
	struct rusage	 ru;

	if (getrusage(RUSAGE_SELF, &ru) == 0)
		__atomic_fetch_add(&b->sh->reg.sleeps, ru.ru_nvcsw,
		    __ATOMIC_RELAXED);
}

/* The consumer's half: n messages in batches takes, lags sampled. */
static void
cons_done(struct bench *b, long n, long batches, long lag, long lags)
{
	b->sh->reg.n = n;
	b->sh->reg.batches = batches;
	b->sh->reg.lag = lag;
	b->sh->reg.lags = lags;
}

static void
bare_prod(struct bench *b, long n, struct result *r)
{
	unsigned char	 p[PAYLOAD] = { 0 };
	long		 i;

	(void)r;
	for (i = 0; i < n; i++) {
		memcpy(p, &i, sizeof(i));
		bare_put(&b->sh->ring[0], (uint64_t)i, p);
		if ((i & (POS_EVERY - 1)) == 0)
			atomic_store_explicit(&b->sh->pos, i,
			    memory_order_relaxed);
	}
	prod_done(b);
}

static void
bare_cons(struct bench *b, long n, struct result *r)
{
	unsigned char	 p[PAYLOAD];
	uint64_t	 t0 = 0;
	long		 i, v, bad = 0, lag = 0, lags = 0;

	for (i = 0; i < n; i++) {
		bare_get(&b->sh->ring[0], (uint64_t)i, p);
		if ((i & (LAG_EVERY - 1)) == LAG_EVERY / 2) {
			lag += atomic_load_explicit(&b->sh->pos,
			    memory_order_relaxed) - i;
			lags++;
		}
		if (i == 0)
			t0 = now_ns();
		memcpy(&v, p, sizeof(v));
		bad += v != i;
	}
	r->v1 = (double)(n - 1) * 1e9 / (double)(now_ns() - t0);
	cons_done(b, n, n, lag, lags);
	if (bad)
		fprintf(stderr, "bench_ring: bare ring: %ld bad\n", bad);
}

static void
bare_pong(struct bench *b, long n, struct result *r)
{
	unsigned char	 p[PAYLOAD];
	long		 i;

	(void)r;
	for (i = 0; i < n + WARMUP; i++) {
		bare_get(&b->sh->ring[0], (uint64_t)i, p);
		bare_put(&b->sh->ring[1], (uint64_t)i, p);
	}
}

static void
bare_ping(struct bench *b, long n, struct result *r)
{
	unsigned char	 p[PAYLOAD] = { 0 };
	uint64_t	*s = calloc((size_t)n, sizeof(*s)), t;
	long		 i;

	for (i = 0; i < n + WARMUP; i++) {
		t = now_ns();
		bare_put(&b->sh->ring[0], (uint64_t)i, p);
		bare_get(&b->sh->ring[1], (uint64_t)i, p);
		if (i >= WARMUP)
			s[i - WARMUP] = now_ns() - t;
	}
	percentiles(s, n, r);
	free(s);
}

/* --- the ladder: the bare ring to the mailbox, a cost per rung ------------ */

static void
lad_reset(struct ladder *l)
{
	int	 i;

	memset(l, 0, sizeof(*l));
	for (i = 0; i < MB_CAP; i++)
		atomic_store(&l->cells[i].seq, (uint64_t)i);
}

/* The arena clock's arithmetic: the TSC scaled by a 32.32 factor. */
static inline uint64_t
lad_clock(void)
{
	return (uint64_t)(((unsigned __int128)__builtin_ia32_rdtsc() *
	    (3ULL << 31)) >> 32);
}

/*
 * What the mailbox's send does after publishing (ring.c, prefetch_ahead):
 * the cell two ahead asked for owned, so that a claim's locked CAS does
 * not wait for its stores to fetch lines from the consumer's cache.
 */
static inline void
lad_prefetch(const struct lad_cell *c)
{
	if (__builtin_cpu_supports("prfchw")) {
		__asm__ __volatile__("prefetchw %0" : : "m" (*(const char *)c));
		__asm__ __volatile__("prefetchw %0" : :
		    "m" (*((const char *)c + 64)));
	}
}

/* One message in, as the mailbox's send would with the costs of rung. */
static inline __attribute__((always_inline)) void
lad_put(struct ladder *l, unsigned rung, const struct shm_msg *m,
    const unsigned char *p, uint64_t i)
{
	struct lad_cell	*c;
	struct shm_msg	 hdr;
	uint64_t	 pos = i, seq;

	if (rung & LAD_MPSC)
		pos = atomic_load_explicit(&l->tail, memory_order_relaxed);
	for (;;) {
		c = &l->cells[pos & (MB_CAP - 1)];
		seq = atomic_load_explicit(&c->seq, memory_order_acquire);
		if (seq == pos) {
			if (rung & LAD_FENCE) {
				/*
				 * What the CAS on tail orders, without
				 * the CAS: every store before it done.
				 */
				atomic_thread_fence(memory_order_seq_cst);
				break;
			}
			if (!(rung & LAD_MPSC))
				break;
			if (rung & LAD_REC) {
				atomic_store_explicit(&l->rec_pos, pos,
				    memory_order_release);
				atomic_store_explicit(&l->rec_ring, 5,
				    memory_order_release);
			}
			if (atomic_compare_exchange_weak(&l->tail, &pos,
			    pos + 1))
				break;
			continue;
		}
		__builtin_ia32_pause();		/* full */
		if (rung & LAD_MPSC)
			pos = atomic_load_explicit(&l->tail,
			    memory_order_relaxed);
	}
	memcpy(c->payload, p, PAYLOAD);
	if (rung & LAD_HDR) {
		hdr = *m;
		hdr.enq_ns = (rung & LAD_CLK) && (pos & (SHM_STAMP_EVERY -
		    1)) == 0 ? lad_clock() : SHM_ENQ_UNTIMED | pos;
		hdr.flags &= SHM_MSG_USER_MASK;
		c->msg = hdr;
	}
	atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
	if (!(rung & LAD_MPSC) && (pos & (POS_EVERY - 1)) == 0)
		atomic_store_explicit(&l->tail, pos, memory_order_relaxed);
	if (rung & LAD_REC)
		atomic_store_explicit(&l->rec_ring, 0, memory_order_release);
	if (rung & LAD_WAKE) {
		atomic_signal_fence(memory_order_seq_cst);
		if (atomic_load_explicit(&l->fence_mode, memory_order_relaxed))
			atomic_thread_fence(memory_order_seq_cst);
		if (atomic_load_explicit(&l->sleeping, memory_order_relaxed))
			abort();	/* nobody sleeps here */
	}
	if (rung & LAD_MPSC)
		lad_prefetch(&l->cells[(pos + 2) & (MB_CAP - 1)]);
}

static inline __attribute__((always_inline)) void
lad_prod_rung(struct bench *b, long n, unsigned rung)
{
	struct shm_msg	 m;
	unsigned char	 p[PAYLOAD] = { 0 };
	long		 i;

	memset(&m, 0, sizeof(m));
	m.len = PAYLOAD;
	m.tag = 1;
	for (i = 0; i < n; i++) {
		memcpy(p, &i, sizeof(i));
		lad_put(&b->sh->lad, rung, &m, p, (uint64_t)i);
	}
	prod_done(b);
}

/* The wait of a message taken, in the histogram (shm's count_wait). */
static inline void
lad_count(struct ladder *l, uint64_t now, uint64_t enq)
{
	uint64_t d = now > enq ? now - enq : 0;
	unsigned k = d == 0 ? 0 : 63 - (unsigned)__builtin_clzll(d);

	if (k >= SHM_HIST_BUCKETS)
		k = SHM_HIST_BUCKETS - 1;
	l->hist[k]++;
}

/*
 * Take everything published from h on (the bare ring's consumer takes one
 * at a time and publishes nothing but the cell's number); the new head.
 * lag: the sum of the lags sampled, and their count (struct regime).
 */
static inline __attribute__((always_inline)) uint64_t
lad_take(struct ladder *l, unsigned rung, uint64_t h, long *sum, long *bad,
    long lag[2])
{
	struct lad_cell	*c, *ahead;
	struct shm_msg	 m;
	uint64_t	 h0 = h, now = 0;
	long		 v;

	for (;;) {
		c = &l->cells[h & (MB_CAP - 1)];
		if (atomic_load_explicit(&c->seq, memory_order_acquire) !=
		    h + 1)
			break;
		if (rung & LAD_HDR) {
			/*
			 * shm_impl.h, cell_fence, as the mailbox's drain
			 * (ring.c, fence_unless_behind): only close behind.
			 */
			ahead = &l->cells[(h + LAD_LOOK) & (MB_CAP - 1)];
			if (atomic_load_explicit(&ahead->seq,
			    memory_order_relaxed) == h + LAD_LOOK + 1)
				__builtin_prefetch((const char *)ahead + 64, 0);
			else
				__asm__ __volatile__("lfence" ::: "memory");
			memcpy(&m, &c->msg, sizeof(m));
			if (m.len > LAD_INL ||
			    (m.flags & ~SHM_MSG_USER_MASK) != 0)
				(*bad)++;
			if ((h & (SHM_STAMP_EVERY - 1)) == 0) {
				if (now == 0)
					now = (rung & LAD_CLK) ? lad_clock() :
					    h + 5;
				lad_count(l, now, m.enq_ns & ~SHM_ENQ_UNTIMED);
			}
		}
		memcpy(&v, c->payload, sizeof(v));
		*bad += v != (long)h;
		*sum += v;
		if ((h & (LAG_EVERY - 1)) == LAG_EVERY / 2) {
			/* The lag (struct regime): tail is the producer's. */
			lag[0] += (long)(atomic_load_explicit(&l->tail,
			    memory_order_relaxed) - h);
			lag[1]++;
		}
		atomic_store_explicit(&c->seq, h + MB_CAP,
		    memory_order_release);
		h++;
		if (!(rung & LAD_MPSC))
			return h;
	}
	if (h != h0 && (rung & LAD_MPSC))
		atomic_store_explicit(&l->head, h, memory_order_release);
	return h;
}

static inline __attribute__((always_inline)) void
lad_cons_rung(struct bench *b, long n, struct result *r, unsigned rung)
{
	struct ladder	*l = &b->sh->lad;
	uint64_t	 t0 = 0, h = 0, was;
	long		 sum = 0, bad = 0, batches = 0, lag[2] = { 0, 0 };

	while (h < (uint64_t)n) {
		was = h;
		h = lad_take(l, rung, h, &sum, &bad, lag);
		if (h == was) {
			__builtin_ia32_pause();
			continue;
		}
		if (was == 0)
			t0 = now_ns();
		batches++;
	}
	r->v1 = (double)(n - 1) * 1e9 / (double)(now_ns() - t0);
	cons_done(b, n, batches, lag[0], lag[1]);
	if (bad)
		fprintf(stderr, "bench_ring: ladder: %ld bad\n", bad);
}

/* The rungs, each its own loop (the costs are constants in each). */
static void
lad_prod(struct bench *b, long n, struct result *r)
{
	(void)r;
	switch (b->rung) {
	case LAD_FENCE:
		lad_prod_rung(b, n, LAD_FENCE);
		break;
	case LAD_HDR:
		lad_prod_rung(b, n, LAD_HDR);
		break;
	case LAD_MPSC:
		lad_prod_rung(b, n, LAD_MPSC);
		break;
	case LAD_MPSC | LAD_REC:
		lad_prod_rung(b, n, LAD_MPSC | LAD_REC);
		break;
	case LAD_MPSC | LAD_REC | LAD_HDR:
		lad_prod_rung(b, n, LAD_MPSC | LAD_REC | LAD_HDR);
		break;
	case LAD_MPSC | LAD_REC | LAD_HDR | LAD_CLK:
		lad_prod_rung(b, n, LAD_MPSC | LAD_REC | LAD_HDR | LAD_CLK);
		break;
	default:
		lad_prod_rung(b, n, LAD_MPSC | LAD_REC | LAD_HDR | LAD_CLK |
		    LAD_WAKE);
		break;
	}
}

static void
lad_cons(struct bench *b, long n, struct result *r)
{
	switch (b->rung) {
	case LAD_FENCE:
		lad_cons_rung(b, n, r, LAD_FENCE);
		break;
	case LAD_HDR:
		lad_cons_rung(b, n, r, LAD_HDR);
		break;
	case LAD_MPSC:
		lad_cons_rung(b, n, r, LAD_MPSC);
		break;
	case LAD_MPSC | LAD_REC:
		lad_cons_rung(b, n, r, LAD_MPSC | LAD_REC);
		break;
	case LAD_MPSC | LAD_REC | LAD_HDR:
		lad_cons_rung(b, n, r, LAD_MPSC | LAD_REC | LAD_HDR);
		break;
	case LAD_MPSC | LAD_REC | LAD_HDR | LAD_CLK:
		lad_cons_rung(b, n, r, LAD_MPSC | LAD_REC | LAD_HDR | LAD_CLK);
		break;
	default:
		lad_cons_rung(b, n, r, LAD_MPSC | LAD_REC | LAD_HDR |
		    LAD_CLK | LAD_WAKE);
		break;
	}
}

/* --- the mailbox ---------------------------------------------------------- */

static void
mb_prod(struct bench *b, long n, struct result *r)
{
	struct shm_producer *p;
	struct shm_msg	 m;
	unsigned char	 pl[PAYLOAD] = { 0 };
	long		 i;
	int		 rc;

	(void)r;
	if (shm_producer_open(b->arena, &p) < 0)
		_exit(2);
	memset(&m, 0, sizeof(m));
	m.len = PAYLOAD;
	m.tag = 1;
	for (i = 0; i < n; i++) {
		memcpy(pl, &i, sizeof(i));
		rc = shm_send(p, 0, SHM_LANE_MAIN, &m, pl, SHM_NO_TIMEOUT);
		if (rc != 0) {
			fprintf(stderr, "send: %s\n", shm_strerror(rc));
			_exit(3);
		}
	}
	shm_producer_close(p);
	prod_done(b);
}

struct mb_count {
	long		 n;
	long		 sum;
	uint64_t	 t0;
	struct shm_arena *a;
	long		 lag, lags;	/* struct regime's */
	long		 n0;		/* n when the current drain began */
};

static int
mb_handler(void *arg, enum shm_lane lane, const struct shm_msg *m,
    const void *payload)
{
	struct mb_count *c = arg;
	struct shm_counters k;
	long	 v;

	(void)lane;
	(void)m;
	if (c->n == 0)
		c->t0 = now_ns();
	memcpy(&v, payload, sizeof(v));
	c->sum += v;
	if ((++c->n & (LAG_EVERY - 1)) == LAG_EVERY / 2 &&
	    shm_counters(c->a, 0, &k) == 0) {
		/* head moves once a drain: depth counts this one's taken. */
		c->lag += (long)k.depth - (c->n - c->n0);
		c->lags++;
	}
	return 0;
}

static void
mb_cons(struct bench *b, long n, struct result *r, enum shm_wait_mode mode,
    int busy)
{
	struct mb_count	 c = { 0, 0, 0, b->arena, 0, 0, 0 };
	long		 batches = 0;
	int		 k;

	while (c.n < n) {
		c.n0 = c.n;
		k = shm_drain(b->arena, 0, SHM_LANES_INBOX, 0, mb_handler, &c);
		if (k > 0) {
			batches++;
			continue;
		}
		shm_wait(b->arena, 0, SHM_LANES_INBOX, busy ? SHM_WAIT_SPIN :
		    mode, SHM_SPIN_NS_DEFAULT, -1);
	}
	r->v1 = (double)(n - 1) * 1e9 / (double)(now_ns() - c.t0);
	cons_done(b, n, batches, c.lag, c.lags);
}

static void
mb_cons_busy(struct bench *b, long n, struct result *r)
{
	mb_cons(b, n, r, SHM_WAIT_SPIN, 1);
}

static void
mb_cons_spin(struct bench *b, long n, struct result *r)
{
	mb_cons(b, n, r, SHM_WAIT_SPIN_SLEEP, 0);
}

static void
mb_cons_sleep(struct bench *b, long n, struct result *r)
{
	mb_cons(b, n, r, SHM_WAIT_SLEEP, 0);
}

static void
mb_cons_two(struct bench *b, long n, struct result *r)
{
	mb_cons(b, 2 * n, r, SHM_WAIT_SPIN_SLEEP, 0);
}

/* Server: request on mailbox 1's main lane, answer in mailbox 0's reply lane. */
static void
mb_pong(struct bench *b, long n, enum shm_wait_mode mode)
{
	struct shm_producer *p;
	struct shm_msg	 m;
	unsigned char	 pl[PAYLOAD];
	long		 i;

	if (shm_producer_open(b->arena, &p) < 0)
		_exit(2);
	for (i = 0; i < n + WARMUP; i++) {
		if (shm_recv_wait(b->arena, 1, SHM_LANES_INBOX, mode,
		    SHM_SPIN_NS_DEFAULT, -1, &m, pl, sizeof(pl), NULL) != 0)
			_exit(3);
		m.flags = SHM_MSG_REPLY;
		if (shm_send(p, 0, SHM_LANE_REPLY, &m, pl, 0) != 0)
			_exit(4);
	}
	shm_producer_close(p);
}

static void
mb_ping(struct bench *b, long n, struct result *r, enum shm_wait_mode mode)
{
	struct shm_producer *p;
	struct shm_msg	 m;
	unsigned char	 pl[PAYLOAD] = { 0 };
	uint64_t	*s = calloc((size_t)n, sizeof(*s)), t;
	long		 i;

	if (shm_producer_open(b->arena, &p) < 0)
		exit(2);
	memset(&m, 0, sizeof(m));
	m.len = PAYLOAD;
	m.flags = SHM_MSG_ASK;
	for (i = 0; i < n + WARMUP; i++) {
		m.corr = (uint64_t)i;
		t = now_ns();
		if (shm_send(p, 1, SHM_LANE_MAIN, &m, pl, SHM_NO_TIMEOUT) != 0)
			exit(3);
		if (shm_recv_wait(b->arena, 0, SHM_LANE_BIT(SHM_LANE_REPLY),
		    mode, SHM_SPIN_NS_DEFAULT, -1, &m, pl, sizeof(pl),
		    NULL) != 0)
			exit(4);
		if (i >= WARMUP)
			s[i - WARMUP] = now_ns() - t;
	}
	percentiles(s, n, r);
	free(s);
	shm_producer_close(p);
}

static void
mb_pong_spin(struct bench *b, long n, struct result *r)
{
	(void)r;
	mb_pong(b, n, SHM_WAIT_SPIN_SLEEP);
}

static void
mb_ping_spin(struct bench *b, long n, struct result *r)
{
	mb_ping(b, n, r, SHM_WAIT_SPIN_SLEEP);
}

/* --- pipes, sockets, eventfd ------------------------------------------------ */

static int
full_io(int fd, void *buf, size_t len, int wr)
{
	size_t	 done = 0;
	ssize_t	 k;

	while (done < len) {
		k = wr ? write(fd, (char *)buf + done, len - done) :
		    read(fd, (char *)buf + done, len - done);
		if (k <= 0) {
			if (k == -1 && errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)k;
	}
	return 0;
}

static void
fd_prod(int fd, long n)
{
	unsigned char	 p[PAYLOAD] = { 0 };
	long		 i;

	for (i = 0; i < n; i++) {
		memcpy(p, &i, sizeof(i));
		if (full_io(fd, p, PAYLOAD, 1) < 0)
			_exit(2);
	}
}

static void
fd_cons(int fd, long n, struct result *r)
{
	unsigned char	 p[PAYLOAD];
	uint64_t	 t0 = 0;
	long		 i;

	for (i = 0; i < n; i++) {
		if (full_io(fd, p, PAYLOAD, 0) < 0)
			exit(2);
		if (i == 0)
			t0 = now_ns();
	}
	r->v1 = (double)(n - 1) * 1e9 / (double)(now_ns() - t0);
}

static void
pipe_prod(struct bench *b, long n, struct result *r)
{
	(void)b;
	(void)r;
	fd_prod(b->fds[1], n);
}

static void
pipe_cons(struct bench *b, long n, struct result *r)
{
	(void)b;
	fd_cons(b->fds[0], n, r);
}

static void
unix_prod(struct bench *b, long n, struct result *r)
{
	(void)b;
	(void)r;
	fd_prod(b->fds[1], n);
}

static void
unix_cons(struct bench *b, long n, struct result *r)
{
	(void)b;
	fd_cons(b->fds[0], n, r);
}

/*
 * The round trips where both sides sleep (pipe pair, futex mailbox, Unix
 * socket pair, eventfd) run in the same two processes, one round trip of
 * each in turn, the first one rotating.  Run one after the other they met
 * different machines: an idle vCPU here wakes in about 29 us for some
 * 50 ms after a busy spell and in about 43 us after that, for every one
 * of them alike, so whichever ran later looked slower (eventfd, a bare
 * kernel wake-up, measured 1.07x a pipe that way).
 *
 * b->sg: [0] -> [1] the request pipe, [2] -> [3] the answer pipe, [4] the
 * parent's end of the socket pair and [5] the child's, [6] unused; the
 * eventfds are b->fds[0] (wakes the child) and b->fds[1] (the parent).
 */

/* Which mechanism round trip k of iteration i uses. */
static int
sg_which(long i, int k)
{
	return (int)((i + k) % NSLEEP);
}

/* The child's half of one round trip of mechanism w: 0, or -1. */
static int
sg_serve(struct bench *b, struct shm_producer *p, int w)
{
	unsigned char	 pl[PAYLOAD];
	uint64_t	 v;
	struct shm_msg	 m;

	switch (w) {
	case 0:
		return full_io(b->sg[0], pl, PAYLOAD, 0) < 0 ||
		    full_io(b->sg[3], pl, PAYLOAD, 1) < 0 ? -1 : 0;
	case 1:
		if (shm_recv_wait(b->arena, 1, SHM_LANES_INBOX,
		    SHM_WAIT_SLEEP, 0, -1, &m, pl, sizeof(pl), NULL) != 0)
			return -1;
		m.flags = SHM_MSG_REPLY;
		return shm_send(p, 0, SHM_LANE_REPLY, &m, pl, 0) != 0 ? -1 : 0;
	case 2:
		return full_io(b->sg[5], pl, PAYLOAD, 0) < 0 ||
		    full_io(b->sg[5], pl, PAYLOAD, 1) < 0 ? -1 : 0;
	default:
		return full_io(b->fds[0], &v, sizeof(v), 0) < 0 ||
		    full_io(b->fds[1], &v, sizeof(v), 1) < 0 ? -1 : 0;
	}
}

/* The parent's half: send, then wait for the answer; 0, or -1. */
static int
sg_call(struct bench *b, struct shm_producer *p, int w)
{
	unsigned char	 pl[PAYLOAD] = { 1 };
	uint64_t	 v = 1;
	struct shm_msg	 m;

	switch (w) {
	case 0:
		return full_io(b->sg[1], pl, PAYLOAD, 1) < 0 ||
		    full_io(b->sg[2], pl, PAYLOAD, 0) < 0 ? -1 : 0;
	case 1:
		memset(&m, 0, sizeof(m));
		m.len = PAYLOAD;
		m.flags = SHM_MSG_ASK;
		if (shm_send(p, 1, SHM_LANE_MAIN, &m, pl, SHM_NO_TIMEOUT) != 0)
			return -1;
		return shm_recv_wait(b->arena, 0, SHM_LANE_BIT(SHM_LANE_REPLY),
		    SHM_WAIT_SLEEP, 0, -1, &m, pl, sizeof(pl), NULL) != 0 ?
		    -1 : 0;
	case 2:
		return full_io(b->sg[4], pl, PAYLOAD, 1) < 0 ||
		    full_io(b->sg[4], pl, PAYLOAD, 0) < 0 ? -1 : 0;
	default:
		return full_io(b->fds[0], &v, sizeof(v), 1) < 0 ||
		    full_io(b->fds[1], &v, sizeof(v), 0) < 0 ? -1 : 0;
	}
}

static void
sg_pong(struct bench *b, long n, struct result *r)
{
	struct shm_producer *p;
	long		 i;
	int		 k;

	(void)r;
	if (shm_producer_open(b->arena, &p) < 0)
		_exit(2);
	for (i = 0; i < n + WARMUP; i++)
		for (k = 0; k < NSLEEP; k++)
			if (sg_serve(b, p, sg_which(i, k)) < 0)
				_exit(3);
	shm_producer_close(p);
}

/* One round of the sleep group: out[w] for sleep_keys[w]. */
static void
sleep_group_run(struct bench *b, long n, struct result *out)
{
	struct shm_producer *p;
	uint64_t	*s[NSLEEP], t;
	long		 i;
	int		 k, w, sv[2];
	pid_t		 pid;

	arena_new(b);
	memset(b->sg, -1, sizeof(b->sg));
	if (pipe(b->sg) == -1 || pipe(b->sg + 2) == -1 ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		exit(1);
	b->sg[4] = sv[0];
	b->sg[5] = sv[1];
	b->fds[0] = eventfd(0, 0);
	b->fds[1] = eventfd(0, 0);
	b->fds[2] = b->fds[3] = -1;
	if (b->fds[0] < 0 || b->fds[1] < 0)
		exit(1);
	for (w = 0; w < NSLEEP; w++)
		if ((s[w] = calloc((size_t)n, sizeof(*s[w]))) == NULL)
			exit(1);
	pid = spawn(b, sg_pong, n);
	if (shm_producer_open(b->arena, &p) < 0)
		exit(2);
	for (i = 0; i < n + WARMUP; i++)
		for (k = 0; k < NSLEEP; k++) {
			w = sg_which(i, k);
			t = now_ns();
			if (sg_call(b, p, w) < 0)
				exit(3);
			if (i >= WARMUP)
				s[w][i - WARMUP] = now_ns() - t;
		}
	shm_producer_close(p);
	reap(pid);
	for (w = 0; w < NSLEEP; w++) {
		percentiles(s[w], n, &out[w]);
		free(s[w]);
	}
	for (k = 0; k < 7; k++)
		if (b->sg[k] >= 0)
			close(b->sg[k]);
	close_fds(b);
}

/* --- ZeroMQ ----------------------------------------------------------------- */

static void
zmq_prod(struct bench *b, long n, struct result *r)
{
	void	*ctx = zmq_ctx_new(), *s = zmq_socket(ctx, ZMQ_PUSH);
	unsigned char p[PAYLOAD] = { 0 };
	long	 i;

	(void)r;
	if (zmq_connect(s, b->ipc) != 0)
		_exit(2);
	for (i = 0; i < n; i++) {
		memcpy(p, &i, sizeof(i));
		if (zmq_send(s, p, PAYLOAD, 0) != PAYLOAD)
			_exit(3);
	}
	zmq_close(s);
	zmq_ctx_term(ctx);
}

static void
zmq_cons(struct bench *b, long n, struct result *r)
{
	void	*ctx = zmq_ctx_new(), *s = zmq_socket(ctx, ZMQ_PULL);
	unsigned char p[PAYLOAD];
	uint64_t t0 = 0;
	long	 i;

	if (zmq_bind(s, b->ipc) != 0) {
		perror("zmq_bind");
		exit(2);
	}
	atomic_store(&b->sh->ready, 1);
	for (i = 0; i < n; i++) {
		if (zmq_recv(s, p, PAYLOAD, 0) != PAYLOAD)
			exit(3);
		if (i == 0)
			t0 = now_ns();
	}
	r->v1 = (double)(n - 1) * 1e9 / (double)(now_ns() - t0);
	zmq_close(s);
	zmq_ctx_term(ctx);
}

static void
zmq_pong(struct bench *b, long n, struct result *r)
{
	void	*ctx = zmq_ctx_new(), *s = zmq_socket(ctx, ZMQ_REP);
	unsigned char p[PAYLOAD];
	long	 i;

	(void)r;
	if (zmq_connect(s, b->ipc) != 0)
		_exit(2);
	for (i = 0; i < n + WARMUP; i++)
		if (zmq_recv(s, p, PAYLOAD, 0) != PAYLOAD ||
		    zmq_send(s, p, PAYLOAD, 0) != PAYLOAD)
			_exit(3);
	zmq_close(s);
	zmq_ctx_term(ctx);
}

static void
zmq_ping(struct bench *b, long n, struct result *r)
{
	void	*ctx = zmq_ctx_new(), *s = zmq_socket(ctx, ZMQ_REQ);
	unsigned char p[PAYLOAD] = { 0 };
	uint64_t *smp = calloc((size_t)n, sizeof(*smp)), t;
	long	 i;

	if (zmq_bind(s, b->ipc) != 0) {
		perror("zmq_bind");
		exit(2);
	}
	for (i = 0; i < n + WARMUP; i++) {
		t = now_ns();
		if (zmq_send(s, p, PAYLOAD, 0) != PAYLOAD ||
		    zmq_recv(s, p, PAYLOAD, 0) != PAYLOAD)
			exit(3);
		if (i >= WARMUP)
			smp[i - WARMUP] = now_ns() - t;
	}
	percentiles(smp, n, r);
	free(smp);
	zmq_close(s);
	zmq_ctx_term(ctx);
}

/* --- running and reporting ---------------------------------------------------- */

static void
setup_fds(struct bench *b, const struct bcase *c)
{
	memset(b->fds, -1, sizeof(b->fds));
	if (c->parent == pipe_cons) {
		if (pipe(b->fds) == -1)
			exit(1);
	} else if (c->parent == unix_cons) {
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, b->fds) == -1)
			exit(1);
	}
}

static void
close_fds(struct bench *b)
{
	int	 i;

	for (i = 0; i < 4; i++)
		if (b->fds[i] >= 0)
			close(b->fds[i]);
}

/* A throughput run's regime, from what both sides noted (struct regime). */
static void
regime_of(struct bench *b, struct result *r)
{
	const struct regime *g = &b->sh->reg;

	if (g->n <= 0)
		return;
	r->lag = g->lags > 0 ? (double)g->lag / (double)g->lags : -1;
	r->batch = g->batches > 0 ? (double)g->n / (double)g->batches : -1;
	r->sleeps = (double)g->sleeps;
}

static void
run_case(struct bench *b, const struct bcase *c, struct result *out)
{
	struct result	 r = { 0, 0, -1, -1, -1 };
	pid_t		 pids[2];
	long		 n = (long)((double)c->n * b->scale * b->slice);
	int		 i;

	if (n < 1000)
		n = 1000;
	memset(b->sh, 0, sizeof(*b->sh));
	lad_reset(&b->sh->lad);
	b->rung = c->rung;
	for (i = 0; i < BARE_CAP; i++) {
		atomic_store(&b->sh->ring[0].cells[i].seq, (uint64_t)i);
		atomic_store(&b->sh->ring[1].cells[i].seq, (uint64_t)i);
	}
	arena_new(b);
	snprintf(b->ipc, sizeof(b->ipc), "ipc:///tmp/actord-bench-%d-%s.ipc",
	    (int)getpid(), c->key);
	setup_fds(b, c);
	if (c->child == zmq_prod) {
		/* PULL binds first so no message waits for a reconnect. */
		fflush(NULL);
		if ((pids[0] = fork()) == 0) {
			pin(CPU_CHILD);
			while (atomic_load(&b->sh->ready) == 0)
				usleep(1000);
			zmq_prod(b, n, &r);
			_exit(0);
		}
	} else
		for (i = 0; i < c->nchildren; i++)
			pids[i] = spawn(b, c->child, n);
	c->parent(b, n, &r);
	for (i = 0; i < c->nchildren; i++)
		reap(pids[i]);
	regime_of(b, &r);
	close_fds(b);
	unlink(b->ipc + strlen("ipc://"));
	*out = r;
}

static double
median(double *v, int n)
{
	int	 i, j;
	double	 t;

	for (i = 1; i < n; i++)
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The median of the rounds' field f (a struct result member) that are >= 0. */
static double
median_of(const struct result *rs, int n, size_t off)
{
	double	 v[ROUNDS], x;
	int	 i, k = 0;

	for (i = 0; i < n; i++) {
		memcpy(&x, (const char *)&rs[i] + off, sizeof(x));
		if (x >= 0)
			v[k++] = x;
	}
	return k > 0 ? median(v, k) : -1;
}

static void
report(struct bench *b, const struct bcase *c, struct result *rs, int n)
{
	struct result	 m;

	m.v1 = median_of(rs, n, offsetof(struct result, v1));
	m.v2 = median_of(rs, n, offsetof(struct result, v2));
	m.lag = median_of(rs, n, offsetof(struct result, lag));
	m.batch = median_of(rs, n, offsetof(struct result, batch));
	m.sleeps = median_of(rs, n, offsetof(struct result, sleeps));
	if (c->unit == UNIT_RATE) {
		emit(b, c, "", m.v1, "msg/s", b->bare_rate, b->zmq_rate,
		    b->pipe_rate, &m);
	} else {
		emit(b, c, " p50", m.v1, "ns", b->bare_p50, b->zmq_p50,
		    b->pipe_p50, NULL);
		emit(b, c, " p99", m.v2, "ns", b->bare_p99, b->zmq_p99,
		    b->pipe_p99, NULL);
	}
}

/* The baselines' medians, before any line is printed. */
static void
baselines(struct bench *b, struct result (*rs)[ROUNDS])
{
	double	 v1[ROUNDS], v2[ROUNDS], m1, m2;
	size_t	 k;
	int	 i;

	for (k = 0; k < NCASES; k++) {
		if (cases[k].baseline == 0)
			continue;
		for (i = 0; i < ROUNDS; i++) {
			v1[i] = rs[k][i].v1;
			v2[i] = rs[k][i].v2;
		}
		m1 = median(v1, ROUNDS);
		m2 = median(v2, ROUNDS);
		if (cases[k].unit == UNIT_RATE) {
			if (cases[k].baseline == 1)
				b->bare_rate = m1;
			else if (cases[k].baseline == 2)
				b->zmq_rate = m1;
			else
				b->pipe_rate = m1;
		} else if (cases[k].baseline == 1) {
			b->bare_p50 = m1;
			b->bare_p99 = m2;
		} else if (cases[k].baseline == 2) {
			b->zmq_p50 = m1;
			b->zmq_p99 = m2;
		} else {
			b->pipe_p50 = m1;
			b->pipe_p99 = m2;
		}
	}
}

static int
case_of(const char *key)
{
	size_t	 k;

	for (k = 0; k < NCASES; k++)
		if (strcmp(cases[k].key, key) == 0)
			return (int)k;
	return -1;
}

/*
 * The median over the rounds of case x / case y (first figure: rate or
 * p50): both ran in the same round, seconds apart, so the machine's mood
 * of the moment weighs on both.
 */
static double
round_ratio(struct result (*rs)[ROUNDS], const char *x, const char *y)
{
	double	 v[ROUNDS];
	int	 i, kx = case_of(x), ky = case_of(y);

	if (kx < 0 || ky < 0)
		return 0;
	for (i = 0; i < ROUNDS; i++)
		v[i] = rs[ky][i].v1 > 0 ? rs[kx][i].v1 / rs[ky][i].v1 : 0;
	return median(v, ROUNDS);
}

static void
targets(struct result (*rs)[ROUNDS])
{
	double	 r;

	printf("targets, as medians of the per-round ratios:\n");
	r = round_ratio(rs, "tput_mailbox_spin_sleep", "tput_bare_ring");
	printf("  mailbox spin-then-sleep / bare ring throughput = %.3fx "
	    "(target >= 0.9x): %s\n", r, r >= 0.9 ? "met" : "NOT met");
	r = round_ratio(rs, "tput_mailbox_spin_sleep", "tput_zmq_ipc");
	printf("  mailbox spin-then-sleep / zeromq ipc throughput = %.1fx "
	    "(target >= 5x): %s\n", r, r >= 5 ? "met" : "NOT met");
	r = round_ratio(rs, "tput_mailbox_spin_sleep", "tput_pipe");
	printf("  mailbox spin-then-sleep / pipe throughput = %.1fx "
	    "(target >= 25x): %s\n", r, r >= 25 ? "met" : "NOT met");
	r = round_ratio(rs, "rtt_mailbox_spin_sleep", "rtt_bare_ring");
	printf("  mailbox spin-then-sleep / bare ring round trip p50 = %.2fx "
	    "(target <= 1.5x): %s\n", r, r <= 1.5 ? "met" : "NOT met");
	r = round_ratio(rs, "rtt_mailbox_sleep", "rtt_pipe");
	printf("  mailbox futex / pipe round trip p50 = %.2fx "
	    "(target <= 1x): %s\n", r, r <= 1 ? "met" : "NOT met");
}

static void
emit(struct bench *b, const struct bcase *c, const char *suffix, double v,
    const char *unit, double bare, double zmqv, double pipev,
    const struct result *reg)
{
	char	 name[96], key[96], shown[32], rg[64] = "";
	double	 rb = bare > 0 ? v / bare : 0, rz = zmqv > 0 ? v / zmqv : 0;
	double	 rp = pipev > 0 ? v / pipev : 0;
	size_t	 i;

	snprintf(name, sizeof(name), "%s %s%s", c->unit == UNIT_RATE ?
	    "tput" : "rtt ", c->name, suffix);
	snprintf(key, sizeof(key), "%s%s", c->key, suffix);
	for (i = 0; key[i] != '\0'; i++)
		if (key[i] == ' ')
			key[i] = '_';
	if (c->unit == UNIT_RATE)
		snprintf(shown, sizeof(shown), "%8.3f M msg/s", v / 1e6);
	else
		snprintf(shown, sizeof(shown), "%8.2f us", v / 1e3);
	if (reg != NULL && reg->lag >= 0)
		snprintf(rg, sizeof(rg), "  lag %.0f batch %.0f sleeps %.0f",
		    reg->lag, reg->batch, reg->sleeps);
	printf("%-44s %16s %8.3f %8.3f %8.3f%s\n", name, shown, rb, rz, rp,
	    rg);
	fflush(stdout);
	if (b->json != NULL) {
		fprintf(b->json, "%s\n  { \"name\": \"%s\", \"value\": %.1f, "
		    "\"unit\": \"%s\", \"ratios\": { \"vs_bare_ring\": %.4f, "
		    "\"vs_zmq_ipc\": %.4f, \"vs_pipe\": %.4f }",
		    b->njson++ ? "," : "", key, v, unit, rb, rz, rp);
		if (rg[0] != '\0')
			fprintf(b->json, ", \"regime\": { \"lag\": %.1f, "
			    "\"batch\": %.1f, \"sleeps\": %.0f }", reg->lag,
			    reg->batch, reg->sleeps);
		fprintf(b->json, " }");
	}
}

/* The sleep group's round, its figures filed under their own cases. */
static void
sleep_round(struct bench *b, struct result (*rs)[ROUNDS], int round)
{
	struct result	 out[NSLEEP];
	long		 n = (long)((double)cases[case_of("rtt_pipe")].n *
			    b->scale);
	int		 w;

	if (n < 1000)
		n = 1000;
	sleep_group_run(b, n, out);
	for (w = 0; w < NSLEEP; w++)
		rs[case_of(sleep_keys[w])][round] = out[w];
}

/*
 * One round of the paired slices: the bare ring and the mailbox, PAIRS
 * times, which first alternating, each on PAIR_SLICE of its messages.
 */
static void
pair_round(struct bench *b, int round)
{
	const struct bcase *bare = &cases[case_of("tput_bare_ring")];
	const struct bcase *fence = &cases[case_of("tput_ladder_fence")];
	const struct bcase *cas = &cases[case_of("tput_ladder_mpsc")];
	const struct bcase *hdr = &cases[case_of("tput_ladder_spsc_hdr")];
	const struct bcase *mb = &cases[case_of("tput_mailbox_busy")];
	struct pair	*p;
	int		 k;

	b->slice = PAIR_SLICE;
	for (k = 0; k < PAIRS; k++) {
		p = &b->pairs[round * PAIRS + k];
		if (k % 2 == 0) {
			run_case(b, bare, &p->bare);
			run_case(b, fence, &p->fence);
			run_case(b, cas, &p->cas);
			run_case(b, hdr, &p->hdr);
			run_case(b, mb, &p->mb);
		} else {
			run_case(b, mb, &p->mb);
			run_case(b, hdr, &p->hdr);
			run_case(b, cas, &p->cas);
			run_case(b, fence, &p->fence);
			run_case(b, bare, &p->bare);
		}
	}
	b->slice = 1;
}

/*
 * The pairs, each with its regimes, then the medians over the pairs whose
 * bare ring ran close behind its producer and over those far behind
 * (lag >= LAG_FAR): the mailbox against the bare ring and against the CAS
 * rung on the same host, regime by regime.
 */
static void
pair_report(struct bench *b)
{
	const struct pair *p;
	/*
	 * bare, fence, CAS rung, header rung, mailbox, mailbox / bare,
	 * mailbox / CAS, mailbox / header rung, header rung / bare
	 */
	double	 v[9][2][ROUNDS * PAIRS], med[9];
	int	 i, j, far, k[2] = { 0, 0 };
	static const char *const name[2] = { "close", "far" };

	printf("paired slices (bare ring, fence rung, CAS rung, header rung "
	    "(one producer, the mailbox's cells and header), mailbox "
	    "busy-poll (one producer: the express path), or the other way "
	    "round), M msg/s; lag: messages the consumer ran behind:\n");
	printf("  %4s %7s %4s %7s %4s %7s %4s %7s %4s %7s %4s %5s %6s %7s "
	    "%6s %6s\n", "pair", "bare", "lag", "fence", "lag", "CAS", "lag",
	    "header", "lag", "mailbox", "lag", "batch", "sleeps", "mb/bare",
	    "mb/CAS", "mb/hdr");
	for (i = 0; i < ROUNDS * PAIRS; i++) {
		p = &b->pairs[i];
		if (p->bare.v1 <= 0 || p->cas.v1 <= 0 || p->hdr.v1 <= 0)
			continue;
		far = p->bare.lag >= LAG_FAR;
		v[0][far][k[far]] = p->bare.v1;
		v[1][far][k[far]] = p->fence.v1;
		v[2][far][k[far]] = p->cas.v1;
		v[3][far][k[far]] = p->hdr.v1;
		v[4][far][k[far]] = p->mb.v1;
		v[5][far][k[far]] = p->mb.v1 / p->bare.v1;
		v[6][far][k[far]] = p->mb.v1 / p->cas.v1;
		v[7][far][k[far]] = p->mb.v1 / p->hdr.v1;
		v[8][far][k[far]] = p->hdr.v1 / p->bare.v1;
		printf("  %4d %7.2f %4.0f %7.2f %4.0f %7.2f %4.0f %7.2f %4.0f "
		    "%7.2f %4.0f %5.0f %6.0f %7.3f %6.3f %6.3f\n", i,
		    p->bare.v1 / 1e6, p->bare.lag, p->fence.v1 / 1e6,
		    p->fence.lag, p->cas.v1 / 1e6, p->cas.lag,
		    p->hdr.v1 / 1e6, p->hdr.lag, p->mb.v1 / 1e6, p->mb.lag,
		    p->mb.batch, p->mb.sleeps, v[5][far][k[far]],
		    v[6][far][k[far]], v[7][far][k[far]]);
		k[far]++;
	}
	for (far = 0; far < 2; far++) {
		if (k[far] == 0) {
			printf("  bare ring %s behind (lag %s %d): no pair\n",
			    name[far], far ? ">=" : "<", LAG_FAR);
			continue;
		}
		for (j = 0; j < 9; j++)
			med[j] = median(v[j][far], k[far]);
		printf("  bare ring %s behind (lag %s %d), %d pairs, medians: "
		    "bare %.2f, fence rung %.2f, CAS rung %.2f, header rung "
		    "%.2f, mailbox %.2f M msg/s; mailbox / bare %.3fx, "
		    "mailbox / CAS rung %.3fx, mailbox / header rung %.3fx, "
		    "header rung / bare %.3fx\n",
		    name[far], far ? ">=" : "<", LAG_FAR, k[far], med[0] / 1e6,
		    med[1] / 1e6, med[2] / 1e6, med[3] / 1e6, med[4] / 1e6,
		    med[5], med[6], med[7], med[8]);
		if (b->json != NULL)
			fprintf(b->json, "%s\n  { \"name\": \"tput_pair_%s\", "
			    "\"value\": %.4f, \"unit\": \"mailbox/bare\", "
			    "\"pairs\": %d, \"bare\": %.1f, \"fence_rung\": "
			    "%.1f, \"cas_rung\": %.1f, \"header_rung\": %.1f, "
			    "\"mailbox\": %.1f, \"mailbox_vs_cas_rung\": %.4f, "
			    "\"mailbox_vs_header_rung\": %.4f, "
			    "\"header_rung_vs_bare\": %.4f }",
			    b->njson++ ? "," : "", name[far], med[5], k[far],
			    med[0], med[1], med[2], med[3], med[4], med[6],
			    med[7], med[8]);
	}
}

static int
one_handler(void *arg, enum shm_lane lane, const struct shm_msg *m,
    const void *payload)
{
	long	 v;

	(void)lane;
	(void)m;
	memcpy(&v, payload, sizeof(v));
	*(long *)arg += v;
	return 0;
}

/*
 * One round of the one-CPU costs (see the top of this file): the fastest
 * of ONE_REPS batches, each side timed apart, in ns a message.
 */
static void
one_cpu_round(struct bench *b, int round)
{
	struct shm_producer *p;
	struct shm_msg	 m;
	struct bare_ring *r;
	unsigned char	 pl[PAYLOAD] = { 0 };
	double		 best[4] = { 1e9, 1e9, 1e9, 1e9 }, d;
	uint64_t	 t[5], pos = 0;
	long		 i, k, v, sum = 0;
	int		 j;

	memset(b->sh, 0, sizeof(*b->sh));
	r = &b->sh->ring[0];
	for (i = 0; i < BARE_CAP; i++)
		atomic_store(&r->cells[i].seq, (uint64_t)i);
	arena_new(b);
	if (shm_producer_open(b->arena, &p) < 0) {
		fprintf(stderr, "bench_ring: one_cpu: no producer\n");
		exit(1);
	}
	memset(&m, 0, sizeof(m));
	m.len = PAYLOAD;
	m.tag = 1;
	for (k = 0; k < ONE_REPS; k++) {
		t[0] = now_ns();
		for (i = 0; i < ONE_BATCH; i++) {
			v = k * ONE_BATCH + i;
			memcpy(pl, &v, sizeof(v));
			if (shm_send(p, 0, SHM_LANE_MAIN, &m, pl, 0) != 0)
				exit(1);
		}
		t[1] = now_ns();
		if (shm_drain(b->arena, 0, SHM_LANES_INBOX, 0, one_handler,
		    &sum) != ONE_BATCH)
			exit(1);
		t[2] = now_ns();
		for (i = 0; i < ONE_BATCH; i++) {
			v = k * ONE_BATCH + i;
			memcpy(pl, &v, sizeof(v));
			bare_put(r, pos + (uint64_t)i, pl);
		}
		t[3] = now_ns();
		for (i = 0; i < ONE_BATCH; i++) {
			bare_get(r, pos + (uint64_t)i, pl);
			memcpy(&v, pl, sizeof(v));
			sum += v;
		}
		t[4] = now_ns();
		pos += ONE_BATCH;
		for (j = 0; j < 4; j++) {
			d = (double)(t[j + 1] - t[j]) / ONE_BATCH;
			if (d < best[j])
				best[j] = d;
		}
	}
	shm_producer_close(p);
	for (j = 0; j < 4; j++)
		b->one[round][j] = best[j];
	if (sum == 42)
		fprintf(stderr, "bench_ring: one_cpu: %ld\n", sum);
}

/* The one-CPU costs: medians over the rounds, and their ratios. */
static void
one_cpu_report(struct bench *b)
{
	static const char *const key[4] = { "one_cpu_mailbox_send",
	    "one_cpu_mailbox_drain", "one_cpu_bare_put", "one_cpu_bare_get" };
	double	 v[ROUNDS], med[4];
	int	 i, j;

	for (j = 0; j < 4; j++) {
		for (i = 0; i < ROUNDS; i++)
			v[i] = b->one[i][j];
		med[j] = median(v, ROUNDS);
	}
	printf("one CPU, ns a message (fastest batch of %d, median of %d "
	    "rounds): mailbox send %.2f, drain %.2f; bare ring put %.2f, get "
	    "%.2f; send / put %.2fx, drain / get %.2fx, both %.2fx\n",
	    ONE_BATCH, ROUNDS, med[0], med[1], med[2], med[3],
	    med[0] / med[2], med[1] / med[3],
	    (med[0] + med[1]) / (med[2] + med[3]));
	if (b->json == NULL)
		return;
	for (j = 0; j < 4; j++)
		fprintf(b->json, "%s\n  { \"name\": \"%s\", \"value\": %.3f, "
		    "\"unit\": \"ns\" }", b->njson++ ? "," : "", key[j],
		    med[j]);
}

/* Is the case key picked by BENCH_ONLY (NULL: all)? */
static int
picked(const char *only, const char *key)
{
	const char	*p, *e;
	size_t		 len;

	if (only == NULL)
		return 1;
	for (p = only; *p != '\0'; p = *e == ',' ? e + 1 : e) {
		e = strchr(p, ',');
		if (e == NULL)
			e = p + strlen(p);
		len = (size_t)(e - p);
		if (len > 0 && memmem(key, strlen(key), p, len) != NULL)
			return 1;
	}
	return 0;
}

int
main(void)
{
	struct bench	 b;
	const char	*path = getenv("BENCH_JSON"), *q = getenv("BENCH_QUICK");
	const char	*only = getenv("BENCH_ONLY");	/* a key substring */
	static struct result rs[NCASES][ROUNDS];
	size_t		 i;
	int		 round;

	memset(&b, 0, sizeof(b));
	b.scale = q != NULL && *q != '\0' ? atof(q) : 1.0;
	b.slice = 1;
	b.pairs = calloc(ROUNDS * PAIRS, sizeof(*b.pairs));
	if (b.pairs == NULL)
		return 1;
	if (b.scale <= 0 || b.scale > 10)
		b.scale = 1.0;
	b.sh = mmap(NULL, sizeof(*b.sh), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (b.sh == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	if (path != NULL && (b.json = fopen(path, "w")) == NULL) {
		perror(path);
		return 1;
	}
	if (b.json != NULL)
		fprintf(b.json, "{ \"payload\": %d, \"cpus\": [%d, %d], "
		    "\"ratio\": \"value / baseline value\", \"cases\": [",
		    PAYLOAD, CPU_PARENT, CPU_CHILD);
	pin(CPU_PARENT);
	signal(SIGPIPE, SIG_IGN);
	printf("bench_ring: %d-byte payloads, parent on CPU %d, child on CPU "
	    "%d%s\n", PAYLOAD, CPU_PARENT, CPU_CHILD, "");
	printf("ratios are value / baseline (throughput: higher is better; "
	    "latency: lower is better)\n");
	printf("%-44s %16s %8s %8s %8s\n", "case", "value", "vs bare",
	    "vs zmq", "vs pipe");
	for (round = 0; round < ROUNDS; round++) {
		for (i = 0; i < NCASES; i++)
			if (cases[i].parent != NULL && picked(only,
			    cases[i].key))
				run_case(&b, &cases[i], &rs[i][round]);
		if (picked(only, "rtt_sleep_group"))
			sleep_round(&b, rs, round);
		if (picked(only, "tput_pair"))
			pair_round(&b, round);
		if (picked(only, "one_cpu"))
			one_cpu_round(&b, round);
		fprintf(stderr, "bench_ring: round %d of %d done\n",
		    round + 1, ROUNDS);
	}
	baselines(&b, rs);
	for (i = 0; i < NCASES; i++)
		if (picked(only, cases[i].key) || (cases[i].parent == NULL &&
		    picked(only, "rtt_sleep_group")))
			report(&b, &cases[i], rs[i], ROUNDS);
	if (picked(only, "tput_pair"))
		pair_report(&b);
	if (picked(only, "one_cpu"))
		one_cpu_report(&b);
	if (only == NULL)
		targets(rs);
	if (b.json != NULL) {
		fprintf(b.json, "\n] }\n");
		fclose(b.json);
		printf("json: %s\n", path);
	}
	if (b.arena != NULL)
		shm_detach(b.arena);
	return 0;
}
