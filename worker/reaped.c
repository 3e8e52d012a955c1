/*
 * reaped.c: what actord does when it reaps an actor (libactor(3),
 * actor_reaped), in this order:
 *
 *  1. the table says down and the incarnation is bumped, so references to
 *     the dead one reach nobody (dead letter "stale reference");
 *  2. shm_reap releases the cells the dead process claimed and never
 *     published, and the consumer's taken-but-unfreed cells are recovered;
 *  3. the message in hand: still in its cell (killed between marking it
 *     and freeing the cell) means the cell delivers it again; an ask it
 *     died answering, its answer's slot claimed but the answer not in the
 *     asker's lane, has the slot freed for another answer
 *     (slot_release_dead, as step 4 does for the deferred ones); already
 *     committed (the last snapshot names its delivery) means done, and
 *     an ask it had not answered gets ACTOR_EDIED at once (nobody else
 *     will answer it); under max_attempts it is kept for the next
 *     incarnation, first; at the limit it is a dead letter "poison" and an
 *     ask gets an error answer at once;
 *  4. every deferred answer it still held (defer.c) fails at once with
 *     ACTOR_EDIED, but for the message in hand when step 3 gives it
 *     again or answered it as poison;
 *  5. on_down = fail: every queued ask gets an error answer, every queued
 *     tell becomes a dead letter "actor down"; on_down = keep: nothing;
 *  6. one Terminated to every watcher of the dead incarnation.
 *
 * An error answer or a Terminated that finds its recipient's lane full
 * is kept in the caller's owed list (owed.c), not dead-lettered.
 *
 * Owns: nothing of its own; runs in actord, while no consumer of that
 * mailbox lives.  Must never wait: actord's loop calls it.
 *
 * The read-once rule (shm/shm.h): every value of the dead actor's region
 * and in-hand slot is a worker's to write, even now (another worker may
 * scribble): each is read once into a local (the in-hand message is
 * copied out once), checked, and only the copy is used.
 */
#include <stdio.h>
#include <string.h>

#include "worker/actor_impl.h"

static bool	 inhand(struct shm_producer *, struct shm_arena *, uint32_t,
		    uint32_t, struct ar_hdr *, const struct ar_caps *,
		    struct actor_owed **, struct shm_msg *);
static int	 fail_cb(void *, enum shm_lane, const struct shm_msg *,
		    const void *);
static bool	 still_queued(struct shm_arena *, uint32_t, uint32_t,
		    const struct shm_msg *);

struct fail_arg {
	struct shm_producer *p;
	struct shm_arena *a;
	uint32_t	 idx;
	struct ar_hdr	*h;
	struct actor_owed **owed;
};

/* The in-hand copy is also the message still published at its lane's head. */
static bool
still_queued(struct shm_arena *a, uint32_t idx, uint32_t lane,
    const struct shm_msg *m)
{
	struct shm_msg q;

	if (shm_head_msg(a, idx, (enum shm_lane)lane, &q) != 1)
		return false;
	return q.tag == m->tag && q.enq_ns == m->enq_ns && q.corr == m->corr &&
	    q.sender.index == m->sender.index &&
	    q.sender.incarnation == m->sender.incarnation &&
	    q.len >= m->len;
}

/*
 * The message in hand when the actor died (step 3).  true if it will be
 * given again or was answered as poison, with its header in *taken: its
 * deferred answer, if any, is not the deferred set's to fail.
 */
static bool
inhand(struct shm_producer *p, struct shm_arena *a, uint32_t idx,
    uint32_t dead, struct ar_hdr *h, const struct ar_caps *caps, struct actor_owed **owed,
    struct shm_msg *taken)
{
	unsigned char *slot, *far;
	struct shm_msg m;
	uint64_t handled = 0;
	uint32_t lane;
	size_t len = 0, far_len = 0, max;
	uint32_t state, max_attempts;
	char text[60];
	bool sent;

	state = atomic_load(&h->inhand);
	if (state == IH_PENDING) {
		/* Died again before taking it: still to be given again. */
		slot = shm_inhand(a, idx, &len);
		if (slot == NULL || len < INHAND_PAYLOAD)
			return false;
		memcpy(taken, slot, sizeof(*taken));
		return true;
	}
	if (state != IH_HELD)
		return false;		/* empty */
	slot = shm_inhand(a, idx, &len);
	if (slot == NULL || len < INHAND_PAYLOAD) {
		atomic_store(&h->inhand, IH_EMPTY);
		return false;
	}
	/* Its payload lies where its length says (actor_impl.h, inhand_at). */
	far = shm_inhand_far(a, idx, &far_len);
	max = far != NULL && far_len > len - INHAND_PAYLOAD ? far_len :
	    len - INHAND_PAYLOAD;
	memcpy(&m, slot, sizeof(m));
	memcpy(&lane, slot + sizeof(m), sizeof(lane));
	if (m.len > max || lane >= SHM_NLANES) {
		m.len = 0;
		shm_dl_put(a, idx, SHM_LANE_MAIN, SHM_DL_GARBLED, &m, NULL);
		atomic_store(&h->inhand, IH_EMPTY);
		return false;
	}
	*taken = m;
	if (still_queued(a, idx, lane, &m)) {
		/*
		 * Killed between marking it held and freeing its cell: the
		 * handler never ran, and the cell delivers it again.
		 */
		atomic_store(&h->inhand, IH_EMPTY);
		return true;
	}
	/*
	 * An answer it died sending is on its way only if it reached the
	 * lane; else the ask's slot waits for another.
	 */
	sent = (m.flags & SHM_MSG_ASK) && slot_release_dead(a, &m, idx, dead,
	    NULL);
	if (snap_latest(h, caps, &handled) >= 0 && handled != 0 &&
	    handled == atomic_load(&h->inhand_id)) {
		/*
		 * Its effect is in the committed state: it was handled, and
		 * is not given again; so an ask it did not answer yet never
		 * will be.
		 */
		if ((m.flags & SHM_MSG_ASK) && p != NULL && !sent &&
		    atomic_load(&h->answered) != handled)
			(void)send_error_reply(p, a, &m, ACTOR_EDIED,
			    "the actor died after committing, before it "
			    "answered", owed);
		atomic_store(&h->inhand, IH_EMPTY);
		return false;
	}
	max_attempts = SHM_ONCE(h->max_attempts);
	if (m.attempts < max_attempts) {
		atomic_store(&h->inhand, IH_PENDING);
		return true;
	}
	shm_dl_put(a, idx, (enum shm_lane)lane, SHM_DL_POISON, &m,
	    inhand_at(slot, (uint32_t)(len - INHAND_PAYLOAD), far, m.len));
	atomic_fetch_add(&h->poison, 1);
	if ((m.flags & SHM_MSG_ASK) && p != NULL) {
		snprintf(text, sizeof(text), "poison: crashed the actor %u "
		    "times", m.attempts);
		(void)send_error_reply(p, a, &m, ACTOR_EPOISON, text, owed);
	}
	atomic_store(&h->inhand, IH_EMPTY);
	return true;
}

static int
fail_cb(void *arg, enum shm_lane lane, const struct shm_msg *m,
    const void *payload)
{
	struct fail_arg *fa = arg;

	if (m->flags & SHM_MSG_ASK) {
		shm_dl_put(fa->a, fa->idx, lane, SHM_DL_ASK_FAILED, m,
		    payload);
		atomic_fetch_add(&fa->h->asks_failed, 1);
		if (fa->p != NULL)
			(void)send_error_reply(fa->p, fa->a, m, ACTOR_EFAILED,
			    "the actor died with the ask queued", fa->owed);
	} else
		shm_dl_put(fa->a, fa->idx, lane, SHM_DL_ACTOR_DOWN, m,
		    payload);
	return 0;
}

int
actor_reaped(struct shm_arena *a, uint32_t idx, pid_t pid, int wstatus,
    struct actor_owed **owed)
{
	struct shm_producer *p = NULL;
	struct shm_msg taken;
	struct fail_arg fa;
	bool again;
	struct ar_hdr *h;
	struct ar_caps caps;
	uint32_t dead;
	unsigned released = 0;
	int rc;

	if (a == NULL || idx >= shm_nmailboxes(a))
		return ACTOR_EBADINDEX;
	h = ar_hdr(a, idx, &caps);
	dead = shm_actor_incarnation(a, idx);
	shm_actor_set_state(a, idx, SHM_ACTOR_DOWN);
	shm_actor_set_pid(a, idx, 0);
	(void)shm_actor_bump_incarnation(a, idx);
	if (h != NULL) {
		atomic_store(&h->last_wstatus, wstatus);
		atomic_store(&h->last_dead, dead);
		atomic_fetch_add(&h->deaths, 1);
	}
	rc = pid > 0 ? shm_reap_mailbox(a, pid, idx, &released) : 0;
	(void)shm_consumer_recover(a, idx);
	if (h == NULL)
		return rc == SHM_EAGAIN ? ACTOR_EAGAIN : 0;
	/* Without a slot, answers cannot go out; dead letters still do. */
	if (shm_producer_open(a, &p) < 0)
		p = NULL;
	again = inhand(p, a, idx, dead, h, &caps, owed, &taken);
	(void)defer_reaped(p, a, idx, dead, h, &caps, again ? &taken : NULL,
	    owed);
	if (SHM_ONCE(h->on_down) == ACTOR_ON_DOWN_FAIL) {
		fa.p = p;
		fa.a = a;
		fa.idx = idx;
		fa.h = h;
		fa.owed = owed;
		(void)shm_drain(a, idx, SHM_LANE_BIT(SHM_LANE_MAIN), 0,
		    fail_cb, &fa);
	}
	(void)watch_notify(p, a, idx, dead, wstatus, owed);
	if (p != NULL)
		shm_producer_close(p);
	shm_wake_blocked(a, idx);	/* its consumer is gone */
	return rc == SHM_EAGAIN ? ACTOR_EAGAIN : 0;
}
