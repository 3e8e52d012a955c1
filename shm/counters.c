/*
 * counters.c: per-mailbox counters, read by any process without a lock.
 *
 * Owns: the snapshot a reader gets, and the rare-path counting helpers.
 * Must never make the hot path write a line producers share: enqueued and
 * depth are derived from the ring positions, dequeued and the wait
 * histogram are written by the consumer alone, once per batch or message.
 */
#include <string.h>

#include "shm/shm_impl.h"

void
shm_count_dl(struct shm_arena *a, uint32_t idx)
{
	atomic_fetch_add_explicit(&a->mb[idx].m->dead_lettered, 1,
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
	mb = &a->mb[idx];
	m = mb->m;
	memset(c, 0, sizeof(*c));
	for (k = 0; k < SHM_NLANES; k++) {
		h = atomic_load(&mb->lane[k].ctl->head);
		t = atomic_load(&mb->lane[k].ctl->tail);
		c->enqueued += t;
		c->depth += t > h ? t - h : 0;
		c->dequeued += atomic_load_explicit(&mb->lane[k].ctl->dequeued,
		    memory_order_relaxed);
		hwm = atomic_load_explicit(&mb->lane[k].ctl->depth_hwm,
		    memory_order_relaxed);
		if (hwm > c->depth_hwm)
			c->depth_hwm = hwm;
	}
	c->dropped = atomic_load_explicit(&m->dropped, memory_order_relaxed);
	c->dead_lettered = atomic_load_explicit(&m->dead_lettered,
	    memory_order_relaxed);
	c->garbled = atomic_load_explicit(&m->garbled, memory_order_relaxed);
	c->released = atomic_load_explicit(&m->released, memory_order_relaxed);
	c->full = atomic_load_explicit(&m->full, memory_order_relaxed);
	c->wakeups = atomic_load_explicit(&m->wakeups, memory_order_relaxed);
	/* Released claims were never published. */
	c->enqueued = c->enqueued > c->released ? c->enqueued - c->released : 0;
	if (c->depth > c->depth_hwm)
		c->depth_hwm = c->depth;
	for (k = 0; k < SHM_HIST_BUCKETS; k++)
		c->wait_hist[k] = atomic_load_explicit(&m->hist[k],
		    memory_order_relaxed);
	return 0;
}
