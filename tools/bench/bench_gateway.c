/*
 * bench_gateway.c: messages between nodes, 64-byte payloads, against raw
 * ZeroMQ and Erlang/OTP distribution in the same run (issue 14).
 *
 *   nodes:   node a (actord pinned to CPU 0) and node b (CPU 1), each with
 *	its gateway (the default mailbox, 4096 cells: a larger ring is a
 *	working set that no longer fits the caches, and the gateway's takes
 *	miss), CURVE on every connection;  this program, run again by
 *	node a as its worker /driver (--driver), looks up b:/sink (a
 *	tests/progs/actor_echo) and measures:
 *	  ask round trip p50/p99 by the remote reference (actor_ask);
 *	  tell throughput: after as many to warm up as the mailboxes hold,
 *	  actor_tell of N messages, then an ask of the sink's count, which
 *	  comes after them (order per pair): messages delivered per second,
 *	  and how many were not (dead letters);
 *   zmq:     raw ZeroMQ between two processes pinned to CPUs 0 and 1:
 *	PUSH/PULL throughput and REQ/REP round trip, with and without CURVE;
 *   erlang:  two Erlang nodes (bench_gateway_erlang.h, bench_dist.erl) on
 *	CPUs 0 and 1: gen_server call round trip, casts counted by a sink;
 *   handoff: what one wake-up of a sleeping thread costs on this host
 *	(a futex ping-pong on one CPU, and across CPUs 0 and 1): the unit of
 *	the ask's floor, since every hop of an ask is one;
 *   idle:    two nodes, nothing sent, default heartbeat (1 s): node a's
 *	gateway's context switches over 10 s (/proc), per heartbeat;
 *   mesh:    16 nodes on this host in a full mesh, idle: each gateway's
 *	resident memory, CPU time and context switches over 10 s.
 *
 * Prints a table and the targets as ratios, and writes the
 * figures as JSON to $BENCH_JSON.  BENCH_QUICK=0.1 scales the counts (and
 * the 10 s windows, down to 2 s) down; BENCH_ONLY=nodes,erlang (any of
 * the parts above, comma-separated) runs only those.
 */
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/futex.h>

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "tools/bench/bench_common.h"
#include "tools/bench/bench_gateway_erlang.h"
#include "tools/bench/bench_gateway_nodes.h"
#include "worker/actor.h"

#define N_ASK		20000
#define N_TELL		200000
#define N_TELL_WARM	65536	/* the sink's mailbox's capacity */
#define N_PUSH		500000
#define N_REQ		20000
#define N_CALL		20000
#define N_CAST		200000
#define N_HANDOFF	20000
#define WINDOW_S	10.0	/* the idle and mesh windows */
#define MESH		16
#define BASE_PORT	17600	/* nodes: 17600-17999 */
#define ZMQ_PORT	18000	/* raw ZeroMQ: 18000-18399 */
#define MESH_PORT	18400	/* idle and mesh: 18400-19999 */
#define EPMD_PORT	16400	/* Erlang's private epmd: 16400-16599 */

struct figures {
	double		 ask_p50, ask_p99;	/* us */
	double		 tell_rate;		/* delivered per s */
	uint64_t	 sent, delivered;
};

struct zfig {
	double		 push_rate;		/* msgs per s */
	double		 req_p50, req_p99;	/* us */
};

/* The idle peer: node a's gateway over the window. */
struct idle {
	double		 window_s, heartbeats;
	uint64_t	 wakeups, main_wakeups;	/* all threads; the loop's */
	double		 cpu_s;
};

/* The mesh: each of MESH gateways over the window, averaged. */
struct mesh {
	int		 nodes;
	double		 window_s;
	double		 rss_mb;		/* per gateway */
	double		 cpu_s;			/* per gateway, in the window */
	double		 wakeups;		/* per gateway, in the window */
};

struct all {
	struct figures	 f;
	struct zfig	 plain, cz;
	struct efig	 e;
	double		 same_cpu_us, cross_cpu_us;	/* one hand-off */
	struct idle	 idle;
	struct mesh	 mesh;
	bool		 ran_nodes, ran_zmq, ran_handoff, ran_idle, ran_mesh;
};

static double	 scale = 1.0;

static size_t
count_of(size_t n)
{
	size_t k = (size_t)((double)n * scale);

	return k < 100 ? 100 : k;
}

/* The idle and mesh windows: 10 s, shorter for a quick run (not < 2 s). */
static double
window_s(void)
{
	double w = WINDOW_S * (scale < 1.0 ? scale : 1.0);

	return w < 2.0 ? 2.0 : w;
}

static bool
part(const char *name)
{
	const char *only = getenv("BENCH_ONLY");

	return only == NULL || *only == '\0' || strstr(only, name) != NULL;
}

/* --- the driver: node a's worker ------------------------------------------ */

static int
driver(const char *out)
{
	struct actor *a;
	struct actor_ref ref;
	struct actor_msg r;
	struct figures f;
	char err[ACTOR_ERRBUF], pay[PAYLOAD];
	uint64_t *v, t0, t, before;
	size_t i, n;
	FILE *fp;
	int rc = -1, tries;

	if (actor_attach(&a, err, sizeof(err)) < 0 || actor_ready(a) < 0)
		return 1;
	memset(&f, 0, sizeof(f));
	memset(pay, 'x', sizeof(pay));
	for (tries = 0; tries < 200; tries++) {
		if ((rc = actor_lookup(a, "b:/sink", &ref)) == 0)
			break;
		usleep(100000);
	}
	if (rc != 0)
		return 1;
	n = count_of(N_ASK);
	if ((v = calloc(n, sizeof(*v))) == NULL)
		return 1;
	for (i = 0; i < n / 10; i++)		/* warm up */
		(void)actor_ask(a, ref, 1, pay, sizeof(pay), 5000000000LL, &r);
	for (i = 0; i < n; i++) {
		t0 = now_us();
		if (actor_ask(a, ref, 1, pay, sizeof(pay), 5000000000LL, &r) <
		    0)
			return 1;
		v[i] = now_us() - t0;
	}
	/* pct() gives ms of us samples: back to us. */
	f.ask_p50 = pct(v, n, 0.50) * 1000.0;
	f.ask_p99 = pct(v, n, 0.99) * 1000.0;
	free(v);
	f.sent = count_of(N_TELL);
	/*
	 * Warm up as the asks did: one pass over the cells of the mailboxes
	 * on the way (their pages are touched once, not during the run).
	 */
	for (i = 0; i < (f.sent < N_TELL_WARM ? f.sent : N_TELL_WARM); i++)
		(void)actor_tell(a, ref, 39, pay, sizeof(pay));
	if (actor_ask(a, ref, 40, NULL, 0, 60000000000LL, &r) < 0 ||
	    r.len != sizeof(uint64_t))
		return 1;
	memcpy(&before, r.data, sizeof(before));
	t0 = now_us();
	for (i = 0; i < f.sent; i++)
		(void)actor_tell(a, ref, 39, pay, sizeof(pay));
	if (actor_ask(a, ref, 40, NULL, 0, 60000000000LL, &r) < 0 ||
	    r.len != sizeof(uint64_t))
		return 1;
	t = now_us() - t0;
	memcpy(&f.delivered, r.data, sizeof(f.delivered));
	f.delivered -= before;
	f.tell_rate = (double)f.delivered / ((double)t / 1e6);
	if ((fp = fopen(out, "w")) == NULL)
		return 1;
	fprintf(fp, "%f %f %f %llu %llu\n", f.ask_p50, f.ask_p99, f.tell_rate,
	    (unsigned long long)f.sent, (unsigned long long)f.delivered);
	fclose(fp);
	actor_close(a);
	for (;;)
		pause();		/* until actord stops it */
}

/* --- two nodes: ask and tell ------------------------------------------------ */

/* The gateway figures; 0, or -1 (the log says why). */
static int
run_nodes(const char *self, struct figures *f)
{
	struct bnet net;
	char child[1024], sink[512], res[160], prog[256], build[256];
	const char *b = getenv("BUILD");
	FILE *fp;
	int i, rc = -1;

	if (net_init(&net, 2, BASE_PORT + (int)(getpid() % 200) * 2) == -1 ||
	    realpath(self, prog) == NULL ||
	    realpath(b != NULL ? b : "build", build) == NULL)
		return -1;
	snprintf(res, sizeof(res), "%s/results", net.n[0].dir);
	snprintf(child, sizeof(child), "{ name = \"driver\"; exec = [\"%s\", "
	    "\"--driver\", \"%s\"]; ready = \"actor\"; env = { BENCH_QUICK = "
	    "\"%g\"; }; mailbox = { capacity = 1024; }; }", prog, res, scale);
	snprintf(sink, sizeof(sink), "{ name = \"sink\"; exec = [\"%s/%s\"]; "
	    "ready = \"actor\"; mailbox = { capacity = 65536; }; }", build,
	    "tests/progs/actor_echo");
	net_conf(&net, 0, child, "");
	net_conf(&net, 1, sink, "");
	net_start(&net, 1, 1);
	net_start(&net, 0, 0);
	for (i = 0; i < 1200; i++) {		/* at most two minutes */
		if ((fp = fopen(res, "r")) != NULL) {
			unsigned long long s, d;

			if (fscanf(fp, "%lf %lf %lf %llu %llu", &f->ask_p50,
			    &f->ask_p99, &f->tell_rate, &s, &d) == 5) {
				f->sent = s;
				f->delivered = d;
				rc = 0;
			}
			fclose(fp);
			if (rc == 0)
				break;
		}
		usleep(100000);
	}
	if (rc != 0)
		fprintf(stderr, "bench_gateway: no figures from the driver\n");
	net_stop(&net, rc != 0);
	return rc;
}

/* --- the idle peer and the mesh -------------------------------------------- */

/*
 * n nodes, nothing but their gateways, default heartbeat, not pinned:
 * all up, then each gateway's figures before (s0) and after (s1) the
 * window.  0, or -1.
 */
static int
run_idle(int n, double window, struct pstat *s0, struct pstat *s1)
{
	struct bnet net;
	pid_t gw[NET_MAX];
	int i, rc = -1;

	if (net_init(&net, n, MESH_PORT + (int)(getpid() % 100) * NET_MAX) ==
	    -1)
		return -1;
	for (i = 0; i < n; i++) {
		net_conf(&net, i, "", "");
		net_start(&net, i, -1);
	}
	if (!net_all_up(&net, 60000)) {
		fprintf(stderr, "bench_gateway: the %d nodes did not all come "
		    "up\n", n);
		goto out;
	}
	usleep(1500000);		/* the first heartbeats, settled */
	for (i = 0; i < n; i++)
		if ((gw[i] = net_gateway(&net, i)) == -1 ||
		    proc_stat(gw[i], &s0[i]) == -1)
			goto out;
	usleep((useconds_t)(window * 1e6));
	for (i = 0; i < n; i++)
		if (proc_stat(gw[i], &s1[i]) == -1)
			goto out;
	rc = 0;
out:
	net_stop(&net, rc != 0);
	return rc;
}

static int
idle_peer(struct idle *d)
{
	struct pstat s0[2], s1[2];

	d->window_s = window_s();
	if (run_idle(2, d->window_s, s0, s1) == -1)
		return -1;
	d->heartbeats = d->window_s;		/* heartbeat = 1000 ms */
	d->wakeups = s1[0].vcs - s0[0].vcs;
	d->main_wakeups = s1[0].main_vcs - s0[0].main_vcs;
	d->cpu_s = s1[0].cpu_s - s0[0].cpu_s;
	return 0;
}

static int
mesh(struct mesh *m)
{
	struct pstat s0[MESH], s1[MESH];
	int i;

	m->nodes = MESH;
	m->window_s = window_s();
	if (run_idle(MESH, m->window_s, s0, s1) == -1)
		return -1;
	for (i = 0; i < MESH; i++) {
		m->rss_mb += (double)s1[i].rss_kb / 1024.0 / MESH;
		m->cpu_s += (s1[i].cpu_s - s0[i].cpu_s) / MESH;
		m->wakeups += (double)(s1[i].vcs - s0[i].vcs) / MESH;
	}
	return 0;
}

/* --- one hand-off: a futex ping-pong ------------------------------------------ */

static void
futex_wait(_Atomic uint32_t *w, uint32_t v)
{
	(void)syscall(SYS_futex, w, FUTEX_WAIT, v, NULL, NULL, 0);
}

static void
futex_wake(_Atomic uint32_t *w)
{
	(void)syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/*
 * Two processes on CPUs c0 and c1 hand a turn back and forth, each
 * sleeping on a futex until its turn: us per hand-off (half a round).
 */
static double
handoff(int c0, int c1)
{
	_Atomic uint32_t *w;
	uint32_t i, n = (uint32_t)count_of(N_HANDOFF), v;
	uint64_t t0, t;
	pid_t pid;

	w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED |
	    MAP_ANONYMOUS, -1, 0);
	if (w == MAP_FAILED)
		return 0;
	atomic_store(w, 0);
	if ((pid = fork()) == 0) {
		pin(c1);
		for (i = 0; i < n; i++) {
			while ((v = atomic_load(w)) != 2 * i + 1)
				futex_wait(w, v);
			atomic_store(w, 2 * i + 2);
			futex_wake(w);
		}
		_exit(0);
	}
	pin(c0);
	t0 = now_us();
	for (i = 0; i < n; i++) {
		atomic_store(w, 2 * i + 1);
		futex_wake(w);
		while ((v = atomic_load(w)) != 2 * i + 2)
			futex_wait(w, v);
	}
	t = now_us() - t0;
	waitpid(pid, NULL, 0);
	munmap((void *)(uintptr_t)w, 4096);
	return (double)t / n / 2.0;
}

/* --- raw ZeroMQ -------------------------------------------------------------- */

static void
curve(void *s, bool server, const char *spub, const char *ssec,
    const char *cpub, const char *csec)
{
	int one = 1;

	if (server) {
		zmq_setsockopt(s, ZMQ_CURVE_SERVER, &one, sizeof(one));
		zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, ssec, 41);
	} else {
		zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, spub, 41);
		zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, cpub, 41);
		zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, csec, 41);
	}
}

/* One raw case: PUSH/PULL then REQ/REP, child serving on CPU 1. */
static int
run_zmq(bool with_curve, int port, struct zfig *z)
{
	char spub[41], ssec[41], cpub[41], csec[41], ep[64], buf[PAYLOAD];
	size_t n = count_of(N_PUSH), m = count_of(N_REQ), i;
	uint64_t *v, t0;
	void *ctx, *s;
	int pfd[2], zero = 0;
	pid_t pid;

	zmq_curve_keypair(spub, ssec);
	zmq_curve_keypair(cpub, csec);
	memset(buf, 'z', sizeof(buf));
	if (pipe(pfd) == -1)
		return -1;
	if ((pid = fork()) == 0) {
		pin(1);
		ctx = zmq_ctx_new();
		s = zmq_socket(ctx, ZMQ_PULL);
		if (with_curve)
			curve(s, true, spub, ssec, cpub, csec);
		snprintf(ep, sizeof(ep), "tcp://127.0.0.1:%d", port);
		zmq_bind(s, ep);
		(void)!write(pfd[1], "r", 1);
		for (i = 0; i < n; i++)
			zmq_recv(s, buf, sizeof(buf), 0);
		(void)!write(pfd[1], "d", 1);
		zmq_close(s);
		s = zmq_socket(ctx, ZMQ_REP);
		if (with_curve)
			curve(s, true, spub, ssec, cpub, csec);
		snprintf(ep, sizeof(ep), "tcp://127.0.0.1:%d", port + 1);
		zmq_bind(s, ep);
		(void)!write(pfd[1], "r", 1);
		for (i = 0; i < m + m / 10; i++) {
			zmq_recv(s, buf, sizeof(buf), 0);
			zmq_send(s, buf, sizeof(buf), 0);
		}
		zmq_close(s);
		zmq_ctx_term(ctx);
		_exit(0);
	}
	pin(0);
	ctx = zmq_ctx_new();
	(void)!read(pfd[0], buf, 1);
	s = zmq_socket(ctx, ZMQ_PUSH);
	zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof(zero));
	if (with_curve)
		curve(s, false, spub, ssec, cpub, csec);
	snprintf(ep, sizeof(ep), "tcp://127.0.0.1:%d", port);
	zmq_connect(s, ep);
	zmq_send(s, buf, sizeof(buf), 0);	/* connected */
	t0 = now_us();
	for (i = 1; i < n; i++)
		zmq_send(s, buf, sizeof(buf), 0);
	(void)!read(pfd[0], buf, 1);
	z->push_rate = (double)n / ((double)(now_us() - t0) / 1e6);
	zmq_close(s);
	(void)!read(pfd[0], buf, 1);
	s = zmq_socket(ctx, ZMQ_REQ);
	zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof(zero));
	if (with_curve)
		curve(s, false, spub, ssec, cpub, csec);
	snprintf(ep, sizeof(ep), "tcp://127.0.0.1:%d", port + 1);
	zmq_connect(s, ep);
	if ((v = calloc(m, sizeof(*v))) == NULL)
		return -1;
	for (i = 0; i < m / 10; i++) {
		zmq_send(s, buf, sizeof(buf), 0);
		zmq_recv(s, buf, sizeof(buf), 0);
	}
	for (i = 0; i < m; i++) {
		t0 = now_us();
		zmq_send(s, buf, sizeof(buf), 0);
		zmq_recv(s, buf, sizeof(buf), 0);
		v[i] = now_us() - t0;
	}
	z->req_p50 = pct(v, m, 0.50) * 1000.0;
	z->req_p99 = pct(v, m, 0.99) * 1000.0;
	free(v);
	zmq_close(s);
	zmq_ctx_term(ctx);
	waitpid(pid, NULL, 0);
	close(pfd[0]);
	close(pfd[1]);
	return 0;
}

/* --- the table and the JSON ------------------------------------------------- */

static double
ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

static void
ratio_line(const char *what, double v, const char *op, double target,
    bool ran)
{
	bool met = op[0] == '>' ? v >= target : v <= target;

	if (!ran)
		printf("  %-52s %8s  %s %.1f\n", what, "-", op, target);
	else
		printf("  %-52s %8.2f  %s %.1f  %s\n", what, v, op, target,
		    met ? "met" : "NOT MET");
}

static void
table(const struct all *r)
{
	const struct efig *e = &r->e;

	printf("bench_gateway: 64-byte payloads, CURVE where said; node a "
	    "and the client side on CPU 0, node b and the server side on "
	    "CPU 1\n");
	printf("%-46s %12s %10s %10s\n", "case", "msgs/s", "p50 us",
	    "p99 us");
	if (r->ran_nodes)
		printf("%-46s %12.0f %10.1f %10.1f\n", "cross-node tell, ask "
		    "(gateway, CURVE)", r->f.tell_rate, r->f.ask_p50,
		    r->f.ask_p99);
	if (r->ran_zmq) {
		printf("%-46s %12.0f %10.1f %10.1f\n", "raw ZeroMQ PUSH/PULL, "
		    "REQ/REP, CURVE", r->cz.push_rate, r->cz.req_p50,
		    r->cz.req_p99);
		printf("%-46s %12.0f %10.1f %10.1f\n", "raw ZeroMQ PUSH/PULL, "
		    "REQ/REP", r->plain.push_rate, r->plain.req_p50,
		    r->plain.req_p99);
	}
	if (e->ran)
		printf("%-46s %12.0f %10.1f %10.1f\n", "Erlang distribution "
		    "cast, gen_server call", e->cast_rate, e->call_p50,
		    e->call_p99);
	else if (part("erlang"))
		printf("Erlang/OTP distribution: %s\n", e->why);
	if (r->ran_nodes)
		printf("tells: %llu sent, %llu delivered (the rest dead "
		    "letters)\n", (unsigned long long)r->f.sent,
		    (unsigned long long)r->f.delivered);
	if (r->ran_handoff)
		printf("one hand-off (a futex wake-up, the thread running): "
		    "%.1f us on one CPU, %.1f us across CPUs\n",
		    r->same_cpu_us, r->cross_cpu_us);
	if (r->ran_idle)
		printf("idle peer (2 nodes, heartbeat 1 s, %.0f s): %.1f "
		    "wake-ups per heartbeat (voluntary context switches; %.1f "
		    "of the gateway's loop, the rest ZeroMQ's I/O thread), "
		    "%.4f s CPU\n", r->idle.window_s, r->idle.wakeups /
		    r->idle.heartbeats, r->idle.main_wakeups /
		    r->idle.heartbeats, r->idle.cpu_s);
	if (r->ran_mesh)
		printf("mesh of %d nodes (%.0f s, idle): per gateway %.1f MB "
		    "resident, %.4f s CPU, %.0f wake-ups; per peer %.2f MB, "
		    "%.5f s CPU, %.1f wake-ups per heartbeat\n", r->mesh.nodes,
		    r->mesh.window_s, r->mesh.rss_mb, r->mesh.cpu_s,
		    r->mesh.wakeups, r->mesh.rss_mb / (r->mesh.nodes - 1),
		    r->mesh.cpu_s / (r->mesh.nodes - 1), r->mesh.wakeups /
		    (r->mesh.nodes - 1) / r->mesh.window_s);
	printf("targets (issue 14), as ratios in this run:\n");
	ratio_line("tell / raw ZeroMQ PUSH/PULL with CURVE", ratio(
	    r->f.tell_rate, r->cz.push_rate), ">=", 1.0, r->ran_nodes &&
	    r->ran_zmq);
	ratio_line("tell / Erlang distribution cast", ratio(r->f.tell_rate,
	    e->cast_rate), ">=", 5.0, r->ran_nodes && e->ran);
	ratio_line("ask p50 / raw ZeroMQ REQ/REP p50 with CURVE", ratio(
	    r->f.ask_p50, r->cz.req_p50), "<=", 1.3, r->ran_nodes &&
	    r->ran_zmq);
	ratio_line("ask p50 / Erlang gen_server call p50", ratio(
	    r->f.ask_p50, e->call_p50), "<=", 1.5, r->ran_nodes && e->ran);
	if (r->ran_idle)
		printf("  %-52s %8.1f  (2: a beat sent; its PONG and the "
		    "peer's PING received)\n", "idle loop wake-ups per heartbeat",
		    r->idle.main_wakeups / r->idle.heartbeats);
}

static void
json(const struct all *r, FILE *j)
{
	const struct efig *e = &r->e;

	fprintf(j, "{ \"payload\": %d", PAYLOAD);
	if (r->ran_nodes)
		fprintf(j, ", \"tell_per_s\": %.0f, \"tells_sent\": %llu, "
		    "\"tells_delivered\": %llu, \"ask_p50_us\": %.1f, "
		    "\"ask_p99_us\": %.1f", r->f.tell_rate,
		    (unsigned long long)r->f.sent,
		    (unsigned long long)r->f.delivered, r->f.ask_p50,
		    r->f.ask_p99);
	if (r->ran_zmq)
		fprintf(j, ", \"zmq_curve_push_per_s\": %.0f, "
		    "\"zmq_curve_req_p50_us\": %.1f, \"zmq_curve_req_p99_us\": "
		    "%.1f, \"zmq_push_per_s\": %.0f, \"zmq_req_p50_us\": %.1f, "
		    "\"zmq_req_p99_us\": %.1f", r->cz.push_rate, r->cz.req_p50,
		    r->cz.req_p99, r->plain.push_rate, r->plain.req_p50,
		    r->plain.req_p99);
	if (e->ran)
		fprintf(j, ", \"erlang_cast_per_s\": %.0f, "
		    "\"erlang_call_p50_us\": %.1f, \"erlang_call_p99_us\": "
		    "%.1f", e->cast_rate, e->call_p50, e->call_p99);
	else if (part("erlang"))
		fprintf(j, ", \"erlang\": \"%s\"", e->why);
	if (r->ran_handoff)
		fprintf(j, ", \"handoff_same_cpu_us\": %.2f, "
		    "\"handoff_cross_cpu_us\": %.2f", r->same_cpu_us,
		    r->cross_cpu_us);
	if (r->ran_idle)
		fprintf(j, ", \"idle_window_s\": %.0f, "
		    "\"idle_wakeups_per_heartbeat\": %.2f, "
		    "\"idle_loop_wakeups_per_heartbeat\": %.2f, "
		    "\"idle_cpu_s\": %.4f", r->idle.window_s, r->idle.wakeups /
		    r->idle.heartbeats, r->idle.main_wakeups /
		    r->idle.heartbeats, r->idle.cpu_s);
	if (r->ran_mesh)
		fprintf(j, ", \"mesh_nodes\": %d, \"mesh_window_s\": %.0f, "
		    "\"mesh_rss_mb_per_gateway\": %.2f, "
		    "\"mesh_cpu_s_per_gateway\": %.4f, "
		    "\"mesh_wakeups_per_gateway\": %.0f, "
		    "\"mesh_rss_mb_per_peer\": %.3f, \"mesh_cpu_s_per_peer\": "
		    "%.5f", r->mesh.nodes, r->mesh.window_s, r->mesh.rss_mb,
		    r->mesh.cpu_s, r->mesh.wakeups, r->mesh.rss_mb /
		    (r->mesh.nodes - 1), r->mesh.cpu_s / (r->mesh.nodes - 1));
	fprintf(j, ", \"ratios\": { ");
	fprintf(j, "\"tell_vs_zmq_curve\": %.3f, \"tell_vs_erlang_cast\": "
	    "%.3f, \"ask_vs_zmq_curve\": %.3f, \"ask_vs_erlang_call\": %.3f",
	    ratio(r->f.tell_rate, r->cz.push_rate), ratio(r->f.tell_rate,
	    e->cast_rate), ratio(r->f.ask_p50, r->cz.req_p50),
	    ratio(r->f.ask_p50, e->call_p50));
	fprintf(j, " }, \"targets\": { \"tell_vs_zmq_curve\": \">= 1.0\", "
	    "\"tell_vs_erlang_cast\": \">= 5\", \"ask_vs_zmq_curve\": "
	    "\"<= 1.3\", \"ask_vs_erlang_call\": \"<= 1.5\" } }\n");
}

int
main(int argc, char **argv)
{
	const char *q = getenv("BENCH_QUICK"), *path = getenv("BENCH_JSON");
	static struct all r;
	FILE *j;
	int port, status = 0;

	if (q != NULL && *q != '\0' && atof(q) > 0 && atof(q) <= 10)
		scale = atof(q);
	if (argc == 3 && strcmp(argv[1], "--driver") == 0)
		return driver(argv[2]);
	signal(SIGPIPE, SIG_IGN);
	port = ZMQ_PORT + (int)(getpid() % 200) * 2;
	if (part("zmq")) {
		if (run_zmq(false, port, &r.plain) == -1 ||
		    run_zmq(true, port + 2, &r.cz) == -1) {
			fprintf(stderr, "bench_gateway: raw ZeroMQ failed\n");
			status = 1;
		} else
			r.ran_zmq = true;
	}
	if (part("nodes")) {
		if (run_nodes(argv[0], &r.f) == -1)
			status = 1;
		else
			r.ran_nodes = true;
	}
	if (part("erlang"))
		erlang_dist(count_of(N_CALL), count_of(N_CAST), EPMD_PORT +
		    (int)(getpid() % 200), &r.e);
	if (part("handoff")) {
		r.same_cpu_us = handoff(0, 0);
		r.cross_cpu_us = handoff(0, 1);
		r.ran_handoff = true;
	}
	if (part("idle")) {
		if (idle_peer(&r.idle) == -1)
			status = 1;
		else
			r.ran_idle = true;
	}
	if (part("mesh")) {
		if (mesh(&r.mesh) == -1)
			status = 1;
		else
			r.ran_mesh = true;
	}
	table(&r);
	if (path != NULL && (j = fopen(path, "w")) != NULL) {
		json(&r, j);
		fclose(j);
	}
	return status;
}
