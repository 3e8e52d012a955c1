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
 * deaths, a busy watcher: the lane has a few cells) is owed, not dropped
 * (owed.c): actord's list for those it sends, the watcher's own for the
 * one actor_watch sends itself.
 *
 * Owns: the watcher sets.  Must never send a Terminated for an entry it
 * did not take.
 */
#include <sys/wait.h>

#include <string.h>

#include "worker/actor_impl.h"

#define NO_ENTRY	UINT32_MAX	/* claim_entry: every entry is live */

static bool	 watcher_alive(struct shm_arena *, uint32_t, uint32_t);
static uint32_t	 claim_entry(struct shm_arena *, struct ar_hdr *, uint64_t);
static int	 send_terminated(struct shm_producer *, uint32_t, uint32_t,
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
 * A Terminated to incarnation winc (low 23 bits) of watcher `to`, now or
 * owed (owed.c).  The watcher's incarnation travels in corr: one still
 * queued when its watcher died is not for the next incarnation, whose
 * receive drops it (recv.c), as the watches died with the watcher.
 */
static int
send_terminated(struct shm_producer *p, uint32_t to, uint32_t winc,
    const struct actor_terminated *t, struct actor_owed **owed)
{
	struct shm_msg m;

	memset(&m, 0, sizeof(m));
	m.tag = ACTOR_SYS_TERMINATED;
	m.len = sizeof(*t);
	m.corr = TERM_FOR(winc);
	return owed_send(p, to, winc, 0x7fffff, SHM_LANE_SYSTEM, &m, t, owed);
}

/* Is the watcher still the incarnation that watched? */
static bool
watcher_alive(struct shm_arena *a, uint32_t to, uint32_t winc)
{
	return to < shm_nmailboxes(a) &&
	    (shm_actor_incarnation(a, to) & 0x7fffff) == winc;
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
	_Atomic uint64_t *set;
	uint64_t w;
	uint32_t i, to;
	int sent = 0;

	if (h == NULL)
		return 0;
	terminated_fill(&t, who, dead_inc, wstatus);
	set = ar_watchers(h);
	for (i = 0; i < h->watch_cap; i++) {
		w = atomic_load(&set[i]);
		if (w == 0 || W_TINC(w) != (dead_inc & 0xffffff))
			continue;
		if (!atomic_compare_exchange_strong(&set[i], &w, 0))
			continue;	/* unwatched meanwhile */
		to = W_IDX(w);
		if (!watcher_alive(a, to, W_WINC(w)))
			continue;	/* the watcher died too */
		if (send_terminated(p, to, W_WINC(w), &t, owed) == 0)
			sent++;
	}
	return sent;
}

/*
 * A free entry of the watcher set, or one whose watcher has died (its
 * watches died with it; nobody else will free the entry before the
 * watched actor dies, so without this a long-lived actor's set fills up
 * with the watches of its clients' past incarnations): set to mine, by
 * CAS.  Its index, or NO_ENTRY if every entry is live.
 */
static uint32_t
claim_entry(struct shm_arena *a, struct ar_hdr *h, uint64_t mine)
{
	_Atomic uint64_t *set = ar_watchers(h);
	uint64_t w;
	uint32_t i;

	for (i = 0; i < h->watch_cap; i++) {
		w = 0;
		if (atomic_compare_exchange_strong(&set[i], &w, mine))
			return i;
	}
	for (i = 0; i < h->watch_cap; i++) {
		w = atomic_load(&set[i]);
		if (w != 0 && !watcher_alive(a, W_IDX(w), W_WINC(w)) &&
		    atomic_compare_exchange_strong(&set[i], &w, mine))
			return i;
	}
	return NO_ENTRY;
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
	if ((i = claim_entry(a->arena, h, mine)) == NO_ENTRY)
		return ACTOR_EFULL;
	/* actord bumps the incarnation before it scans the watchers. */
	if (shm_actor_incarnation(a->arena, ref.index) == tinc && tinc != 0)
		return 0;
	w = mine;
	if (!atomic_compare_exchange_strong(&ar_watchers(h)[i], &w, 0))
		return 0;	/* actord took it: its Terminated is on the way */
	wst = atomic_load(&h->last_dead) == tinc ?
	    atomic_load(&h->last_wstatus) : -1;
	terminated_fill(&t, ref.index, tinc, wst);
	/* Owed to ourselves if our system lane is full: actor_recv sends it. */
	return send_terminated(a->prod, (uint32_t)a->idx,
	    a->incarnation & 0x7fffff, &t, &a->owed);
}

int
actor_unwatch(struct actor *a, struct actor_ref ref)
{
	struct ar_hdr *h;
	_Atomic uint64_t *set;
	uint64_t w;
	uint32_t i;
	int n = 0;

	if (a->idx < 0)
		return ACTOR_ENOMAILBOX;
	if ((h = ar_hdr(a->arena, ref.index)) == NULL)
		return ACTOR_ENOENT;
	set = ar_watchers(h);
	for (i = 0; i < h->watch_cap; i++) {
		w = atomic_load(&set[i]);
		if (w == 0 || W_IDX(w) != (uint32_t)a->idx ||
		    W_WINC(w) != (a->incarnation & 0x7fffff))
			continue;
		if (ref.incarnation != ACTOR_ANY &&
		    W_TINC(w) != (ref.incarnation & 0xffffff))
			continue;
		if (atomic_compare_exchange_strong(&set[i], &w, 0))
			n++;
	}
	return n;
}
