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
 * A watch on a name (actor_watch_name) is an entry for no incarnation
 * (0): deaths and restarts pass it by, and it is taken once, with one
 * Gone, when the actor is gone for good (actor_gone: removed, its
 * supervisor gave up, or it exited and is not restarted).  actord marks
 * the actor gone before it scans the entries, so a watch made meanwhile
 * sees the mark and answers itself, as for a watch of the dead.
 *
 * Owns: the watcher sets.  Must never send a Terminated for an entry it
 * did not take.
 *
 * The read-once rule (shm/shm.h): actord scans the sets (watch_notify,
 * actor_gone); a set's length comes from the region's sizes as read once
 * by ar_hdr, never from the header again, and each entry is loaded once
 * and then taken by CAS on that value.
 */
#include <sys/wait.h>

#include <string.h>

#include "worker/actor_impl.h"
#include "worker/remote.h"

#define NO_ENTRY	UINT32_MAX	/* claim_entry: every entry is live */

static bool	 watcher_alive(struct shm_arena *, uint32_t, uint32_t);
static uint32_t	 claim_entry(struct shm_arena *, struct ar_hdr *,
		    const struct ar_caps *, uint64_t);
static int	 send_terminated(struct shm_producer *, struct shm_arena *,
		    uint32_t, uint32_t,
		    uint32_t, const struct actor_terminated *,
		    struct actor_owed **);
static int	 fail_gone_cb(void *, enum shm_lane, const struct shm_msg *,
		    const void *);
static void	 gone_fill(struct actor_terminated *, struct ar_hdr *,
		    uint32_t, uint32_t);

struct gone_arg {
	struct shm_producer *p;
	struct shm_arena *a;
	uint32_t	 idx;
	struct ar_hdr	*h;
	struct actor_owed **owed;
};

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
 * A Terminated (or a Gone: tag) to incarnation winc (low 23 bits) of
 * watcher `to`, now or owed (owed.c).  The watcher's incarnation travels
 * in corr: one still queued when its watcher died is not for the next
 * incarnation, whose receive drops it (recv.c), as the watches died with
 * the watcher.
 */
static int
send_terminated(struct shm_producer *p, struct shm_arena *a, uint32_t to,
    uint32_t winc, uint32_t tag, const struct actor_terminated *t,
    struct actor_owed **owed)
{
	struct shm_msg m;

	memset(&m, 0, sizeof(m));
	m.tag = tag;
	m.len = sizeof(*t);
	m.corr = TERM_FOR(winc);
	return owed_send(p, a, to, winc, 0x7fffff, SHM_LANE_SYSTEM, &m, t,
	    owed);
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
	struct ar_caps c;
	struct ar_hdr *h = ar_hdr(a, who, &c);
	struct actor_terminated t;
	_Atomic uint64_t *set;
	uint64_t w;
	uint32_t i, to;
	int sent = 0;

	if (h == NULL)
		return 0;
	terminated_fill(&t, who, dead_inc, wstatus);
	set = ar_watchers(h);
	for (i = 0; i < c.watch_cap; i++) {
		w = atomic_load(&set[i]);
		/* A name watch (no incarnation) waits for actor_gone. */
		if (w == 0 || W_TINC(w) == 0 ||
		    W_TINC(w) != (dead_inc & 0xffffff))
			continue;
		if (!atomic_compare_exchange_strong(&set[i], &w, 0))
			continue;	/* unwatched meanwhile */
		to = W_IDX(w);
		if (!watcher_alive(a, to, W_WINC(w)))
			continue;	/* the watcher died too */
		if (send_terminated(p, a, to, W_WINC(w), ACTOR_SYS_TERMINATED,
		    &t, owed) == 0)
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
claim_entry(struct shm_arena *a, struct ar_hdr *h, const struct ar_caps *c,
    uint64_t mine)
{
	_Atomic uint64_t *set = ar_watchers(h);
	uint64_t w;
	uint32_t i;

	for (i = 0; i < c->watch_cap; i++) {
		w = 0;
		if (atomic_compare_exchange_strong(&set[i], &w, mine))
			return i;
	}
	for (i = 0; i < c->watch_cap; i++) {
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
	struct ar_caps c;
	struct actor_terminated t;
	uint64_t w, mine;
	uint32_t tinc, i;
	int wst;

	if (a->idx < 0)
		return ACTOR_ENOMAILBOX;
	if (actor_forked(a))
		return ACTOR_EFORKED;
	if (REMOTE_IS(ref.index))
		return remote_watch(a, ref, WK_WATCH);
	if ((h = ar_hdr(a->arena, ref.index, &c)) == NULL)
		return ACTOR_ENOENT;
	tinc = ref.incarnation != ACTOR_ANY ? ref.incarnation :
	    shm_actor_incarnation(a->arena, ref.index);
	mine = W_MAKE((uint32_t)a->idx, a->incarnation, tinc);
	if ((i = claim_entry(a->arena, h, &c, mine)) == NO_ENTRY)
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
	return send_terminated(a->prod, a->arena, (uint32_t)a->idx,
	    a->incarnation & 0x7fffff, ACTOR_SYS_TERMINATED, &t, &a->owed);
}

/* A Gone's payload: the last incarnation that ran, and why. */
static void
gone_fill(struct actor_terminated *t, struct ar_hdr *h, uint32_t idx,
    uint32_t why)
{
	terminated_fill(t, idx, atomic_load(&h->last_dead),
	    atomic_load(&h->last_wstatus));
	t->gone = why;
}

/*
 * Watch the actor at path by name: one Gone (ACTOR_SYS_GONE) when it is
 * gone for good, whatever its restarts before.  At once if it already is.
 */
int
actor_watch_name(struct actor *a, const char *path)
{
	struct actor_terminated t;
	struct ar_hdr *h;
	struct ar_caps c;
	uint64_t w, mine;
	uint32_t i, why;
	int idx;

	if (a->idx < 0)
		return ACTOR_ENOMAILBOX;
	if (actor_forked(a))
		return ACTOR_EFORKED;
	if (path == NULL)
		return ACTOR_EINVAL;
	if ((idx = shm_lookup(a->arena, path)) < 0)
		return idx == SHM_ENOENT ? ACTOR_ENOENT : idx;
	if ((h = ar_hdr(a->arena, (uint32_t)idx, &c)) == NULL)
		return ACTOR_ENOENT;
	mine = W_MAKE((uint32_t)a->idx, a->incarnation, 0);
	if ((i = claim_entry(a->arena, h, &c, mine)) == NO_ENTRY)
		return ACTOR_EFULL;
	/* actord marks it gone before it scans the watchers. */
	if ((why = atomic_load(&h->gone)) == 0)
		return 0;
	w = mine;
	if (!atomic_compare_exchange_strong(&ar_watchers(h)[i], &w, 0))
		return 0;	/* actord took it: its Gone is on the way */
	gone_fill(&t, h, (uint32_t)idx, why);
	return send_terminated(a->prod, a->arena, (uint32_t)a->idx,
	    a->incarnation & 0x7fffff, ACTOR_SYS_GONE, &t, &a->owed);
}

/* A queued ask of a gone actor fails at once; a tell is a dead letter. */
static int
fail_gone_cb(void *arg, enum shm_lane lane, const struct shm_msg *m,
    const void *payload)
{
	struct gone_arg *ga = arg;

	if (m->flags & SHM_MSG_ASK) {
		atomic_fetch_add(&ga->h->asks_failed, 1);
		if (ga->p != NULL)
			(void)send_error_reply(ga->p, ga->a, m, ACTOR_EDOWN,
			    "the actor is gone for good", ga->owed);
	} else
		shm_dl_put(ga->a, ga->idx, lane, SHM_DL_ACTOR_DOWN, m,
		    payload);
	return 0;
}

/*
 * actord: actor idx is gone for good (why: ACTOR_GONE_*).  It is marked
 * gone until its next start (asks that would wait for a restart fail at
 * once), what is queued for it is emptied (asks fail, tells are dead
 * letters) while no process of it runs, and every watch of its name gets
 * one Gone.  Once per going: 0 if it already was gone.  Returns how many
 * Gone went out or are owed.
 */
int
actor_gone(struct shm_arena *a, uint32_t idx, uint32_t why,
    struct actor_owed **owed)
{
	struct shm_producer *p = NULL;
	struct ar_caps c;
	struct ar_hdr *h = ar_hdr(a, idx, &c);
	struct actor_terminated t;
	struct gone_arg ga;
	_Atomic uint64_t *set;
	uint32_t none = 0, i, to;
	uint64_t w;
	int sent = 0;

	if (h == NULL || why == 0)
		return h == NULL ? ACTOR_EBADINDEX : ACTOR_EINVAL;
	if (!atomic_compare_exchange_strong(&h->gone, &none, why))
		return 0;
	if (shm_producer_open(a, &p) < 0)
		p = NULL;
	if (shm_actor_state(a, idx) == SHM_ACTOR_DOWN) {
		ga.p = p;
		ga.a = a;
		ga.idx = idx;
		ga.h = h;
		ga.owed = owed;
		(void)shm_drain(a, idx, SHM_LANE_BIT(SHM_LANE_MAIN), 0,
		    fail_gone_cb, &ga);
	}
	gone_fill(&t, h, idx, why);
	set = ar_watchers(h);
	for (i = 0; i < c.watch_cap; i++) {
		w = atomic_load(&set[i]);
		if (w == 0 || W_TINC(w) != 0)
			continue;
		if (!atomic_compare_exchange_strong(&set[i], &w, 0))
			continue;	/* unwatched meanwhile */
		to = W_IDX(w);
		if (watcher_alive(a, to, W_WINC(w)) && send_terminated(p, a,
		    to, W_WINC(w), ACTOR_SYS_GONE, &t, owed) == 0)
			sent++;
	}
	if (p != NULL)
		shm_producer_close(p);
	return sent;
}

int
actor_unwatch(struct actor *a, struct actor_ref ref)
{
	struct ar_hdr *h;
	struct ar_caps c;
	_Atomic uint64_t *set;
	uint64_t w;
	uint32_t i;
	int n = 0;

	if (a->idx < 0)
		return ACTOR_ENOMAILBOX;
	if (actor_forked(a))
		return ACTOR_EFORKED;
	if (REMOTE_IS(ref.index))
		return remote_watch(a, ref, WK_UNWATCH);
	if ((h = ar_hdr(a->arena, ref.index, &c)) == NULL)
		return ACTOR_ENOENT;
	set = ar_watchers(h);
	for (i = 0; i < c.watch_cap; i++) {
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

/*
 * The gateway's delivery of a Terminated for an actor of another node
 * (remote.c): to watcher, now or owed, as any Terminated.
 */
int
watch_terminated_to(struct actor *a, struct actor_ref watcher,
    const struct actor_terminated *t)
{
	if (!watcher_alive(a->arena, watcher.index,
	    watcher.incarnation & 0x7fffff))
		return ACTOR_ESTALE;
	return send_terminated(a->prod, a->arena, watcher.index,
	    watcher.incarnation & 0x7fffff, ACTOR_SYS_TERMINATED, t, &a->owed);
}
