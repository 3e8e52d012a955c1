/*
 * watch.c: death watch.  A watcher registers itself in the watched actor's
 * watcher set in the arena, for one incarnation; when that incarnation is
 * reaped, actord (reaped.c, watch_notify) takes each entry by CAS and puts
 * one Terminated on the watcher's system lane.  An entry is taken exactly
 * once, by actord or by an unwatch or by a watch that finds its target
 * already dead (which then sends the Terminated itself): so a watcher gets
 * exactly one Terminated per watched death, never two, never none.
 *
 * A Terminated that finds its watcher's system lane full (a burst of
 * deaths, a busy watcher: the lane has a few cells) is not dropped: it is
 * owed, kept in a list in order (actord's, passed to actor_reaped; the
 * watcher's own for the Terminated actor_watch sends itself), and offered
 * again until it fits; a watcher's later Terminated waits behind its
 * earlier ones.  One whose watcher died meanwhile is dropped, as the
 * watches of a dead watcher are.
 *
 * Owns: the watcher sets and the owed lists.  Must never send a Terminated
 * for an entry it did not take, nor drop one its live watcher has not had.
 */
#include <sys/wait.h>

#include <stdlib.h>
#include <string.h>

#include "worker/actor_impl.h"

/* One Terminated its watcher's system lane had no room for yet. */
struct owed_term {
	uint32_t	 to;		/* the watcher */
	uint32_t	 winc;		/* its incarnation's low 23 bits */
	struct actor_terminated t;
};

struct actor_owed {
	struct owed_term *v;
	size_t		 n, cap;
};

static int	 send_terminated(struct shm_producer *, uint32_t, uint32_t,
		    const struct actor_terminated *);
static void	 terminated_msg(struct shm_msg *, uint32_t);
static bool	 watcher_alive(struct shm_arena *, uint32_t, uint32_t);
static bool	 owed_to(const struct actor_owed *, size_t, uint32_t);
static int	 owe(struct actor_owed **, uint32_t, uint32_t,
		    const struct actor_terminated *);
static uint32_t	 claim_entry(struct shm_arena *, struct ar_hdr *, uint64_t);
static int	 offer_or_owe(struct shm_producer *, uint32_t, uint32_t,
		    const struct actor_terminated *, struct actor_owed **);

void
terminated_fill(struct actor_terminated *t, uint32_t idx, uint32_t inc,
    int wstatus)
{
	memset(t, 0, sizeof(*t));
	t->who.index = idx;
	t->who.incarnation = inc;
	t->wstatus = wstatus;
	t->exit_status = -1;
	if (wstatus != -1 && WIFEXITED(wstatus))
		t->exit_status = WEXITSTATUS(wstatus);
	else if (wstatus != -1 && WIFSIGNALED(wstatus))
		t->signal = WTERMSIG(wstatus);
}

/*
 * The watcher's incarnation (low 23 bits) travels in corr: a Terminated
 * still queued when its watcher died is not for the next incarnation,
 * whose receive drops it (recv.c), as the watches died with the watcher.
 */
static void
terminated_msg(struct shm_msg *m, uint32_t winc)
{
	memset(m, 0, sizeof(*m));
	m->tag = ACTOR_SYS_TERMINATED;
	m->len = sizeof(struct actor_terminated);
	m->corr = TERM_FOR(winc);
}

/* Sent, or refused with a dead letter (a full lane: "mailbox full"). */
static int
send_terminated(struct shm_producer *p, uint32_t to, uint32_t winc,
    const struct actor_terminated *t)
{
	struct shm_msg m;

	terminated_msg(&m, winc);
	return shm_send(p, to, SHM_LANE_SYSTEM, &m, t, 0);
}

/* Is the watcher still the incarnation that watched? */
static bool
watcher_alive(struct shm_arena *a, uint32_t to, uint32_t winc)
{
	return to < shm_nmailboxes(a) &&
	    (shm_actor_incarnation(a, to) & 0x7fffff) == winc;
}

/* Is one of the first n owed entries for watcher `to`? */
static bool
owed_to(const struct actor_owed *o, size_t n, uint32_t to)
{
	size_t i;

	for (i = 0; o != NULL && i < n; i++)
		if (o->v[i].to == to)
			return true;
	return false;
}

/* Append to the owed list: 0, or ACTOR_ESYS without memory. */
static int
owe(struct actor_owed **op, uint32_t to, uint32_t winc,
    const struct actor_terminated *t)
{
	struct actor_owed *o = *op;
	struct owed_term *v;
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
	o->v[o->n].to = to;
	o->v[o->n].winc = winc;
	o->v[o->n].t = *t;
	o->n++;
	return 0;
}

/*
 * Send a Terminated now if the watcher's system lane has room and nothing
 * older is owed to it; else owe it.  Without an owed list (owed NULL), or
 * without memory for one more entry, a full lane dead-letters it.
 */
static int
offer_or_owe(struct shm_producer *p, uint32_t to, uint32_t winc,
    const struct actor_terminated *t, struct actor_owed **owed)
{
	struct shm_msg m;
	int rc;

	if (owed == NULL)
		return p != NULL ? send_terminated(p, to, winc, t) :
		    ACTOR_ENOSLOT;
	if (p != NULL && !owed_to(*owed, *owed != NULL ? (*owed)->n : 0,
	    to)) {
		terminated_msg(&m, winc);
		if ((rc = shm_offer(p, to, SHM_LANE_SYSTEM, &m, t)) !=
		    SHM_EFULL)
			return rc;
	}
	if (owe(owed, to, winc, t) == 0)
		return 0;
	return p != NULL ? send_terminated(p, to, winc, t) : ACTOR_ESYS;
}

/*
 * Offer every owed Terminated again, in order; drop those whose watcher
 * died.  Returns how many are still owed (the list is freed at 0).
 */
int
owed_flush(struct shm_producer *p, struct shm_arena *a,
    struct actor_owed **op)
{
	struct actor_owed *o = *op;
	struct owed_term e;
	struct shm_msg m;
	size_t i, kept = 0;

	if (o == NULL)
		return 0;
	for (i = 0; i < o->n; i++) {
		e = o->v[i];
		if (!watcher_alive(a, e.to, e.winc))
			continue;
		terminated_msg(&m, e.winc);
		if (p == NULL || owed_to(o, kept, e.to) ||
		    shm_offer(p, e.to, SHM_LANE_SYSTEM, &m, &e.t) == SHM_EFULL)
			o->v[kept++] = e;
	}
	o->n = kept;
	if (kept == 0)
		actor_owed_free(op);
	return (int)kept;
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

/*
 * actord: incarnation dead_inc of actor `who` was reaped.  Returns how
 * many Terminated went out or are owed.
 */
int
watch_notify(struct shm_producer *p, struct shm_arena *a, uint32_t who,
    uint32_t dead_inc, int wstatus, struct actor_owed **owed)
{
	struct ar_hdr *h = ar_hdr(a, who);
	struct actor_terminated t;
	uint64_t w;
	uint32_t i, to;
	int sent = 0;

	if (h == NULL)
		return 0;
	terminated_fill(&t, who, dead_inc, wstatus);
	for (i = 0; i < ACTOR_WATCHERS; i++) {
		w = atomic_load(&h->watchers[i]);
		if (w == 0 || W_TINC(w) != (dead_inc & 0xffffff))
			continue;
		if (!atomic_compare_exchange_strong(&h->watchers[i], &w, 0))
			continue;	/* unwatched meanwhile */
		to = W_IDX(w);
		if (!watcher_alive(a, to, W_WINC(w)))
			continue;	/* the watcher died too */
		if (offer_or_owe(p, to, W_WINC(w), &t, owed) == 0)
			sent++;
	}
	return sent;
}

/*
 * A free entry of the watcher set, or one whose watcher has died (its
 * watches died with it; nobody else will free the entry before the
 * watched actor dies, so without this a long-lived actor's set fills up
 * with the watches of its clients' past incarnations): set to mine, by
 * CAS.  Its index, or ACTOR_WATCHERS if every entry is live.
 */
static uint32_t
claim_entry(struct shm_arena *a, struct ar_hdr *h, uint64_t mine)
{
	uint64_t w;
	uint32_t i;

	for (i = 0; i < ACTOR_WATCHERS; i++) {
		w = 0;
		if (atomic_compare_exchange_strong(&h->watchers[i], &w, mine))
			return i;
	}
	for (i = 0; i < ACTOR_WATCHERS; i++) {
		w = atomic_load(&h->watchers[i]);
		if (w != 0 && !watcher_alive(a, W_IDX(w), W_WINC(w)) &&
		    atomic_compare_exchange_strong(&h->watchers[i], &w, mine))
			return i;
	}
	return ACTOR_WATCHERS;
}

int
actor_watch(struct actor *a, struct actor_ref ref)
{
	struct ar_hdr *h;
	struct actor_terminated t;
	uint64_t w, mine;
	uint32_t tinc, i;
	int wst;

	if (a->idx < 0)
		return ACTOR_ENOMAILBOX;
	if ((h = ar_hdr(a->arena, ref.index)) == NULL)
		return ACTOR_ENOENT;
	tinc = ref.incarnation != ACTOR_ANY ? ref.incarnation :
	    shm_actor_incarnation(a->arena, ref.index);
	mine = W_MAKE((uint32_t)a->idx, a->incarnation, tinc);
	if ((i = claim_entry(a->arena, h, mine)) == ACTOR_WATCHERS)
		return ACTOR_EFULL;
	/* actord bumps the incarnation before it scans the watchers. */
	if (shm_actor_incarnation(a->arena, ref.index) == tinc && tinc != 0)
		return 0;
	w = mine;
	if (!atomic_compare_exchange_strong(&h->watchers[i], &w, 0))
		return 0;	/* actord took it: its Terminated is on the way */
	wst = atomic_load(&h->last_dead) == tinc ?
	    atomic_load(&h->last_wstatus) : -1;
	terminated_fill(&t, ref.index, tinc, wst);
	/* Owed to ourselves if our system lane is full: actor_recv sends it. */
	return offer_or_owe(a->prod, (uint32_t)a->idx,
	    a->incarnation & 0x7fffff, &t, &a->owed);
}

int
actor_unwatch(struct actor *a, struct actor_ref ref)
{
	struct ar_hdr *h;
	uint64_t w;
	uint32_t i;
	int n = 0;

	if (a->idx < 0)
		return ACTOR_ENOMAILBOX;
	if ((h = ar_hdr(a->arena, ref.index)) == NULL)
		return ACTOR_ENOENT;
	for (i = 0; i < ACTOR_WATCHERS; i++) {
		w = atomic_load(&h->watchers[i]);
		if (w == 0 || W_IDX(w) != (uint32_t)a->idx ||
		    W_WINC(w) != (a->incarnation & 0x7fffff))
			continue;
		if (ref.incarnation != ACTOR_ANY &&
		    W_TINC(w) != (ref.incarnation & 0xffffff))
			continue;
		if (atomic_compare_exchange_strong(&h->watchers[i], &w, 0))
			n++;
	}
	return n;
}
