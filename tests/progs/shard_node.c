/*
 * shard_node.c: the workers of tests/check_gateway_shards.c, a counter
 * sharded over the nodes of a group spanning nodes (instances = SHARDS,
 * nodes = [...]) and, on every node, a sender that routes its keys with
 * actor_shard() wherever their shards run.  What it is comes from its
 * path: GROUP/N is a shard, anything else a sender.
 *
 * A shard ("/counter/N"), its counts committed with the message in hand
 * (a SIGKILL loses no increment and counts none twice):
 *
 *	1  tell, payload "key-K": add one to K's count
 *	2  ask: "TOTAL MISROUTED" in decimal (MISROUTED: increments for
 *	   keys that actor_shard_of() does not give this shard)
 *	3  ask, payload "key-K": K's count, in decimal
 *
 * A sender:
 *
 *	10 tell, payload "FIRST STEP": tag 1 to the shard of key-(i % KEYS)
 *	   for i = FIRST, FIRST + STEP, ... below INCREMENTS, 1 ms of pause
 *	   every 100, retrying a full mailbox
 *	11 ask: "SENT FAILED LASTERR" of the last tag 10, in decimal
 *	12 ask, payload "key-K": ask K's shard (actor_shard, then actor_ask
 *	   tag 3); answer "rc=N" and, if 0, " " and its answer
 *	13 ask, payload "key-K": actor_watch of K's shard; answer "rc=N"
 *
 * SHARDS, KEYS and INCREMENTS are the environment's (TS_SHARDS, TS_KEYS,
 * TS_INCREMENTS), the group GROUP (/counter).
 */
#include <err.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "worker/actor.h"

#define GROUP		"/counter"
#define KEYS_MAX	256

enum { INC = 1, TOTAL = 2, COUNT = 3, GO = 10, DONE = 11, ASK = 12,
    WATCH = 13 };

struct counts {
	uint64_t	 total;
	uint64_t	 misrouted;
	uint32_t	 count[KEYS_MAX];
};

struct node {
	struct counts	 st;		/* a shard's committed state */
	uint32_t	 me;		/* a shard's number */
	uint32_t	 shards, keys, increments;
	uint64_t	 sent, failed;	/* a sender's last run */
	int		 lasterr;
};

static uint32_t
env_u32(const char *name, uint32_t dflt)
{
	const char *v = getenv(name);

	return v != NULL ? (uint32_t)strtoul(v, NULL, 10) : dflt;
}

/* "key-K" as K, or -1. */
static int
key_of(const struct actor_msg *m, uint32_t keys)
{
	char buf[16];
	size_t n = m->len < sizeof(buf) - 1 ? m->len : sizeof(buf) - 1;
	int k;

	memcpy(buf, m->data, n);
	buf[n] = '\0';
	if (strncmp(buf, "key-", 4) != 0)
		return -1;
	k = atoi(buf + 4);
	return k >= 0 && (uint32_t)k < keys ? k : -1;
}

static void
reply_text(struct actor *a, uint32_t tag, const char *fmt,
    unsigned long long x, unsigned long long y, long long z)
{
	char text[64];
	int len;

	len = snprintf(text, sizeof(text), fmt, x, y, z);
	(void)actor_reply(a, tag, text, (size_t)len);
}

static int
shard(struct actor *a, const struct actor_msg *m, void *arg)
{
	struct node *s = arg;
	int k;

	switch (m->tag) {
	case INC:
		if ((k = key_of(m, s->keys)) < 0)
			break;
		if (actor_shard_of(m->data, m->len, s->shards) != s->me)
			s->st.misrouted++;
		s->st.count[k]++;
		s->st.total++;
		if (actor_commit(a, &s->st, sizeof(s->st)) < 0)
			errx(1, "commit: the state region is too small");
		break;
	case TOTAL:
		reply_text(a, TOTAL, "%llu %llu", s->st.total,
		    s->st.misrouted, 0);
		break;
	case COUNT:
		k = key_of(m, s->keys);
		reply_text(a, COUNT, "%llu", k < 0 ? 0 : s->st.count[k], 0, 0);
		break;
	default:
		break;
	}
	return 0;
}

static void
send_all(struct actor *a, struct node *s, const struct actor_msg *m)
{
	struct timespec pause = { 0, 1000000 };
	struct actor_ref ref;
	char req[32], key[16];
	unsigned first = 0, step = 1, i;
	int n, rc;

	snprintf(req, sizeof(req), "%.*s", (int)(m->len < sizeof(req) - 1 ?
	    m->len : sizeof(req) - 1), (const char *)m->data);
	if (sscanf(req, "%u %u", &first, &step) != 2 || step == 0)
		return;
	s->sent = s->failed = 0;
	s->lasterr = 0;
	for (i = first; i < s->increments; i += step) {
		n = snprintf(key, sizeof(key), "key-%u", i % s->keys);
		if ((rc = actor_shard(a, GROUP, key, (size_t)n, &ref)) >= 0)
			while ((rc = actor_tell(a, ref, INC, key, (size_t)n)) ==
			    ACTOR_EFULL || rc == ACTOR_ETIMEDOUT)
				nanosleep(&pause, NULL);
		if (rc < 0) {
			s->failed++;
			s->lasterr = rc;
		} else
			s->sent++;
		if ((s->sent + s->failed) % 100 == 0)
			nanosleep(&pause, NULL);
	}
}

/* ASK and WATCH: the shard of the key, by the reference actor_shard gives. */
static void
by_ref(struct actor *a, const struct actor_msg *m)
{
	struct actor_ref ref;
	struct actor_msg r;
	char out[128];
	int rc, n;

	if ((rc = actor_shard(a, GROUP, m->data, m->len, &ref)) >= 0)
		rc = m->tag == ASK ? actor_ask(a, ref, COUNT, m->data, m->len,
		    5000000000LL, &r) : actor_watch(a, ref);
	n = snprintf(out, sizeof(out), "rc=%d", rc);
	if (m->tag == ASK && rc == 0)
		n += snprintf(out + n, sizeof(out) - (size_t)n, " %.*s",
		    (int)(r.len < 64 ? r.len : 64), (const char *)r.data);
	(void)actor_reply(a, m->tag, out, (size_t)n);
}

static int
sender(struct actor *a, const struct actor_msg *m, void *arg)
{
	struct node *s = arg;

	if (m->tag == GO)
		send_all(a, s, m);
	else if (m->tag == DONE)
		reply_text(a, DONE, "%llu %llu %lld", s->sent, s->failed,
		    s->lasterr);
	else if (m->tag == ASK || m->tag == WATCH)
		by_ref(a, m);
	return 0;
}

int
main(void)
{
	struct actor *a;
	struct node s;
	char err[ACTOR_ERRBUF];
	const char *name, *p;
	size_t len;

	if (actor_attach(&a, err, sizeof(err)) < 0)
		errx(1, "%s", err);
	memset(&s, 0, sizeof(s));
	s.shards = env_u32("TS_SHARDS", 16);
	s.keys = env_u32("TS_KEYS", 51);
	s.increments = env_u32("TS_INCREMENTS", 51000);
	if (s.keys > KEYS_MAX)
		errx(1, "TS_KEYS: at most %d", KEYS_MAX);
	name = actor_name(a);
	if (strncmp(name, GROUP "/", sizeof(GROUP)) == 0) {
		p = strrchr(name, '/');
		s.me = (uint32_t)atoi(p + 1);
		if (actor_load(a, &s.st, sizeof(s.st), &len) < 0 ||
		    len != sizeof(s.st))
			memset(&s.st, 0, sizeof(s.st));
	}
	if (actor_ready(a) < 0)
		errx(1, "cannot say ready");
	(void)actor_run(a, strncmp(name, GROUP "/", sizeof(GROUP)) == 0 ?
	    shard : sender, NULL, &s);
	actor_close(a);
	return 0;
}
