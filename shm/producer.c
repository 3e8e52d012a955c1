/*
 * producer.c: producer slots and their claim records, and shm_reap(), the
 * release of what a dead process had claimed.
 *
 * The slots are a shared pool (the layout's nproducers) and, after it,
 * SHM_OWN_SLOTS (one) per mailbox for the process that consumes it, so
 * that the number of actors never exhausts the pool.  Reaping the consumer
 * of a known mailbox looks at its own slot and at the pool up to the highest
 * slot ever taken (struct shm_pool), never at every mailbox's.
 *
 * Owns: claiming and freeing slots, reading dead producers' records.  Must
 * never release a cell whose producer may still be alive: a live slot that
 * records the same claim makes the release wait (SHM_EAGAIN), because that
 * producer may be the owner about to publish, and releasing under it would
 * let the next lap's producer write a cell it is still writing.
 *
 * The argument that this is safe is in ring.c's top comment; in short the
 * record (ring, P, INTENT) is visible to anyone who sees tail > P, the owner
 * clears it only after publishing, and the release itself is a CAS on the
 * cell's sequence number that fails if the owner published first.
 *
 * The read-once rule (shm.h): actord runs shm_reap and shm_sweep; a
 * slot's pid, state and record, a cell's header, each is read once into
 * a local (SHM_ONCE, an atomic load, SHM_ONCE_COPY), checked, and only
 * the local is used; what a dead producer held is released by CAS from
 * the value read.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shm/shm_impl.h"

static int	 release_intent(struct shm_arena *, struct shm_slot *,
		    uint64_t, uint64_t);
static void	 release_steal(struct shm_arena *, uint64_t, uint64_t);
static int	 ring_of(struct shm_arena *, uint64_t, uint32_t *, unsigned *);
static int	 live_twin(struct shm_arena *, const struct shm_slot *,
		    uint64_t, uint64_t);
static void	 forget_waiter(struct shm_arena *, struct shm_slot *);
static int	 reap_slot(struct shm_arena *, struct shm_slot *, unsigned *);
static int	 claim(struct shm_arena *, uint32_t, pid_t, bool,
		    struct shm_producer **);
static uint32_t	 pool_end(const struct shm_arena *);
static int	 reap_ranges(struct shm_arena *, pid_t, const uint32_t (*)[2],
		    size_t, unsigned *, int *);
static int	 sweep_slot(struct shm_arena *, uint32_t, pid_t, unsigned *);
static void	 list_open(struct shm_producer *);
static void	 unlist_open(struct shm_producer *);
static void	 before_fork(void);
static void	 after_fork_parent(void);
static void	 after_fork_child(void);

/*
 * What shm knows of its own process: its open producers, so that a fork
 * child can mark the copies it inherited (after_fork_child), and whether
 * the atfork handlers that do it are registered (at the first open).  The
 * one mutable state of shm outside the arena and its handles; the lock
 * is taken at open, close and fork only, never by a send.
 */
static struct {
	pthread_mutex_t	 lock;
	bool		 watching;
	struct shm_producer *open;
} shm_process = { PTHREAD_MUTEX_INITIALIZER, false, NULL };

static void
list_open(struct shm_producer *p)
{
	(void)pthread_mutex_lock(&shm_process.lock);
	/* Fails only for want of memory: copies then never say forked. */
	if (!shm_process.watching)
		shm_process.watching = pthread_atfork(before_fork,
		    after_fork_parent, after_fork_child) == 0;
	p->next_open = shm_process.open;
	p->prev_open = &shm_process.open;
	if (shm_process.open != NULL)
		shm_process.open->prev_open = &p->next_open;
	shm_process.open = p;
	(void)pthread_mutex_unlock(&shm_process.lock);
}

static void
unlist_open(struct shm_producer *p)
{
	(void)pthread_mutex_lock(&shm_process.lock);
	*p->prev_open = p->next_open;
	if (p->next_open != NULL)
		p->next_open->prev_open = p->prev_open;
	(void)pthread_mutex_unlock(&shm_process.lock);
}

/* The list stays whole across fork: no open or close is under way. */
static void
before_fork(void)
{
	(void)pthread_mutex_lock(&shm_process.lock);
}

static void
after_fork_parent(void)
{
	(void)pthread_mutex_unlock(&shm_process.lock);
}

/*
 * In the child, before fork returns: every producer open is a copy.  It
 * owns no lane (the express path is the parent's), so that its sends all
 * take send_msg's way, which refuses them.
 */
static void
after_fork_child(void)
{
	struct shm_producer *p;

	for (p = shm_process.open; p != NULL; p = p->next_open) {
		p->forked = true;
		p->own_ring = 0;
	}
	(void)pthread_mutex_unlock(&shm_process.lock);
}

/*
 * Slot i for this process (pid: getpid(), read once by the caller, not
 * once per slot a scan looks at): 0, SHM_EAGAIN if taken, or an error.
 * A scan of the pool reads before it writes (no locked CAS on a taken
 * slot); a mailbox's own slot, free but for a fork child or a dead owner
 * not yet reaped, is written at once (look false): its page's first
 * touch is then a write fault, which maps that page alone, where a read
 * fault maps every page of the slots around it that exists (the kernel's
 * fault-around, up to 16: tests/check_attach_cost.c).
 */
static int
claim(struct shm_arena *a, uint32_t i, pid_t pid, bool look,
    struct shm_producer **out)
{
	struct shm_producer *p;
	struct shm_slot	*s = &a->slots[i];
	int32_t		 zero = 0;

	if ((look && atomic_load_explicit(&s->pid, memory_order_relaxed) !=
	    0) || !atomic_compare_exchange_strong(&s->pid, &zero, pid))
		return SHM_EAGAIN;
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		atomic_store(&s->pid, 0);
		return SHM_ESYS;
	}
	atomic_store(&s->rec_ring, 0);
	atomic_store(&s->rec_pos, 0);
	atomic_store(&s->waiting, 0);
	atomic_store(&s->turn_mbox, 0);
	atomic_store(&s->own_mbox, 0);
	atomic_store(&s->revoking, 0);
	atomic_store(&s->own_busy, 0);
	atomic_store(&s->state, SLOT_LIVE);
	a->mine[i] = pid;
	p->a = a;
	p->slot = s;
	p->slot_no = i;
	p->pid = pid;
	p->bellfd = -1;
	/*
	 * Registered: the consumer's membarrier fences our publish.  Once
	 * per process (a registration lasts until exec; a fork child is
	 * not registered, and its pid differs): actord opens a slot at
	 * every reap.
	 */
	p->fence = 0;
	if (a->registered != pid) {
		p->fence = shm_membarrier_register() < 0;
		if (!p->fence)
			a->registered = pid;
	}
	list_open(p);
	*out = p;
	return 0;
}

/* One past the highest pool slot ever taken (never past the pool). */
static uint32_t
pool_end(const struct shm_arena *a)
{
	uint32_t h = atomic_load_explicit(&a->pool->hwm, memory_order_acquire);

	return h < a->npool ? h : a->npool;
}

int
shm_producer_open(struct shm_arena *a, struct shm_producer **out)
{
	uint32_t	 i, h;
	pid_t		 self = getpid();
	int		 rc;

	*out = NULL;
	for (i = 0; i < a->npool; i++) {
		if ((rc = claim(a, i, self, true, out)) == SHM_EAGAIN)
			continue;
		if (rc < 0)
			return rc;
		/* Scans for a pid stop at the highest slot ever taken. */
		h = atomic_load(&a->pool->hwm);
		while (h < i + 1 && !atomic_compare_exchange_weak(
		    &a->pool->hwm, &h, i + 1))
			;
		return 0;
	}
	return SHM_ENOSLOT;
}

int
shm_producer_open_own(struct shm_arena *a, uint32_t idx,
    struct shm_producer **out)
{
	int	 rc;

	*out = NULL;
	if (idx >= a->n)
		return SHM_EINVAL;
	rc = claim(a, a->npool + idx * SHM_OWN_SLOTS, getpid(), false, out);
	return rc == SHM_EAGAIN ? shm_producer_open(a, out) : rc;
}

void
shm_producer_close(struct shm_producer *p)
{
	if (p == NULL)
		return;
	unlist_open(p);
	/* Only the process that opened it frees the slot (not a fork child). */
	if (p->pid == getpid()) {
		shm_own_close(p);
		p->a->mine[p->slot - p->a->slots] = 0;
		atomic_store(&p->slot->rec_ring, 0);
		atomic_store(&p->slot->state, SLOT_FREE);
		atomic_store(&p->slot->pid, 0);
	}
	if (p->bellfd >= 0)
		close(p->bellfd);
	free(p);
}

pid_t
shm_producer_opener(const struct shm_producer *p)
{
	return p->pid;
}

bool
shm_producer_forked(const struct shm_producer *p)
{
	return p->forked;
}

void
shm_producer_set_hook(struct shm_producer *p, void (*hook)(void *),
    void *arg)
{
	p->hook = hook;
	p->hook_arg = arg;
}

void
shm_producer_set_steal_hook(struct shm_producer *p, void (*hook)(void *),
    void *arg)
{
	p->steal_hook = hook;
	p->steal_hook_arg = arg;
}

/* Decode and check a ring id from a record. */
static int
ring_of(struct shm_arena *a, uint64_t ring, uint32_t *idx, unsigned *lane)
{
	if (ring == 0 || ring > (uint64_t)a->n * SHM_NLANES)
		return -1;
	*idx = (uint32_t)((ring - 1) / SHM_NLANES);
	*lane = (unsigned)((ring - 1) % SHM_NLANES);
	return 0;
}

/* Does a live slot other than s record the same claim? */
static int
live_twin(struct shm_arena *a, const struct shm_slot *s, uint64_t rr,
    uint64_t pos)
{
	struct shm_slot	*o;
	uint32_t	 i;

	for (i = 0; i < a->nslots; i++) {
		o = &a->slots[i];
		if (o == s || atomic_load(&o->pid) == 0 ||
		    atomic_load(&o->state) == SLOT_DEAD)
			continue;
		if (atomic_load(&o->rec_ring) == rr &&
		    atomic_load(&o->rec_pos) == pos)
			return 1;
	}
	return 0;
}

/*
 * A dead producer's INTENT record (ring, P): 1 released, 0 nothing to do,
 * SHM_EAGAIN ambiguous.
 */
static int
release_intent(struct shm_arena *a, struct shm_slot *s, uint64_t rr,
    uint64_t pos)
{
	struct shm_lane_local *l;
	struct shm_cell	*c;
	struct shm_msg	 m;
	uint64_t	 expect;
	uint32_t	 idx;
	unsigned	 lane;

	if (ring_of(a, REC_RING(rr), &idx, &lane) < 0)
		return 0;		/* a garbled record: nothing to trust */
	l = &shm_mb(a, idx)->lane[lane];
	if (lane_tail(l->ctl, memory_order_seq_cst) <= pos)
		return 0;		/* the CAS on tail never happened */
	c = lane_cell(l, pos);
	if (cell_seq(l, pos, memory_order_seq_cst) != pos)
		return 0;		/* published, released or reused */
	if (live_twin(a, s, rr, pos))
		return SHM_EAGAIN;
	SHM_ONCE_COPY(m, c->msg);	/* perhaps half written: a hint */
	expect = pos;
	if (!cell_seq_cas(l, pos, &expect,
	    (pos + 1) | SEQ_RELEASED))
		return 0;		/* the owner published after all */
	atomic_fetch_add(&shm_mb(a, idx)->m->released, 1);
	m.len = 0;
	shm_dl_put(a, idx, lane, SHM_DL_SENDER_DIED, &m, NULL);
	shm_wake_all(a, idx);
	return 1;
}

/*
 * The same for a claim recorded elsewhere (express.c: an owner's
 * own_busy), s its slot or NULL.
 */
int
shm_release_claim(struct shm_arena *a, struct shm_slot *s, uint64_t rr,
    uint64_t pos)
{
	return release_intent(a, s, rr, pos);
}

/*
 * A dead sender's STEAL or STOLE record (ring, h).  If it died holding the
 * head cell it was dropping (marked STEALING), the message is still there:
 * write its dead letter unless the record says it was written, then move
 * head and free the cell.  Otherwise, if it moved head past h but did not
 * free the cell, free it (a CAS: harmless if someone else does too).
 */
static void
release_steal(struct shm_arena *a, uint64_t rr, uint64_t h)
{
	struct shm_lane_local *l;
	struct shm_cell	*c;
	struct shm_msg	 m;
	unsigned char	 pfx[SHM_DL_PAYLOAD];
	const unsigned char *src;
	uint64_t	 expect = (h + 1) | SEQ_TAKEN, held, hh;
	uint32_t	 idx;
	unsigned	 lane;

	if (ring_of(a, REC_RING(rr), &idx, &lane) < 0)
		return;
	l = &shm_mb(a, idx)->lane[lane];
	c = lane_cell(l, h);
	held = (h + 1) | SEQ_TAKEN | SEQ_STEALING;
	if (cell_seq(l, h, memory_order_seq_cst) == held) {
		if (REC_KIND(rr) == REC_STEAL) {
			SHM_ONCE_COPY(m, c->msg);
			src = cell_data(l, h, m.len);
			if (m.len > sizeof(pfx))
				m.len = sizeof(pfx);
			memcpy(pfx, src, m.len);
			atomic_fetch_add(&shm_mb(a, idx)->m->dropped, 1);
			shm_dl_put(a, idx, (enum shm_lane)lane,
			    SHM_DL_DROPPED_OLDEST, &m, pfx);
		}
		hh = h;
		atomic_compare_exchange_strong(&l->ctl->head, &hh, h + 1);
		(void)cell_seq_cas(l, h, &held,
		    h + l->cap);
		shm_wake_all(a, idx);
		return;
	}
	if (atomic_load(&l->ctl->head) <= h)
		return;			/* the consumer will skip it */
	if (cell_seq_cas(l, h, &expect, h + l->cap))
		shm_wake_all(a, idx);
}

/*
 * A sender that died asleep on a full lane still counts as a waiter, which
 * would make the consumer issue a futex wake per batch for ever: take its
 * count back.  (It dies between the count and the note, or between the
 * note and the uncount, only in a two-instruction window: then one count
 * leaks, which costs wake-ups, never correctness.)
 */
static void
forget_waiter(struct shm_arena *a, struct shm_slot *s)
{
	uint32_t w = atomic_exchange(&s->waiting, 0);

	if (w == 0 || w > a->n)
		return;
	if (atomic_load(&shm_mb(a, w - 1)->m->space_waiters) > 0)
		atomic_fetch_sub(&shm_mb(a, w - 1)->m->space_waiters, 1);
}

/*
 * One slot of a dead process: its claim released, its steal finished, its
 * waiter count taken back, the slot freed.  1 if it was freed, or
 * SHM_EAGAIN (kept, dead, for a retry) if its claim is ambiguous.
 */
static int
reap_slot(struct shm_arena *a, struct shm_slot *s, unsigned *nrel)
{
	uint64_t	 rr, pos;
	int		 rc = 0;

	rr = atomic_load(&s->rec_ring);
	pos = atomic_load(&s->rec_pos);
	if (REC_KIND(rr) == REC_INTENT)
		rc = release_intent(a, s, rr, pos);
	else if (REC_KIND(rr) == REC_STEAL || REC_KIND(rr) == REC_STOLE)
		release_steal(a, rr, pos);
	if (rc == SHM_EAGAIN)
		return SHM_EAGAIN;
	if (rc == 1)
		(*nrel)++;
	forget_waiter(a, s);
	shm_turn_reaped(a, s);
	if (shm_own_reaped(a, s) == 1)
		(*nrel)++;
	atomic_store(&s->rec_ring, 0);
	atomic_store(&s->state, SLOT_FREE);
	atomic_store(&s->pid, 0);
	return 1;
}

/*
 * The slots of pid in the ranges [from, to): first every one marked dead,
 * so that none counts as a live twin of another, then each reaped.  The
 * slots freed, and *again set if a claim is ambiguous.
 */
static int
reap_ranges(struct shm_arena *a, pid_t pid, const uint32_t (*r)[2],
    size_t nr, unsigned *nrel, int *again)
{
	size_t		 k;
	uint32_t	 i;
	int		 rc, freed = 0;

	for (k = 0; k < nr; k++)
		for (i = r[k][0]; i < r[k][1]; i++)
			if (atomic_load(&a->slots[i].pid) == pid)
				atomic_store(&a->slots[i].state, SLOT_DEAD);
	for (k = 0; k < nr; k++)
		for (i = r[k][0]; i < r[k][1]; i++) {
			if (atomic_load(&a->slots[i].pid) != pid)
				continue;
			if ((rc = reap_slot(a, &a->slots[i], nrel)) ==
			    SHM_EAGAIN)
				*again = 1;
			else
				freed += rc;
		}
	return freed;
}

int
shm_reap(struct shm_arena *a, pid_t pid, unsigned *released)
{
	uint32_t	 i, all[1][2] = { { 0, a->nslots } };
	unsigned	 nrel = 0;
	int		 again = 0, freed;

	if (released != NULL)
		*released = 0;
	if (pid <= 0)
		return SHM_EINVAL;
	freed = reap_ranges(a, pid, all, 1, &nrel, &again);
	/* Was it a consumer?  Free the cells it had taken. */
	for (i = 0; i < a->n; i++)
		if (atomic_load(&a->actors[i].pid) == pid)
			shm_consumer_recover(a, i);
	if (released != NULL)
		*released = nrel;
	return again ? SHM_EAGAIN : freed;
}

int
shm_reap_mailbox(struct shm_arena *a, pid_t pid, uint32_t idx,
    unsigned *released)
{
	uint32_t	 own, r[2][2];
	unsigned	 nrel = 0;
	int		 again = 0, freed;

	if (released != NULL)
		*released = 0;
	if (pid <= 0 || idx >= a->n)
		return pid <= 0 ? SHM_EINVAL : SHM_EBADINDEX;
	own = a->npool + idx * SHM_OWN_SLOTS;
	r[0][0] = 0;
	r[0][1] = pool_end(a);
	r[1][0] = own;
	r[1][1] = own + SHM_OWN_SLOTS;
	freed = reap_ranges(a, pid, r, 2, &nrel, &again);
	if (atomic_load(&a->actors[idx].pid) == pid)
		shm_consumer_recover(a, idx);
	if (released != NULL)
		*released = nrel;
	return again ? SHM_EAGAIN : freed;
}

bool
shm_pid_exists(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/*
 * Slots that no process can own any more: a pid that does not exist (or
 * cannot: 0 > pid), or the caller's own pid on a slot the caller did not
 * open.  A worker can write any pid into any slot, and such a slot would
 * otherwise stay taken for ever: every producer slot taken, no worker could
 * attach.  A pid that does not exist belongs to no process, running or
 * zombie, so nothing of it can be using the slot; its claims are released
 * as shm_reap releases a dead process's.  Returns the slots freed.
 */
/*
 * Slot i, if no process can own it any more, freed: 1, else 0.  A
 * mailbox's own slot held by the pid the actor table names is live
 * (actord keeps that pid true: it is its child, running or not yet
 * reaped), and costs no system call.
 */
static int
sweep_slot(struct shm_arena *a, uint32_t i, pid_t self, unsigned *nrel)
{
	struct shm_slot	*s = &a->slots[i];
	pid_t		 pid = SHM_ONCE(s->pid);

	if (pid == 0 || (pid == self && a->mine[i] == self))
		return 0;
	if (i >= a->npool && pid == shm_actor_pid(a, (i - a->npool) /
	    SHM_OWN_SLOTS))
		return 0;
	if (pid != self && shm_pid_exists(pid))
		return 0;
	atomic_store(&s->state, SLOT_DEAD);
	return reap_slot(a, s, nrel) == 1;
}

int
shm_sweep(struct shm_arena *a, unsigned *released)
{
	pid_t		 self = getpid();
	uint32_t	 i;
	unsigned	 nrel = 0;
	int		 freed = 0;

	for (i = 0; i < a->nslots; i++)
		freed += sweep_slot(a, i, self, &nrel);
	if (released != NULL)
		*released = nrel;
	return freed;
}

int
shm_sweep_some(struct shm_arena *a, uint32_t count, unsigned *released)
{
	pid_t		 self = getpid();
	uint32_t	 i = a->sweep_next, k;
	unsigned	 nrel = 0;
	int		 freed = 0;

	for (k = 0; k < count && k < a->nslots; k++) {
		/* The pool past its highest slot ever taken is all free. */
		if (i < a->npool && i >= pool_end(a))
			i = a->npool;
		if (i >= a->nslots)
			i = 0;
		if (i < a->npool && i >= pool_end(a))
			i = a->npool;
		if (i >= a->nslots)
			break;
		freed += sweep_slot(a, i, self, &nrel);
		i++;
	}
	a->sweep_next = i;
	if (released != NULL)
		*released = nrel;
	return freed;
}
