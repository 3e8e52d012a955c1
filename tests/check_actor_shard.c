/*
 * check_actor_shard.c: the seeds' integrated example across processes: a
 * counter sharded over 16 actors (one worker with instances = 16) under a
 * real actord, 51,000 increments over 200 keys from 4 sender processes, one
 * shard SIGKILLed in the middle (three kills, two shards); the totals read at the end from the
 * committed snapshots are exact, and every key was always routed to the
 * same shard.  Also the routing function itself: test vectors others can
 * check against, and stability when the group grows.
 */
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm/shm.h"
#include "tests/check_actor_util.h"
#include "tests/lib/tcheck.h"
#include "tests/lib/tsup.h"
#include "worker/actor.h"

#define NSHARDS		16
#define NKEYS		200
#define NSENDERS	4
#define NINCR		51000
#define T_INC		1

struct counter_state {
	uint64_t	 total;
	uint32_t	 count[NKEYS];
};

static int
key_of(const struct actor_msg *m)
{
	char buf[16];
	size_t n = m->len < sizeof(buf) - 1 ? m->len : sizeof(buf) - 1;

	memcpy(buf, m->data, n);
	buf[n] = '\0';
	if (strncmp(buf, "key-", 4) != 0)
		return -1;
	return atoi(buf + 4);
}

struct shard {
	struct counter_state st;
	uint32_t	 me;
};

static int
shard_handle(struct actor *a, const struct actor_msg *m, void *arg)
{
	struct shard *s = arg;
	int k;

	if (m->tag != T_INC || (k = key_of(m)) < 0 || k >= NKEYS)
		return 0;
	if (actor_shard_of(m->data, m->len, NSHARDS) != s->me)
		atomic_fetch_add(&sh->misrouted, 1);
	s->st.count[k]++;
	s->st.total++;
	/* Committed with the message in hand: handled exactly once. */
	if (actor_commit(a, &s->st, sizeof(s->st)) < 0)
		_exit(96);
	return 0;
}

static int
fn_shard(void *arg)
{
	struct actor *a = attach_or_die();
	struct shard s;
	const char *p;
	size_t len;

	(void)arg;
	memset(&s, 0, sizeof(s));
	p = strrchr(actor_name(a), '/');
	s.me = p != NULL ? (uint32_t)atoi(p + 1) : 0;
	if (actor_load(a, &s.st, sizeof(s.st), &len) < 0 ||
	    len != sizeof(s.st))
		memset(&s.st, 0, sizeof(s.st));
	(void)actor_ready(a);
	(void)actor_run(a, shard_handle, NULL, &s);
	actor_close(a);
	return 0;
}

/* A sender: a plain process with the arena, no mailbox. */
static void
sender(struct shm_arena *ar, int id)
{
	struct actor *a;
	struct actor_ref ref;
	char err[ACTOR_ERRBUF], key[16];
	int i, rc, n;

	if (actor_open(ar, -1, &a, err, sizeof(err)) < 0)
		_exit(90);
	for (i = id; i < NINCR; i += NSENDERS) {
		n = snprintf(key, sizeof(key), "key-%d", i % NKEYS);
		if (actor_shard(a, "/counter", key, (size_t)n, &ref) < 0)
			_exit(91);
		while ((rc = actor_tell(a, ref, T_INC, key, (size_t)n)) ==
		    ACTOR_EFULL)
			;
		if (rc != 0)
			_exit(92);
		atomic_fetch_add(&sh->sent, 1);
	}
	actor_close(a);
	atomic_fetch_add(&sh->senders_done, 1);
	_exit(0);
}

static uint64_t
committed_total(struct shm_arena *ar, uint32_t *idx, struct counter_state *out)
{
	struct counter_state st;
	uint64_t t = 0;
	size_t len;
	int s;

	for (s = 0; s < NSHARDS; s++) {
		if (actor_snapshot_read(ar, idx[s], &st, sizeof(st), &len) < 0)
			continue;
		t += st.total;
		if (out != NULL)
			out[s] = st;
	}
	return t;
}

struct progress {
	uint32_t	*idx;
	uint64_t	 at;
};

static bool
reached(struct actord *ad, void *arg)
{
	struct progress *p = arg;

	return committed_total(ad->arena, p->idx, NULL) >= p->at &&
	    (p->at < NINCR || atomic_load(&sh->senders_done) == NSENDERS);
}

/*
 * Every SIGKILL has been reaped: the last one may land after the last
 * increment was committed, and actord (run in slices by this test) must
 * still see the death before the counts are read.
 */
static bool
kills_reaped(struct actord *ad, void *arg)
{
	uint32_t *idx = arg;
	struct actor_stats a5, a9;

	return actor_stats(ad->arena, idx[5], &a5) == 0 &&
	    actor_stats(ad->arena, idx[9], &a9) == 0 &&
	    a5.deaths >= 2 && a9.deaths >= 1;
}

START_TEST(sharded_counter_exact_after_sigkill)
{
	struct actord_spec *spec;
	struct child_spec *c;
	struct actord *ad;
	struct counter_state st[NSHARDS];
	struct actor_stats as;
	struct progress pr;
	uint32_t idx[NSHARDS], k, want;
	char path[32];
	pid_t victim, first = 0;
	int s, i, owner;

	sh_map();
	spec = ts_spec();
	spec->root.intensity = 100;
	c = ts_add_fn(&spec->root, "counter", fn_shard, NULL);
	c->ready = READY_ACTOR;
	c->has_mailbox = true;
	c->instances = NSHARDS;
	c->mailbox.capacity = 1024;
	c->mailbox.cell = 128;
	c->mailbox.block_timeout = 100;
	c->mailbox.state = sizeof(struct counter_state);
	ad = ts_actord(spec);
	actord_boot(ad);
	ck_assert(ts_wait_state(ad, "/", NS_RUNNING, 20000));
	for (s = 0; s < NSHARDS; s++) {
		snprintf(path, sizeof(path), "/counter/%d", s);
		ck_assert_int_ge(shm_lookup(ad->arena, path), 0);
		idx[s] = (uint32_t)shm_lookup(ad->arena, path);
	}
	for (i = 0; i < NSENDERS; i++)
		if (fork() == 0)
			sender(ad->arena, i);
	pr.idx = idx;
	/* SIGKILL shards mid-way: 5 at a third, 9 at a half, 5 again. */
	for (i = 0; i < 3; i++) {
		static const int who[3] = { 5, 9, 5 };
		static const uint64_t at[3] = { NINCR / 3, NINCR / 2,
		    NINCR * 2 / 3 };

		pr.at = at[i];
		ck_assert_msg(ts_run_sliced(ad, reached, &pr, 60000),
		    "stuck at %llu", (unsigned long long)committed_total(
		    ad->arena, idx, NULL));
		snprintf(path, sizeof(path), "/counter/%d", who[i]);
		/*
		 * The same shard again: its last kill may not be reaped yet,
		 * and "running" would still name the dead pid.
		 */
		if (i == 2)
			ck_assert(ts_wait_new_pid(ad, path, first, 20000));
		ck_assert(ts_wait_state(ad, path, NS_RUNNING, 20000));
		victim = ts_pid(ad, path);
		if (i == 0)
			first = victim;
		ck_assert_int_gt(victim, 0);
		ck_assert_int_eq(kill(victim, SIGKILL), 0);
	}
	pr.at = NINCR;
	ck_assert_msg(ts_run_sliced(ad, reached, &pr, 60000), "stuck at %llu, "
	    "%d senders done",
	    (unsigned long long)committed_total(ad->arena, idx, NULL),
	    atomic_load(&sh->senders_done));
	ck_assert_uint_eq(committed_total(ad->arena, idx, st), NINCR);
	ck_assert_int_eq(atomic_load(&sh->misrouted), 0);
	for (k = 0; k < NKEYS; k++) {
		char key[16];
		int n = snprintf(key, sizeof(key), "key-%u", k);

		want = NINCR / NKEYS;	/* 51,000 is a multiple of 200 */
		owner = (int)actor_shard_of(key, (size_t)n, NSHARDS);
		ck_assert_msg(st[owner].count[k] == want, "key %u: %u, not "
		    "%u", k, st[owner].count[k], want);
		for (s = 0; s < NSHARDS; s++)
			if (s != owner)
				ck_assert_uint_eq(st[s].count[k], 0);
	}
	ck_assert(ts_run_sliced(ad, kills_reaped, idx, 20000));
	ck_assert_int_eq(actor_stats(ad->arena, idx[5], &as), 0);
	ck_assert_uint_eq(as.deaths, 2);
	ck_assert_int_eq(actor_stats(ad->arena, idx[9], &as), 0);
	ck_assert_uint_eq(as.deaths, 1);
	actord_free(ad);
}
END_TEST

/* The documented function, as test vectors another language can use. */
START_TEST(shard_hash_vectors)
{
	ck_assert_uint_eq(actor_shard_hash("", 0), 0xcbf29ce484222325ULL);
	ck_assert_uint_eq(actor_shard_hash("a", 1), 0xaf63dc4c8601ec8cULL);
	ck_assert_uint_eq(actor_shard_hash("foobar", 6),
	    0x85944171f73967e8ULL);
	/* Checked against an independent implementation (Python). */
	ck_assert_uint_eq(actor_shard_of("", 0, 16), 13);
	ck_assert_uint_eq(actor_shard_of("a", 1, 16), 12);
	ck_assert_uint_eq(actor_shard_of("foobar", 6, 16), 5);
	ck_assert_uint_eq(actor_shard_of("key-0", 5, 16), 1);
	ck_assert_uint_eq(actor_shard_of("user:42", 7, 16), 15);
	ck_assert_uint_eq(actor_shard_of("user:42", 7, 1000), 295);
	ck_assert_uint_eq(actor_shard_hash("user:42", 7),
	    0x6c151ea4dcd221c2ULL);
	ck_assert_uint_eq(actor_shard_of("anything", 8, 1), 0);
	ck_assert_uint_eq(actor_shard_of("anything", 8, 0), 0);
}
END_TEST

/* Jump hash: growing 16 -> 17 shards moves only keys to the new shard. */
START_TEST(shard_growth_moves_few_keys)
{
	char key[32];
	int i, n, moved = 0;
	uint32_t a, b, hist[16] = { 0 };

	for (i = 0; i < 10000; i++) {
		n = snprintf(key, sizeof(key), "user:%d", i);
		a = actor_shard_of(key, (size_t)n, 16);
		b = actor_shard_of(key, (size_t)n, 17);
		ck_assert_uint_lt(a, 16);
		hist[a]++;
		if (a != b) {
			ck_assert_uint_eq(b, 16);
			moved++;
		}
	}
	/* About 1/17 of the keys, never a reshuffle. */
	ck_assert_int_gt(moved, 300);
	ck_assert_int_lt(moved, 900);
	for (i = 0; i < 16; i++)
		ck_assert_uint_gt(hist[i], 400);
}
END_TEST

START_TEST(crc32c_vector)
{
	ck_assert_uint_eq(actor_crc32c(0, "123456789", 9), 0xe3069283u);
	ck_assert_uint_eq(actor_crc32c(0, "", 0), 0);
}
END_TEST

static Suite *
shard_suite(void)
{
	Suite *s = suite_create("actor_shard");
	TCase *tc = tcase_create("shard");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, shard_hash_vectors);
	tcase_add_test(tc, shard_growth_moves_few_keys);
	tcase_add_test(tc, crc32c_vector);
	tcase_add_test(tc, sharded_counter_exact_after_sigkill);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tcheck_run(shard_suite());
}
