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
 * Owns: the owed lists.  Must never drop a message its live recipient has
 * not had, nor send one twice.
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

struct actor_owed {
	struct owed_msg	*v;
	size_t		 n, cap;
};

static bool	 still_for(struct shm_arena *, const struct owed_msg *);
static bool	 queued_for(const struct actor_owed *, size_t, uint32_t,
		    uint32_t);
static int	 owe(struct actor_owed **, const struct owed_msg *);
static void	 unclaim(struct shm_arena *, const struct owed_msg *);

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

/* Is one of the first n entries for mailbox `to`, on `lane`? */
static bool
queued_for(const struct actor_owed *o, size_t n, uint32_t to, uint32_t lane)
{
	size_t i;

	for (i = 0; o != NULL && i < n; i++)
		if (o->v[i].to == to && o->v[i].lane == lane)
			return true;
	return false;
}

/* Append to the list: 0, or ACTOR_ESYS without memory. */
static int
owe(struct actor_owed **op, const struct owed_msg *e)
{
	struct actor_owed *o = *op;
	struct owed_msg *v;
	size_t cap;

	if (o == NULL) {
		if ((o = calloc(1, sizeof(*o))) == NULL)
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
	o->v[o->n++] = *e;
	return 0;
}

/*
 * Send m to incarnation inc (in the bits of inc_mask) of mailbox `to`, on
 * lane: now if the lane has room and nothing older is owed to it there;
 * else owe it.  Without a list (owed NULL), or without memory for one
 * more entry, a full lane dead-letters it as shm_send does.
 */
int
owed_send(struct shm_producer *p, uint32_t to, uint32_t inc,
    uint32_t inc_mask, enum shm_lane lane, const struct shm_msg *m,
    const void *payload, struct actor_owed **owed)
{
	struct owed_msg e;
	int rc;

	if (owed == NULL || m->len > OWED_PAYLOAD)
		return p != NULL ? shm_send(p, to, lane, m, payload, 0) :
		    ACTOR_ENOSLOT;
	if (p != NULL && !queued_for(*owed, *owed != NULL ? (*owed)->n : 0,
	    to, lane) && (rc = shm_offer(p, to, lane, m, payload)) !=
	    SHM_EFULL)
		return rc;
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
 * recipient died.  Returns how many are still owed (the list is freed
 * at 0).
 */
int
owed_flush(struct shm_producer *p, struct shm_arena *a,
    struct actor_owed **op)
{
	struct actor_owed *o = *op;
	struct owed_msg *e;
	size_t i, kept = 0;

	if (o == NULL)
		return 0;
	for (i = 0; i < o->n; i++) {
		e = &o->v[i];
		if (!still_for(a, e)) {
			shm_dl_put(a, e->to, (enum shm_lane)e->lane,
			    SHM_DL_STALE_REF, &e->m, e->payload);
			unclaim(a, e);
			continue;
		}
		if (p == NULL || queued_for(o, kept, e->to, e->lane) ||
		    shm_offer(p, e->to, (enum shm_lane)e->lane, &e->m,
		    e->payload) == SHM_EFULL)
			o->v[kept++] = *e;
	}
	o->n = kept;
	if (kept == 0)
		actor_owed_free(op);
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
actor_deliver_owed(struct shm_arena *a, struct actor_owed **owed)
{
	struct shm_producer *p;
	int n;

	if (a == NULL || owed == NULL)
		return ACTOR_EINVAL;
	if (*owed == NULL)
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
	free(*owed);
	*owed = NULL;
}
