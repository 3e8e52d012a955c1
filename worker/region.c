/*
 * region.c: the libactor region of each actor, at the start of its shm
 * state region (layout in actor_impl.h): its size, actord's configuration
 * of it at arena creation, the incarnation handed to the next process, and
 * the counters as read by anyone.
 *
 * A region is the header, the watcher set (as many entries as the
 * mailbox's `watchers` key says), the reply slots (one per ask the actor
 * may have in flight, replyslots.c) and two snapshot slots.
 *
 * Owns: struct ar_hdr's policies and the `launched` incarnation.  Must never
 * trust a size read from the arena: every header is checked against the
 * region's real length before a pointer into it is handed out.
 *
 * The read-once rule (shm/shm.h): a region's sizes are read once, into
 * struct ar_caps, and checked there; every offset is computed from the
 * checked copy, never from the header again.
 */
#include <string.h>

#include "worker/actor_impl.h"

static size_t	 hdr_size(void);
static size_t	 watchers_size(uint32_t);
static size_t	 asks_size(uint32_t);
static size_t	 defers_size(uint32_t);
static uint32_t	 pow2_floor(uint32_t);
static int	 fixed_part(struct shm_arena *, uint32_t, struct ar_hdr *,
		    size_t, const struct actor_policy *);

static size_t
hdr_size(void)
{
	return AR_ALIGN(sizeof(struct ar_hdr));
}

static size_t
watchers_size(uint32_t n)
{
	return AR_ALIGN((size_t)n * sizeof(uint64_t));
}

static size_t
asks_size(uint32_t n)
{
	return AR_ALIGN((size_t)n * sizeof(uint64_t));
}

static size_t
defers_size(uint32_t n)
{
	return AR_ALIGN((size_t)n * sizeof(struct ar_defer));
}

static uint32_t
pow2_floor(uint32_t v)
{
	uint32_t p = 1;

	while (p <= v / 2)
		p <<= 1;
	return p;
}

/*
 * The bytes of state region actord must give a mailbox with `state` bytes
 * of committed state, `watchers` watch entries (0: ACTOR_WATCHERS) and
 * `asks` reply slots (0: ACTOR_ASKS), the asks it may have in flight,
 * and as many deferred answers it may hold.
 */
size_t
actor_region_size(uint32_t state_bytes, uint32_t watchers, uint32_t asks)
{
	if (watchers == 0)
		watchers = ACTOR_WATCHERS;
	if (asks == 0)
		asks = ACTOR_ASKS;
	return hdr_size() + watchers_size(watchers) + asks_size(asks) +
	    defers_size(asks) + 2 * AR_ALIGN((size_t)state_bytes);
}

/*
 * The checked header of actor idx, or NULL (unconfigured or too small),
 * with its sizes in *caps: each read once, and checked together against
 * the region's real length.  Whatever the header says later, offsets
 * made from *caps stay inside the region.
 */
struct ar_hdr *
ar_hdr(struct shm_arena *a, uint32_t idx, struct ar_caps *caps)
{
	struct ar_hdr *h;
	struct ar_caps c;
	size_t len = 0;

	if (a == NULL || idx >= shm_nmailboxes(a))
		return NULL;
	h = shm_state(a, idx, &len);
	if (h == NULL || len < hdr_size())
		return NULL;
	if (atomic_load_explicit(&h->magic, memory_order_acquire) != AR_MAGIC)
		return NULL;
	c.snap_cap = SHM_ONCE(h->snap_cap);
	c.watch_cap = SHM_ONCE(h->watch_cap);
	c.ask_cap = SHM_ONCE(h->ask_cap);
	if (c.snap_cap % 64 != 0 || c.watch_cap == 0 ||
	    c.watch_cap > ACTOR_WATCHERS_MAX || c.ask_cap == 0 ||
	    (c.ask_cap & (c.ask_cap - 1)) != 0 ||
	    c.ask_cap > SHM_CAPACITY_MAX ||
	    hdr_size() + watchers_size(c.watch_cap) + asks_size(c.ask_cap) +
	    defers_size(c.ask_cap) + 2 * (size_t)c.snap_cap > len)
		return NULL;
	if (caps != NULL)
		*caps = c;
	return h;
}

_Atomic uint64_t *
ar_asks(struct ar_hdr *h, const struct ar_caps *c)
{
	return (_Atomic uint64_t *)(void *)((unsigned char *)h + hdr_size() +
	    watchers_size(c->watch_cap));
}

struct ar_defer *
ar_defers(struct ar_hdr *h, const struct ar_caps *c)
{
	return (struct ar_defer *)(void *)((unsigned char *)h + hdr_size() +
	    watchers_size(c->watch_cap) + asks_size(c->ask_cap));
}

_Atomic uint64_t *
ar_watchers(struct ar_hdr *h)
{
	return (_Atomic uint64_t *)(void *)((unsigned char *)h + hdr_size());
}

unsigned char *
ar_snapdata(struct ar_hdr *h, const struct ar_caps *c, int slot)
{
	return (unsigned char *)h + hdr_size() + watchers_size(c->watch_cap) +
	    asks_size(c->ask_cap) + defers_size(c->ask_cap) +
	    (size_t)slot * c->snap_cap;
}

/*
 * The part of a region actord writes and workers only read, into h: the
 * policies of p (NULL: the defaults) and the sizes they and the region's
 * length give.  The reply slots are as many as the policy's asks (0: the
 * reply lane's cells), rounded down to a power of two and never more than
 * the reply lane holds, so that every answer a slot lets through finds a
 * cell.  -1 if they do not fit.
 */
static int
fixed_part(struct shm_arena *a, uint32_t idx, struct ar_hdr *h, size_t len,
    const struct actor_policy *p)
{
	struct shm_mailbox_layout lay;
	uint32_t watchers, asks;
	size_t fixed;

	if (shm_mailbox_layout(a, idx, &lay) < 0)
		return -1;
	if (p != NULL && ((unsigned)p->on_down > ACTOR_ON_DOWN_FAIL ||
	    (unsigned)p->while_down > ACTOR_WHILE_DOWN_REJECT ||
	    p->watchers > ACTOR_WATCHERS_MAX))
		return -1;
	watchers = p != NULL && p->watchers > 0 ? p->watchers : ACTOR_WATCHERS;
	asks = p != NULL && p->asks > 0 ? p->asks : lay.reply_capacity;
	if (asks > lay.reply_capacity)
		asks = lay.reply_capacity;
	asks = pow2_floor(asks);
	fixed = hdr_size() + watchers_size(watchers) + asks_size(asks) +
	    defers_size(asks);
	if (len < fixed)
		return -1;
	h->max_attempts = p != NULL && p->max_attempts > 0 ?
	    p->max_attempts : ACTOR_MAX_ATTEMPTS_DEFAULT;
	h->on_down = p != NULL ? (uint32_t)p->on_down : ACTOR_ON_DOWN_KEEP;
	h->while_down = p != NULL ? (uint32_t)p->while_down :
	    ACTOR_WHILE_DOWN_QUEUE;
	h->watch_cap = watchers;
	h->ask_cap = asks;
	h->snap_cap = (uint32_t)(((len - fixed) / 2) & ~(size_t)63);
	return 0;
}

/*
 * actord, once per mailbox after shm_create (and again when a spare is
 * given to a child): the policies of the config, and an empty region.
 */
int
actor_configure(struct shm_arena *a, uint32_t idx,
    const struct actor_policy *p)
{
	struct ar_hdr *h, want;
	struct ar_defer *d;
	_Atomic uint64_t *set;
	size_t len = 0;
	uint32_t i;

	if (a == NULL || idx >= shm_nmailboxes(a))
		return ACTOR_EBADINDEX;
	h = shm_state(a, idx, &len);
	if (h == NULL || len < hdr_size())
		return ACTOR_EINVAL;
	memset(&want, 0, sizeof(want));
	if (fixed_part(a, idx, &want, len, p) < 0)
		return ACTOR_EINVAL;
	/*
	 * Never configured: the arena is new and its pages are zero, so
	 * the sets need no writing, and stay unallocated until used.
	 */
	if (atomic_load_explicit(&h->magic, memory_order_acquire) == 0)
		return actor_restore(a, idx, p);
	memset(h, 0, sizeof(*h));
	set = ar_watchers(h);
	for (i = 0; i < want.watch_cap; i++)
		atomic_store_explicit(&set[i], 0, memory_order_relaxed);
	set = (_Atomic uint64_t *)(void *)((unsigned char *)h + hdr_size() +
	    watchers_size(want.watch_cap));
	for (i = 0; i < want.ask_cap; i++)
		atomic_store_explicit(&set[i], 0, memory_order_relaxed);
	d = (struct ar_defer *)(void *)((unsigned char *)h + hdr_size() +
	    watchers_size(want.watch_cap) + asks_size(want.ask_cap));
	for (i = 0; i < want.ask_cap; i++) {
		atomic_store_explicit(&d[i].corr, 0, memory_order_relaxed);
		atomic_store_explicit(&d[i].who, 0, memory_order_relaxed);
	}
	return actor_restore(a, idx, p);
}

/*
 * actord, before each start: the policies and sizes written again from
 * its configuration, whatever a worker wrote there (a hole punched in the
 * memfd leaves zeroes), so that the next process can attach; the state,
 * the watchers, the reply slots and the counters are left as they are.
 */
int
actor_restore(struct shm_arena *a, uint32_t idx, const struct actor_policy *p)
{
	struct ar_hdr *h;
	size_t len = 0;

	if (a == NULL || idx >= shm_nmailboxes(a))
		return ACTOR_EBADINDEX;
	h = shm_state(a, idx, &len);
	if (h == NULL || len < hdr_size() || fixed_part(a, idx, h, len, p) < 0)
		return ACTOR_EINVAL;
	atomic_store_explicit(&h->magic, AR_MAGIC, memory_order_release);
	return 0;
}

/*
 * actord, before each fork: the incarnation the new process will be.  A
 * death already bumped it (actor_reaped), so only the very first start,
 * or a start after a stop nobody reported, bumps it here.
 */
uint32_t
actor_prepare_start(struct shm_arena *a, uint32_t idx)
{
	struct ar_hdr *h = ar_hdr(a, idx, NULL);
	uint32_t inc;

	if (a == NULL || idx >= shm_nmailboxes(a))
		return 0;
	inc = shm_actor_incarnation(a, idx);
	if (h == NULL || inc == 0 || atomic_load(&h->launched) == inc)
		inc = shm_actor_bump_incarnation(a, idx);
	if (h != NULL) {
		atomic_store(&h->launched, inc);
		atomic_store(&h->gone, 0);	/* back: it was not for good */
	}
	shm_actor_set_state(a, idx, SHM_ACTOR_STARTING);
	return inc;
}

int
actor_stats(struct shm_arena *a, uint32_t idx, struct actor_stats *st)
{
	struct ar_hdr *h = ar_hdr(a, idx, NULL);
	unsigned i;

	memset(st, 0, sizeof(*st));
	if (h == NULL)
		return ACTOR_EBADINDEX;
	st->deaths = atomic_load(&h->deaths);
	st->handled = atomic_load(&h->handled);
	st->redelivered = atomic_load(&h->redelivered);
	st->poison = atomic_load(&h->poison);
	st->asks_failed = atomic_load(&h->asks_failed);
	st->late_replies = atomic_load(&h->late_replies);
	st->stale = atomic_load(&h->stale);
	st->commits = atomic_load(&h->commits);
	st->shard_msgs = atomic_load(&h->shard_msgs);
	for (i = 0; i < ACTOR_HIST_BUCKETS; i++)
		st->handler_hist[i] = atomic_load(&h->handler_hist[i]);
	return 0;
}
