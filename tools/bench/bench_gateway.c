/*
 * bench_gateway.c: messages between two nodes on 127.0.0.1, against raw
 * ZeroMQ over tcp://127.0.0.1 in the same run, 64-byte payloads.
 *
 *   node a (actord pinned to CPU 0) and node b (CPU 1), each with its
 *	gateway, CURVE on every connection;  this program, run again by
 *	node a as its worker /driver (--driver), looks up b:/sink (a
 *	tests/progs/actor_echo) and measures:
 *	  ask round trip p50/p99 by the remote reference (actor_ask);
 *	  tell throughput: actor_tell of N messages, then an ask of the
 *	  sink's count, which comes after them (order per pair): messages
 *	  delivered per second, and how many were not (dead letters);
 *   raw ZeroMQ between two processes pinned to CPUs 0 and 1: PUSH/PULL
 *	throughput and REQ/REP round trip, with and without CURVE.
 *
 * Erlang/OTP distribution is not measured here (not in this program).
 * Prints a table and the ratios, and writes the figures as JSON to
 * $BENCH_JSON.  BENCH_QUICK=0.1 scales the counts down.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "tools/bench/bench_common.h"
#include "worker/actor.h"

#define N_ASK		20000
#define N_TELL		200000
#define N_PUSH		500000
#define N_REQ		20000
#define BASE_PORT	17600

struct figures {
	double		 ask_p50, ask_p99;	/* us */
	double		 tell_rate;		/* delivered per s */
	uint64_t	 sent, delivered;
};

struct zfig {
	double		 push_rate;		/* msgs per s */
	double		 req_p50, req_p99;	/* us */
};

static double	 scale = 1.0;

static size_t
count_of(size_t n)
{
	size_t k = (size_t)((double)n * scale);

	return k < 100 ? 100 : k;
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
	uint64_t *v, t0, t;
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
	t0 = now_us();
	for (i = 0; i < f.sent; i++)
		(void)actor_tell(a, ref, 39, pay, sizeof(pay));
	if (actor_ask(a, ref, 40, NULL, 0, 60000000000LL, &r) < 0 ||
	    r.len != sizeof(uint64_t))
		return 1;
	t = now_us() - t0;
	memcpy(&f.delivered, r.data, sizeof(f.delivered));
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

/* --- the two nodes ---------------------------------------------------------- */

struct bnode {
	char		 dir[64];
	char		 pub[41], sec[41];
	pid_t		 pid;
	int		 port;
};

static void
write_file(const char *path, const char *text, mode_t mode)
{
	int fd;

	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)) == -1) {
		perror(path);
		exit(1);
	}
	(void)!write(fd, text, strlen(text));
	close(fd);
}

static void
node_conf(struct bnode *n, const char *name, const struct bnode *peer,
    const char *peername, const char *child)
{
	char path[128], conf[4096], key[64];

	snprintf(key, sizeof(key), "%s\n", n->sec);
	snprintf(path, sizeof(path), "%s/%s.key", n->dir, name);
	write_file(path, key, 0600);
	snprintf(conf, sizeof(conf),
	    "runtime_dir = \"%s/run\";\n"
	    "node = { name = \"%s\"; listen = \"tcp://127.0.0.1:%d\";\n"
	    "  secret_key_file = \"%s\";\n"
	    "  mailbox = { capacity = 65536; };\n"
	    "  peers = ( { name = \"%s\"; endpoint = \"tcp://127.0.0.1:%d\";\n"
	    "    public_key = \"%s\"; } ); };\n"
	    "supervisor = { children = ( %s ); };\n", n->dir, name, n->port,
	    path, peername, peer->port, peer->pub, child);
	snprintf(path, sizeof(path), "%s/actord.conf", n->dir);
	write_file(path, conf, 0644);
}

static pid_t
node_start(struct bnode *n, int cpu)
{
	char conf[128], log[128], actord[256];
	const char *build = getenv("BUILD");
	pid_t pid;
	int fd;

	snprintf(conf, sizeof(conf), "%s/actord.conf", n->dir);
	snprintf(log, sizeof(log), "%s/actord.log", n->dir);
	snprintf(actord, sizeof(actord), "%s/actord", build ? build : "build");
	if ((pid = fork()) == 0) {
		pin(cpu);
		if ((fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644)) != -1) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(actord, actord, "-c", conf, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* The gateway figures; 0, or -1 (the log says why). */
static int
run_nodes(const char *self, struct figures *f)
{
	struct bnode a, b;
	char child[1024], sink[512], res[128], prog[256];
	const char *build = getenv("BUILD");
	FILE *fp;
	int i, rc = -1;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	snprintf(a.dir, sizeof(a.dir), "/tmp/bench-gw-a-XXXXXX");
	snprintf(b.dir, sizeof(b.dir), "/tmp/bench-gw-b-XXXXXX");
	if (mkdtemp(a.dir) == NULL || mkdtemp(b.dir) == NULL ||
	    zmq_curve_keypair(a.pub, a.sec) != 0 ||
	    zmq_curve_keypair(b.pub, b.sec) != 0)
		return -1;
	a.port = BASE_PORT + (int)(getpid() % 200) * 2;
	b.port = a.port + 1;
	snprintf(res, sizeof(res), "%s/results", a.dir);
	if (realpath(self, prog) == NULL)
		return -1;
	snprintf(child, sizeof(child), "{ name = \"driver\"; exec = [\"%s\", "
	    "\"--driver\", \"%s\"]; ready = \"actor\"; env = { BENCH_QUICK = "
	    "\"%g\"; }; mailbox = { capacity = 1024; }; }", prog, res, scale);
	snprintf(sink, sizeof(sink), "{ name = \"sink\"; exec = [\"%s/%s\"]; "
	    "ready = \"actor\"; mailbox = { capacity = 65536; }; }",
	    realpath(build ? build : "build", NULL), "tests/progs/actor_echo");
	node_conf(&a, "a", &b, "b", child);
	node_conf(&b, "b", &a, "a", sink);
	b.pid = node_start(&b, 1);
	a.pid = node_start(&a, 0);
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
	kill(a.pid, SIGTERM);
	kill(b.pid, SIGTERM);
	waitpid(a.pid, NULL, 0);
	waitpid(b.pid, NULL, 0);
	if (rc != 0)
		fprintf(stderr, "bench_gateway: no figures from the driver; "
		    "see %s/actord.log\n", a.dir);
	else {
		snprintf(child, sizeof(child), "rm -rf '%s' '%s'", a.dir,
		    b.dir);
		(void)!system(child);
	}
	return rc;
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

int
main(int argc, char **argv)
{
	const char *q = getenv("BENCH_QUICK"), *path = getenv("BENCH_JSON");
	struct figures f;
	struct zfig plain, cz;
	FILE *j;
	int port;

	if (q != NULL && *q != '\0' && atof(q) > 0 && atof(q) <= 10)
		scale = atof(q);
	if (argc == 3 && strcmp(argv[1], "--driver") == 0)
		return driver(argv[2]);
	signal(SIGPIPE, SIG_IGN);
	port = BASE_PORT + 400 + (int)(getpid() % 200) * 2;
	memset(&f, 0, sizeof(f));
	if (run_zmq(false, port, &plain) == -1 ||
	    run_zmq(true, port + 2, &cz) == -1) {
		fprintf(stderr, "bench_gateway: raw ZeroMQ failed\n");
		return 1;
	}
	if (run_nodes(argv[0], &f) == -1)
		return 1;
	printf("bench_gateway: 64-byte payloads, node a on CPU 0, node b on "
	    "CPU 1, CURVE\n");
	printf("%-44s %12s %10s %10s\n", "case", "msgs/s", "p50 us",
	    "p99 us");
	printf("%-44s %12.0f %10.1f %10.1f\n", "cross-node tell, ask (gateway)",
	    f.tell_rate, f.ask_p50, f.ask_p99);
	printf("%-44s %12.0f %10.1f %10.1f\n", "raw ZeroMQ PUSH/PULL, REQ/REP, "
	    "CURVE", cz.push_rate, cz.req_p50, cz.req_p99);
	printf("%-44s %12.0f %10.1f %10.1f\n", "raw ZeroMQ PUSH/PULL, REQ/REP",
	    plain.push_rate, plain.req_p50, plain.req_p99);
	printf("tells: %llu sent, %llu delivered (the rest dead letters)\n",
	    (unsigned long long)f.sent, (unsigned long long)f.delivered);
	printf("ratios: tell throughput / raw PUSH/PULL with CURVE = %.2f "
	    "(target >= 1.0); ask p50 / raw REQ/REP p50 with CURVE = %.2f "
	    "(target <= 1.3)\n", f.tell_rate / cz.push_rate,
	    f.ask_p50 / cz.req_p50);
	printf("Erlang/OTP distribution: not measured by this benchmark\n");
	if (path != NULL && (j = fopen(path, "w")) != NULL) {
		fprintf(j, "{ \"payload\": %d, \"tell_per_s\": %.0f, "
		    "\"tells_sent\": %llu, \"tells_delivered\": %llu, "
		    "\"ask_p50_us\": %.1f, \"ask_p99_us\": %.1f, "
		    "\"zmq_curve_push_per_s\": %.0f, \"zmq_curve_req_p50_us\": "
		    "%.1f, \"zmq_curve_req_p99_us\": %.1f, \"zmq_push_per_s\": "
		    "%.0f, \"zmq_req_p50_us\": %.1f, \"zmq_req_p99_us\": %.1f, "
		    "\"tell_vs_zmq_curve\": %.3f, \"ask_vs_zmq_curve\": %.3f }\n",
		    PAYLOAD, f.tell_rate, (unsigned long long)f.sent,
		    (unsigned long long)f.delivered, f.ask_p50, f.ask_p99,
		    cz.push_rate, cz.req_p50, cz.req_p99, plain.push_rate,
		    plain.req_p50, plain.req_p99, f.tell_rate / cz.push_rate,
		    f.ask_p50 / cz.req_p50);
		fclose(j);
	}
	return 0;
}
