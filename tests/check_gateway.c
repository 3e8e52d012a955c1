/*
 * check_gateway.c: nodes end to end.  Three real actords on 127.0.0.1,
 * each with its own runtime directory, key pair and ephemeral port, each
 * with a node block naming the others as its peers, so that each runs the
 * real gateway (build/actord-gateway) as /@gateway; three more in network
 * namespaces joined by a bridge for a real partition.  actorctl asks and sends
 * across, actors hold remote references (tests/progs/actor_echo), and
 * nodes are killed with SIGKILL and started again for a new epoch.  A raw
 * ZeroMQ client (with CURVE) plays an unknown key and a client that sends
 * garbage.
 *
 * Durations asserted are correctness bounds only: an ask that fails
 * because its node died must come back long before its timeout.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

#include "tests/lib/ctltest.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tnet.h"
#include "tests/lib/tsup.h"
#include "worker/remote.h"

#define WAIT		10000	/* ms for anything to happen */
#define NNODES		3	/* started by start_all */
#define NSNODES		3	/* the partition's, in namespaces */

struct tnode {
	struct ts_daemon	 d;
	struct ctltest_server	 srv;	/* only .sock is used */
	char			 name[8];
	char			 addr[32];	/* where it listens */
	int			 port;
	char			 pub[KEY_Z85_LEN + 1];
	char			 sec[KEY_Z85_LEN + 1];
	char			 key[128];
};

/* The nodes of a test, and the client key a's node block lists. */
struct tnet {
	struct tnode		 n[NNODES];
	char			 client_pub[KEY_Z85_LEN + 1];
	char			 client_sec[KEY_Z85_LEN + 1];
	const char		*extra;	/* more of a's node block */
	int			 nnodes;	/* of n[], in the test */
};

static struct tnet	 net;

static int	 free_port(void);
static void	 tn_conf(int);
static void	 tn_start(int);
static bool	 log_has(int, const char *);
static bool	 seen_has(int, const char *);
static void	 nodes_has(int, const char *);
static int	 seen_count(int, const char *);
static pid_t	 waiting_ask(int, const char *);
static int	 run_python(const char *, char *, size_t);
static void	 start_all(void);
static void	 ask_is(int, const char *, const char *, const char *,
		    const char *);
static int64_t	 mono_ms(void);
static void	*client_open(void *, const char *, const char *, int);

/* A free port of 20000-29999 (check_gateway_shards.c takes 30000 up). */
static int
free_port(void)
{
	int taken[NNODES], i;

	for (i = 0; i < NNODES; i++)
		taken[i] = net.n[i].port;
	return tnet_free_port(20000, 10000, taken, NNODES);
}

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Node i's configuration: every other node a peer, an echo, a probe. */
static void
tn_conf(int i)
{
	struct tnode *t = &net.n[i];
	char peers[2048], clients[256] = "";
	size_t len = 0;
	int j;

	for (j = 0; j < net.nnodes; j++) {
		if (j == i)
			continue;
		len += (size_t)snprintf(peers + len, sizeof(peers) - len,
		    "%s{ name = \"%s\"; endpoint = \"tcp://%s:%d\"; "
		    "public_key = \"%s\"; }", len > 0 ? ", " : "",
		    net.n[j].name, net.n[j].addr, net.n[j].port, net.n[j].pub);
	}
	if (i == 0)
		snprintf(clients, sizeof(clients), "clients = ( { name = "
		    "\"tc\"; public_key = \"%s\"; } );", net.client_pub);
	ts_daemon_conf(&t->d,
	    "node = { name = \"%s\"; listen = \"tcp://%s:%d\";\n"
	    "  secret_key_file = \"%s\";\n"
	    "  heartbeat = 100; heartbeat_timeout = 1000;\n"
	    "  peers = ( %s );\n  %s\n  %s\n};\n"
	    "supervisor = { children = (\n"
	    "  { name = \"echo\"; exec = [\"%s\"]; ready = \"actor\";\n"
	    "    env = { TW_DIR = \"%s\"; }; mailbox = { capacity = 64; }; },\n"
	    "  { name = \"probe\"; exec = [\"%s\"]; ready = \"actor\";\n"
	    "    env = { TW_DIR = \"%s\"; }; mailbox = { capacity = 64; }; }\n"
	    ");\n};\n", t->name, t->addr, t->port, t->key, peers, clients,
	    i == 0 && net.extra != NULL ? net.extra : "",
	    ts_progs("actor_echo"), t->d.dir, ts_progs("actor_echo"),
	    t->d.dir);
}

static void
tn_start(int i)
{
	struct tnode *t = &net.n[i];

	ts_daemon_up(&t->d, WAIT, t->srv.sock, sizeof(t->srv.sock));
}

static bool
log_has(int i, const char *what)
{
	return ts_daemon_log_has(&net.n[i].d, what, WAIT);
}

static void
setup(void)
{
	char key[sizeof(net.n[0].key)];
	int i;

	memset(&net, 0, sizeof(net));
	net.nnodes = NNODES;
	ck_assert_int_eq(zmq_curve_keypair(net.client_pub, net.client_sec), 0);
	for (i = 0; i < NNODES; i++) {
		struct tnode *t = &net.n[i];

		ts_daemon_init(&t->d);
		snprintf(t->name, sizeof(t->name), "%c", 'a' + i);
		t->port = free_port();
		snprintf(t->addr, sizeof(t->addr), "127.0.0.1");
		ck_assert_int_eq(zmq_curve_keypair(t->pub, t->sec), 0);
		snprintf(key, sizeof(key), "%s/%c.key", t->d.dir, 'a' + i);
		memcpy(t->key, key, sizeof(t->key));
		tnet_write_key(t->key, t->sec, 0600);
	}
}

/* Every node started, and each sees every other up. */
static void
start_all(void)
{
	char up[64];
	int i, j;

	for (i = 0; i < net.nnodes; i++) {
		tn_conf(i);
		tn_start(i);
	}
	for (i = 0; i < net.nnodes; i++)
		for (j = 0; j < net.nnodes; j++) {
			if (i == j)
				continue;
			snprintf(up, sizeof(up), "gateway: peer %s up",
			    net.n[j].name);
			ck_assert_msg(log_has(i, up), "%s", ts_daemon_log(
			    &net.n[i].d));
		}
}

static void
teardown(void)
{
	int i;

	for (i = 0; i < NNODES; i++)
		ts_daemon_cleanup(&net.n[i].d);
}

/* actorctl on node i: ask path tag payload; its answer is want. */
static void
ask_is(int i, const char *path, const char *tag, const char *payload,
    const char *want)
{
	struct ctltest_out o;

	ctltest_actorctl(&net.n[i].srv, NULL, &o, "ask", "-t", "5000", path,
	    tag, payload, (char *)NULL);
	ck_assert_msg(o.status == 0 && strcmp(o.out, want) == 0,
	    "ask %s on %s: status %d, \"%s\", stderr %s (want \"%s\")", path,
	    net.n[i].name, o.status, o.out, o.err, want);
	ctltest_out_free(&o);
}

static bool
seen_has(int i, const char *what)
{
	char path[160], buf[4096];
	int fd, waited = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/seen", net.n[i].d.dir);
	for (;;) {
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			buf[n > 0 ? n : 0] = '\0';
			if (strstr(buf, what) != NULL)
				return true;
		}
		if (waited >= WAIT)
			return false;
		ts_sleep_ms(10);
		waited += 10;
	}
}

/*
 * actorctl nodes on node i prints what (within WAIT: the gateway commits
 * its table with its heartbeats).
 */
static void
nodes_has(int i, const char *what)
{
	struct ctltest_out o;
	int waited = 0;

	for (;;) {
		ctltest_actorctl(&net.n[i].srv, NULL, &o, "nodes",
		    (char *)NULL);
		if (o.status == 0 && strstr(o.out, what) != NULL)
			break;
		ck_assert_msg(waited < WAIT, "actorctl nodes: %d %s %s",
		    o.status, o.out, o.err);
		ctltest_out_free(&o);
		ts_sleep_ms(50);
		waited += 50;
	}
	ctltest_out_free(&o);
}

/* Tell and ask across, both ways, by path and by remote reference. */
START_TEST(tell_and_ask_across)
{
	struct ctltest_out o;

	start_all();
	ask_is(0, "b:/echo", "1", "hello from a", "hello from a");
	ask_is(1, "a:/echo", "1", "hello from b", "hello from b");
	ask_is(2, "a:/echo", "1", "hello from c", "hello from c");
	ask_is(0, "c:/echo", "1", "to c", "to c");
	ask_is(1, "c:/echo", "1", "b to c", "b to c");
	/* An application's error comes back whole. */
	ctltest_actorctl(&net.n[0].srv, NULL, &o, "ask", "b:/echo", "6", "k",
	    (char *)NULL);
	ck_assert_msg(o.status != 0 && strstr(o.err, "no such key: k") !=
	    NULL, "%d %s", o.status, o.err);
	ctltest_out_free(&o);
	/* No such actor there, no such node. */
	ctltest_actorctl(&net.n[0].srv, NULL, &o, "ask", "b:/nobody", "1",
	    "x", (char *)NULL);
	ck_assert_msg(o.status != 0 && strstr(o.err, "no actor has that "
	    "path") != NULL, "%d %s", o.status, o.err);
	ctltest_out_free(&o);
	ctltest_actorctl(&net.n[0].srv, NULL, &o, "ask", "zz:/echo", "1",
	    "x", (char *)NULL);
	ck_assert_msg(o.status != 0 && strstr(o.err, "no such node") != NULL,
	    "%d %s", o.status, o.err);
	ctltest_out_free(&o);
	/* A tell from actorctl, each way. */
	ctltest_actorctl(&net.n[0].srv, NULL, &o, "send", "b:/echo", "4",
	    "told by a", (char *)NULL);
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	ck_assert(seen_has(1, "/echo got told by a"));
	ctltest_actorctl(&net.n[1].srv, NULL, &o, "send", "a:/echo", "4",
	    "told by b", (char *)NULL);
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	ck_assert(seen_has(0, "/echo got told by b"));
	/* An actor's lookup, then tell and ask by the remote reference. */
	ask_is(0, "/probe", "30", "b:/echo", "rc=0");
	ask_is(0, "/probe", "31", "", "rc=0");
	ck_assert(seen_has(1, "/echo got via-ref"));
	ask_is(0, "/probe", "32", "", "rc=0 via-ref");
	ask_is(1, "/probe", "33", "a:/echo", "rc=0 by-path");
	/* The sender of a tell from afar is a reference back to it. */
	ask_is(1, "/probe", "34", "a:/echo", "rc=0");
	ck_assert(seen_has(1, "/probe got ping"));
	/* actorctl nodes: b up, with messages counted each way. */
	nodes_has(0, "b        up ");
	nodes_has(0, "node a, epoch ");
	ctltest_actorctl(&net.n[0].srv, NULL, &o, "--json", "nodes",
	    (char *)NULL);
	ck_assert_msg(o.status == 0 && strstr(o.out, "\"node\":\"a\"") !=
	    NULL && strstr(o.out, "\"state\":\"up\"") != NULL, "%s",
	    o.out);
	ctltest_out_free(&o);
	/* And in the metrics. */
	ctltest_actorctl(&net.n[0].srv, NULL, &o, "stats", "--prometheus",
	    (char *)NULL);
	ck_assert_msg(o.status == 0 && strstr(o.out,
	    "actord_peer_up{peer=\"b\"} 1") != NULL && strstr(o.out,
	    "actord_peer_messages_sent_total{peer=\"b\"} ") != NULL, "%s",
	    o.out);
	ctltest_out_free(&o);
}
END_TEST

/*
 * An ask from node i to path (an echo of another node) that is never
 * answered (tag 2), with a timeout of 20 s, in a child that exits 0 only
 * if the ask failed "node down"; once it waits there.
 */
static pid_t
waiting_ask(int i, const char *path)
{
	struct ctltest_out o;
	pid_t pid;

	pid = fork();
	ck_assert_int_ne(pid, -1);
	if (pid == 0) {
		ctltest_actorctl(&net.n[i].srv, NULL, &o, "ask", "-t", "20000",
		    path, "2", "wait", (char *)NULL);
		_exit(o.status != 0 && strstr(o.err, "node down") != NULL ? 0 :
		    1);
	}
	ts_sleep_ms(300);
	return pid;
}

/*
 * An actor of a watches one of b: its death comes as a Terminated; a
 * second watch, of the next incarnation, ends with b's whole node killed:
 * a Terminated with gone = ACTOR_GONE_NODE_DOWN.
 */
START_TEST(watch_across)
{
	struct ctltest_out o;
	char want[64];
	int k;

	start_all();
	ask_is(0, "/probe", "30", "b:/echo", "rc=0");
	ask_is(0, "/probe", "35", "", "rc=0");
	ts_sleep_ms(100);		/* the WATCH reached b */
	ctltest_actorctl(&net.n[1].srv, NULL, &o, "kill", "-s", "KILL",
	    "/echo", (char *)NULL);
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	ck_assert(seen_has(0, "/probe got terminated gone=0\n"));
	for (k = 0; k < WAIT / 20; k++) {	/* restarted, after backoff */
		ctltest_actorctl(&net.n[1].srv, NULL, &o, "ask", "/echo", "1",
		    "back", (char *)NULL);
		if (o.status == 0)
			break;
		ctltest_out_free(&o);
		ts_sleep_ms(20);
	}
	ctltest_expect(&o, 0, NULL);
	ctltest_out_free(&o);
	ask_is(0, "/probe", "30", "b:/echo", "rc=0");
	ask_is(0, "/probe", "35", "", "rc=0");
	ts_sleep_ms(100);
	ck_assert_int_eq(kill(net.n[1].d.pid, SIGKILL), 0);
	(void)waitpid(net.n[1].d.pid, NULL, 0);
	net.n[1].d.pid = -1;
	snprintf(want, sizeof(want), "/probe got terminated gone=%d\n",
	    ACTOR_GONE_NODE_DOWN);
	ck_assert(seen_has(0, want));
	/* A watch while b is down: a Terminated at once. */
	ask_is(0, "/probe", "35", "", "rc=0");
	for (k = 0; k < WAIT / 10 && seen_count(0, want) < 2; k++)
		ts_sleep_ms(10);
	ck_assert_int_eq(seen_count(0, want), 2);
}
END_TEST

/* A node killed with SIGKILL: the asks waiting on it fail at once. */
START_TEST(node_killed_fails_asks_at_once)
{
	struct ctltest_out o;
	int64_t t0, took;
	pid_t pid;
	int st;

	start_all();
	ask_is(0, "b:/echo", "1", "warm", "warm");
	pid = waiting_ask(0, "b:/echo");
	t0 = mono_ms();
	ck_assert_int_eq(kill(net.n[1].d.pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	took = mono_ms() - t0;
	fprintf(stderr, "node_killed_fails_asks_at_once: the ask failed %lld "
	    "ms after the SIGKILL\n", (long long)took);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
	ck_assert_msg(took < 5000, "took %lld ms", (long long)took);
	(void)waitpid(net.n[1].d.pid, NULL, 0);
	net.n[1].d.pid = -1;
	ck_assert(log_has(0, "gateway: peer b down: connection lost"));
	/* While b is down, an ask fails at once too. */
	ctltest_actorctl(&net.n[0].srv, NULL, &o, "ask", "-t", "20000",
	    "b:/echo", "1", "x", (char *)NULL);
	ck_assert_msg(o.status != 0 && strstr(o.err, "node down") != NULL,
	    "%d %s", o.status, o.err);
	ctltest_out_free(&o);
}
END_TEST

/*
 * b restarted: a new epoch.  A reference from before is stale: a tell to
 * it is a dead letter "stale node", an ask fails with ACTOR_ESTALENODE;
 * tells queued while b was down for the old epoch are dead letters too.
 */
START_TEST(restarted_node_is_stale)
{
	struct ctltest_out o;
	char want[64];

	net.extra = "send_queue = 3;";
	start_all();
	ask_is(0, "/probe", "30", "b:/echo", "rc=0");
	ask_is(0, "/probe", "32", "", "rc=0 via-ref");
	ck_assert_int_eq(kill(net.n[1].d.pid, SIGKILL), 0);
	(void)waitpid(net.n[1].d.pid, NULL, 0);
	net.n[1].d.pid = -1;
	ck_assert(log_has(0, "gateway: peer b down"));
	/* 5 tells while down: 3 wait in the queue, 2 are unreachable. */
	for (int k = 0; k < 5; k++) {
		ctltest_actorctl(&net.n[0].srv, NULL, &o, "send", "b:/echo",
		    "4", "while down", (char *)NULL);
		ctltest_expect(&o, 0, NULL);
		ctltest_out_free(&o);
	}
	tn_start(1);
	ck_assert(log_has(0, "has a new epoch"));
	ck_assert(log_has(0, "gateway: peer b up"));
	/* By path, the new b answers. */
	ask_is(0, "b:/echo", "1", "new", "new");
	/* By the old reference: stale. */
	snprintf(want, sizeof(want), "rc=%d", ACTOR_ESTALENODE);
	ask_is(0, "/probe", "32", "", want);
	ask_is(0, "/probe", "31", "", "rc=0");
	ctltest_actorctl(&net.n[0].srv, NULL, &o, "deadletters",
	    (char *)NULL);
	ck_assert_msg(o.status == 0 && strstr(o.out, "node unreachable") !=
	    NULL && strstr(o.out, "stale node") != NULL, "%s", o.out);
	ctltest_out_free(&o);
	/* Nothing meant for the old b reached the new one. */
	ts_sleep_ms(200);
	{
		char path[160];

		snprintf(path, sizeof(path), "%s/seen", net.n[1].d.dir);
		ck_assert_msg(access(path, F_OK) == -1, "the new b got "
		    "messages for the old one");
	}
}
END_TEST

/*
 * A process holding port on 127.0.0.1 (listening) until node i's log says
 * its gateway found it in use (10 s at most), then gone, as a killed
 * node's gateway still exiting holds it.  Its pid.
 */
static pid_t
hold_port(int port, int i)
{
	struct sockaddr_in sin;
	int fd, ready[2];
	char c;
	pid_t pid;

	ck_assert_int_eq(pipe(ready), 0);
	ck_assert_int_ne(pid = fork(), -1);
	if (pid == 0) {
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sin.sin_port = htons((uint16_t)port);
		if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
		    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
		    listen(fd, 1) == -1)
			_exit(1);
		(void)write(ready[1], "r", 1);
		_exit(log_has(i, "address in use; trying again") ? 0 : 2);
	}
	close(ready[1]);
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	close(ready[0]);
	return pid;
}

/*
 * A node's listen address still in use as it starts (its old gateway
 * exiting): the gateway waits for it and the node comes up.
 */
START_TEST(listen_in_use_awaited)
{
	pid_t holder;
	int st;

	holder = hold_port(net.n[1].port, 1);
	start_all();
	ck_assert_int_eq(waitpid(holder, &st, 0), holder);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%d", st);
	ask_is(0, "b:/echo", "1", "after", "after");
}
END_TEST

/* A raw CURVE client of node a, with key pair pub/sec. */
static void *
client_open(void *ctx, const char *pub, const char *sec, int port)
{
	char ep[64];
	void *s;
	int zero = 0, t = 3000;

	ck_assert_ptr_nonnull(s = zmq_socket(ctx, ZMQ_DEALER));
	ck_assert_int_eq(zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, net.n[0].pub,
	    KEY_Z85_LEN + 1), 0);
	ck_assert_int_eq(zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, pub,
	    KEY_Z85_LEN + 1), 0);
	ck_assert_int_eq(zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, sec,
	    KEY_Z85_LEN + 1), 0);
	ck_assert_int_eq(zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof(zero)), 0);
	ck_assert_int_eq(zmq_setsockopt(s, ZMQ_RCVTIMEO, &t, sizeof(t)), 0);
	snprintf(ep, sizeof(ep), "tcp://127.0.0.1:%d", port);
	ck_assert_int_eq(zmq_connect(s, ep), 0);
	return s;
}

/* --- a hostile peer: well-formed frames, hostile contents ----------------- */

/* A random message the decoder accepts, into w; its bytes from rnd. */
static void
hostile_msg(struct wire_buf *w, unsigned *rnd)
{
	static const char *const paths[] = { "/echo", "/probe", "/nobody",
	    "/@gateway", "/echo/x", "/a/b/c/d" };
	/* Tags the echo takes without exiting or sleeping, and others. */
	static const uint32_t tags[] = { 1, 4, 6, 39, 40, 1000, 0,
	    ACTOR_SYS_TERMINATED, ACTOR_SYS_STOP, ACTOR_SYS_GONE,
	    0xffffffffu };
	uint8_t data[1500];
	struct wire_msg m;
	size_t i;

	memset(&m, 0, sizeof(m));
	m.kind = (uint8_t)(WK_TELL + rand_r(rnd) % WK_LOOKUP);
	if (m.kind == WK_LOOKUP || rand_r(rnd) % 3 == 0) {
		m.flags = WF_PATH;
		m.path = paths[rand_r(rnd) % (sizeof(paths) / sizeof(*paths))];
		m.path_len = (uint16_t)strlen(m.path);
	}
	m.tag = tags[rand_r(rnd) % (sizeof(tags) / sizeof(*tags))];
	/* Mostly the first mailboxes (actord's, the echo's), then any. */
	m.to_index = rand_r(rnd) % 4 == 0 ? (uint32_t)rand_r(rnd) %
	    WIRE_INDEX_MAX : (uint32_t)rand_r(rnd) % 8;
	if (m.kind == WK_REPLY && rand_r(rnd) % 4 == 0)
		m.to_index = WIRE_NOBODY;
	m.to_inc = rand_r(rnd) % 2 ? 0 : (uint32_t)rand_r(rnd);
	m.from_index = rand_r(rnd) % 5 == 0 ? WIRE_NOBODY :
	    (uint32_t)rand_r(rnd) % 16;
	m.from_inc = (uint32_t)rand_r(rnd);
	m.corr = (uint64_t)rand_r(rnd) << 32 | (uint64_t)rand_r(rnd);
	m.len = (uint32_t)rand_r(rnd) % 3 == 0 ? 0 : (uint32_t)rand_r(rnd) %
	    sizeof(data);
	if (m.kind == WK_TERMINATED)
		m.len = WIRE_TERMINATED_LEN;
	if (m.kind == WK_REPLY && rand_r(rnd) % 3 == 0) {
		m.flags |= WF_ERROR;
		if (m.len < 4)
			m.len = 4;
	}
	for (i = 0; i < m.len; i++)
		data[i] = (uint8_t)rand_r(rnd);
	m.data = data;
	ck_assert_int_eq(wire_batch_add(w, &m), 0);
}

/*
 * HELLO as b on s (a raw client with b's key) for epoch; a's epoch, from
 * its WELCOME (past whatever earlier frames brought back).
 */
static uint64_t
peer_hello(void *s, struct wire_buf *w, uint64_t epoch)
{
	struct wire_frame f;
	struct wire_hello h;
	static char buf[65536];
	int n;

	memset(&h, 0, sizeof(h));
	h.epoch = epoch;
	h.session = epoch;
	h.max_frame = sizeof(buf);
	snprintf(h.name, sizeof(h.name), "b");
	ck_assert_int_eq(wire_hello(w, WIRE_HELLO, &h), 0);
	ck_assert_int_eq(zmq_send(s, w->p, w->len, 0), (int)w->len);
	do {
		n = zmq_recv(s, buf, sizeof(buf), 0);
		ck_assert_msg(n > 0, "no WELCOME: %s",
		    ts_daemon_log(&net.n[0].d));
		ck_assert_int_eq(wire_decode(buf, (size_t)n, sizeof(buf), &f),
		    0);
	} while (f.type != WIRE_WELCOME);
	return f.u.hello.epoch;
}

/*
 * A peer with a listed key (b's) that says HELLO as b, then sends batches
 * of well-formed messages with hostile contents: any kind to any mailbox
 * (actord's own, the gateway's, none), system tags, lies in its replies
 * and Terminated, a new epoch midway.  Node a stays up, its gateway is
 * never restarted, and its actors still answer.
 */
START_TEST(hostile_peer_batches)
{
	struct wire_buf w;
	char buf[65536];
	const char *log;
	unsigned rnd, seed = (unsigned)getpid();
	uint64_t epoch = 0;
	void *ctx, *s;
	int round, k;

	net.nnodes = 2;
	net.extra = "bad_frames = 1000000;";
	tn_conf(0);
	tn_start(0);
	ck_assert_ptr_nonnull(ctx = zmq_ctx_new());
	s = client_open(ctx, net.n[1].pub, net.n[1].sec, net.n[0].port);
	fprintf(stderr, "hostile_peer_batches: seed %u\n", seed);
	memset(&w, 0, sizeof(w));
	rnd = seed;
	for (round = 0; round < 400; round++) {
		if (round % 200 == 0)		/* HELLO, a new epoch */
			epoch = peer_hello(s, &w, 1000 + (uint64_t)round);
		/* Mostly to a's epoch; now and then to another. */
		ck_assert_int_eq(wire_batch_begin(&w, rand_r(&rnd) % 10 > 0 ?
		    epoch : epoch + 1), 0);
		for (k = 1 + rand_r(&rnd) % 20; k > 0; k--)
			hostile_msg(&w, &rnd);
		wire_batch_end(&w);
		ck_assert_int_eq(zmq_send(s, w.p, w.len, 0), (int)w.len);
		/* Whatever comes back (ERRORs, answers): read it. */
		while (zmq_recv(s, buf, sizeof(buf), ZMQ_DONTWAIT) > 0)
			continue;
	}
	wire_buf_free(&w);
	zmq_close(s);
	zmq_ctx_term(ctx);
	ask_is(0, "/echo", "1", "still", "still");
	ask_is(0, "/probe", "1", "still", "still");
	ck_assert_int_eq(kill(net.n[0].d.pid, 0), 0);
	log = ts_daemon_log(&net.n[0].d);
	ck_assert_msg(strstr(log, "/@gateway: pid") == NULL &&
	    strstr(log, "/echo: pid") == NULL && strstr(log,
	    "/probe: pid") == NULL, "seed %u: a child died: %s", seed, log);
}
END_TEST

/*
 * A peer's asks with large payloads to an actor that takes 400 ms over
 * each (the echo's tag 5): once the lane's large slots are all taken, an
 * ask is refused at once with a dead letter "full", and the gateway, which
 * serves every peer on one thread, still answers a PING at once (it
 * waited up to a minute for a large slot).
 */
START_TEST(peer_ask_into_full_mailbox)
{
	struct wire_frame f;
	struct wire_msg m;
	struct wire_buf w;
	struct ctltest_out o;
	static char buf[65536], big[1200];
	uint64_t epoch;
	void *ctx, *s;
	int k, n;

	memset(big, 'x', sizeof(big));
	net.nnodes = 2;
	tn_conf(0);
	tn_start(0);
	ck_assert_ptr_nonnull(ctx = zmq_ctx_new());
	s = client_open(ctx, net.n[1].pub, net.n[1].sec, net.n[0].port);
	memset(&w, 0, sizeof(w));
	epoch = peer_hello(s, &w, 1);
	ck_assert_int_eq(wire_batch_begin(&w, epoch), 0);
	for (k = 0; k < 30; k++) {
		memset(&m, 0, sizeof(m));
		m.kind = WK_ASK;
		m.flags = WF_PATH;
		m.path = "/echo";
		m.path_len = 5;
		m.tag = 5;
		m.from_index = 1;
		m.from_inc = 1;
		m.corr = (uint64_t)k + 1;
		m.data = big;		/* larger than a cell: a large slot */
		m.len = sizeof(big);
		ck_assert_int_eq(wire_batch_add(&w, &m), 0);
	}
	wire_batch_end(&w);
	ck_assert_int_eq(zmq_send(s, w.p, w.len, 0), (int)w.len);
	ck_assert_int_eq(wire_ping(&w, WIRE_PING, 77), 0);
	ck_assert_int_eq(zmq_send(s, w.p, w.len, 0), (int)w.len);
	do {
		n = zmq_recv(s, buf, sizeof(buf), 0);
		ck_assert_msg(n > 0, "no PONG: the gateway is held");
		ck_assert_int_eq(wire_decode(buf, (size_t)n, sizeof(buf), &f),
		    0);
	} while (f.type != WIRE_PONG);
	ck_assert_uint_eq(f.u.nonce, 77);
	wire_buf_free(&w);
	zmq_close(s);
	zmq_ctx_term(ctx);
	ctltest_actorctl(&net.n[0].srv, NULL, &o, "deadletters",
	    (char *)NULL);
	ck_assert_msg(o.status == 0 && strstr(o.out, "/echo") != NULL &&
	    strstr(o.out, "full") != NULL, "%s", o.out);
	ctltest_out_free(&o);
}
END_TEST

/*
 * Node i played by this process: a ROUTER with i's key pair on i's port,
 * which node a's dealer connects to.
 */
static void *
fake_node_open(void *ctx, int i)
{
	char ep[64];
	int one = 1, zero = 0, t = 200;
	void *s;

	ck_assert_ptr_nonnull(s = zmq_socket(ctx, ZMQ_ROUTER));
	ck_assert_int_eq(zmq_setsockopt(s, ZMQ_CURVE_SERVER, &one,
	    sizeof(one)), 0);
	ck_assert_int_eq(zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, net.n[i].sec,
	    KEY_Z85_LEN + 1), 0);
	ck_assert_int_eq(zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof(zero)), 0);
	ck_assert_int_eq(zmq_setsockopt(s, ZMQ_RCVTIMEO, &t, sizeof(t)), 0);
	snprintf(ep, sizeof(ep), "tcp://127.0.0.1:%d", net.n[i].port);
	ck_assert_int_eq(zmq_bind(s, ep), 0);
	return s;
}

/*
 * The next BATCH node a's dealer sent the fake node on s (its HELLO
 * answered with a WELCOME for epoch, its PINGs with PONGs), into buf; its
 * length, or -1 when none came within 200 ms.
 */
static int
fake_node_batch(void *s, uint64_t epoch, char *buf, size_t len,
    struct wire_frame *f)
{
	struct wire_hello h;
	struct wire_buf w;
	char rid[256];
	int rn, n;

	int64_t until = mono_ms() + 200;

	memset(&w, 0, sizeof(w));
	for (;;) {
		if (mono_ms() > until ||
		    (rn = zmq_recv(s, rid, sizeof(rid), 0)) <= 0) {
			wire_buf_free(&w);
			return -1;
		}
		n = zmq_recv(s, buf, len, 0);
		ck_assert_int_gt(n, 0);
		ck_assert_int_eq(wire_decode(buf, (size_t)n, len, f), 0);
		if (f->type == WIRE_BATCH)
			break;
		if (f->type == WIRE_HELLO) {
			memset(&h, 0, sizeof(h));
			h.epoch = epoch;
			h.session = f->u.hello.session;
			h.max_frame = (uint32_t)len;
			snprintf(h.name, sizeof(h.name), "b");
			ck_assert_int_eq(wire_hello(&w, WIRE_WELCOME, &h), 0);
		} else if (f->type == WIRE_PING)
			ck_assert_int_eq(wire_ping(&w, WIRE_PONG,
			    f->u.nonce), 0);
		else
			continue;
		ck_assert_int_eq(zmq_send(s, rid, (size_t)rn, ZMQ_SNDMORE),
		    rn);
		ck_assert_int_eq(zmq_send(s, w.p, w.len, 0), (int)w.len);
	}
	wire_buf_free(&w);
	return n;
}

/*
 * A peer holds at most GW_WATCHES_PER_PEER (4096) watches of a node's
 * actors: each WATCH past them is answered at once with a TERMINATED, as
 * for an actor the node cannot watch, and the table a peer can make the
 * gateway scan at every WATCH and death stays bounded.
 */
START_TEST(peer_watches_bounded)
{
	static char buf[1 << 20];
	struct wire_frame f;
	struct wire_msg m, r;
	struct wire_buf w;
	uint32_t echo = 0, inc = 0;
	uint64_t epoch;
	void *ctx, *in, *out;
	int k, terminated = 0, waited;
	bool found = false;

	net.nnodes = 2;
	tn_conf(0);
	tn_start(0);
	ck_assert_ptr_nonnull(ctx = zmq_ctx_new());
	in = fake_node_open(ctx, 1);
	out = client_open(ctx, net.n[1].pub, net.n[1].sec, net.n[0].port);
	memset(&w, 0, sizeof(w));
	epoch = peer_hello(out, &w, 7);
	/* /echo's mailbox: a LOOKUP, answered on a's dealer. */
	memset(&m, 0, sizeof(m));
	m.kind = WK_LOOKUP;
	m.flags = WF_PATH;
	m.path = "/echo";
	m.path_len = 5;
	m.from_index = 1;
	m.corr = 99;
	ck_assert_int_eq(wire_batch_begin(&w, epoch), 0);
	ck_assert_int_eq(wire_batch_add(&w, &m), 0);
	wire_batch_end(&w);
	ck_assert_int_eq(zmq_send(out, w.p, w.len, 0), (int)w.len);
	for (waited = 0; !found && waited < 50; waited++)
		if (fake_node_batch(in, 7, buf, sizeof(buf), &f) > 0)
			while (wire_next(&f, &r) == 1)
				if (r.kind == WK_REPLY && r.corr == 99 &&
				    r.len == 8 && !(r.flags & WF_ERROR)) {
					memcpy(&echo, r.data, 4);
					memcpy(&inc, (const char *)r.data + 4,
					    4);
					found = true;
				}
	ck_assert_msg(found, "%s", ts_daemon_log(&net.n[0].d));
	/* 4096 + 10 watchers of /echo. */
	ck_assert_int_eq(wire_batch_begin(&w, epoch), 0);
	for (k = 0; k < 4096 + 10; k++) {
		memset(&m, 0, sizeof(m));
		m.kind = WK_WATCH;
		m.to_index = echo;
		m.to_inc = inc;
		m.from_index = 100 + (uint32_t)k;
		m.from_inc = 1;
		ck_assert_int_eq(wire_batch_add(&w, &m), 0);
	}
	wire_batch_end(&w);
	ck_assert_int_eq(zmq_send(out, w.p, w.len, 0), (int)w.len);
	for (waited = 0; waited < 25; waited++) {
		if (fake_node_batch(in, 7, buf, sizeof(buf), &f) < 0)
			continue;
		while (wire_next(&f, &r) == 1)
			if (r.kind == WK_TERMINATED) {
				ck_assert_uint_ge(r.to_index, 100 + 4096);
				terminated++;
			}
	}
	ck_assert_int_eq(terminated, 10);
	wire_buf_free(&w);
	zmq_close(out);
	zmq_close(in);
	zmq_ctx_term(ctx);
	ask_is(0, "/echo", "1", "still", "still");
}
END_TEST

/* A key the node does not list is refused, logged with its address. */
START_TEST(unknown_key_refused)
{
	char pub[KEY_Z85_LEN + 1], sec[KEY_Z85_LEN + 1];
	void *ctx, *s;

	start_all();
	ck_assert_int_eq(zmq_curve_keypair(pub, sec), 0);
	ck_assert_ptr_nonnull(ctx = zmq_ctx_new());
	s = client_open(ctx, pub, sec, net.n[0].port);
	(void)zmq_send(s, "x", 1, ZMQ_DONTWAIT);
	ck_assert(log_has(0, "gateway: refused unknown key"));
	ck_assert(log_has(0, "from 127.0.0.1 (1 refused so far)"));
	nodes_has(0, "1 unknown keys refused");
	zmq_close(s);
	zmq_ctx_term(ctx);
	/* The nodes still talk. */
	ask_is(0, "b:/echo", "1", "still", "still");
}
END_TEST

/*
 * A listed client that sends garbage: each bad frame is refused with an
 * ERROR and counted, and after bad_frames of them its frames are ignored.
 * An oversized frame is refused the same way.
 */
START_TEST(bad_frames_refused)
{
	struct wire_frame f;
	struct wire_buf w;
	struct wire_hello h;
	char buf[8192];
	void *ctx, *s;
	int n, k;

	net.extra = "max_frame = 4096; bad_frames = 4;";
	start_all();
	ck_assert_ptr_nonnull(ctx = zmq_ctx_new());
	s = client_open(ctx, net.client_pub, net.client_sec, net.n[0].port);
	/* HELLO, WELCOME. */
	memset(&w, 0, sizeof(w));
	memset(&h, 0, sizeof(h));
	h.session = 1;
	h.max_frame = 65536;
	snprintf(h.name, sizeof(h.name), "tc");
	ck_assert_int_eq(wire_hello(&w, WIRE_HELLO, &h), 0);
	ck_assert_int_eq(zmq_send(s, w.p, w.len, 0), (int)w.len);
	n = zmq_recv(s, buf, sizeof(buf), 0);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(wire_decode(buf, (size_t)n, sizeof(buf), &f), 0);
	ck_assert_int_eq(f.type, WIRE_WELCOME);
	ck_assert_str_eq(f.u.hello.name, "a");
	/* Garbage: refused with an ERROR. */
	ck_assert_int_eq(zmq_send(s, "garbage that is no frame", 24, 0), 24);
	n = zmq_recv(s, buf, sizeof(buf), 0);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(wire_decode(buf, (size_t)n, sizeof(buf), &f), 0);
	ck_assert_int_eq(f.type, WIRE_ERROR);
	ck_assert_int_eq(f.u.error.code, WIRE_ERR_BAD_FRAME);
	/* Oversized (max_frame 4096): refused. */
	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(wire_ping(&w, WIRE_PING, 7), 0);
	memcpy(buf, w.p, WIRE_HDR);
	buf[4] = (char)((5000 - WIRE_HDR) & 0xff);
	buf[5] = (char)((5000 - WIRE_HDR) >> 8);
	ck_assert_int_eq(zmq_send(s, buf, 5000, 0), 5000);
	n = zmq_recv(s, buf, sizeof(buf), 0);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(wire_decode(buf, (size_t)n, sizeof(buf), &f), 0);
	ck_assert_int_eq(f.type, WIRE_ERROR);
	ck_assert(log_has(0, "refused a frame from client tc at 127.0.0.1"));
	/* Two more: bad_frames = 4 reached; then a good PING is ignored. */
	for (k = 0; k < 2; k++) {
		ck_assert_int_eq(zmq_send(s, "junk", 4, 0), 4);
		(void)zmq_recv(s, buf, sizeof(buf), 0);
	}
	ck_assert(log_has(0, "4 bad frames: its connection is ignored"));
	nodes_has(0, "4 bad frames refused");
	ck_assert_int_eq(wire_ping(&w, WIRE_PING, 8), 0);
	ck_assert_int_eq(zmq_send(s, w.p, w.len, 0), (int)w.len);
	ck_assert_int_eq(zmq_recv(s, buf, sizeof(buf), 0), -1);
	wire_buf_free(&w);
	zmq_close(s);
	zmq_ctx_term(ctx);
	ask_is(0, "b:/echo", "1", "still", "still");
}
END_TEST

/*
 * examples/client.py with Debian's python3-zmq (tools/install-deps): a
 * program outside any tree asks and tells node a's actors.
 */
static int
run_python(const char *args, char *out, size_t outlen)
{
	char cmd[1024], keyfile[160], pubfile[160];
	size_t n = 0;
	FILE *f;
	int st;

	snprintf(keyfile, sizeof(keyfile), "%s/tc.key", net.n[0].d.dir);
	snprintf(pubfile, sizeof(pubfile), "%s/a.key.pub", net.n[0].d.dir);
	tnet_write_key(keyfile, net.client_sec, 0600);
	tnet_write_key(pubfile, net.n[0].pub, 0644);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 examples/client.py -e "
	    "tcp://127.0.0.1:%d -s %s -k %s -n tc %s 2>&1", net.n[0].port,
	    pubfile, keyfile, args);
	ck_assert_ptr_nonnull(f = popen(cmd, "r"));
	while (n + 1 < outlen && fgets(out + n, (int)(outlen - n), f) != NULL)
		n = strlen(out);
	out[n] = '\0';
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

START_TEST(python_client)
{
	char out[1024];

	if (system("/usr/bin/python3 -c 'import zmq' 2>/dev/null") != 0) {
		fprintf(stderr, "python_client: skipped: /usr/bin/python3 has "
		    "no zmq module (tools/install-deps installs python3-zmq)\n");
		return;
	}
	start_all();
	ck_assert_msg(run_python("ask /echo 1 'from python'", out,
	    sizeof(out)) == 0 && strcmp(out, "from python") == 0, "%s", out);
	ck_assert_msg(run_python("tell /echo 4 'told by python'", out,
	    sizeof(out)) == 0, "%s", out);
	ck_assert(seen_has(0, "/echo got told by python"));
	/* An application's error, and no such actor. */
	ck_assert_msg(run_python("ask /echo 6 k", out, sizeof(out)) == 1 &&
	    strstr(out, "error 42: no such key: k") != NULL, "%s", out);
	ck_assert_msg(run_python("ask /nobody 1 x", out, sizeof(out)) == 1 &&
	    strstr(out, "error -13") != NULL, "%s", out);
}
END_TEST

/* libactor's client API over tcp://: node a's actors from this process. */
START_TEST(c_client)
{
	struct actor_client *c;
	struct actor_msg r;
	char addr[512], keyfile[160], pubfile[160], err[ACTOR_ERRBUF];

	start_all();
	snprintf(keyfile, sizeof(keyfile), "%s/tc.key", net.n[0].d.dir);
	snprintf(pubfile, sizeof(pubfile), "%s/a.key.pub", net.n[0].d.dir);
	tnet_write_key(keyfile, net.client_sec, 0600);
	tnet_write_key(pubfile, net.n[0].pub, 0644);
	/* A wrong name for the key: refused. */
	snprintf(addr, sizeof(addr), "tcp://127.0.0.1:%d?server=%s&key=%s&"
	    "name=nobody", net.n[0].port, pubfile, keyfile);
	ck_assert_msg(actor_connect(&c, addr, err, sizeof(err)) ==
	    ACTOR_EPROTO, "%s", err);
	ck_assert_msg(strstr(err, "refused") != NULL, "%s", err);
	snprintf(addr, sizeof(addr), "tcp://127.0.0.1:%d?server=%s&key=%s&"
	    "name=tc", net.n[0].port, pubfile, keyfile);
	ck_assert_msg(actor_connect(&c, addr, err, sizeof(err)) == 0, "%s",
	    err);
	ck_assert_int_eq(actor_client_ask(c, "/echo", 1, "from C", 6,
	    5000000000LL, &r), 0);
	ck_assert_int_eq(r.len, 6);
	ck_assert(memcmp(r.data, "from C", 6) == 0);
	ck_assert_int_eq(actor_client_tell(c, "/echo", 4, "told by C", 9), 0);
	ck_assert(seen_has(0, "/echo got told by C"));
	ck_assert_int_eq(actor_client_ask(c, "/echo", 6, "k", 1, 5000000000LL,
	    &r), ACTOR_EREPLY);
	ck_assert_int_eq(actor_error_code(&r), 42);
	ck_assert_str_eq(actor_error_text(&r), "no such key: k");
	ck_assert_int_eq(actor_client_ask(c, "/nobody", 1, "x", 1,
	    5000000000LL, &r), ACTOR_ENOENT);
	ck_assert_int_eq(actor_client_ask(c, "/echo", 2, "x", 1, 200000000LL,
	    &r), ACTOR_ETIMEDOUT);
	/* The late answer never comes (tag 2); the next ask is answered. */
	ck_assert_int_eq(actor_client_ask(c, "/echo", 1, "again", 5,
	    5000000000LL, &r), 0);
	actor_client_close(c);
}
END_TEST

/* --- a real partition: three network namespaces joined by a bridge --- */

/*
 * Node i lives in namespace ns[i], its link[i] a veth whose other end,
 * brport[i], is a port of the bridge br in namespace brns: one subnet,
 * and c's link down cuts c off from a and b at once.
 */
struct netns {
	char	 ns[NSNODES][32];
	char	 link[NSNODES][16];
	char	 brport[NSNODES][16];
	char	 addr[NSNODES][32];
	char	 brns[32];
	char	 br[16];
	bool	 made;
};

static struct netns	 nsx;

static int
sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int
sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Why the partition test cannot run here, or NULL. */
static const char *
netns_missing(void)
{
	const char *why = NULL;
	int pid = (int)getpid();

	if (geteuid() != 0)
		return "not root";
	if (sh("command -v ip >/dev/null 2>&1") != 0)
		return "no ip(8) (iproute2)";
	if (sh("ip netns add gwt-probe-%d >/dev/null 2>&1", pid) != 0)
		return "cannot make a network namespace";
	if (sh("ip -n gwt-probe-%d link add gwt-pbr type bridge >/dev/null "
	    "2>&1", pid) != 0)
		why = "no bridge in this kernel";
	else if (sh("ip -n gwt-probe-%d link add gwt-pa type veth peer name "
	    "gwt-pb >/dev/null 2>&1", pid) != 0)
		why = "no veth in this kernel";
	(void)sh("ip netns del gwt-probe-%d", pid);
	return why;
}

/*
 * The names, from the pid of the process that runs the test case (Check
 * forks each test from it), so that its unchecked teardown, which runs
 * even when a test failed, deletes what the test made.
 */
static void
netns_names(void)
{
	int i, pid = (int)getpid();

	for (i = 0; i < NSNODES; i++) {
		snprintf(nsx.ns[i], sizeof(nsx.ns[i]), "gwt-%d-%c", pid,
		    'a' + i);
		snprintf(nsx.link[i], sizeof(nsx.link[i]), "gwv%d%c",
		    pid % 100000, 'a' + i);
		snprintf(nsx.brport[i], sizeof(nsx.brport[i]), "gwp%d%c",
		    pid % 100000, 'a' + i);
		snprintf(nsx.addr[i], sizeof(nsx.addr[i]), "10.231.%d.%d",
		    pid % 250, i + 1);
	}
	snprintf(nsx.brns, sizeof(nsx.brns), "gwt-%d-br", pid);
	snprintf(nsx.br, sizeof(nsx.br), "gwb%d", pid % 100000);
}

/* Every namespace gone (their links, the bridge and veths, with them). */
static void
netns_gone(void)
{
	int i;

	for (i = 0; i < NSNODES; i++)
		(void)sh("ip netns del %s >/dev/null 2>&1", nsx.ns[i]);
	(void)sh("ip netns del %s >/dev/null 2>&1", nsx.brns);
}

static void
netns_make(void)
{
	int i;

	nsx.made = true;
	ck_assert_int_eq(sh("ip netns add %s", nsx.brns), 0);
	ck_assert_int_eq(sh("ip -n %s link add %s type bridge", nsx.brns,
	    nsx.br), 0);
	ck_assert_int_eq(sh("ip -n %s link set %s up", nsx.brns, nsx.br), 0);
	for (i = 0; i < NSNODES; i++) {
		ck_assert_int_eq(sh("ip netns add %s", nsx.ns[i]), 0);
		ck_assert_int_eq(sh("ip -n %s link set lo up", nsx.ns[i]), 0);
		ck_assert_int_eq(sh("ip link add %s netns %s type veth peer "
		    "name %s netns %s", nsx.link[i], nsx.ns[i], nsx.brport[i],
		    nsx.brns), 0);
		ck_assert_int_eq(sh("ip -n %s link set %s master %s up",
		    nsx.brns, nsx.brport[i], nsx.br), 0);
		ck_assert_int_eq(sh("ip -n %s addr add %s/24 dev %s",
		    nsx.ns[i], nsx.addr[i], nsx.link[i]), 0);
		ck_assert_int_eq(sh("ip -n %s link set %s up", nsx.ns[i],
		    nsx.link[i]), 0);
	}
}

static void
netns_teardown(void)
{
	teardown();			/* the actords first, by pid */
	if (!nsx.made)
		return;
	netns_gone();
	nsx.made = false;
}

/* Node i's actord, in its namespace; ready when its tree started. */
static void
netns_start(int i)
{
	struct tnode *t = &net.n[i];
	char *argv[8];
	int fd;

	argv[0] = (char *)(uintptr_t)"ip";
	argv[1] = (char *)(uintptr_t)"netns";
	argv[2] = (char *)(uintptr_t)"exec";
	argv[3] = nsx.ns[i];
	argv[4] = (char *)(uintptr_t)ts_build("actord");
	argv[5] = (char *)(uintptr_t)"-c";
	argv[6] = t->d.conf;
	argv[7] = NULL;
	t->d.pid = fork();
	ck_assert_int_ne(t->d.pid, -1);
	if (t->d.pid == 0) {
		fd = open(t->d.log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd != -1) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp("ip", argv);
		_exit(127);
	}
	{
		char sock[sizeof(t->srv.sock)];

		snprintf(sock, sizeof(sock), "%s/run/control.sock", t->d.dir);
		memcpy(t->srv.sock, sock, sizeof(sock));
	}
	ck_assert_msg(log_has(i, "tree started"), "%s", ts_daemon_log(&t->d));
}

static int
seen_count(int i, const char *what)
{
	char path[160], buf[65536];
	const char *p;
	ssize_t n;
	int fd, count = 0;

	snprintf(path, sizeof(path), "%s/seen", net.n[i].d.dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	for (p = buf; (p = strstr(p, what)) != NULL; p += strlen(what))
		count++;
	return count;
}

/* How often node i's log says what. */
static int
log_count(int i, const char *what)
{
	const char *p = ts_daemon_log(&net.n[i].d);
	int count = 0;

	for (; (p = strstr(p, what)) != NULL; p += strlen(what))
		count++;
	return count;
}

/* An ask from node i to path fails "node down", and at once: its ms. */
static int64_t
ask_fails_down(int i, const char *path)
{
	struct ctltest_out o;
	int64_t t0 = mono_ms(), took;

	ctltest_actorctl(&net.n[i].srv, NULL, &o, "ask", "-t", "20000", path,
	    "1", "x", (char *)NULL);
	took = mono_ms() - t0;
	ck_assert_msg(o.status != 0 && strstr(o.err, "node down") != NULL,
	    "ask %s on %s: %d %s", path, net.n[i].name, o.status, o.err);
	ctltest_out_free(&o);
	return took;
}

/*
 * Three nodes, c's link taken down (and up again):
 *  - every side declares the other down within heartbeat_timeout
 *    (1000 ms): a and b c, c both a and b; an ask waiting on c fails then;
 *  - while cut off, asks across fail at once, both ways; a and b go on
 *    talking;
 *  - tells from a to c wait in a's send queue (send_queue = 5), the 6th
 *    on are dead letters "node unreachable";
 *  - healed: the queue drains, each of the 5 arrives once, none of the
 *    dead letters; asks across work both ways again.
 */
START_TEST(partition)
{
	struct ctltest_out o;
	char msg[32], want[64];
	int64_t t0, took, at_once, t;
	pid_t pid;
	int i, j, k, st;
	const char *why;

	if ((why = netns_missing()) != NULL) {
		fprintf(stderr, "partition: skipped: %s\n", why);
		return;
	}
	netns_make();
	net.nnodes = NSNODES;
	net.extra = "send_queue = 5;";
	for (i = 0; i < NSNODES; i++) {
		net.n[i].port = 7400;
		snprintf(net.n[i].addr, sizeof(net.n[i].addr), "%s",
		    nsx.addr[i]);
	}
	for (i = 0; i < NSNODES; i++) {
		tn_conf(i);
		netns_start(i);
	}
	for (i = 0; i < NSNODES; i++)
		for (j = 0; j < NSNODES; j++) {
			if (i == j)
				continue;
			snprintf(want, sizeof(want), "gateway: peer %s up",
			    net.n[j].name);
			ck_assert_msg(log_has(i, want), "%s", ts_daemon_log(
			    &net.n[i].d));
		}
	ask_is(0, "c:/echo", "1", "a to c", "a to c");
	ask_is(2, "b:/echo", "1", "c to b", "c to b");
	pid = waiting_ask(0, "c:/echo");
	t0 = mono_ms();
	ck_assert_int_eq(sh("ip -n %s link set %s down", nsx.ns[2],
	    nsx.link[2]), 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	took = mono_ms() - t0;
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
	ck_assert_msg(took < 5000, "took %lld ms", (long long)took);
	ck_assert(log_has(0, "gateway: peer c down: nothing for 1000 ms"));
	ck_assert(log_has(1, "gateway: peer c down: nothing for 1000 ms"));
	ck_assert(log_has(2, "gateway: peer a down: nothing for 1000 ms"));
	ck_assert(log_has(2, "gateway: peer b down: nothing for 1000 ms"));
	/* Cut off: asks across fail at once, both ways. */
	at_once = ask_fails_down(0, "c:/echo");
	if ((t = ask_fails_down(2, "a:/echo")) > at_once)
		at_once = t;
	if ((t = ask_fails_down(1, "c:/echo")) > at_once)
		at_once = t;
	fprintf(stderr, "partition: an ask waiting on c failed %lld ms after "
	    "c's link went down (heartbeat_timeout 1000); asks across while "
	    "cut off failed within %lld ms (timeout 20000)\n",
	    (long long)took, (long long)at_once);
	ck_assert_msg(at_once < 5000, "%lld ms", (long long)at_once);
	/* a and b are not cut off from each other. */
	ask_is(0, "b:/echo", "1", "a to b", "a to b");
	ask_is(1, "a:/echo", "1", "b to a", "b to a");
	/* 8 tells from a: 5 wait in the queue, 3 are dead letters. */
	for (k = 0; k < 8; k++) {
		snprintf(msg, sizeof(msg), "queued-%02d", k);
		ctltest_actorctl(&net.n[0].srv, NULL, &o, "send", "c:/echo",
		    "4", msg, (char *)NULL);
		ctltest_expect(&o, 0, NULL);
		ctltest_out_free(&o);
	}
	nodes_has(0, "5       3       0");	/* queued, dropped, refused */
	ctltest_actorctl(&net.n[0].srv, NULL, &o, "deadletters",
	    (char *)NULL);
	ck_assert_msg(o.status == 0 && strstr(o.out, "node unreachable") !=
	    NULL, "%s", o.out);
	ctltest_out_free(&o);
	/* Heal: c comes back up on both sides, the queue drains, once. */
	k = log_count(0, "gateway: peer c up (epoch");
	ck_assert_int_eq(sh("ip -n %s link set %s up", nsx.ns[2],
	    nsx.link[2]), 0);
	for (i = 0; i < WAIT / 10 && log_count(0,
	    "gateway: peer c up (epoch") == k; i++)
		ts_sleep_ms(10);
	ck_assert_int_gt(log_count(0, "gateway: peer c up (epoch"), k);
	ck_assert(seen_has(2, "/echo got queued-04"));
	ask_is(0, "c:/echo", "1", "healed", "healed");
	ask_is(2, "a:/echo", "1", "healed too", "healed too");
	ts_sleep_ms(200);		/* a late duplicate would be here */
	for (k = 0; k < 8; k++) {
		snprintf(want, sizeof(want), "/echo got queued-%02d\n", k);
		ck_assert_int_eq(seen_count(2, want), k < 5 ? 1 : 0);
	}
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("gateway");
	TCase *tc = tcase_create("nodes");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, tell_and_ask_across);
	tcase_add_test(tc, node_killed_fails_asks_at_once);
	tcase_add_test(tc, restarted_node_is_stale);
	tcase_add_test(tc, listen_in_use_awaited);
	tcase_add_test(tc, hostile_peer_batches);
	tcase_add_test(tc, peer_ask_into_full_mailbox);
	tcase_add_test(tc, peer_watches_bounded);
	tcase_add_test(tc, unknown_key_refused);
	tcase_add_test(tc, bad_frames_refused);
	tcase_add_test(tc, python_client);
	tcase_add_test(tc, c_client);
	tcase_add_test(tc, watch_across);
	suite_add_tcase(s, tc);
	tc = tcase_create("partition");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, netns_teardown);
	tcase_add_unchecked_fixture(tc, netns_names, netns_gone);
	tcase_add_test(tc, partition);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
