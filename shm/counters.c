/*
 * counters.c: per-mailbox counters, read by any process without a lock.
 *
 * Owns: the snapshot a reader gets, and the rare-path counting helpers.
 * Must never make the hot path write a line producers share: enqueued and
 * depth are derived from the ring positions, dequeued and the wait
 * histogram are written by the consumer alone, once per batch or message.
 *
 * The read-once rule (shm.h): actord reads these for actorctl stats, and a
 * worker can write every one of them; each is read once into the
 * snapshot, and the sums over lanes saturate (shm_sat_add) instead of
 * wrapping.
 */
#include <string.h>

#include "shm/shm_impl.h"

void
shm_count_dl(struct shm_arena *a, uint32_t idx)
{
	atomic_fetch_add_explicit(&shm_mb(a, idx)->m->dead_lettered, 1,
	    memory_order_relaxed);
}

int
shm_counters(const struct shm_arena *a, uint32_t idx, struct shm_counters *c)
{
	const struct shm_mbox_local *mb;
	struct shm_mbox	*m;
	uint64_t	 t, h, hwm;
	unsigned	 k;

	if (idx >= a->n)
		return SHM_EBADINDEX;
	mb = shm_mb_c(a, idx);
	m = mb->m;
	memset(c, 0, sizeof(*c));
	for (k = 0; k < SHM_NLANES; k++) {
		h = SHM_ONCE(mb->lane[k].ctl->head);
		t = lane_tail(mb->lane[k].ctl, memory_order_relaxed);
		c->enqueued = shm_sat_add(c->enqueued, t);
		c->depth = shm_sat_add(c->depth, t > h ? t - h : 0);
		c->dequeued = shm_sat_add(c->dequeued,
		    SHM_ONCE(mb->lane[k].ctl->dequeued));
		hwm = SHM_ONCE(mb->lane[k].ctl->depth_hwm);
		if (hwm > c->depth_hwm)
			c->depth_hwm = hwm;
	}
	c->dropped = SHM_ONCE(m->dropped);
	c->dead_lettered = SHM_ONCE(m->dead_lettered);
	c->garbled = SHM_ONCE(m->garbled);
	c->released = SHM_ONCE(m->released);
	c->full = SHM_ONCE(m->full);
	c->wakeups = SHM_ONCE(m->wakeups);
	c->replaced = SHM_ONCE(m->replaced);
	c->sender_wakeups = SHM_ONCE(m->turn_wakes);
	/* Released claims were never published. */
	c->enqueued = c->enqueued > c->released ? c->enqueued - c->released : 0;
	if (c->depth > c->depth_hwm)
		c->depth_hwm = c->depth;
	for (k = 0; k < SHM_HIST_BUCKETS; k++)
		c->wait_hist[k] = SHM_ONCE(m->hist[k]);
	return 0;
}
