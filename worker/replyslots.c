/*
 * replyslots.c: the reply slots.  An actor's reply lane has a fixed
 * number of cells; an answer that finds it full is refused.  Bounding the
 * asks in flight by the lane's size is not enough, because answers to
 * asks that already timed out would still take cells: 64 asks time out,
 * 64 more go out, the callee answers all 128, and the 64 answers that
 * matter find the lane full.  So each ask holds one slot of its asker's
 * region (ask_cap of them, never more than the lane has cells), and an
 * answer takes a cell only after its replier claimed the ask's slot:
 *
 *	slot = 0			free
 *	slot = id			an ask waits (id: its corr's low 40 bits)
 *	slot = CLAIMED | who | id	its answer is on its way or in the lane
 *
 * The asker writes id before it sends the ask (slot_take); a replier
 * claims it with a CAS id -> CLAIMED (slot_claim) and only then sends;
 * an ask that times out takes its slot back with a CAS id -> 0
 * (slot_expire), or, if the claim won, keeps it as a "ghost" until the
 * late answer is taken off the lane (slot_answered), so that the slot is
 * never free while its answer holds a cell.  A replier whose claim fails
 * drops its answer (counted late).  So the lane never holds more answers
 * than there are slots, and a live answer never finds it full.
 *
 * Slots outlive the asker: the next incarnation takes them over (claimed
 * ones as ghosts, their answers still to come), and a ghost whose
 * replier died before sending is freed once nothing of it can still
 * arrive (slots_reclaim).  The slot of an ask is the low bits of its id,
 * which slot_take chooses so that the slot is free.
 *
 * A claim is a worker's word: any worker may write one into any slot, and
 * it outlives the asker (its next incarnation takes it over as a ghost).
 * One that names nobody (a mailbox past the arena, actord's tag on a
 * mailbox not actord's) is freed as soon as it is looked at; any ghost is
 * freed once it is older than GHOST_MAX_MS (actor_impl.h): an honest
 * replier sends right after its claim, and actord's owed answer retries
 * within 100 ms once the lane has room, which the reclaim's drain makes.
 * Without that bound, claims written in the name of actord or of a live
 * actor held the slots for ever: every ask of that actor failed "mailbox
 * full" long after the worker that wrote them was gone.  A late answer
 * to a ghost freed early is dropped as stale; at worst it holds a cell a
 * live answer needed, which then fails and its ask times out.
 *
 * Owns: the reply slots and the process-local state of each (struct
 * actor's slot_st).  Must never free a slot whose answer may still take
 * a cell.
 *
 * The read-once rule (shm/shm.h): actord is a replier too (its error
 * answers at a death); a slot's index comes from the asker's ask_cap as
 * ar_hdr read it once (struct ar_caps), never from the header again.
 */
#include <stdlib.h>

#include "worker/actor_impl.h"

#define SLOT_CLAIMED	(1ULL << 63)
#define SLOT_WHO_SHIFT	40		/* replier: mailbox, 16 bits */
#define SLOT_INC_SHIFT	56		/* replier: incarnation tag, 7 bits */
#define SLOT_ID(v)	((v) & CORR_ID_MASK)

static uint32_t	 inc_tag(uint32_t);
static uint64_t	 claimed_by(uint32_t, uint32_t, uint64_t);
static bool	 claimer_dead(struct shm_arena *, uint64_t);
static void	 ghost(struct actor *, uint32_t);
static bool	 ghost_old(const struct actor *, uint32_t, int64_t);

/* A replier's incarnation in 7 bits, never 0 (0: actord, no identity). */
static uint32_t
inc_tag(uint32_t inc)
{
	return inc == 0 ? 0 : (inc - 1) % 127 + 1;
}

static uint64_t
claimed_by(uint32_t who, uint32_t inc, uint64_t id)
{
	return SLOT_CLAIMED | (uint64_t)(who & 0xffff) << SLOT_WHO_SHIFT |
	    (uint64_t)inc_tag(inc) << SLOT_INC_SHIFT | id;
}

/*
 * The process that claimed the slot is gone, or the claim names nobody
 * (a worker wrote it): it will never send.  actord claims as mailbox 0
 * with tag 0 (send.c); an actor's tag is never 0.
 */
static bool
claimer_dead(struct shm_arena *a, uint64_t v)
{
	uint32_t who = (uint32_t)(v >> SLOT_WHO_SHIFT) & 0xffff;
	uint32_t tag = (uint32_t)(v >> SLOT_INC_SHIFT) & 0x7f;

	if (who >= shm_nmailboxes(a))
		return true;		/* no such replier */
	if (tag == 0)
		return who != 0;	/* actord: it does not die mid-send */
	return inc_tag(shm_actor_incarnation(a, who)) != tag ||
	    shm_actor_state(a, who) == SHM_ACTOR_DOWN;
}

/*
 * Slot i becomes a ghost now: when, noted for ghost_old (the times are
 * allocated at the first ghost; without memory, none ever grows old).
 */
static void
ghost(struct actor *a, uint32_t i)
{
	a->slot_st[i] = SLOT_GHOST;
	if (a->ghost_at == NULL)
		a->ghost_at = calloc(a->reply_cap, sizeof(*a->ghost_at));
	if (a->ghost_at != NULL)
		a->ghost_at[i] = (int64_t)shm_now_ns();
}

/* Ghost i is older than any honest answer can be late (at now, in ns). */
static bool
ghost_old(const struct actor *a, uint32_t i, int64_t now)
{
	return a->ghost_at != NULL &&
	    now - a->ghost_at[i] > (int64_t)GHOST_MAX_MS * 1000000;
}

/*
 * A new handle takes the slots over: those still waiting are the dead
 * incarnation's asks (nobody waits for them any more) and are freed
 * unless a replier claims them first; claimed ones are ghosts.
 */
int
slots_init(struct actor *a)
{
	_Atomic uint64_t *s = ar_asks(a->hdr, &a->caps);
	uint64_t v;
	uint32_t i;

	a->reply_cap = a->caps.ask_cap;
	if ((a->slot_st = calloc(a->reply_cap, 1)) == NULL)
		return ACTOR_ESYS;
	for (i = 0; i < a->reply_cap; i++) {
		v = atomic_load(&s[i]);
		if (v != 0 && (v & SLOT_CLAIMED) == 0 &&
		    atomic_compare_exchange_strong(&s[i], &v, 0))
			continue;
		if (v != 0) {
			ghost(a, i);
			a->nslots++;
		}
	}
	return 0;
}

/*
 * A free slot for an ask: its corr id (whose low bits name the slot) in
 * *id, the slot marked waiting.  ACTOR_EFULL if every slot is taken.
 */
int
slot_take(struct actor *a, uint64_t *id)
{
	uint32_t mask = a->reply_cap - 1;
	uint64_t c;

	if (a->nslots >= a->reply_cap && slots_reclaim(a) == 0)
		return ACTOR_EFULL;
	do {
		c = (a->corr_next + 1) & CORR_ID_MASK;
		a->corr_next = c == 0 ? 1 : c;
	} while (a->slot_st[a->corr_next & mask] != SLOT_FREE);
	*id = a->corr_next;
	a->slot_st[*id & mask] = SLOT_ASK;
	a->nslots++;
	/* Release: the id is in the slot before the ask can be seen. */
	atomic_store_explicit(&ar_asks(a->hdr, &a->caps)[*id & mask], *id,
	    memory_order_release);
	return 0;
}

/* The ask was never sent: nobody can have claimed its slot. */
void
slot_unsend(struct actor *a, uint64_t corr)
{
	uint32_t i = (uint32_t)(corr & (a->reply_cap - 1));

	atomic_store_explicit(&ar_asks(a->hdr, &a->caps)[i], 0, memory_order_release);
	a->slot_st[i] = SLOT_FREE;
	a->nslots--;
}

/*
 * The ask timed out: its slot is free again, unless its answer was
 * claimed, which then holds the slot until it is taken off the lane.
 */
void
slot_expire(struct actor *a, uint64_t corr)
{
	uint32_t i = (uint32_t)(corr & (a->reply_cap - 1));
	uint64_t v = SLOT_ID(corr);

	if (a->slot_st[i] != SLOT_ASK)
		return;
	if (atomic_compare_exchange_strong(&ar_asks(a->hdr, &a->caps)[i], &v, 0)) {
		a->slot_st[i] = SLOT_FREE;
		a->nslots--;
	} else
		ghost(a, i);
}

/*
 * An answer was taken off the reply lane: the slot it was claimed in is
 * free again.  1 if it answers an ask still waiting (its slot is live),
 * 0 if it is late (a ghost's, or one from before this handle).
 */
int
slot_answered(struct actor *a, const struct shm_msg *m)
{
	uint32_t i = (uint32_t)(m->corr & (a->reply_cap - 1));
	_Atomic uint64_t *s = &ar_asks(a->hdr, &a->caps)[i];
	uint64_t v = atomic_load_explicit(s, memory_order_acquire);
	uint8_t st = a->slot_st[i];

	/*
	 * Waiting for this very ask, not claimed: its replier died after
	 * sending this answer, and actord, reaping it after we took the
	 * answer off the lane but before we got here, found it nowhere and
	 * freed the claim (slot_release_dead).  It is this ask's answer all
	 * the same: dropped as late, the ask would wait out its timeout for
	 * an answer it had (actord sends no error for an ask the dead had
	 * answered), and actor_ask's slot would stay taken.  Taken back
	 * with a CAS; if another answer claimed it meanwhile (actord's
	 * error, or a redelivered ask's), that claim is handled below.
	 */
	if (v != 0 && v == SLOT_ID(m->corr) &&
	    atomic_compare_exchange_strong(s, &v, 0))
		goto freed;
	if (v == 0 || (v & SLOT_CLAIMED) == 0 ||
	    SLOT_ID(v) != SLOT_ID(m->corr))
		return 0;	/* not the answer this slot holds: stale */
	atomic_store_explicit(s, 0, memory_order_release);
freed:
	if (st != SLOT_FREE) {
		a->slot_st[i] = SLOT_FREE;
		a->nslots--;
	}
	return st == SLOT_ASK;
}

/*
 * Every slot is taken: free the ghosts whose answer came or will never
 * come.  Repliers that died after their claim (or that no claim names)
 * and ghosts grown old are noted first; then the lane is drained
 * (answers in it free their slots, and one sent before that is in it by
 * now); then a ghost whose claim was withdrawn (the answer was not sent
 * after all) or that was noted is freed.  Returns how many slots are free.
 */
int
slots_reclaim(struct actor *a)
{
	_Atomic uint64_t *s = ar_asks(a->hdr, &a->caps);
	int64_t now = (int64_t)shm_now_ns();
	uint8_t *dead;
	uint64_t v;
	uint32_t i;

	if ((dead = calloc(a->reply_cap, 1)) == NULL)
		return (int)(a->reply_cap - a->nslots);
	for (i = 0; i < a->reply_cap; i++)
		if (a->slot_st[i] == SLOT_GHOST)
			dead[i] = claimer_dead(a->arena, atomic_load(&s[i])) ||
			    ghost_old(a, i, now);
	ask_drain(a);
	for (i = 0; i < a->reply_cap; i++) {
		if (a->slot_st[i] != SLOT_GHOST)
			continue;
		v = atomic_load(&s[i]);
		if ((v & SLOT_CLAIMED) && !dead[i])
			continue;	/* its answer is still to come */
		if (v == 0 || atomic_compare_exchange_strong(&s[i], &v, 0)) {
			a->slot_st[i] = SLOT_FREE;
			a->nslots--;
		}
	}
	free(dead);
	return (int)(a->reply_cap - a->nslots);
}

/*
 * The replier's side: may this answer to `ask` take a cell of the
 * asker's reply lane?  Yes once its slot is claimed (who and inc name
 * the replier; inc 0: actord); no if the ask is over (timed out, or of a
 * dead incarnation): the answer is then dropped and counted late.  An
 * asker without reply slots (no libactor region) takes every answer.
 */
bool
slot_claim(struct shm_arena *a, const struct shm_msg *ask, uint32_t who,
    uint32_t inc)
{
	struct ar_caps c;
	struct ar_hdr *h = ar_hdr(a, ask->sender.index, &c);
	uint64_t id = SLOT_ID(ask->corr), v = id;
	uint32_t i;

	if (h == NULL)
		return true;
	i = (uint32_t)(id & (c.ask_cap - 1));
	if (atomic_compare_exchange_strong(&ar_asks(h, &c)[i], &v,
	    claimed_by(who, inc, id)))
		return true;
	atomic_fetch_add_explicit(&h->late_replies, 1, memory_order_relaxed);
	return false;
}

/* An answer to the ask whose corr is *arg. */
static bool
answers(void *arg, const struct shm_msg *m)
{
	const uint64_t *corr = arg;

	return (m->flags & SHM_MSG_REPLY) &&
	    SLOT_ID(m->corr) == SLOT_ID(*corr);
}

/*
 * actord, at a replier's death (who: its mailbox, inc: the incarnation
 * that died), once shm_reap released the cells it claimed and never
 * published: a slot it claimed for ask, whose answer is not in the
 * asker's reply lane, would stay claimed by an answer that never comes,
 * and the asker would wait out its timeout.  It waits again instead, so
 * that another answer can claim it: actord's error, or the redelivered
 * message's.  true if the dead replier's answer is in the lane: it keeps
 * its claim, and needs no other answer.
 *
 * Each such claim costs a scan of the asker's lane, up to its cells
 * (65,536), and a dead worker's deferred set says which asks to look at
 * (as many entries as its own reply lane has cells): a set of lies, each
 * naming a slot it claimed whose answer waits at the end of a full lane,
 * cost actord 2^32 cells read per death.  *scans (NULL: no bound) is how
 * many more scans the caller's reap may make; at 0 a slot the dead
 * claimed keeps its claim, as if its answer had got out.  An honest
 * replier dies with at most one answer on its way per thread sending.
 */
bool
slot_release_dead(struct shm_arena *a, const struct shm_msg *ask,
    uint32_t who, uint32_t inc, unsigned *scans)
{
	struct ar_caps c;
	struct ar_hdr *h = ar_hdr(a, ask->sender.index, &c);
	uint64_t id = SLOT_ID(ask->corr), v = claimed_by(who, inc, id);
	_Atomic uint64_t *s;

	if (h == NULL || inc == 0)
		return false;
	s = &ar_asks(h, &c)[id & (c.ask_cap - 1)];
	if (atomic_load(s) != v)
		return false;
	if (scans != NULL) {
		if (*scans == 0)
			return true;	/* past the bound: as if sent */
		(*scans)--;
	}
	if (shm_lane_holds(a, ask->sender.index, SHM_LANE_REPLY, answers,
	    &id) == 1)
		return true;
	(void)atomic_compare_exchange_strong(s, &v, id);
	return false;
}

/*
 * An ask was just taken: its slot asked for, to be written, now.  The
 * asker wrote it last (slot_take), so the line is in the asker's cache,
 * and slot_claim's CAS would wait for it after the handler, on the round
 * trip's path; asked for here, its transfer overlaps the taking and the
 * handling.  Only a prefetch: nothing is read or checked here but what
 * ar_hdr checks.
 */
void
slot_prefetch(struct shm_arena *a, const struct shm_msg *ask)
{
	struct ar_caps c;
	struct ar_hdr *h = ar_hdr(a, ask->sender.index, &c);

	if (h != NULL)
		shm_prefetch_own(a, &ar_asks(h, &c)[SLOT_ID(ask->corr) &
		    (c.ask_cap - 1)]);
}

/*
 * The asker's side: an answer came (the replier claimed the slot, so the
 * line is in the replier's cache), and slot_answered will read and clear
 * the slot once the answer is taken off the lane: its line asked for
 * first, so that the two transfers overlap.
 */
void
slot_prefetch_mine(struct actor *a, uint64_t corr)
{
	shm_prefetch_own(a->arena, &ar_asks(a->hdr, &a->caps)[corr &
	    (a->reply_cap - 1)]);
}

/*
 * The claimed answer was not sent after all (it failed, or its recipient
 * died while it was owed): the ask waits again, or its slot is reclaimed.
 */
void
slot_unclaim(struct shm_arena *a, const struct shm_msg *ask)
{
	struct ar_caps c;
	struct ar_hdr *h = ar_hdr(a, ask->sender.index, &c);
	uint64_t id = SLOT_ID(ask->corr), v;
	uint32_t i;

	if (h == NULL)
		return;
	i = (uint32_t)(id & (c.ask_cap - 1));
	v = atomic_load(&ar_asks(h, &c)[i]);
	if ((v & SLOT_CLAIMED) && SLOT_ID(v) == id)
		(void)atomic_compare_exchange_strong(&ar_asks(h, &c)[i], &v,
		    id);
}
