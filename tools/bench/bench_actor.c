/*
 * bench_actor.c: libactor through its public API, between two processes
 * pinned to CPUs 0 and 1, 64-byte payloads, against what a user could pick
 * instead and against the raw mailbox underneath:
 *
 *   ask round trip p50/p99: actor_ask with spin-then-sleep waits, with
 *	futex waits; the raw mailbox ping-pong (shm_send/shm_recv_wait,
 *	spinning); a pipe pair; a Unix stream socket request/reply; ZeroMQ
 *	REQ/REP over ipc://; next to the seeds' in-process 4.5 us;
 *	and the bare ring ping-pong of bench_ring (no wake-ups, no headers:
 *	the limit of this machine);
 *   tell throughput end to end (actor_tell -> actor_recv) against the raw
 *	mailbox two ways: shm_drain of everything published, the handler
 *	copying each payload out (bench_ring's mailbox case: the fair
 *	reference, the mailbox used as designed), and shm_wait + shm_drain of
 *	one message at a time (one batch per message: what the API's one
 *	message per call would cost if it were done the naive way);
 *   ask throughput with 1,000 asks in flight (actor_ask_send/_next).
 *
 * The machine is shared and noisy: every case runs ROUNDS times, the cases
 * interleaved round by round, and the medians are reported; each target
 * ratio is also given as the median of the per-round ratios.  Within a
 * round, the round trips the targets compare alternate in CHUNKS slices
 * and pool their samples, so the two sides of a ratio ran within
 * milliseconds of each other, not seconds.  The spinning ones (ask, raw
 * mailbox, bare ring) rotate their order within a slice.  The sleeping
 * ones (futex ask, pipe) run in the same two processes, one round trip of
 * each in turn: how fast an idle vCPU wakes here changes within tens of
 * milliseconds (paired_sleep_rt), so even slices put them on different
 * machines.
 *
 * Prints a table and the target ratios, and writes every figure as
 * JSON to $BENCH_JSON.  BENCH_QUICK=0.1 scales the iteration counts down.
 * The parent measures; the child serves.
 */
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "shm/shm.h"
#include "tools/bench/bench_arena.h"
#include "tools/bench/bench_common.h"
#include "worker/actor.h"

#define CPU_PARENT	0
#define CPU_CHILD	1
#define IN_FLIGHT	1000
#define SEED_ASK_NS	4500.0
#define T_REQ		1
#define T_QUIT		2
#define ROUNDS		5	/* medians of five interleaved rounds */
#define CHUNKS		8	/* slices of a round the round trips alternate in */

/* The one state struct of this program. */
/* Samples of one case, pooled over the chunks of a round. */
struct pool {
	uint64_t	*s;
	long		 n, cap;
};

struct bench {
	struct shm_arena *arena;
	double		 scale;
	FILE		*json;
	int		 njson;
	char		 ipc[128];
	struct bare_ring *bare;		/* two rings, shared with children */
	struct pool	*sink;		/* non-NULL: samples go there */
};

struct lat {
	double		 p50, p99;
};

static void	 arena_new(struct bench *);
static long	 iters(struct bench *, long);
static void	 lat_of(uint64_t *, long, struct lat *);
static void	 samples_done(struct bench *, uint64_t *, long, struct lat *);
static void	 interleaved(struct bench *, long, long, struct lat *,
		    struct lat *, struct lat *, struct lat *, struct lat *);
static void	 emit(struct bench *, const char *, const char *, double,
		    double);
static pid_t	 child(struct bench *, void (*)(struct bench *, long), long);
static void	 reap(pid_t);

static long
iters(struct bench *b, long n)
{
	long v = (long)((double)n * b->scale);

	return v < 100 ? 100 : v;
}

static void
lat_of(uint64_t *s, long n, struct lat *l)
{
	qsort(s, (size_t)n, sizeof(*s), cmp_u64);
	l->p50 = (double)s[n / 2];
	l->p99 = (double)s[n * 99 / 100];
}

/*
 * A case's samples: its quantiles, or, while a round interleaves cases in
 * chunks (b->sink set), added to that case's pool.
 */
static void
samples_done(struct bench *b, uint64_t *s, long n, struct lat *l)
{
	struct pool *p = b->sink;

	if (p == NULL) {
		lat_of(s, n, l);
		return;
	}
	if (p->n + n > p->cap) {
		p->cap = (p->n + n) * 2;
		if ((p->s = realloc(p->s, (size_t)p->cap * sizeof(*p->s))) ==
		    NULL) {
			perror("realloc");
			exit(1);
		}
	}
	memcpy(p->s + p->n, s, (size_t)n * sizeof(*s));
	p->n += n;
}

static void
emit(struct bench *b, const char *name, const char *unit, double v1,
    double v2)
{
	if (b->json == NULL)
		return;
	fprintf(b->json, "%s\n  { \"case\": \"%s\", \"unit\": \"%s\", ",
	    b->njson++ ? "," : "", name, unit);
	if (strcmp(unit, "ns") == 0)
		fprintf(b->json, "\"p50\": %.0f, \"p99\": %.0f }", v1, v2);
	else
		fprintf(b->json, "\"value\": %.0f }", v1);
}

/* A fresh arena: mailbox 0 the parent's, 1 the child's; both up. */
static void
arena_new(struct bench *b)
{
	if (b->arena != NULL)
		shm_detach(b->arena);
	b->arena = bench_arena("bench_actor", 2, 1024, 128, 1024);
}

static pid_t
child(struct bench *b, void (*fn)(struct bench *, long), long n)
{
	pid_t pid = fork();

	if (pid == -1) {
		perror("fork");
		exit(1);
	}
	if (pid == 0) {
		pin(CPU_CHILD);
		fn(b, n);
		_exit(0);
	}
	return pid;
}

static void
reap(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) == -1)
		;
}

static struct actor *
open_actor(struct bench *b, int idx, enum actor_wait w)
{
	struct actor *a;
	char err[ACTOR_ERRBUF];

	if (actor_open(b->arena, idx, &a, err, sizeof(err)) < 0) {
		fprintf(stderr, "actor_open: %s\n", err);
		exit(1);
	}
	actor_set_wait(a, w, -1);
	return a;
}

/* --- the server side ---------------------------------------------------- */

static void
serve(struct bench *b, enum actor_wait w)
{
	bench_echo(open_actor(b, 1, w), T_REQ, T_QUIT);
}

static void
serve_spin(struct bench *b, long n)
{
	(void)n;
	serve(b, ACTOR_WAIT_SPIN_SLEEP);
}

static void
quit(struct actor *a)
{
	struct actor_ref s = { 1, ACTOR_ANY };

	(void)actor_tell(a, s, T_QUIT, NULL, 0);
}

/* --- ask round trips ------------------------------------------------------ */

/* actor_ask, both sides spinning before they sleep. */
static void
ask_rt(struct bench *b, long n, struct lat *l)
{
	struct actor *a;
	struct actor_ref s = { 1, ACTOR_ANY };
	struct actor_msg r;
	unsigned char p[PAYLOAD];
	uint64_t *t, t0;
	long i, warm = n / 10;
	pid_t pid;

	arena_new(b);
	pid = child(b, serve_spin, n);
	a = open_actor(b, 0, ACTOR_WAIT_SPIN_SLEEP);
	memset(p, 7, sizeof(p));
	t = calloc((size_t)n, sizeof(*t));
	for (i = -warm; i < n; i++) {
		t0 = shm_now_ns();
		if (actor_ask(a, s, T_REQ, p, sizeof(p), 1000000000LL, &r)
		    != 0) {
			fprintf(stderr, "actor_ask (spin-then-sleep) failed\n");
			break;
		}
		if (i >= 0)
			t[i] = shm_now_ns() - t0;
	}
	quit(a);
	reap(pid);
	actor_close(a);
	samples_done(b, t, n, l);
	free(t);
}

/* The raw mailbox under the API: shm_send and shm_recv_wait, spinning. */
static void
raw_pong(struct bench *b, long n)
{
	struct shm_producer *p;
	struct shm_msg m;
	unsigned char buf[PAYLOAD];
	long i;

	(void)shm_producer_open(b->arena, &p);
	for (i = 0; i < n; i++) {
		if (shm_recv_wait(b->arena, 1, SHM_LANES_INBOX, SHM_WAIT_SPIN,
		    0, SHM_NO_TIMEOUT, &m, buf, sizeof(buf), NULL) != 0)
			break;
		m.flags = SHM_MSG_REPLY;
		(void)shm_send(p, 0, SHM_LANE_REPLY, &m, buf, 0);
	}
	shm_producer_close(p);
}

static void
raw_rt(struct bench *b, long n, struct lat *l)
{
	struct shm_producer *p;
	struct shm_msg m;
	unsigned char buf[PAYLOAD];
	uint64_t *t, t0;
	long i, warm = n / 10;
	pid_t pid;

	arena_new(b);
	pid = child(b, raw_pong, n + warm);
	(void)shm_producer_open(b->arena, &p);
	t = calloc((size_t)n, sizeof(*t));
	memset(buf, 7, sizeof(buf));
	for (i = -warm; i < n; i++) {
		memset(&m, 0, sizeof(m));
		m.tag = T_REQ;
		m.len = PAYLOAD;
		t0 = shm_now_ns();
		while (shm_send(p, 1, SHM_LANE_MAIN, &m, buf, 0) != 0)
			;
		(void)shm_recv_wait(b->arena, 0, SHM_LANE_BIT(SHM_LANE_REPLY),
		    SHM_WAIT_SPIN, 0, SHM_NO_TIMEOUT, &m, buf, sizeof(buf),
		    NULL);
		if (i >= 0)
			t[i] = shm_now_ns() - t0;
	}
	reap(pid);
	shm_producer_close(p);
	samples_done(b, t, n, l);
	free(t);
}

/* --- bench_ring's bare ring ping-pong, the limit ------------------------ */

static void
bare_reset(struct bench *b)
{
	int i, k;

	for (k = 0; k < 2; k++)
		for (i = 0; i < BARE_CAP; i++)
			atomic_store(&b->bare[k].cells[i].seq, (uint64_t)i);
}

static void
bare_pong(struct bench *b, long n)
{
	unsigned char p[PAYLOAD];
	long i;

	for (i = 0; i < n; i++) {
		bare_get(&b->bare[0], (uint64_t)i, p);
		bare_put(&b->bare[1], (uint64_t)i, p);
	}
}

static void
bare_rt(struct bench *b, long n, struct lat *l)
{
	unsigned char p[PAYLOAD];
	uint64_t *t, t0;
	long i, warm = n / 10;
	pid_t pid;

	bare_reset(b);
	pid = child(b, bare_pong, n + warm);
	t = calloc((size_t)n, sizeof(*t));
	memset(p, 7, sizeof(p));
	for (i = -warm; i < n; i++) {
		t0 = shm_now_ns();
		bare_put(&b->bare[0], (uint64_t)(i + warm), p);
		bare_get(&b->bare[1], (uint64_t)(i + warm), p);
		if (i >= 0)
			t[i] = shm_now_ns() - t0;
	}
	reap(pid);
	samples_done(b, t, n, l);
	free(t);
}

/* --- file descriptors: pipes and a Unix socket ----------------------------- */

static int fd_in = -1, fd_out = -1;	/* the child's ends, set before fork */

/* Read one request on fd_in and write it back on fd_out: 0, or -1. */
static int
fd_echo(void)
{
	unsigned char buf[PAYLOAD];
	size_t got;
	ssize_t r;

	for (got = 0; got < sizeof(buf); got += (size_t)r)
		if ((r = read(fd_in, buf + got, sizeof(buf) - got)) <= 0)
			return -1;
	if (write(fd_out, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		return -1;
	return 0;
}

/* One request/reply from the parent's side: 0, or -1. */
static int
fd_call(int out, int in, unsigned char *buf)
{
	size_t got;
	ssize_t r;

	if (write(out, buf, PAYLOAD) != (ssize_t)PAYLOAD)
		return -1;
	for (got = 0; got < PAYLOAD; got += (size_t)r)
		if ((r = read(in, buf + got, PAYLOAD - got)) <= 0)
			return -1;
	return 0;
}

static void
fd_pong(struct bench *b, long n)
{
	long i;

	(void)b;
	for (i = 0; i < n; i++)
		if (fd_echo() < 0)
			return;
}

/* A Unix stream socket pair, request/reply. */
static void
sock_rt(struct bench *b, long n, struct lat *l)
{
	unsigned char buf[PAYLOAD];
	int sv[2];
	uint64_t *t, t0;
	long i, warm = n / 10;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		exit(1);
	fd_in = fd_out = sv[1];
	pid = child(b, fd_pong, n + warm);
	t = calloc((size_t)n, sizeof(*t));
	memset(buf, 7, sizeof(buf));
	for (i = -warm; i < n; i++) {
		t0 = shm_now_ns();
		if (fd_call(sv[0], sv[0], buf) < 0)
			break;
		if (i >= 0)
			t[i] = shm_now_ns() - t0;
	}
	reap(pid);
	close(sv[0]);
	close(sv[1]);
	samples_done(b, t, n, l);
	free(t);
}

/* --- the futex ask and the pipe, round trip by round trip --------------- */

/* Round trip i of a paired run: does the ask go before the pipe's? */
static bool
ask_first(long i)
{
	return (i & 1) == 0;
}

/* The child of a paired run: the same order of asks and pipe messages. */
static void
serve_paired(struct bench *b, long n)
{
	struct actor *a = open_actor(b, 1, ACTOR_WAIT_SLEEP);
	struct actor_msg m;
	long i;
	int k;

	for (i = 0; i < n; i++)
		for (k = 0; k < 2; k++) {
			if ((k == 0) != ask_first(i)) {
				if (fd_echo() < 0)
					goto out;
				continue;
			}
			if (actor_recv(a, &m, ACTOR_FOREVER) != 0)
				goto out;
			(void)actor_reply(a, T_REQ, m.data, m.len);
		}
out:
	actor_close(a);
}

/*
 * The futex ask and the pipe ping-pong, both sides sleeping, in the same
 * two processes, alternating round trip by round trip (and which goes
 * first).  Run one after the other, even milliseconds apart, they did not
 * meet the same machine: here an idle vCPU wakes in 29 us for some 50 ms
 * after a busy spell and in 43 us after that, for a pipe and a futex
 * alike, so whichever case ran later in a slice looked slower.  Samples
 * go to the pools ask and fd.
 */
static void
paired_sleep_rt(struct bench *b, long n, struct pool *ask, struct pool *fd)
{
	struct actor *a;
	struct actor_ref s = { 1, ACTOR_ANY };
	struct actor_msg r;
	unsigned char p[PAYLOAD];
	uint64_t *ta, *tf, t0, t1, t2;
	long i, warm = n / 10;
	int in[2], out[2];
	bool first;
	pid_t pid;

	arena_new(b);
	if (pipe(in) == -1 || pipe(out) == -1)
		exit(1);
	fd_in = in[0];
	fd_out = out[1];
	pid = child(b, serve_paired, n + warm);
	a = open_actor(b, 0, ACTOR_WAIT_SLEEP);
	ta = calloc((size_t)n, sizeof(*ta));
	tf = calloc((size_t)n, sizeof(*tf));
	memset(p, 7, sizeof(p));
	for (i = -warm; i < n; i++) {
		t0 = shm_now_ns();
		first = ask_first(i + warm);	/* the child counts from 0 */
		if (first && actor_ask(a, s, T_REQ, p, sizeof(p),
		    1000000000LL, &r) != 0)
			break;
		t1 = shm_now_ns();
		if (fd_call(in[1], out[0], p) < 0)
			break;
		t2 = shm_now_ns();
		if (!first && actor_ask(a, s, T_REQ, p, sizeof(p),
		    1000000000LL, &r) != 0)
			break;
		if (i < 0)
			continue;
		tf[i] = t2 - t1;
		ta[i] = first ? t1 - t0 : shm_now_ns() - t2;
	}
	if (i < n)
		fprintf(stderr, "paired futex ask and pipe: stopped at %ld\n",
		    i);
	reap(pid);
	actor_close(a);
	close(in[0]);
	close(in[1]);
	close(out[0]);
	close(out[1]);
	b->sink = ask;
	samples_done(b, ta, n, NULL);
	b->sink = fd;
	samples_done(b, tf, n, NULL);
	b->sink = NULL;
	free(ta);
	free(tf);
}

/* --- ZeroMQ REQ/REP over ipc:// -------------------------------------------- */

static void
zmq_pong(struct bench *b, long n)
{
	void *ctx = zmq_ctx_new(), *s = zmq_socket(ctx, ZMQ_REP);
	unsigned char buf[PAYLOAD];
	long i;

	if (zmq_bind(s, b->ipc) != 0)
		_exit(1);
	for (i = 0; i < n; i++) {
		if (zmq_recv(s, buf, sizeof(buf), 0) < 0)
			break;
		(void)zmq_send(s, buf, sizeof(buf), 0);
	}
	zmq_close(s);
	zmq_ctx_term(ctx);
}

static void
zmq_rt(struct bench *b, long n, struct lat *l)
{
	void *ctx, *s;
	unsigned char buf[PAYLOAD];
	uint64_t *t, t0;
	long i, warm = n / 10;
	pid_t pid;

	snprintf(b->ipc, sizeof(b->ipc), "ipc:///tmp/bench_actor.%d",
	    (int)getpid());
	pid = child(b, zmq_pong, n + warm);
	ctx = zmq_ctx_new();
	s = zmq_socket(ctx, ZMQ_REQ);
	if (zmq_connect(s, b->ipc) != 0)
		exit(1);
	t = calloc((size_t)n, sizeof(*t));
	memset(buf, 7, sizeof(buf));
	for (i = -warm; i < n; i++) {
		t0 = shm_now_ns();
		(void)zmq_send(s, buf, sizeof(buf), 0);
		if (zmq_recv(s, buf, sizeof(buf), 0) < 0)
			break;
		if (i >= 0)
			t[i] = shm_now_ns() - t0;
	}
	reap(pid);
	zmq_close(s);
	zmq_ctx_term(ctx);
	unlink(b->ipc + 6);
	samples_done(b, t, n, l);
	free(t);
}

/* --- throughput ------------------------------------------------------------ */

static void
tell_prod(struct bench *b, long n)
{
	struct actor *a = open_actor(b, 1, ACTOR_WAIT_SPIN_SLEEP);
	struct actor_ref to = { 0, ACTOR_ANY };
	unsigned char p[PAYLOAD];
	long i;

	memset(p, 7, sizeof(p));
	for (i = 0; i < n; i++)
		while (actor_tell_timeout(a, to, T_REQ, p, sizeof(p),
		    SHM_NO_TIMEOUT) != 0)
			;
	actor_close(a);
}

static double
tell_rate(struct bench *b, long n)
{
	struct actor *a;
	struct actor_msg m;
	uint64_t t0 = 0;
	long i;
	pid_t pid;

	arena_new(b);
	a = open_actor(b, 0, ACTOR_WAIT_SPIN_SLEEP);
	pid = child(b, tell_prod, n);
	for (i = 0; i < n; i++) {
		if (actor_recv(a, &m, ACTOR_FOREVER) != 0)
			break;
		if (i == 0)
			t0 = shm_now_ns();
	}
	t0 = shm_now_ns() - t0;
	reap(pid);
	actor_close(a);
	return (double)(n - 1) * 1e9 / (double)t0;
}

static void
raw_prod(struct bench *b, long n)
{
	struct shm_producer *p;
	struct shm_msg m;
	unsigned char buf[PAYLOAD];
	long i;

	(void)shm_producer_open(b->arena, &p);
	memset(buf, 7, sizeof(buf));
	memset(&m, 0, sizeof(m));
	m.tag = T_REQ;
	m.len = PAYLOAD;
	for (i = 0; i < n; i++)
		while (shm_send(p, 0, SHM_LANE_MAIN, &m, buf, SHM_NO_TIMEOUT)
		    != 0)
			;
	shm_producer_close(p);
}

struct copy_count {
	long		 n;
	unsigned char	 buf[PAYLOAD];
};

static int
count_cb(void *arg, enum shm_lane lane, const struct shm_msg *m,
    const void *payload)
{
	(void)lane;
	(void)m;
	(void)payload;
	(*(long *)arg)++;
	return 0;
}

static double
raw_rate(struct bench *b, long n)
{
	uint64_t t0 = 0;
	long got = 0;
	pid_t pid;

	arena_new(b);
	pid = child(b, raw_prod, n);
	while (got < n) {
		if (shm_wait(b->arena, 0, SHM_LANES_INBOX, SHM_WAIT_SPIN_SLEEP,
		    -1, SHM_NO_TIMEOUT) != 0)
			break;
		if (got == 0)
			t0 = shm_now_ns();
		(void)shm_drain(b->arena, 0, SHM_LANES_INBOX, 1, count_cb,
		    &got);
	}
	t0 = shm_now_ns() - t0;
	reap(pid);
	return (double)(n - 1) * 1e9 / (double)t0;
}

/* The payload copied out, as actor_recv copies it into the in-hand slot. */
static int
copy_cb(void *arg, enum shm_lane lane, const struct shm_msg *m,
    const void *payload)
{
	struct copy_count *c = arg;

	(void)lane;
	memcpy(c->buf, payload, m->len <= sizeof(c->buf) ? m->len :
	    sizeof(c->buf));
	c->n++;
	return 0;
}

/* bench_ring's mailbox consumer: drain everything published, then wait. */
static double
raw_batch_rate(struct bench *b, long n)
{
	struct copy_count c;
	uint64_t t0 = 0;
	pid_t pid;

	arena_new(b);
	memset(&c, 0, sizeof(c));
	pid = child(b, raw_prod, n);
	while (c.n < n) {
		if (shm_drain(b->arena, 0, SHM_LANES_INBOX, 0, copy_cb,
		    &c) > 0) {
			if (t0 == 0)
				t0 = shm_now_ns();
			continue;
		}
		if (shm_wait(b->arena, 0, SHM_LANES_INBOX, SHM_WAIT_SPIN_SLEEP,
		    -1, SHM_NO_TIMEOUT) != 0)
			break;
	}
	t0 = shm_now_ns() - t0;
	reap(pid);
	return (double)(n - 1) * 1e9 / (double)t0;
}

static double
ask_inflight_rate(struct bench *b, long n)
{
	struct actor *a;
	struct actor_ref s = { 1, ACTOR_ANY };
	struct actor_msg r;
	unsigned char p[PAYLOAD];
	long sent = 0, done = 0;
	uint64_t t0, corr;
	pid_t pid;
	int rc;

	arena_new(b);
	pid = child(b, serve_spin, n);
	a = open_actor(b, 0, ACTOR_WAIT_SPIN_SLEEP);
	memset(p, 7, sizeof(p));
	t0 = shm_now_ns();
	while (done < n) {
		while (sent < n && actor_asks_pending(a) < IN_FLIGHT) {
			rc = actor_ask_send(a, s, T_REQ, p, sizeof(p),
			    5000000000LL, &corr);
			if (rc == ACTOR_EFULL)
				break;
			if (rc != 0) {
				fprintf(stderr, "ask_send: %s\n",
				    actor_strerror(rc));
				goto out;
			}
			sent++;
		}
		rc = actor_ask_next(a, &r, 1000000000LL, &corr);
		if (rc != 0 && rc != ACTOR_EAGAIN) {
			fprintf(stderr, "ask_next: %s\n", actor_strerror(rc));
			break;
		}
		if (rc == 0)
			done++;
	}
out:
	t0 = shm_now_ns() - t0;
	quit(a);
	reap(pid);
	actor_close(a);
	return (double)done * 1e9 / (double)t0;
}

static double
median(double *v, int n)
{
	double t;
	int i, j;

	for (i = 1; i < n; i++)
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The medians of p50 and p99 over the rounds. */
static void
lat_med(struct lat *r, int n, struct lat *out)
{
	double a[ROUNDS], c[ROUNDS];
	int i;

	for (i = 0; i < n; i++) {
		a[i] = r[i].p50;
		c[i] = r[i].p99;
	}
	out->p50 = median(a, n);
	out->p99 = median(c, n);
}

static double
rate_med(const double *r, int n)
{
	double a[ROUNDS];
	int i;

	for (i = 0; i < n; i++)
		a[i] = r[i];
	return median(a, n);
}

/* The median over the rounds of x[i] / y[i]. */
static double
ratio_med(const double *x, const double *y, int n)
{
	double a[ROUNDS];
	int i;

	for (i = 0; i < n; i++)
		a[i] = y[i] > 0 ? x[i] / y[i] : 0;
	return median(a, n);
}

static void
row_lat(const char *name, const struct lat *l, const struct lat *ref)
{
	printf("%-42s %10.0f ns %10.0f ns", name, l->p50, l->p99);
	if (ref != NULL)
		printf("   %6.2fx", l->p50 / ref->p50);
	printf("\n");
}

static void
row_rate(const char *name, double v, double ref)
{
	printf("%-42s %13.0f", name, v);
	if (ref > 0)
		printf("   %6.2fx", v / ref);
	printf("\n");
}

/*
 * The round trips compared by ratio, side by side: a round runs each in
 * CHUNKS slices, one slice of each in turn, and pools each one's samples,
 * so that a slow spell of this shared machine (they last seconds) falls
 * on every case alike instead of on whichever ran then.  The futex ask
 * and the pipe share their slices, round trip by round trip.
 */
static void
interleaved(struct bench *b, long n_fast, long n_slow, struct lat *spin,
    struct lat *raw, struct lat *bare, struct lat *sleep_, struct lat *pipe_)
{
	struct pool p[5];
	struct lat *out[5] = { spin, raw, bare, sleep_, pipe_ };
	long f = n_fast / CHUNKS, sl = n_slow / CHUNKS;
	int k, j;

	memset(p, 0, sizeof(p));
	for (k = 0; k < CHUNKS; k++) {
		/* Each case comes first in its group as often as last. */
		for (j = 0; j < 3; j++) {
			b->sink = &p[(j + k) % 3];
			switch ((j + k) % 3) {
			case 0:
				ask_rt(b, f, NULL);
				break;
			case 1:
				raw_rt(b, f, NULL);
				break;
			default:
				bare_rt(b, f, NULL);
				break;
			}
		}
		paired_sleep_rt(b, sl, &p[3], &p[4]);
	}
	b->sink = NULL;
	for (k = 0; k < 5; k++) {
		lat_of(p[k].s, p[k].n, out[k]);
		free(p[k].s);
	}
}

int
main(void)
{
	struct bench b;
	static struct lat rs[ROUNDS], rsl[ROUNDS], rr[ROUNDS], rbare[ROUNDS],
	    rp[ROUNDS], ru[ROUNDS], rz[ROUNDS];
	static double tell[ROUNDS], rawb[ROUNDS], raw1[ROUNDS], infl[ROUNDS],
	    sp50[ROUNDS], rawp50[ROUNDS], barep50[ROUNDS], slp50[ROUNDS],
	    pipep50[ROUNDS];
	struct lat spin, sleep_, raw, bare, pipe_, unx, zmq;
	const char *path = getenv("BENCH_JSON"), *q = getenv("BENCH_QUICK");
	double mtell, mrawb, mraw1, minfl;
	long n_fast, n_slow, n_rate;
	int r, full = getenv("BENCH_TELL_ONLY") == NULL;

	memset(&b, 0, sizeof(b));
	b.scale = q != NULL && *q != '\0' ? atof(q) : 1.0;
	if (b.scale <= 0 || b.scale > 10)
		b.scale = 1.0;
	b.bare = mmap(NULL, 2 * sizeof(struct bare_ring), PROT_READ |
	    PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (b.bare == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	if (path != NULL && (b.json = fopen(path, "w")) == NULL) {
		perror(path);
		return 1;
	}
	if (b.json != NULL)
		fprintf(b.json, "{ \"payload\": %d, \"cpus\": [%d, %d], "
		    "\"rounds\": %d, \"seed_ask_ns\": %.0f, \"cases\": [",
		    PAYLOAD, CPU_PARENT, CPU_CHILD, ROUNDS, SEED_ASK_NS);
	pin(CPU_PARENT);
	signal(SIGPIPE, SIG_IGN);
	n_fast = iters(&b, 100000);
	n_slow = iters(&b, 6000);
	n_rate = iters(&b, 2000000);

	for (r = 0; r < ROUNDS; r++) {
		if (full) {
			interleaved(&b, n_fast, n_slow, &rs[r], &rr[r],
			    &rbare[r], &rsl[r], &rp[r]);
			sock_rt(&b, n_slow, &ru[r]);
			zmq_rt(&b, n_slow / 2, &rz[r]);
			infl[r] = ask_inflight_rate(&b, n_rate / 4);
		}
		tell[r] = tell_rate(&b, n_rate);
		rawb[r] = raw_batch_rate(&b, n_rate);
		raw1[r] = raw_rate(&b, n_rate);
		sp50[r] = rs[r].p50;
		rawp50[r] = rr[r].p50;
		barep50[r] = rbare[r].p50;
		slp50[r] = rsl[r].p50;
		pipep50[r] = rp[r].p50;
		if (full)
			fprintf(stderr, "bench_actor: round %d of %d: ask %.0f "
			    "ns, raw %.0f ns, bare %.0f ns (%.2fx); futex ask "
			    "%.1f us, pipe %.1f us (%.2fx)\n", r + 1, ROUNDS,
			    sp50[r], rawp50[r], barep50[r], sp50[r] /
			    barep50[r], slp50[r] / 1000, pipep50[r] / 1000,
			    slp50[r] / pipep50[r]);
		else
			fprintf(stderr, "bench_actor: round %d of %d done\n",
			    r + 1, ROUNDS);
	}
	mtell = rate_med(tell, ROUNDS);
	mrawb = rate_med(rawb, ROUNDS);
	mraw1 = rate_med(raw1, ROUNDS);
	printf("bench_actor: %d-byte payloads, parent on CPU %d, child on CPU "
	    "%d, medians of %d interleaved rounds\n", PAYLOAD, CPU_PARENT,
	    CPU_CHILD, ROUNDS);
	if (!full) {
		printf("%-42s %13s   %s\n", "throughput", "per second",
		    "vs raw batch");
		row_rate("actor_tell -> actor_recv", mtell, mrawb);
		row_rate("raw mailbox, shm_drain batch (fair)", mrawb, mrawb);
		row_rate("raw mailbox, shm_wait+shm_drain 1 msg", mraw1, mrawb);
		printf("  tell / raw batch = %.2fx (median of per-round ratios "
		    "%.2fx), tell / raw 1-msg = %.2fx (%.2fx)\n",
		    mtell / mrawb, ratio_med(tell, rawb, ROUNDS),
		    mtell / mraw1, ratio_med(tell, raw1, ROUNDS));
		return 0;
	}
	lat_med(rs, ROUNDS, &spin);
	lat_med(rsl, ROUNDS, &sleep_);
	lat_med(rr, ROUNDS, &raw);
	lat_med(rbare, ROUNDS, &bare);
	lat_med(rp, ROUNDS, &pipe_);
	lat_med(ru, ROUNDS, &unx);
	lat_med(rz, ROUNDS, &zmq);
	minfl = rate_med(infl, ROUNDS);
	emit(&b, "actor_ask (spin-then-sleep)", "ns", spin.p50, spin.p99);
	emit(&b, "actor_ask (futex)", "ns", sleep_.p50, sleep_.p99);
	emit(&b, "raw mailbox ping-pong (spin)", "ns", raw.p50, raw.p99);
	emit(&b, "bare ring ping-pong (limit)", "ns", bare.p50, bare.p99);
	emit(&b, "pipe ping-pong", "ns", pipe_.p50, pipe_.p99);
	emit(&b, "unix socket request/reply", "ns", unx.p50, unx.p99);
	emit(&b, "zeromq REQ/REP ipc://", "ns", zmq.p50, zmq.p99);
	emit(&b, "actor_tell -> actor_recv", "msg/s", mtell, 0);
	emit(&b, "raw mailbox shm_drain batch", "msg/s", mrawb, 0);
	emit(&b, "raw mailbox shm_wait+shm_drain 1 msg", "msg/s", mraw1, 0);
	emit(&b, "actor_ask, 1000 in flight", "asks/s", minfl, 0);

	printf("%-42s %13s %13s   %s\n", "round trip", "p50", "p99",
	    "p50 vs bare");
	printf("%-42s %10.0f ns %13s\n", "seeds: ask in one process (Python)",
	    SEED_ASK_NS, "-");
	row_lat("actor_ask (spin-then-sleep)", &spin, &bare);
	row_lat("actor_ask (futex)", &sleep_, &bare);
	row_lat("raw mailbox ping-pong (spin)", &raw, &bare);
	row_lat("bare ring ping-pong (limit)", &bare, &bare);
	row_lat("pipe ping-pong", &pipe_, &bare);
	row_lat("unix socket request/reply", &unx, &bare);
	row_lat("zeromq REQ/REP ipc://", &zmq, &bare);
	printf("%-42s %13s   %s\n", "throughput", "per second",
	    "vs raw batch");
	row_rate("actor_tell -> actor_recv", mtell, mrawb);
	row_rate("raw mailbox, shm_drain batch (fair)", mrawb, mrawb);
	row_rate("raw mailbox, shm_wait+shm_drain 1 msg", mraw1, mrawb);
	row_rate("actor_ask, 1000 in flight", minfl, 0);
	printf("targets (ratios of medians; median of per-round ratios):\n");
	printf("  ask p50 spin %.0f ns (target <= 1000 ns): %s\n", spin.p50,
	    spin.p50 <= 1000 ? "met" : "NOT met");
	printf("  seeds' 4.5 us / ask p50 spin = %.1fx (target >= 4.5x)\n",
	    SEED_ASK_NS / spin.p50);
	printf("  ask p50 spin / bare ring ping-pong = %.2fx; %.2fx "
	    "(target <= 1.5x)\n", spin.p50 / bare.p50,
	    ratio_med(sp50, barep50, ROUNDS));
	printf("  ask p50 spin / raw mailbox ping-pong = %.2fx; %.2fx\n",
	    spin.p50 / raw.p50, ratio_med(sp50, rawp50, ROUNDS));
	printf("  ask p50 futex / pipe ping-pong = %.2fx; %.2fx "
	    "(target <= 1x)\n", sleep_.p50 / pipe_.p50,
	    ratio_med(slp50, pipep50, ROUNDS));
	printf("  zeromq p50 / ask p50 spin = %.1fx (target >= 50x)\n",
	    zmq.p50 / spin.p50);
	printf("  tell / raw batch (fair) = %.2fx; %.2fx (target >= 0.8x)\n",
	    mtell / mrawb, ratio_med(tell, rawb, ROUNDS));
	printf("  tell / raw 1 msg at a time = %.2fx; %.2fx\n",
	    mtell / mraw1, ratio_med(tell, raw1, ROUNDS));
	if (b.json != NULL) {
		fprintf(b.json, "\n], \"ratios\": { \"seed_over_ask_spin\": "
		    "%.2f, \"ask_spin_over_bare\": %.2f, "
		    "\"ask_spin_over_raw\": %.2f, "
		    "\"ask_futex_over_pipe\": %.2f, \"zmq_over_ask_spin\": "
		    "%.2f, \"tell_over_raw_batch\": %.2f, "
		    "\"tell_over_raw_1msg\": %.2f } }\n",
		    SEED_ASK_NS / spin.p50, spin.p50 / bare.p50,
		    spin.p50 / raw.p50, sleep_.p50 / pipe_.p50,
		    zmq.p50 / spin.p50, mtell / mrawb, mtell / mraw1);
		fclose(b.json);
	}
	if (b.arena != NULL)
		shm_detach(b.arena);
	return 0;
}
