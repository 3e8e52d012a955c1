/*
 * check_gateway_shards.c: a shard group spanning nodes, end to end.  Three
 * real actords on 127.0.0.1 (each its own runtime directory, key pair and
 * port, from a range no other test uses), each a node naming the others
 * as peers, each running the same group /counter (instances = 16, nodes =
 * ["a", "b", "c"]) of tests/progs/shard_node: every node starts only the
 * shards the placement gives it and shows the others as placed elsewhere;
 * a sender on each node routes 17,000 increments with actor_shard() to
 * whichever node runs each key's shard while a shard of node b is
 * SIGKILLed; the totals are then exact, per key and in all, as in the
 * local test (check_actor_shard.c); an actor asks a key's shard by the
 * reference actor_shard() gives, from every node, and cannot watch
 * another node's by it.  Also: a reload that adds a node to the group's
 * nodes moves only the shards the new node wins.
 */
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zmq.h>

#include "tests/lib/ctltest.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tnet.h"
#include "tests/lib/tsup.h"
#include "tools/json.h"
#include "worker/remote.h"

#define WAIT		10000	/* ms for anything to happen */
#define LONG_WAIT	120000	/* ms for the whole run, under ASan too */
#define NNODES		4	/* a, b, c run; d is only named */
#define SHARDS		16
#define KEYS		51	/* every shard owns some (key-0 .. key-50) */
#define INCREMENTS	51000	/* 1,000 per key */
#define PORT_LO		30000	/* check_gateway.c takes 20000-29999 */
#define PORT_N		2700

struct tnode {
	struct ts_daemon	 d;
	struct ctltest_server	 srv;	/* only .sock is used */
	char			 name[8];
	int			 port;
	char			 pub[KEY_Z85_LEN + 1];
	char			 sec[KEY_Z85_LEN + 1];
	char			 key[128];
};

static struct tnode	 n[NNODES];
static char		*abc[] = { "a", "b", "c" };

static void
setup(void)
{
	char key[sizeof(n[0].key)];
	int taken[NNODES], i;

	memset(n, 0, sizeof(n));
	for (i = 0; i < NNODES; i++) {
		ts_daemon_init(&n[i].d);
		snprintf(n[i].name, sizeof(n[i].name), "%c", 'a' + i);
		n[i].port = taken[i] = tnet_free_port(PORT_LO, PORT_N, taken,
		    i);
		ck_assert_int_eq(zmq_curve_keypair(n[i].pub, n[i].sec), 0);
		snprintf(key, sizeof(key), "%s/%c.key", n[i].d.dir, 'a' + i);
		memcpy(n[i].key, key, sizeof(n[i].key));
		tnet_write_key(n[i].key, n[i].sec, 0600);
	}
}

static void
teardown(void)
{
	int i;

	for (i = 0; i < NNODES; i++)
		ts_daemon_cleanup(&n[i].d);
}

/* Node i's configuration: peers, the counter over nodes, a sender. */
static void
conf(int i, const char *nodes)
{
	char peers[4096];
	size_t len = 0;
	int j;

	for (j = 0; j < NNODES; j++) {
		if (j == i)
			continue;
		len += (size_t)snprintf(peers + len, sizeof(peers) - len,
		    "%s{ name = \"%s\"; endpoint = \"tcp://127.0.0.1:%d\"; "
		    "public_key = \"%s\"; }", len > 0 ? ", " : "",
		    n[j].name, n[j].port, n[j].pub);
	}
	ts_daemon_conf(&n[i].d,
	    "node = { name = \"%s\"; listen = \"tcp://127.0.0.1:%d\";\n"
	    "  secret_key_file = \"%s\";\n"
	    "  heartbeat = 100; heartbeat_timeout = 3000;\n"
	    "  mailbox = { capacity = 4096; };\n"
	    "  peers = ( %s );\n};\n"
	    "supervisor = { intensity = 100; children = (\n"
	    "  { name = \"counter\"; exec = [\"%s\"]; ready = \"actor\";\n"
	    "    instances = %d; nodes = %s;\n"
	    "    env = { TS_SHARDS = \"%d\"; TS_KEYS = \"%d\";\n"
	    "      TS_INCREMENTS = \"%d\"; };\n"
	    "    mailbox = { capacity = 8192; cell = 128; state = 2048; }; },\n"
	    "  { name = \"sender\"; exec = [\"%s\"]; ready = \"actor\";\n"
	    "    env = { TS_SHARDS = \"%d\"; TS_KEYS = \"%d\";\n"
	    "      TS_INCREMENTS = \"%d\"; };\n"
	    "    mailbox = { capacity = 64; }; }\n"
	    ");\n};\n", n[i].name, n[i].port, n[i].key, peers,
	    ts_progs("shard_node"), SHARDS, nodes, SHARDS, KEYS, INCREMENTS,
	    ts_progs("shard_node"), SHARDS, KEYS, INCREMENTS);
}

static void
start(int i, const char *nodes)
{
	conf(i, nodes);
	ts_daemon_up(&n[i].d, WAIT, n[i].srv.sock, sizeof(n[i].srv.sock));
}

/* The node that runs shard s of /counter over a, b, c. */
static const char *
owner_node(unsigned s)
{
	return abc[placement_node("/counter", s, abc, 3)];
}

/* The first key whose shard runs on node. */
static unsigned
first_key_on(const char *node)
{
	char key[16];
	unsigned k;
	int len;

	for (k = 0; k < KEYS; k++) {
		len = snprintf(key, sizeof(key), "key-%u", k);
		if (strcmp(owner_node(actor_shard_of(key, (size_t)len,
		    SHARDS)), node) == 0)
			return k;
	}
	ck_abort_msg("no key on %s", node);
	return 0;
}

/* Shard s as node a names it: /counter/S here, B:/counter/S elsewhere. */
static void
shard_path(unsigned s, char *path, size_t len)
{
	const char *node = owner_node(s);

	snprintf(path, len, "%s%s/counter/%u", strcmp(node, "a") == 0 ? "" :
	    node, strcmp(node, "a") == 0 ? "" : ":", s);
}

/* actorctl ask on node i; its answer in out (the test fails if none). */
static void
ask(int i, const char *path, const char *tag, const char *payload,
    int timeout_ms, char *out, size_t outlen)
{
	struct ctltest_out o;
	char t[16];

	snprintf(t, sizeof(t), "%d", timeout_ms);
	ctltest_actorctl(&n[i].srv, NULL, &o, "ask", "-t", t, path, tag,
	    payload, (char *)NULL);
	ck_assert_msg(o.status == 0, "ask %s %s on %s: %d %s", path, tag,
	    n[i].name, o.status, o.err);
	snprintf(out, outlen, "%s", o.out);
	ctltest_out_free(&o);
}

/* Shard s's committed total and misrouted increments, asked from a. */
static unsigned long long
total_of(unsigned s, unsigned long long *misrouted)
{
	char path[64], out[128];
	unsigned long long t = 0, m = 0;

	shard_path(s, path, sizeof(path));
	ask(0, path, "2", "", WAIT, out, sizeof(out));
	ck_assert_int_eq(sscanf(out, "%llu %llu", &t, &m), 2);
	if (misrouted != NULL)
		*misrouted = m;
	return t;
}

static unsigned long long
sum_totals(void)
{
	unsigned long long t = 0;
	unsigned s;

	for (s = 0; s < SHARDS; s++)
		t += total_of(s, NULL);
	return t;
}

/* Each node's gateway sees each other node of a, b, c up. */
static void
all_up(void)
{
	char up[64];
	int i, j;

	for (i = 0; i < 3; i++)
		for (j = 0; j < 3; j++) {
			if (i == j)
				continue;
			snprintf(up, sizeof(up), "gateway: peer %s up",
			    n[j].name);
			ck_assert_msg(ts_daemon_log_has(&n[i].d, up, WAIT),
			    "%s", ts_daemon_log(&n[i].d));
		}
}

/*
 * Node i's status places every shard: this node's running, each other
 * shard "remote" on the node the placement names (nodes: the group's).
 */
static void
status_places(int i, char **nodes, size_t nnodes, char placed[SHARDS][8])
{
	struct json *doc = ctltest_status(&n[i].srv);
	const struct json *all, *e, *p, *st, *node;
	char path[32];
	const char *want;
	size_t k;
	unsigned s;

	all = json_get(doc, "nodes");
	for (s = 0; s < SHARDS; s++) {
		want = nodes[placement_node("/counter", s, nodes, nnodes)];
		snprintf(path, sizeof(path), "/counter/%u", s);
		for (k = 0; all != NULL && (e = json_at(all, k)) != NULL; k++)
			if ((p = json_get(e, "path")) != NULL &&
			    p->type == JSON_STRING && strcmp(p->str, path) == 0)
				break;
		ck_assert_msg(all != NULL && e != NULL, "%s: not in status",
		    path);
		st = json_get(e, "state");
		node = json_get(e, "node");
		ck_assert_ptr_nonnull(st);
		if (strcmp(want, n[i].name) == 0) {
			ck_assert_msg(node == NULL, "%s: a node", path);
			ck_assert_str_ne(st->str, "remote");
		} else {
			ck_assert_msg(node != NULL && node->type ==
			    JSON_STRING && strcmp(node->str, want) == 0,
			    "%s: not on %s", path, want);
			ck_assert_str_eq(st->str, "remote");
		}
		snprintf(placed[s], sizeof(placed[s]), "%s", want);
	}
	json_free(doc);
}

/*
 * 51,000 increments from three nodes over 16 shards on three nodes, a
 * shard of b SIGKILLed in the middle: every one counted once, by the
 * shard that owns its key.
 */
START_TEST(counter_across_nodes_exact_after_sigkill)
{
	char placed[SHARDS][8], out[128], go[32], key[16], path[64], want[32];
	struct ctltest_out o;
	unsigned long long at_kill, t, mis, sent, failed;
	long long lasterr;
	unsigned s, victim = SHARDS, k, hit[SHARDS] = { 0 };
	pid_t pid, again;
	int i, waited, len;

	/* Every shard owns keys; pick b's first as the victim. */
	for (k = 0; k < KEYS; k++) {
		len = snprintf(key, sizeof(key), "key-%u", k);
		hit[actor_shard_of(key, (size_t)len, SHARDS)]++;
	}
	for (s = 0; s < SHARDS; s++) {
		ck_assert_uint_gt(hit[s], 0);
		if (victim == SHARDS && strcmp(owner_node(s), "b") == 0)
			victim = s;
	}
	ck_assert_uint_lt(victim, SHARDS);
	for (i = 0; i < 3; i++)
		start(i, "[\"a\", \"b\", \"c\"]");
	all_up();
	for (i = 0; i < 3; i++)
		status_places(i, abc, 3, placed);
	/* The text shows where, too. */
	ctltest_actorctl(&n[0].srv, NULL, &o, "status", (char *)NULL);
	ck_assert_msg(o.status == 0 && strstr(o.out, "remote on b") != NULL &&
	    strstr(o.out, "remote on c") != NULL, "%s", o.out);
	ctltest_out_free(&o);

	snprintf(path, sizeof(path), "/counter/%u", victim);
	pid = (pid_t)ctltest_node_num(&n[1].srv, path, "pid");
	ck_assert_int_gt(pid, 0);
	for (i = 0; i < 3; i++) {
		snprintf(go, sizeof(go), "%d 3", i);
		ctltest_actorctl(&n[i].srv, NULL, &o, "send", "/sender", "10",
		    go, (char *)NULL);
		ck_assert_msg(o.status == 0, "send: %s", o.err);
		ctltest_out_free(&o);
	}
	/* Mid-run: once the victim counted some, and long before the end. */
	for (waited = 0; (at_kill = total_of(victim, NULL)) < 100;
	    waited += 5) {
		ck_assert_msg(waited < LONG_WAIT, "no increment reached %s",
		    path);
		ts_sleep_ms(5);
	}
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	again = ctltest_wait_new_pid(&n[1].srv, path, pid, WAIT);
	ck_assert_int_gt(again, 0);

	for (i = 0; i < 3; i++) {
		ask(i, "/sender", "11", "", LONG_WAIT, out, sizeof(out));
		ck_assert_int_eq(sscanf(out, "%llu %llu %lld", &sent, &failed,
		    &lasterr), 3);
		ck_assert_msg(sent == INCREMENTS / 3 && failed == 0,
		    "sender on %s: sent %llu, failed %llu (last %lld)",
		    n[i].name, sent, failed, lasterr);
	}
	/* What is in flight lands; then the count is exact. */
	for (waited = 0; (t = sum_totals()) < INCREMENTS; waited += 50) {
		ck_assert_msg(waited < LONG_WAIT, "stuck at %llu", t);
		ts_sleep_ms(50);
	}
	ck_assert_uint_eq(t, INCREMENTS);
	for (s = 0; s < SHARDS; s++) {
		(void)total_of(s, &mis);
		ck_assert_msg(mis == 0, "shard %u: %llu misrouted", s, mis);
	}
	ck_assert_msg(total_of(victim, NULL) > at_kill, "the SIGKILL was "
	    "not mid-run: %llu at the kill", at_kill);
	for (k = 0; k < KEYS; k++) {
		len = snprintf(key, sizeof(key), "key-%u", k);
		shard_path(actor_shard_of(key, (size_t)len, SHARDS), path,
		    sizeof(path));
		ask(0, path, "3", key, WAIT, out, sizeof(out));
		ck_assert_msg(strcmp(out, "1000") == 0, "%s on %s: %s", key,
		    path, out);
	}
	/*
	 * An actor asks a key's shard by the reference actor_shard gave, on
	 * every node: here or afar, the same answer.  Watching another node's
	 * shard by it is refused.
	 */
	for (i = 0; i < 3; i++)
		for (k = 0; k < KEYS; k += 5) {
			snprintf(key, sizeof(key), "key-%u", k);
			ask(i, "/sender", "12", key, WAIT, out, sizeof(out));
			ck_assert_msg(strcmp(out, "rc=0 1000") == 0, "%s from "
			    "%s: %s", key, n[i].name, out);
		}
	snprintf(key, sizeof(key), "key-%u", first_key_on("c"));
	ask(0, "/sender", "13", key, WAIT, out, sizeof(out));
	snprintf(want, sizeof(want), "rc=%d", ACTOR_EINVAL);
	ck_assert_str_eq(out, want);
}
END_TEST

/*
 * A reload that adds d to the group's nodes: the placement moves only
 * the shards d wins (1 and 11 of 16), the others stay where they were.
 * actorctl add refuses an instance more; a send to another node's
 * shard by its local path says where it is.
 */
START_TEST(reload_adds_a_node)
{
	static char *abcd[] = { "a", "b", "c", "d" };
	char before[SHARDS][8], after[SHARDS][8];
	struct ctltest_out o;
	unsigned s, moved = 0;
	int waited;

	start(0, "[\"a\", \"b\", \"c\"]");
	status_places(0, abc, 3, before);
	/* Another node's shard by its path here: where it is. */
	ctltest_actorctl(&n[0].srv, NULL, &o, "send", "/counter/1", "1",
	    "key-0", (char *)NULL);
	ck_assert_msg(o.status != 0 && strstr(o.err, "placed on node c: "
	    "c:/counter/1") != NULL, "%d %s", o.status, o.err);
	ctltest_out_free(&o);
	/* Its instances are the configuration's: none added by hand. */
	ctltest_actorctl(&n[0].srv, NULL, &o, "add", "/counter", (char *)NULL);
	ck_assert_msg(o.status != 0 && strstr(o.err, "/counter spans nodes")
	    != NULL, "%d %s", o.status, o.err);
	ctltest_out_free(&o);
	conf(0, "[\"a\", \"b\", \"c\", \"d\"]");
	ctltest_actorctl(&n[0].srv, NULL, &o, "reload", (char *)NULL);
	ck_assert_msg(o.status == 0, "reload: %s", o.err);
	ctltest_out_free(&o);
	/* The group is rebuilt with its new placement. */
	for (waited = 0;; waited += 50) {
		ctltest_actorctl(&n[0].srv, NULL, &o, "status", "/counter",
		    (char *)NULL);
		if (o.status == 0 && strstr(o.out, "remote on d") != NULL &&
		    strstr(o.out, " starting") == NULL &&
		    strstr(o.out, " stopping") == NULL)
			break;
		ck_assert_msg(waited < WAIT, "%d %s %s", o.status, o.out,
		    o.err);
		ctltest_out_free(&o);
		ts_sleep_ms(50);
	}
	ctltest_out_free(&o);
	status_places(0, abcd, 4, after);
	for (s = 0; s < SHARDS; s++)
		if (strcmp(before[s], after[s]) != 0) {
			ck_assert_str_eq(after[s], "d");
			moved++;
		}
	ck_assert_uint_eq(moved, 2);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("gateway_shards");
	TCase *tc = tcase_create("shards");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, counter_across_nodes_exact_after_sigkill);
	tcase_add_test(tc, reload_adds_a_node);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
