/*
 * express.c: the express path of a main lane: one hot producer owns the
 * lane and appends with plain stores, no locked instruction per message;
 * any other sender takes the lane back first.  Owns taking, giving back,
 * taking back and reaping that ownership; the owner's per-message path
 * itself is inlined in ring.c (express_send for shm_send of a small
 * message, owned_claim for every other send).
 *
 * Why: a claim is a CAS on tail, whose lock drains the store buffer, so
 * each message waits for the previous one's cell stores to reach the
 * lines the consumer polls (tools/bench/bench_ring.c, tput_ladder_mpsc).
 * A single producer needs no CAS to order itself against itself.
 *
 * The words:
 *
 *   tail | TAIL_OWNED   owned: every claim's CAS (which expects a
 *                       position without the bit) fails, so only the
 *                       owner moves tail, with plain stores
 *   own_slot            the owner's slot + 1 (tail's line)
 *   own_revoke          senders taking the lane back, in progress
 *                       (tail's line)
 *   own_busy            the owner's claim record, in its own slot: the
 *                       position it is writing + 1, 0 between sends
 *
 * The record is in the owner's slot, not on tail's line: an owner that
 * lost the lane learns it only at its next send, after it stored its
 * record, and on a shared line that store could overwrite the record of
 * the owner after it (a revoker would then take the lane from a send in
 * progress).  Its slot is a line only it writes, in its cache: the two
 * stores cost no transfer, and without a locked instruction nothing waits
 * for them.
 *
 * Taking (ring.c, claim_want, streak): a producer whose last
 * SHM_OWN_STREAK claims on the lane each followed its own previous one
 * (nobody else claimed in between), and which is registered for
 * membarrier, claims its next cell with CAS tail P -> (P + 1) |
 * TAIL_OWNED, only while own_revoke is 0, and then sets own_slot.
 * Nothing per pair is allocated: the state is these words and the
 * producer's own handle.
 *
 * The owner's send (ring.c, owned_claim, and express_send, its copy for
 * shm_send over the geometry shm_own_took keeps in the producer's
 * handle): a look that tail is still
 * P | TAIL_OWNED and own_slot its own (else it gives the lane back and
 * claims by CAS as anyone: shm_own_drop); own_busy := P + 1; then, after
 * a compiler barrier only, own_revoke == 0, the same look again (a
 * revoke may have ended in between), queued == 0 (blocked senders: it
 * gives the lane back too) and the cell free.  Then tail :=
 * (P + 1) | TAIL_OWNED, write, publish (cell.seq := P + 1), own_busy := 0
 * (release).  Every message goes into the lane's cells: the consumer,
 * capacity, the overflow policies, blocked senders, coalesce, counters
 * and FIFO order per producer are those of the lane, unchanged.
 *
 * A full lane (the cell not yet freed, all else as it left it): where a
 * sender claiming by CAS would poll for room before it joins the line
 * (ring.c, room_soon: the policy blocks, the send may wait, the consumer
 * is awake, no effective capacity), the owner polls the cell as long,
 * keeping the lane, with own_busy 0, and then claims as above (ring.c,
 * own_room).  A revoke, a sender in line or the consumer asleep end the
 * wait at once; so does its end: then it gives the lane back, and the
 * policy acts on its claim by CAS (a blocked sender's line, its timeout,
 * the dead letter; not a second poll for the same cell: room_spent).  Given back at every full lane, a producer that
 * outruns its consumer spent SHM_OWN_STREAK claims by CAS, each slower
 * than the consumer, to take the lane again every time.
 *
 * Taking it back (shm_own_revoke, any other sender that finds TAIL_OWNED):
 * own_revoke++, membarrier(GLOBAL_EXPEDITED), read own_slot, wait for that
 * slot's own_busy == 0, CAS tail to its value without the bit,
 * own_revoke--.  The Dekker pair of the sleep protocol (wait.c),
 * asymmetric: either the owner's read of own_revoke, after its record,
 * sees it raised (it stops), or the revoker, after the barrier, sees the
 * owner's own_slot and record (it waits for the send's end, and then sees
 * everything the owner wrote before own_busy := 0, tail included).  A
 * revoke that ends between the owner's first look and its record has
 * moved tail, which its second look sees.  An acquirer's own_slot not yet
 * stored when a revoker reads it (between its CAS and its next send) is
 * harmless: its first owned send then finds tail unowned.  One membarrier
 * per change of owner, at most one per SHM_OWN_STREAK messages of a
 * producer.  A producer not registered for membarrier never owns.
 *
 * Crashes: an owner killed waiting for room left no record: the lane
 * is given back by the reap of its slot, or taken back by the next
 * sender at once.  An owner killed mid-send left own_busy = P + 1 in its
 * slot.  If
 * tail says it got past P and the cell is still free for P, nothing was
 * published: the cell is released exactly as a dead claimer's (producer.c,
 * shm_release_claim: (P + 1) | SEQ_RELEASED, a dead letter "sender
 * died"), by whoever finds it first: actord's reap of the slot
 * (shm_own_reaped), or a revoker that finds the owner's process gone.
 * Everything it published is in the lane and delivered.  Then the lane is
 * unowned, for anyone.
 *
 * Hostile scribbles: every word is read as a hint.  own_slot is bounds
 * checked; a record only names a cell through the lane's mask, and is
 * acted on only with tail just past it and the cell free for it; a
 * revoker waits for a busy owner no longer than its send's deadline (at
 * least REVOKE_GRACE_NS: an owner mid-send ends within microseconds),
 * then the send fails as on a full lane; a raised own_revoke only stops
 * owning.  actord sends with a timeout of 0: it never waits long.
 */
#include <errno.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>

#include "shm/shm_impl.h"

#define REVOKE_GRACE_NS	50000	/* a revoker waits at least this long */
#define REVOKE_LOOK	64	/* polls between looks at the owner's pid */
#define REVOKE_NAPS	(16 * REVOKE_LOOK)	/* polls before it sleeps */
#define REVOKE_NAP_NS	1000000	/* then in slices of 1 ms */

static struct shm_slot *owner_slot(struct shm_producer *, struct shm_mbox *);
static bool	 owner_gone(const struct shm_slot *);
static int	 settle_dead(struct shm_arena *, struct shm_lane_local *,
		    struct shm_slot *);
static void	 unown_tail(struct shm_lane_local *);
static void	 pause_for(unsigned);

/*
 * A revoker's n-th poll: spin a little (an owner mid-send ends within
 * microseconds), then yield, then sleep in slices (an owner stopped
 * mid-send, with a send that may wait for ever).
 */
static void
pause_for(unsigned n)
{
	struct timespec ts = { 0, REVOKE_NAP_NS };

	if (n < REVOKE_LOOK)
		cpu_relax();
	else if (n <= REVOKE_NAPS)
		sched_yield();
	else
		nanosleep(&ts, NULL);
}

/* The producer took the lane (its CAS set TAIL_OWNED): next is its own. */
void
shm_own_took(struct shm_producer *p, struct shm_lane_local *l, uint64_t next)
{
	struct shm_mbox *m = (struct shm_mbox *)(void *)l->ctl;

	p->own_ring = l->ring_id;
	p->own_next = next;
	p->own_ctl = l->ctl;
	p->own_cells = l->cells;
	p->own_mask = l->mask;
	p->own_cell = l->cell;
	p->own_inl = l->inl;
	p->own_cap = l->cap;
	atomic_store_explicit(&p->slot->own_mbox,
	    (uint32_t)((l->ring_id - 1) / SHM_NLANES) + 1,
	    memory_order_relaxed);
	atomic_store(&m->own_slot, p->slot_no + 1);
}

/* tail without TAIL_OWNED, by CAS: harmless if someone else did it. */
static void
unown_tail(struct shm_lane_local *l)
{
	uint64_t t = atomic_load(&l->ctl->tail);

	while ((t & TAIL_OWNED) != 0 && !atomic_compare_exchange_weak(
	    &l->ctl->tail, &t, t & ~TAIL_OWNED))
		;
}

/*
 * The owner gives the lane back (own_busy is 0: between its sends).  No
 * other producer stores tail while it is owned, and revokers only CAS
 * the bit away as this does.
 */
void
shm_own_drop(struct shm_producer *p, struct shm_lane_local *l)
{
	if (p->own_ring == l->ring_id)
		shm_own_release(p);
}

/* The same, for the lane it owns (its control block kept: shm_own_took). */
void
shm_own_release(struct shm_producer *p)
{
	uint64_t t = p->own_next | TAIL_OWNED;

	if (p->own_ring == 0)
		return;
	p->own_ring = 0;
	p->streak = 0;
	atomic_store_explicit(&p->slot->own_mbox, 0, memory_order_relaxed);
	/* Exactly where it left it: a later owner's tail is never its. */
	atomic_compare_exchange_strong(&p->own_ctl->tail, &t, p->own_next);
}

/* At shm_producer_close: the lane it owns, given back. */
void
shm_own_close(struct shm_producer *p)
{
	struct shm_arena *a = p->a;
	uint32_t idx;

	if (p->own_ring == 0)
		return;
	idx = (uint32_t)((p->own_ring - 1) / SHM_NLANES);
	if (idx < a->n)
		shm_own_drop(p, &shm_mb(a, idx)->lane[SHM_LANE_MAIN]);
}

/*
 * The owner named by own_slot, or NULL if it is no slot at all or is the
 * caller's (which knows it owns nothing: a scribble).
 */
static struct shm_slot *
owner_slot(struct shm_producer *p, struct shm_mbox *m)
{
	uint32_t o = atomic_load(&m->own_slot);

	if (o == 0 || o > p->a->nslots || o == p->slot_no + 1)
		return NULL;
	return &p->a->slots[o - 1];
}

/* Its process is gone (or it is no owner at all). */
static bool
owner_gone(const struct shm_slot *s)
{
	return s == NULL || atomic_load(&s->state) != SLOT_LIVE ||
	    !shm_pid_exists(atomic_load(&s->pid));
}

/*
 * A dead owner's send in progress (s its slot, or NULL): its cell
 * released if tail says it claimed it and nothing was published, then its
 * record cleared.  1 if a cell was released.
 */
static int
settle_dead(struct shm_arena *a, struct shm_lane_local *l, struct shm_slot *s)
{
	uint64_t b, rr = l->ring_id << 2 | REC_INTENT;
	int	 rc = 0;

	if (s == NULL || (b = atomic_load(&s->own_busy)) == 0)
		return 0;
	if (lane_tail(l->ctl, memory_order_seq_cst) == b)
		rc = shm_release_claim(a, s, rr, b - 1) == 1;
	atomic_compare_exchange_strong(&s->own_busy, &b, 0);
	return rc;
}

/*
 * Another sender found the lane owned: take it back (see the top of this
 * file).  0 once tail is unowned, or SHM_ETIMEDOUT if its owner stayed
 * busy past deadline (CLOCK_MONOTONIC ns).
 */
int
shm_own_revoke(struct shm_producer *p, struct shm_lane_local *l,
    struct shm_mbox *m, int64_t deadline)
{
	struct shm_arena *a = p->a;
	struct shm_slot	*o;
	uint32_t idx = (uint32_t)((l->ring_id - 1) / SHM_NLANES);
	int64_t	 now, until;
	unsigned n;
	int	 rc = 0;

	shm_own_drop(p, l);
	if ((atomic_load(&l->ctl->tail) & TAIL_OWNED) == 0)
		return 0;
	atomic_store(&p->slot->revoking, idx + 1);
	atomic_fetch_add(&m->own_revoke, 1);
	atomic_thread_fence(memory_order_seq_cst);
	if (!a->membarrier || syscall(SYS_membarrier,
	    MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) != 0) {
		/*
		 * No barrier: the owner's next send sees own_revoke and gives
		 * the lane back itself; wait for that, as for a busy owner.
		 */
		now = (int64_t)shm_now_ns();
		until = deadline > now + REVOKE_GRACE_NS ? deadline :
		    now + REVOKE_GRACE_NS;
		for (n = 1; (atomic_load(&l->ctl->tail) & TAIL_OWNED) != 0;
		    n++) {
			if ((int64_t)shm_now_ns() >= until) {
				rc = SHM_ETIMEDOUT;
				break;
			}
			pause_for(n);
		}
		goto out;
	}
	/* After the barrier: the owner whose record to wait for. */
	o = owner_slot(p, m);
	now = (int64_t)shm_now_ns();
	until = deadline > now + REVOKE_GRACE_NS ? deadline :
	    now + REVOKE_GRACE_NS;
	for (n = 1; o != NULL && atomic_load_explicit(&o->own_busy,
	    memory_order_acquire) != 0; n++) {
		if (n % REVOKE_LOOK == 0 || n > REVOKE_NAPS) {
			/*
			 * A dead owner's record is settled; one that comes
			 * back (a worker writing into the dead slot) is waited
			 * for no longer than a live owner's.
			 */
			if (owner_gone(o) && (settle_dead(a, l, o),
			    atomic_load(&o->own_busy) == 0))
				continue;
			if ((int64_t)shm_now_ns() >= until) {
				rc = SHM_ETIMEDOUT;
				goto out;
			}
		}
		pause_for(n);
	}
	unown_tail(l);
out:
	atomic_fetch_sub(&m->own_revoke, 1);
	atomic_store(&p->slot->revoking, 0);
	return rc;
}

/*
 * actord reaps slot s of a dead process: the lane it owned given back
 * (its send in progress settled), and the revoke it was making ended.
 * 1 if a cell was released.
 */
int
shm_own_reaped(struct shm_arena *a, struct shm_slot *s)
{
	uint32_t o = atomic_exchange(&s->own_mbox, 0);
	uint32_t r = atomic_exchange(&s->revoking, 0);
	uint32_t self = (uint32_t)(s - a->slots) + 1, v;
	struct shm_mbox_local *mb;
	int	 rc;

	if (r != 0 && r <= a->n) {
		mb = shm_mb(a, r - 1);
		v = atomic_load(&mb->m->own_revoke);
		while (v != 0 && !atomic_compare_exchange_weak(
		    &mb->m->own_revoke, &v, v - 1))
			;
	}
	rc = 0;
	if (o != 0 && o <= a->n) {
		mb = shm_mb(a, o - 1);
		if (!mb->bad && atomic_load(&mb->m->own_slot) == self &&
		    (atomic_load(&mb->lane[SHM_LANE_MAIN].ctl->tail) &
		    TAIL_OWNED) != 0) {
			rc = settle_dead(a, &mb->lane[SHM_LANE_MAIN], s);
			unown_tail(&mb->lane[SHM_LANE_MAIN]);
		}
	}
	/* A record left by an owner that had lost the lane: nothing's. */
	atomic_store(&s->own_busy, 0);
	return rc;
}
