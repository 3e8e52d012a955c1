/*
 * check_node_config.c: the node block of actord.conf (config.c,
 * nodespec.c), key files (worker/keys.c), actorctl keygen and shard
 * placement (worker/placement.c).
 *
 * Bad node blocks are a table with the exact message each must give, as
 * in check_config.c.  The secret key check is run as actord runs it: the
 * real actord binary refuses to start with a key file others can read.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <unistd.h>

#include "supervisor/config.h"
#include "supervisor/spec.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"
#include "worker/remote.h"

#define ERRLEN	1024
#define PUB_B	"A<KLW}qB>T[VjFKnHTLS1rn9#y#zB<g&IQq4ZF@y"
#define PUB_C	"N<<u@1l#WXl==N:&cbiHO@&?wFwmF<foaH$Fu&cg"
#define SEC_A	"JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"

static char	 keyfile[96];	/* a 0600 secret key, made per test */
static char	 tmpdir[64];

struct bad {
	const char	*text;		/* %s: the key file */
	const char	*want;
};

/* A node block with body on line 3 (the key file is line 2). */
#define NODE(body)							\
	"node = { name = \"a\"; listen = \"tcp://127.0.0.1:7400\";\n"	\
	"  secret_key_file = \"%s\";\n"					\
	"  " body "\n"							\
	"};\n"
#define PEER_B	"{ name = \"b\"; endpoint = \"tcp://127.0.0.1:7401\"; " \
		"public_key = \"" PUB_B "\"; }"

static const struct bad bad_nodes[] = {
	{ NODE("peers = ( { name = \"b\"; } );"),
	  "t.conf:3: node.peers[0]: missing required key \"endpoint\"" },
	{ NODE("peers = ( { name = \"b\"; endpoint = \"tcp://x:1\"; } );"),
	  "t.conf:3: node.peers[0]: missing required key \"public_key\"" },
	{ NODE("peers = ( { name = \"b\"; endpoint = \"udp://x:1\"; "
	    "public_key = \"" PUB_B "\"; } );"),
	  "t.conf:3: node.peers[0].endpoint: expected an endpoint such as "
	  "\"tcp://10.0.0.2:7400\", got \"udp://x:1\"" },
	{ NODE("peers = ( { name = \"b\"; endpoint = \"tcp://x:0\"; "
	    "public_key = \"" PUB_B "\"; } );"),
	  "t.conf:3: node.peers[0].endpoint: expected an endpoint such as "
	  "\"tcp://10.0.0.2:7400\", got \"tcp://x:0\"" },
	{ NODE("peers = ( { name = \"b\"; endpoint = \"tcp://x:1\"; "
	    "public_key = \"short\"; } );"),
	  "t.conf:3: node.peers[0].public_key: expected a public key: 40 Z85 "
	  "characters, as actorctl keygen prints, got \"short\"" },
	{ NODE("peers = ( " PEER_B ", { name = \"b\"; endpoint = "
	    "\"tcp://x:1\"; public_key = \"" PUB_C "\"; } );"),
	  "t.conf:3: node.peers[1].name: duplicate name \"b\" (first at "
	  "line 3)" },
	{ NODE("peers = ( " PEER_B " ); clients = ( { name = \"py\"; "
	    "public_key = \"" PUB_B "\"; } );"),
	  "t.conf:3: node.clients[0].public_key: the public key of \"b\" "
	  "(line 3) too" },
	{ NODE("clients = ( { name = \"a\"; public_key = \"" PUB_B "\"; } );"),
	  "t.conf:1: node.name: \"a\" is also the name of the peer or client "
	  "at line 3" },
	{ NODE("heartbeat = 2000; heartbeat_timeout = 1000;"),
	  "t.conf:3: node.heartbeat_timeout: expected an integer > heartbeat "
	  "(2000), got 1000" },
	{ NODE("heartbeat = 5;"),
	  "t.conf:3: node.heartbeat: expected an integer from 10 to 60000, "
	  "got 5" },
	{ NODE("max_frame = 100;"),
	  "t.conf:3: node.max_frame: expected an integer from 4096 to "
	  "67108864, got 100" },
	{ NODE("groups = ();"),
	  "t.conf:3: node.groups: unknown key \"groups\"" },
	{ NODE("peer = ();"),
	  "t.conf:3: node.peer: unknown key \"peer\" (did you mean "
	  "\"peers\"?)" },
	{ "node = { name = \"a.b\"; };\n",
	  "t.conf:1: node.name: expected a name of letters, digits, \"_\" "
	  "and \"-\" (at most 32), got \"a.b\"" },
	{ "node = { name = \"a\"; listen = \"tcp://*:7400\"; };\n",
	  "t.conf:1: node: missing required key \"secret_key_file\"" },
	{ NODE("")
	  "supervisor = { children = ( { name = \"c\"; exec = [\"/bin/true\"];"
	  "\n  instances = 4; nodes = [\"a\", \"z\"]; } ); };\n",
	  "t.conf:6: supervisor.children[0].nodes[1]: \"z\" is neither this "
	  "node (\"a\") nor one of its peers" },
	{ NODE("")
	  "supervisor = { children = ( { name = \"c\"; exec = [\"/bin/true\"];"
	  "\n  nodes = [\"a\"]; } ); };\n",
	  "t.conf:6: supervisor.children[0].nodes: a group spanning nodes "
	  "needs instances" },
	{ "supervisor = { children = ( { name = \"c\"; exec = [\"/bin/true\"];"
	  "\n  instances = 2; nodes = [\"a\", \"a\"]; } ); };\n",
	  "t.conf:2: supervisor.children[0].nodes[1]: \"a\" is listed twice" },
	{ "supervisor = { children = ( { name = \"c\"; exec = [\"/bin/true\"];"
	  "\n  instances = 2; nodes = [\"a\"]; } ); };\n",
	  "t.conf:2: supervisor.children[0].nodes: a group spanning nodes "
	  "needs a node block" },
	/* Two ids alike: a shard's remote reference could not tell them. */
	{ NODE("")
	  "supervisor = { children = ( { name = \"g25\"; exec = [\"/bin/true\"];"
	  "\n  instances = 2; nodes = [\"a\"]; }, { name = \"g40\"; exec = "
	  "[\"/bin/true\"];\n  instances = 2; nodes = [\"a\"]; } ); };\n",
	  "t.conf:7: supervisor.children[1].nodes: /g25 and /g40 span nodes "
	  "with the same id: rename one" },
};

#define NBAD	(sizeof(bad_nodes) / sizeof(bad_nodes[0]))

static void
write_file(const char *path, const char *text, mode_t mode)
{
	int fd;

	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	ck_assert_int_ne(fd, -1);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

static void
setup(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ts-nodecfg-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(keyfile, sizeof(keyfile), "%s/a.key", tmpdir);
	write_file(keyfile, SEC_A "\n", 0600);
}

static void
teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	(void)!system(cmd);
}

static struct actord_spec *
parse(const char *fmt, char *err)
{
	char text[4096];

	snprintf(text, sizeof(text), fmt, keyfile);
	return config_parse_string(text, "t.conf", err, ERRLEN);
}

START_TEST(bad_node)
{
	char err[ERRLEN];
	struct actord_spec *spec;

	spec = parse(bad_nodes[_i].text, err);
	ck_assert_msg(spec == NULL, "case %d parsed", _i);
	ck_assert_str_eq(err, bad_nodes[_i].want);
}
END_TEST

/* A good block: every key read, the gateway added last, its text. */
START_TEST(good_node)
{
	char err[ERRLEN];
	struct actord_spec *spec;
	const struct child_spec *gw;
	struct node_spec *back;
	const struct node_spec *ns;

	spec = parse(NODE("peers = ( " PEER_B ", { name = \"c\"; endpoint = "
	    "\"tcp://[::1]:7402\"; public_key = \"" PUB_C "\"; } );\n"
	    "  clients = ( { name = \"py\"; public_key = "
	    "\"=1oBE/>I{7s)&Vuf:O@W!}xZ}AKG9<H.-tfN3b2Y\"; } );\n"
	    "  heartbeat = 200; heartbeat_timeout = 1000; send_queue = 7;\n"
	    "  gateway = \"/opt/gw\"; user = \"nobody\";")
	    "supervisor = { children = (\n"
	    "  { name = \"w\"; exec = [\"/bin/true\"]; },\n"
	    "  { name = \"s\"; supervisor = { children = (\n"
	    "    { name = \"counter\"; exec = [\"/bin/true\"]; "
	    "instances = 8;\n      nodes = [\"c\", \"a\", \"b\"]; } ); }; } );"
	    " };\n", err);
	ck_assert_msg(spec != NULL, "%s", err);
	ns = spec->node;
	ck_assert_ptr_nonnull(ns);
	ck_assert_str_eq(ns->name, "a");
	ck_assert_uint_eq(ns->npeers, 2);
	ck_assert_str_eq(ns->peers[1].endpoint, "tcp://[::1]:7402");
	ck_assert_uint_eq(ns->nclients, 1);
	ck_assert_uint_eq(ns->heartbeat, 200);
	ck_assert_uint_eq(ns->heartbeat_timeout, 1000);
	ck_assert_uint_eq(ns->send_queue, 7);
	ck_assert_uint_eq(ns->max_frame, DEFAULT_MAX_FRAME);
	ck_assert_uint_eq(ns->ngroups, 1);
	ck_assert_str_eq(ns->groups[0].path, "/s/counter");
	ck_assert_uint_eq(ns->groups[0].instances, 8);
	ck_assert_uint_eq(ns->groups[0].nnodes, 3);

	ck_assert_uint_eq(spec->root.nchildren, 3);
	gw = &spec->root.children[2];
	ck_assert_str_eq(gw->name, GATEWAY_NAME);
	ck_assert_str_eq(gw->argv[0], "/opt/gw");
	ck_assert_str_eq(gw->user, "nobody");
	ck_assert_int_eq(gw->ready, READY_ACTOR);
	ck_assert_uint_eq(gw->mailbox.capacity, DEFAULT_GATEWAY_CAPACITY);
	ck_assert_uint_eq(gw->nenv, 1);
	ck_assert_str_eq(gw->env[0].name, GATEWAY_ENV_NODE);

	/* What the gateway reads back is what actord checked. */
	back = config_parse_node(gw->env[0].value, GATEWAY_ENV_NODE, err,
	    ERRLEN);
	ck_assert_msg(back != NULL, "%s: %s", err, gw->env[0].value);
	ck_assert_str_eq(back->name, "a");
	ck_assert_str_eq(back->listen, "tcp://127.0.0.1:7400");
	ck_assert_str_eq(back->secret_key_file, keyfile);
	ck_assert_uint_eq(back->npeers, 2);
	ck_assert_str_eq(back->peers[0].public_key, PUB_B);
	ck_assert_uint_eq(back->nclients, 1);
	ck_assert_str_eq(back->clients[0].name, "py");
	ck_assert_uint_eq(back->heartbeat_timeout, 1000);
	ck_assert_uint_eq(back->ngroups, 1);
	ck_assert_str_eq(back->groups[0].path, "/s/counter");
	ck_assert_str_eq(back->groups[0].nodes[0], "c");
	node_spec_free(back);
	spec_free(spec);
}
END_TEST

/* Without a node block nothing changes: no gateway. */
START_TEST(no_node_no_gateway)
{
	char err[ERRLEN];
	struct actord_spec *spec;

	spec = config_parse_string("supervisor = { children = ( { name = "
	    "\"w\"; exec = [\"/bin/true\"]; } ); };\n", "t.conf", err, ERRLEN);
	ck_assert_msg(spec != NULL, "%s", err);
	ck_assert_ptr_null(spec->node);
	ck_assert_uint_eq(spec->root.nchildren, 1);
	spec_free(spec);
}
END_TEST

/*
 * The gateway is actord-gateway beside the program, whatever the buffer
 * held before (readlink's answer has no NUL: a slash after it was taken
 * for the end of the directory, and the gateway was not found).
 */
START_TEST(default_gateway_beside)
{
	char err[ERRLEN], self[PATH_MAX], dir[PATH_MAX], want[PATH_MAX + 32];
	struct actord_spec *spec;
	ssize_t len;

	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	ck_assert_int_gt(len, 0);
	self[len] = '\0';
	*strrchr(self, '/') = '\0';
	memset(dir, '/', sizeof(dir));
	ck_assert_int_eq(node_spec_self_dir(dir, sizeof(dir)), 0);
	ck_assert_str_eq(dir, self);
	snprintf(want, sizeof(want), "%s/%s", self, GATEWAY_PROGRAM);
	spec = parse(NODE(""), err);
	ck_assert_msg(spec != NULL, "%s", err);
	ck_assert_str_eq(spec->node->gateway, want);
	spec_free(spec);
}
END_TEST

/* Only this node's shards are local; the others are elsewhere. */
START_TEST(local_shards)
{
	char err[ERRLEN];
	struct actord_spec *spec;
	const struct child_spec *c;
	unsigned i, here = 0;

	spec = parse(NODE("peers = ( " PEER_B " );")
	    "supervisor = { children = ( { name = \"counter\"; exec = "
	    "[\"/bin/true\"]; instances = 16; nodes = [\"a\", \"b\"]; } ); };\n",
	    err);
	ck_assert_msg(spec != NULL, "%s", err);
	c = &spec->root.children[0];
	for (i = 0; i < 16; i++)
		if (node_spec_local(spec->node, "/counter", c, i))
			here++;
	/* The man page's vector: a b b a a a b b b a a b b a a b. */
	ck_assert_uint_eq(here, 8);
	ck_assert(node_spec_local(spec->node, "/counter", c, 0));
	ck_assert(!node_spec_local(spec->node, "/counter", c, 1));
	spec_free(spec);
}
END_TEST

/* actord.conf(5)'s test vectors. */
START_TEST(placement_vectors)
{
	static char *abc[] = { "a", "b", "c" }, *ab[] = { "a", "b" },
	    *cba[] = { "c", "b", "a" };
	static const char want3[] = "acbaaabcbacbbcab", want2[] =
	    "abbaaabbbaabbaab";
	unsigned s;

	ck_assert(placement_weight("/counter", 0, "a") ==
	    0xf265747cccc3f920ULL);
	ck_assert(placement_weight("/counter", 0, "b") ==
	    0x71255b84f1752262ULL);
	ck_assert(placement_weight("/counter", 0, "c") ==
	    0x3cf72e65f09c4d7aULL);
	for (s = 0; s < 16; s++) {
		ck_assert_int_eq(abc[placement_node("/counter", s, abc, 3)][0],
		    want3[s]);
		/* The order of the list does not matter. */
		ck_assert_int_eq(cba[placement_node("/counter", s, cba, 3)][0],
		    want3[s]);
		ck_assert_int_eq(ab[placement_node("/counter", s, ab, 2)][0],
		    want2[s]);
		/* Removing c moves only c's shards. */
		if (want3[s] != 'c')
			ck_assert_int_eq(want2[s], want3[s]);
	}
}
END_TEST

/*
 * Adding a node moves only the shards it wins: with d added to a, b, c,
 * every shard of 64 that changed node is on d now (actord.conf(5)'s
 * vector: 11 of them), and the list's order never matters.
 */
START_TEST(placement_add_node)
{
	static char *abc[] = { "a", "b", "c" },
	    *abcd[] = { "a", "b", "c", "d" }, *dcba[] = { "d", "c", "b", "a" };
	static const char want4[] = "adbaaabcbacdbcab";
	size_t was, now;
	unsigned s, moved = 0;

	ck_assert(placement_weight("/counter", 0, "d") ==
	    0x23d2df09e61c77dfULL);
	for (s = 0; s < 64; s++) {
		was = placement_node("/counter", s, abc, 3);
		now = placement_node("/counter", s, abcd, 4);
		ck_assert_str_eq(abcd[now],
		    dcba[placement_node("/counter", s, dcba, 4)]);
		if (s < 16)
			ck_assert_int_eq(abcd[now][0], want4[s]);
		if (now != was) {
			ck_assert_str_eq(abcd[now], "d");
			moved++;
		} else
			ck_assert_str_ne(abcd[now], "d");
	}
	ck_assert_uint_eq(moved, 11);
}
END_TEST

/*
 * A group's id and a shard's remote reference: stable, never UINT32_MAX
 * (no sender), never a peer's reference.
 */
START_TEST(shard_refs)
{
	uint32_t r;

	ck_assert_uint_eq(placement_group_id("/counter"), 11904);
	ck_assert_uint_eq(placement_group_id("/s/counter"), 7382);
	r = REMOTE_SHARD_REF(placement_group_id("/counter"), 63);
	ck_assert(REMOTE_IS(r));
	ck_assert(REMOTE_IS_SHARD(r));
	ck_assert_uint_eq(REMOTE_SHARD_ID(r), 11904);
	ck_assert_uint_eq(REMOTE_SHARD_OF(r), 63);
	r = REMOTE_SHARD_REF(REMOTE_SHARD_IDS - 1, 1023);
	ck_assert_uint_ne(r, UINT32_MAX);
	ck_assert(REMOTE_IS_SHARD(r));
	ck_assert(!REMOTE_IS_SHARD(REMOTE_REF(126, 0xff, 0xffff)));
}
END_TEST

/* Every worker of a node learns the groups spanning nodes. */
START_TEST(shards_env)
{
	char err[ERRLEN];
	struct actord_spec *spec;

	spec = parse(NODE("peers = ( " PEER_B " );")
	    "supervisor = { children = ( { name = \"counter\"; exec = "
	    "[\"/bin/true\"]; instances = 16; nodes = [\"a\", \"b\"]; }, "
	    "{ name = \"s\"; supervisor = { children = ( { name = \"x\"; "
	    "exec = [\"/bin/true\"]; instances = 3; nodes = [\"b\"]; } ); "
	    "}; } ); };\n", err);
	ck_assert_msg(spec != NULL, "%s", err);
	ck_assert_str_eq(spec->node->shards_env, "/counter=16 /s/x=3");
	spec_free(spec);
	spec = parse(NODE("peers = ( " PEER_B " );")
	    "supervisor = { children = ( { name = \"w\"; exec = "
	    "[\"/bin/true\"]; } ); };\n", err);
	ck_assert_msg(spec != NULL, "%s", err);
	ck_assert_ptr_null(spec->node->shards_env);
	spec_free(spec);
}
END_TEST

/* ZeroMQ RFC 32's test vector, and garbage refused. */
START_TEST(z85_text)
{
	static const uint8_t k[KEY_BYTES] = {
		0x8e, 0x0b, 0xdd, 0x69, 0x76, 0x28, 0xb9, 0x1d,
		0x8f, 0x24, 0x55, 0x87, 0xee, 0x95, 0xc5, 0xb0,
		0x4d, 0x48, 0x96, 0x3f, 0x79, 0x25, 0x98, 0x77,
		0xb4, 0x9c, 0xd9, 0x06, 0x3a, 0xea, 0xd3, 0xb7
	};
	uint8_t back[KEY_BYTES];
	char text[KEY_Z85_LEN + 1];

	key_z85_encode(k, text);
	ck_assert_str_eq(text, "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6");
	ck_assert_int_eq(key_z85_decode(text, back), 0);
	ck_assert_mem_eq(back, k, KEY_BYTES);
	ck_assert_int_eq(key_z85_decode("JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh",
	    back), -1);
	ck_assert_int_eq(key_z85_decode("JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{L\"6",
	    back), -1);
	/* #####: 85^5 - 1, above 2^32. */
	ck_assert_int_eq(key_z85_decode("#####%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6",
	    back), -1);
}
END_TEST

/* A secret key others can access is refused; a public one is not. */
START_TEST(key_file_modes)
{
	char z85[KEY_Z85_LEN + 1], err[256], path[96];

	ck_assert_int_eq(key_file_read(keyfile, true, z85, err, sizeof(err)),
	    0);
	ck_assert_str_eq(z85, SEC_A);
	ck_assert_int_eq(chmod(keyfile, 0640), 0);
	ck_assert_int_eq(key_file_read(keyfile, true, z85, err, sizeof(err)),
	    -1);
	ck_assert_msg(strstr(err, "a secret key that others can access "
	    "(mode 0640): chmod 600 it") != NULL, "%s", err);
	ck_assert_int_eq(key_file_read(keyfile, false, z85, err, sizeof(err)),
	    0);
	snprintf(path, sizeof(path), "%s/bad.key", tmpdir);
	write_file(path, "not a key\n", 0600);
	ck_assert_int_eq(key_file_read(path, true, z85, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "not a key file") != NULL, "%s", err);
	ck_assert_int_eq(key_file_read(tmpdir, true, z85, err, sizeof(err)),
	    -1);
	ck_assert_msg(strstr(err, "not a regular file") != NULL, "%s", err);
}
END_TEST

/* The real actord refuses to start with a world-readable secret key. */
START_TEST(actord_refuses_open_key)
{
	struct ts_daemon d;
	char *log;
	int rc;

	ts_daemon_init(&d);
	snprintf(keyfile, sizeof(keyfile), "%s/a.key", d.dir);
	write_file(keyfile, SEC_A "\n", 0644);
	ts_daemon_conf(&d, NODE("") "supervisor = { children = ( { name = "
	    "\"w\"; exec = [\"/bin/sleep\", \"100\"]; } ); };\n", keyfile);
	ts_daemon_start(&d, NULL);
	rc = ts_daemon_wait(&d, 20000);
	log = ts_daemon_log(&d);
	ck_assert_int_eq(rc, 1);	/* ACTORD_EXIT_CONFIG */
	ck_assert_msg(strstr(log, ": node.secret_key_file: ") != NULL &&
	    strstr(log, "a.key: a secret key that others can access (mode "
	    "0644): chmod 600 it") != NULL, "%s", log);
	/* Nothing was started. */
	ck_assert_msg(strstr(log, "/w") == NULL, "%s", log);
	ts_daemon_cleanup(&d);
}
END_TEST

/* actorctl keygen: 0600 secret, 0644 public printed, never overwrites. */
START_TEST(keygen)
{
	char path[96], pubpath[104], cmd[512], out[128], z85[KEY_Z85_LEN + 1];
	char err[256];
	struct stat st;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/n.key", tmpdir);
	snprintf(pubpath, sizeof(pubpath), "%s.pub", path);
	snprintf(cmd, sizeof(cmd), "umask 0; %s keygen %s",
	    ts_build("actorctl"), path);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(out, sizeof(out), f));
	ck_assert_int_eq(pclose(f), 0);
	out[strcspn(out, "\n")] = '\0';
	ck_assert(key_z85_valid(out));
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(stat(pubpath, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0644);
	ck_assert_int_eq(key_file_read(path, true, z85, err, sizeof(err)), 0);
	ck_assert_int_eq(key_file_read(pubpath, false, z85, err, sizeof(err)),
	    0);
	ck_assert_str_eq(z85, out);
	/* Again: refused, and the first pair is untouched. */
	snprintf(cmd, sizeof(cmd), "%s keygen %s 2>&1", ts_build("actorctl"),
	    path);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(out, sizeof(out), f));
	rc = pclose(f);
	ck_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 1);
	ck_assert_msg(strstr(out, "File exists") != NULL, "%s", out);
	ck_assert_int_eq(key_file_read(pubpath, false, out, err, sizeof(err)),
	    0);
	ck_assert_str_eq(z85, out);
}
END_TEST

static Suite *
suite(void)
{
	Suite *s = suite_create("node_config");
	TCase *tc;

	tc = tcase_create("config");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, bad_node, 0, NBAD);
	tcase_add_test(tc, good_node);
	tcase_add_test(tc, no_node_no_gateway);
	tcase_add_test(tc, local_shards);
	tcase_add_test(tc, shards_env);
	tcase_add_test(tc, default_gateway_beside);
	suite_add_tcase(s, tc);

	tc = tcase_create("keys");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, placement_vectors);
	tcase_add_test(tc, placement_add_node);
	tcase_add_test(tc, shard_refs);
	tcase_add_test(tc, z85_text);
	tcase_add_test(tc, key_file_modes);
	tcase_add_test(tc, actord_refuses_open_key);
	tcase_add_test(tc, keygen);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(suite());
}
