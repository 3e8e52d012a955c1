/*
 * defer.c: deferred answers (gen_server's reply(From, ...), Akka's
 * captured sender).  A handler keeps the ask in hand with actor_defer()
 * and answers it later with actor_answer(): from another handler call,
 * after asking others, or never (then the ask's timeout, or the actor's
 * death, answers it).
 *
 * What the actor holds is written in its region's deferred set (ask_cap
 * entries, one per ask its asker may be waiting on), so that actord,
 * when the actor dies, fails every one still held at once with
 * ACTOR_EDIED (defer_reaped, from actor_reaped) instead of leaving its
 * asker to wait out its timeout.  An entry is {corr, asker}: the actor
 * writes the asker, then corr (release); it clears corr after the answer
 * is sent, so a death between the two only makes a second answer, which
 * the asker's reply slot drops as late.  Entries whose ask is over (its
 * asker's reply slot no longer waits for it) are taken back when the set
 * is full.
 *
 * Owns: the deferred set.  Must never let a deferred ask go unanswered
 * at a death, nor answer one the redelivery of the message in hand will
 * answer again.
 *
 * The read-once rule (shm/shm.h): defer_reaped runs in actord over a dead
 * actor's set; its length is the ask_cap ar_hdr read once (struct
 * ar_caps), and each entry's corr and asker are loaded once.
 */
#include <string.h>

#include "worker/actor_impl.h"

/*
 * Scans of an asker's reply lane a reap of the deferred set may make
 * (slot_release_dead): one per answer the dead had on its way, which is
 * one per thread of it that was sending.
 */
#define DEFER_SCANS	64

static uint64_t	 who_of(uint32_t, uint32_t);
static void	 ask_of(const struct actor_caller *, struct shm_msg *);
static bool	 ask_over(struct shm_arena *, uint64_t, uint64_t);
static int	 free_entry(struct actor *);
static int	 held(struct actor *, const struct actor_caller *);

static uint64_t
who_of(uint32_t idx, uint32_t inc)
{
	return (uint64_t)idx << 32 | inc;
}

static void
ask_of(const struct actor_caller *c, struct shm_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->tag = c->tag;
	m->sender.index = c->asker.index;
	m->sender.incarnation = c->asker.incarnation;
	m->corr = c->corr;
	m->flags = SHM_MSG_ASK;
}

/* Nobody waits for this ask any more: its asker died or its slot moved on. */
static bool
ask_over(struct shm_arena *a, uint64_t corr, uint64_t who)
{
	uint32_t idx = (uint32_t)(who >> 32), inc = (uint32_t)who;
	struct ar_hdr *h;
	struct ar_caps c;
	uint64_t id = corr & CORR_ID_MASK;

	if (idx >= shm_nmailboxes(a) || shm_actor_incarnation(a, idx) != inc)
		return true;
	if ((h = ar_hdr(a, idx, &c)) == NULL)
		return false;
	return (atomic_load(&ar_asks(h, &c)[id & (c.ask_cap - 1)]) &
	    CORR_ID_MASK) != id;
}

/* A free entry of the deferred set, or ACTOR_EFULL. */
static int
free_entry(struct actor *a)
{
	struct ar_defer *d = ar_defers(a->hdr, &a->caps);
	uint32_t n = a->caps.ask_cap, i, k;
	uint64_t c;
	int pass;

	for (pass = 0; pass < 2; pass++)
		for (k = 0; k < n; k++) {
			i = (a->defer_next + k) & (n - 1);
			c = atomic_load_explicit(&d[i].corr,
			    memory_order_relaxed);
			if (c != 0 && (pass == 0 || !ask_over(a->arena, c,
			    atomic_load(&d[i].who))))
				continue;
			atomic_store_explicit(&d[i].corr, 0,
			    memory_order_relaxed);
			a->defer_next = i + 1;
			return (int)i;
		}
	return ACTOR_EFULL;
}

/*
 * Keep the ask in hand to answer later.  The message is finished with as
 * usual (the handler returns, actor_done), but its answer is the
 * caller's: *c says which ask it is.
 */
int
actor_defer(struct actor *a, struct actor_caller *c)
{
	struct ar_defer *d;
	int i;

	if (a->idx < 0)
		return ACTOR_ENOMAILBOX;
	if (actor_forked(a))
		return ACTOR_EFORKED;
	if (!a->holding || c == NULL)
		return ACTOR_EINVAL;
	if ((a->cur.flags & SHM_MSG_ASK) == 0)
		return ACTOR_ENOTASK;
	if ((i = free_entry(a)) < 0)
		return i;
	d = &ar_defers(a->hdr, &a->caps)[i];
	atomic_store_explicit(&d->who, who_of(a->cur.sender.index,
	    a->cur.sender.incarnation), memory_order_relaxed);
	atomic_store_explicit(&d->corr, a->cur.corr, memory_order_release);
	/* Not the in-hand ask's business any more: the set's. */
	inhand_answered(a);
	memset(c, 0, sizeof(*c));
	c->asker.index = a->cur.sender.index;
	c->asker.incarnation = a->cur.sender.incarnation;
	c->corr = a->cur.corr;
	c->entry = (uint32_t)i;
	c->tag = a->cur.tag;
	return 0;
}

/* Is *c still held in the set?  0, or ACTOR_EINVAL (answered, foreign). */
static int
held(struct actor *a, const struct actor_caller *c)
{
	struct ar_defer *d;

	if (a->idx < 0)
		return ACTOR_ENOMAILBOX;
	if (actor_forked(a))
		return ACTOR_EFORKED;
	if (c == NULL || c->corr == 0 || c->entry >= a->caps.ask_cap)
		return ACTOR_EINVAL;
	d = &ar_defers(a->hdr, &a->caps)[c->entry];
	if (atomic_load_explicit(&d->corr, memory_order_relaxed) != c->corr ||
	    atomic_load_explicit(&d->who, memory_order_relaxed) !=
	    who_of(c->asker.index, c->asker.incarnation))
		return ACTOR_EINVAL;
	return 0;
}

int
actor_answer(struct actor *a, const struct actor_caller *c, uint32_t tag,
    const void *data, size_t len)
{
	struct shm_msg ask;
	int rc;

	if ((rc = held(a, c)) < 0)
		return rc;
	ask_of(c, &ask);
	rc = send_answer(a, &ask, tag, data, len);
	atomic_store_explicit(&ar_defers(a->hdr, &a->caps)[c->entry].corr, 0,
	    memory_order_release);
	return rc;
}

int
actor_answer_error(struct actor *a, const struct actor_caller *c, int code,
    const char *text)
{
	struct shm_msg ask;
	int rc;

	if ((rc = held(a, c)) < 0)
		return rc;
	if (code < ACTOR_ELAST)
		return ACTOR_EINVAL;
	ask_of(c, &ask);
	rc = send_error_reply(a->prod, a->arena, &ask, code, text, NULL);
	atomic_store_explicit(&ar_defers(a->hdr, &a->caps)[c->entry].corr, 0,
	    memory_order_release);
	return rc;
}

/*
 * actord, at the actor's death (actor_reaped): every deferred ask still
 * held fails at once with ACTOR_EDIED, except the one the message in
 * hand is (handled not NULL), which its redelivery or its poison answer
 * takes care of.  The set is empty afterwards.  Returns how many failed.
 */
int
defer_reaped(struct shm_producer *p, struct shm_arena *a, uint32_t idx,
    uint32_t dead, struct ar_hdr *h, const struct ar_caps *caps, const struct shm_msg *handled,
    struct actor_owed **owed)
{
	struct ar_defer *d = ar_defers(h, caps);
	struct actor_caller c;
	struct shm_msg ask;
	uint64_t corr, who;
	uint32_t i;
	unsigned scans = DEFER_SCANS;
	int n = 0;

	for (i = 0; i < caps->ask_cap; i++) {
		corr = atomic_load(&d[i].corr);
		if (corr == 0)
			continue;
		who = atomic_load(&d[i].who);
		atomic_store(&d[i].corr, 0);
		if (handled != NULL && handled->corr == corr &&
		    who == who_of(handled->sender.index,
		    handled->sender.incarnation))
			continue;
		memset(&c, 0, sizeof(c));
		c.asker.index = (uint32_t)(who >> 32);
		c.asker.incarnation = (uint32_t)who;
		c.corr = corr;
		ask_of(&c, &ask);
		/* Died sending its answer: ours, unless that one got out. */
		if (slot_release_dead(a, &ask, idx, dead, &scans))
			continue;
		if (p != NULL && send_error_reply(p, a, &ask, ACTOR_EDIED,
		    "the actor died holding its deferred answer", owed) == 0)
			n++;
	}
	return n;
}
