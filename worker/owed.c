/*
 * owed.c: messages owed to an actor whose lane had no room for them.
 *
 * What actord writes when it reaps an actor must reach its recipient even
 * when that recipient's lane is full for a moment: a Terminated to a
 * watcher (system lane, 16 cells, and a burst of deaths fills it) and the
 * error answer to an asker of the dead actor (reply lane).  Dropped as a
 * dead letter, a Terminated would never come and the ask would wait for
 * its timeout.  So such a message is owed: kept in a list the sender owns
 * (actord's, passed to actor_reaped; a worker's own, flushed by its next
 * actor_recv), in order, and offered again (shm_offer) until it fits.  A
 * recipient's later message waits behind its earlier ones on the same
 * lane, so it sees them in order.  One whose recipient is no longer the
 * incarnation it was for is dropped as a dead letter "stale reference":
 * that incarnation's watches and asks died with it.
 *
 * The list is capped (actor_owed_init; ACTOR_OWED_MAX by default): a
 * recipient that stopped reading must not make its sender (actord) grow
 * without bound.  A message over the cap is a dead letter "owed list
 * full" at once, and counted, as OTP and Akka send to dead letters what
 * they cannot deliver rather than block.  A flush costs one look per
 * message owed, whatever the number of recipients that are stuck: a
 * small hash table keeps, per recipient and lane, how many messages are
 * owed to it (a new one for that recipient then queues behind them) and
 * whether this flush found its lane full (its later messages are then
 * kept without an offer).
 *
 * Owns: the owed lists.  Must never drop a message its live recipient has
 * not had (but over the cap, as a dead letter), nor send one twice.
 */
#include <stdlib.h>
#include <string.h>

#include "worker/actor_impl.h"

#define OWED_PAYLOAD	sizeof(struct actor_error_reply)	/* the largest */

struct owed_msg {
	uint32_t	 to;		/* the recipient's mailbox */
	uint32_t	 inc;		/* the incarnation it is for ... */
	uint32_t	 inc_mask;	/* ... in these bits */
	uint32_t	 lane;
	struct shm_msg	 m;
	unsigned char	 payload[OWED_PAYLOAD];
};

/* Per recipient and lane: how many are owed, and the flush that found it full. */
struct owed_key {
	uint32_t	 key;		/* to * SHM_NLANES + lane + 1; 0: free */
	uint32_t	 count;
	uint32_t	 stuck;		/* == the list's flush: full this flush */
};

struct actor_owed {
	struct owed_msg	*v;		/* in the order owed */
	size_t		 n, cap;
	size_t		 max;		/* the cap */
	uint64_t	 over;		/* dead-lettered over the cap */
	bool		 keep;		/* actor_owed_init's: kept when empty */
	uint32_t	 flush;		/* flushes so far (never 0 once run) */
	struct owed_key	*keys;		/* open addressing, linear probing */
	size_t		 nkeys;		/* a power of two (0: none yet) */
	size_t		 used;		/* keys taken, counts at 0 included */
};

static bool	 still_for(struct shm_arena *, const struct owed_msg *);
static struct owed_key *key_find(struct actor_owed *, uint32_t, uint32_t,
		    bool);
static int	 keys_rebuild(struct actor_owed *, size_t);
static int	 owe(struct actor_owed **, const struct owed_msg *);
static void	 unclaim(struct shm_arena *, const struct owed_msg *);
static struct actor_owed *owed_new(size_t);

/* An answer that is not sent gives its reply slot back (replyslots.c). */
static void
unclaim(struct shm_arena *a, const struct owed_msg *e)
{
	struct shm_msg ask;

	if (e->lane != SHM_LANE_REPLY)
		return;
	memset(&ask, 0, sizeof(ask));
	ask.sender.index = e->to;
	ask.corr = e->m.corr;
	slot_unclaim(a, &ask);
}

/* Is the recipient still the incarnation the message is for? */
static bool
still_for(struct shm_arena *a, const struct owed_msg *e)
{
	return e->to < shm_nmailboxes(a) &&
	    (shm_actor_incarnation(a, e->to) & e->inc_mask) == e->inc;
}

/*
 * The key of (to, lane): found, or (add) added with count 0; NULL if not
 * found (or no memory to add it).
 */
static struct owed_key *
key_find(struct actor_owed *o, uint32_t to, uint32_t lane, bool add)
{
	uint32_t k = to * SHM_NLANES + lane + 1;
	size_t i;

	if (add && (o->used + 1) * 2 > o->nkeys &&
	    keys_rebuild(o, o->nkeys == 0 ? 16 : o->nkeys * 2) < 0)
		return NULL;
	if (o->nkeys == 0)
		return NULL;
	for (i = (k * 2654435761u) & (o->nkeys - 1);; i = (i + 1) &
	    (o->nkeys - 1)) {
		if (o->keys[i].key == k)
			return &o->keys[i];
		if (o->keys[i].key == 0)
			break;
	}
	if (!add)
		return NULL;
	o->keys[i].key = k;
	o->keys[i].count = 0;
	o->keys[i].stuck = 0;
	o->used++;
	return &o->keys[i];
}

/*
 * The table again, with n buckets, from the messages owed (keys whose
 * count fell to 0 go): 0, or ACTOR_ESYS without memory (the old table
 * stays).
 */
static int
keys_rebuild(struct actor_owed *o, size_t n)
{
	struct owed_key *old = o->keys, *k;
	size_t oldn = o->nkeys, oldused = o->used, i;

	if ((o->keys = calloc(n, sizeof(*o->keys))) == NULL) {
		o->keys = old;
		return ACTOR_ESYS;
	}
	o->nkeys = n;
	o->used = 0;
	for (i = 0; i < o->n; i++) {
		/* n buckets hold every key of o->n messages: no growth. */
		if ((k = key_find(o, o->v[i].to, o->v[i].lane, false)) ==
		    NULL && (o->used + 1) * 2 <= n)
			k = key_find(o, o->v[i].to, o->v[i].lane, true);
		if (k == NULL) {
			free(o->keys);
			o->keys = old;
			o->nkeys = oldn;
			o->used = oldused;
			return ACTOR_ESYS;
		}
		k->count++;
	}
	free(old);
	return 0;
}

static struct actor_owed *
owed_new(size_t max)
{
	struct actor_owed *o;

	if ((o = calloc(1, sizeof(*o))) == NULL)
		return NULL;
	o->max = max == 0 ? ACTOR_OWED_MAX : max;
	return o;
}

/* Append to the list: 0, or ACTOR_ESYS without memory. */
static int
owe(struct actor_owed **op, const struct owed_msg *e)
{
	struct actor_owed *o = *op;
	struct owed_msg *v;
	struct owed_key *k;
	size_t cap;

	if (o == NULL) {
		if ((o = owed_new(0)) == NULL)
			return ACTOR_ESYS;
		*op = o;
	}
	if (o->n == o->cap) {
		cap = o->cap == 0 ? 16 : o->cap * 2;
		if ((v = reallocarray(o->v, cap, sizeof(*v))) == NULL)
			return ACTOR_ESYS;
		o->v = v;
		o->cap = cap;
	}
	if ((k = key_find(o, e->to, e->lane, true)) == NULL)
		return ACTOR_ESYS;
	k->count++;
	o->v[o->n++] = *e;
	return 0;
}

/*
 * Send m to incarnation inc (in the bits of inc_mask) of mailbox `to`, on
 * lane: now if the lane has room and nothing older is owed to it there;
 * else owe it.  With the list at its cap, it is a dead letter "owed list
 * full", counted, and SHM_EFULL.  Without a list (owed NULL), or without
 * memory for one more entry, a full lane dead-letters it as shm_send does.
 */
int
owed_send(struct shm_producer *p, struct shm_arena *a, uint32_t to,
    uint32_t inc, uint32_t inc_mask, enum shm_lane lane,
    const struct shm_msg *m, const void *payload, struct actor_owed **owed)
{
	struct owed_key *k;
	struct owed_msg e;
	int rc;

	if (owed == NULL || m->len > OWED_PAYLOAD)
		return p != NULL ? shm_send(p, to, lane, m, payload, 0) :
		    ACTOR_ENOSLOT;
	k = *owed != NULL ? key_find(*owed, to, lane, false) : NULL;
	if (p != NULL && (k == NULL || k->count == 0) &&
	    (rc = shm_offer(p, to, lane, m, payload)) != SHM_EFULL)
		return rc;
	if (*owed != NULL && (*owed)->n >= (*owed)->max) {
		(*owed)->over++;
		shm_dl_put(a, to, lane, SHM_DL_OWED_FULL, m, payload);
		return SHM_EFULL;
	}
	memset(&e, 0, sizeof(e));
	e.to = to;
	e.inc = inc & inc_mask;
	e.inc_mask = inc_mask;
	e.lane = lane;
	e.m = *m;
	if (m->len > 0)
		memcpy(e.payload, payload, m->len);
	if (owe(owed, &e) == 0)
		return 0;
	return p != NULL ? shm_send(p, to, lane, m, payload, 0) : ACTOR_ESYS;
}

/*
 * Offer every owed message again, in order; dead-letter those whose
 * recipient died.  Once a recipient's lane is found full, its later
 * messages are kept without an offer (they wait behind it), so a flush
 * costs one look per message owed.  Returns how many are still owed
 * (the list is freed at 0, unless actor_owed_init made it).
 */
int
owed_flush(struct shm_producer *p, struct shm_arena *a,
    struct actor_owed **op)
{
	struct actor_owed *o = *op;
	struct owed_key *k;
	struct owed_msg *e;
	size_t i, kept = 0;

	if (o == NULL)
		return 0;
	if (++o->flush == 0)
		o->flush = 1;		/* 0 is "never found full" */
	for (i = 0; i < o->n; i++) {
		e = &o->v[i];
		k = key_find(o, e->to, e->lane, false);
		if (!still_for(a, e)) {
			shm_dl_put(a, e->to, (enum shm_lane)e->lane,
			    SHM_DL_STALE_REF, &e->m, e->payload);
			unclaim(a, e);
		} else if (p == NULL || (k != NULL && k->stuck == o->flush) ||
		    shm_offer(p, e->to, (enum shm_lane)e->lane, &e->m,
		    e->payload) == SHM_EFULL) {
			if (k != NULL)
				k->stuck = o->flush;
			o->v[kept++] = *e;
			continue;
		}
		if (k != NULL && k->count > 0)
			k->count--;
	}
	o->n = kept;
	if (kept == 0 && !o->keep)
		actor_owed_free(op);
	else if (o->used > 16 && o->used > 4 * kept)
		(void)keys_rebuild(o, o->nkeys);	/* drop the emptied */
	return (int)kept;
}

/* Give up: every message still owed is a dead letter "mailbox full". */
void
owed_abandon(struct shm_arena *a, struct actor_owed **op)
{
	struct owed_msg *e;
	size_t i;

	if (*op == NULL)
		return;
	for (i = 0; i < (*op)->n; i++) {
		e = &(*op)->v[i];
		shm_dl_put(a, e->to, (enum shm_lane)e->lane, SHM_DL_FULL,
		    &e->m, e->payload);
		unclaim(a, e);
	}
	actor_owed_free(op);
}

int
actor_owed_init(struct actor_owed **owed, size_t max)
{
	if (owed == NULL)
		return ACTOR_EINVAL;
	if (*owed == NULL && (*owed = owed_new(max)) == NULL)
		return ACTOR_ESYS;
	(*owed)->max = max == 0 ? ACTOR_OWED_MAX : max;
	(*owed)->keep = true;
	return 0;
}

size_t
actor_owed_count(const struct actor_owed *owed)
{
	return owed != NULL ? owed->n : 0;
}

uint64_t
actor_owed_over(const struct actor_owed *owed)
{
	return owed != NULL ? owed->over : 0;
}

int
actor_deliver_owed(struct shm_arena *a, struct actor_owed **owed)
{
	struct shm_producer *p;
	int n;

	if (a == NULL || owed == NULL)
		return ACTOR_EINVAL;
	if (actor_owed_count(*owed) == 0)
		return 0;
	if (shm_producer_open(a, &p) < 0)
		p = NULL;		/* no slot now: try again later */
	n = owed_flush(p, a, owed);
	if (p != NULL)
		shm_producer_close(p);
	return n;
}

void
actor_owed_free(struct actor_owed **owed)
{
	if (owed == NULL || *owed == NULL)
		return;
	free((*owed)->v);
	free((*owed)->keys);
	free(*owed);
	*owed = NULL;
}
