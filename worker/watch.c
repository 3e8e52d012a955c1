/*
 * watch.c: death watch.  A watcher registers itself in the watched actor's
 * watcher set in the arena, for one incarnation; when that incarnation is
 * reaped, actord (reaped.c, watch_notify) takes each entry by CAS and puts
 * one Terminated on the watcher's system lane.  An entry is taken exactly
 * once, by actord or by an unwatch or by a watch that finds its target
 * already dead (which then sends the Terminated itself): so a watcher gets
 * exactly one Terminated per watched death, never two, never none.
 *
 * Owns: the watcher sets.  Must never send a Terminated for an entry it did
 * not take.
 */
#include <sys/wait.h>

#include <string.h>

#include "worker/actor_impl.h"

static int	 send_terminated(struct shm_producer *, uint32_t,
		    const struct actor_terminated *);

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

static int
send_terminated(struct shm_producer *p, uint32_t to,
    const struct actor_terminated *t)
{
	struct shm_msg m;

	memset(&m, 0, sizeof(m));
	m.tag = ACTOR_SYS_TERMINATED;
	m.len = sizeof(*t);
	return shm_send(p, to, SHM_LANE_SYSTEM, &m, t, 0);
}

/* actord: incarnation dead_inc of actor `who` was reaped. */
int
watch_notify(struct shm_producer *p, struct shm_arena *a, uint32_t who,
    uint32_t dead_inc, int wstatus)
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
		if (to >= shm_nmailboxes(a) ||
		    (shm_actor_incarnation(a, to) & 0x7fffff) != W_WINC(w))
			continue;	/* the watcher died too */
		if (p != NULL && send_terminated(p, to, &t) == 0)
			sent++;
	}
	return sent;
}

int
actor_watch(struct actor *a, struct actor_ref ref)
{
	struct ar_hdr *h;
	struct actor_terminated t;
	uint64_t w, zero, mine;
	uint32_t tinc, i;
	int wst;

	if (a->idx < 0)
		return ACTOR_ENOMAILBOX;
	if ((h = ar_hdr(a->arena, ref.index)) == NULL)
		return ACTOR_ENOENT;
	tinc = ref.incarnation != ACTOR_ANY ? ref.incarnation :
	    shm_actor_incarnation(a->arena, ref.index);
	mine = W_MAKE((uint32_t)a->idx, a->incarnation, tinc);
	for (i = 0; i < ACTOR_WATCHERS; i++) {
		zero = 0;
		if (atomic_compare_exchange_strong(&h->watchers[i], &zero,
		    mine))
			break;
	}
	if (i == ACTOR_WATCHERS)
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
	return send_terminated(a->prod, (uint32_t)a->idx, &t);
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
