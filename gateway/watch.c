/*
 * watch.c: death watch across nodes (actor_watch of a remote reference).
 *
 * Out (this node's actors watching a peer's): the WATCH goes to the peer
 * and is remembered here; the peer's TERMINATED is handed to the watcher
 * as a Terminated whose `who` is the remote reference; when the peer goes
 * down every watcher of its actors gets a Terminated with gone =
 * ACTOR_GONE_NODE_DOWN at once (the actor may still run: its node cannot
 * say), and a watch of an actor of a peer that is down gets one at once.
 *
 * In (a peer's actors watching ours): the gateway watches the local actor
 * itself (actor_watch, once per incarnation however many watch it), and
 * its Terminated goes out as a TERMINATED to every remote watcher.  A
 * peer that goes down loses its watches here.
 *
 * Owns: both tables of watches.  Must never hand a Terminated to a
 * watcher that did not ask for it, nor two for one death.
 */
#include <stdlib.h>
#include <string.h>

#include "gateway/gateway.h"

static int	 add(struct gw_watches *, const struct gw_watch *);
static void	 win_drop(struct gateway *, size_t);
static void	 drop(struct gw_watches *, size_t);
static bool	 watched(const struct gw_watches *, uint32_t, uint32_t);
static void	 to_watcher(struct gateway *, const struct gw_watch *,
		    const struct actor_terminated *);
static void	 send_terminated_out(struct gateway *, const struct gw_watch *,
		    const struct actor_terminated *);

static int
add(struct gw_watches *ws, const struct gw_watch *w)
{
	struct gw_watch *t;
	size_t cap;

	if (ws->n == ws->cap) {
		cap = ws->cap == 0 ? 16 : ws->cap * 2;
		if ((t = reallocarray(ws->w, cap, sizeof(*t))) == NULL)
			return -1;
		ws->w = t;
		ws->cap = cap;
	}
	ws->w[ws->n++] = *w;
	return 0;
}

static void
drop(struct gw_watches *ws, size_t i)
{
	ws->w[i] = ws->w[--ws->n];
}

/* Entry i of the peers' watches of ours dropped, and counted off. */
static void
win_drop(struct gateway *gw, size_t i)
{
	gw->peers[gw->win.w[i].peer].watches_in--;
	drop(&gw->win, i);
}

static bool
watched(const struct gw_watches *ws, uint32_t tidx, uint32_t tinc)
{
	size_t i;

	for (i = 0; i < ws->n; i++)
		if (ws->w[i].tidx == tidx && ws->w[i].tinc == tinc)
			return true;
	return false;
}

void
watch_free(struct gateway *gw)
{
	free(gw->wout.w);
	free(gw->win.w);
	memset(&gw->wout, 0, sizeof(gw->wout));
	memset(&gw->win, 0, sizeof(gw->win));
}

/* A Terminated for the remote actor of w, to its local watcher. */
static void
to_watcher(struct gateway *gw, const struct gw_watch *w,
    const struct actor_terminated *t)
{
	struct actor_terminated r = *t;
	struct actor_ref watcher = { w->widx, w->winc };

	r.who.index = REMOTE_REF(w->peer, REMOTE_GEN(gw->peers[w->peer].epoch),
	    w->tidx);
	r.who.incarnation = w->tinc;
	(void)remote_terminated(gw->self, watcher, &r);
}

/* --- out --------------------------------------------------------------- */

/*
 * A local actor's WATCH or UNWATCH w for peer p, before it is sent.
 * 0: send it; 1: answered here (p is down: a Terminated at once).
 */
int
watch_out(struct gateway *gw, struct peer *p, const struct wire_msg *m)
{
	struct gw_watch w;
	struct actor_terminated t;
	size_t i;

	memset(&w, 0, sizeof(w));
	w.peer = p->slot;
	w.tidx = m->to_index;
	w.tinc = m->to_inc;
	w.widx = m->from_index;
	w.winc = m->from_inc;
	if (m->kind == WK_UNWATCH) {
		for (i = 0; i < gw->wout.n; )
			if (gw->wout.w[i].peer == w.peer &&
			    gw->wout.w[i].tidx == w.tidx &&
			    gw->wout.w[i].widx == w.widx &&
			    gw->wout.w[i].winc == w.winc &&
			    (w.tinc == ACTOR_ANY ||
			    gw->wout.w[i].tinc == w.tinc))
				drop(&gw->wout, i);
			else
				i++;
		return 0;
	}
	if (p->state == PEER_DOWN) {
		memset(&t, 0, sizeof(t));
		t.wstatus = -1;
		t.exit_status = -1;
		t.gone = ACTOR_GONE_NODE_DOWN;
		to_watcher(gw, &w, &t);
		return 1;
	}
	(void)add(&gw->wout, &w);
	return 0;
}

/* A TERMINATED from peer c: to the watcher it names. */
void
watch_terminated_in(struct gateway *gw, struct conn *c,
    const struct wire_msg *m)
{
	struct wire_terminated wt;
	struct actor_terminated t;
	struct gw_watch *w;
	size_t i;

	if (c->peer < 0 || m->len != WIRE_TERMINATED_LEN)
		return;
	wire_get_terminated(m->data, &wt);
	memset(&t, 0, sizeof(t));
	t.wstatus = wt.wstatus;
	t.exit_status = wt.exit_status;
	t.signal = wt.signal;
	t.gone = wt.reason;
	for (i = 0; i < gw->wout.n; i++) {
		w = &gw->wout.w[i];
		if (w->peer != (unsigned)c->peer || w->tidx != wt.index ||
		    w->widx != m->to_index || w->winc != m->to_inc ||
		    (w->tinc != ACTOR_ANY && w->tinc != wt.incarnation))
			continue;
		w->tinc = wt.incarnation;
		to_watcher(gw, w, &t);
		drop(&gw->wout, i);
		return;		/* one Terminated per watch */
	}
}

/* --- in ---------------------------------------------------------------- */

static void
send_terminated_out(struct gateway *gw, const struct gw_watch *w,
    const struct actor_terminated *t)
{
	struct wire_terminated wt;
	uint8_t buf[WIRE_TERMINATED_LEN];
	struct peer *p = &gw->peers[w->peer];

	memset(&wt, 0, sizeof(wt));
	wt.index = w->tidx;
	wt.incarnation = w->tinc;
	wt.wstatus = t->wstatus;
	wt.exit_status = t->exit_status;
	wt.signal = t->signal;
	wt.reason = 0;
	wire_put_terminated(buf, &wt);
	if (peer_send(gw, p, &(struct wire_msg){ .kind = WK_TERMINATED,
	    .to_index = w->widx, .to_inc = w->winc, .from_index = gw->idx,
	    .len = sizeof(buf), .data = buf }, -1) < 0)
		p->dropped++;
}

/* A peer's WATCH or UNWATCH of a local actor. */
void
watch_in(struct gateway *gw, struct conn *c, const struct wire_msg *m)
{
	struct actor_terminated t;
	struct actor_ref ref;
	struct gw_watch w;
	size_t i;

	if (c->peer < 0 || (m->flags & WF_PATH) ||
	    m->to_index >= shm_nmailboxes(gw->arena) ||
	    m->from_index >= WIRE_INDEX_MAX)
		return;
	memset(&w, 0, sizeof(w));
	w.peer = (unsigned)c->peer;
	w.tidx = m->to_index;
	w.tinc = m->to_inc != ACTOR_ANY ? m->to_inc :
	    shm_actor_incarnation(gw->arena, m->to_index);
	w.widx = m->from_index;
	w.winc = m->from_inc;
	if (m->kind == WK_UNWATCH) {
		for (i = 0; i < gw->win.n; )
			if (gw->win.w[i].peer == w.peer &&
			    gw->win.w[i].tidx == w.tidx &&
			    gw->win.w[i].widx == w.widx &&
			    gw->win.w[i].winc == w.winc)
				win_drop(gw, i);
			else
				i++;
		if (!watched(&gw->win, w.tidx, w.tinc)) {
			ref.index = w.tidx;
			ref.incarnation = w.tinc;
			(void)actor_unwatch(gw->self, ref);
		}
		return;
	}
	ref.index = w.tidx;
	ref.incarnation = w.tinc;
	/*
	 * A peer holds at most GW_WATCHES_PER_PEER (each WATCH and each death
	 * here scans them all): past that, as an actor it cannot watch.
	 */
	if (gw->peers[w.peer].watches_in >= GW_WATCHES_PER_PEER ||
	    (!watched(&gw->win, w.tidx, w.tinc) &&
	    actor_watch(gw->self, ref) < 0)) {
		/* Cannot watch it: as good as dead to the watcher. */
		memset(&t, 0, sizeof(t));
		t.wstatus = -1;
		t.exit_status = -1;
		send_terminated_out(gw, &w, &t);
		return;
	}
	if (add(&gw->win, &w) == -1) {
		memset(&t, 0, sizeof(t));
		t.wstatus = -1;
		t.exit_status = -1;
		send_terminated_out(gw, &w, &t);
		return;
	}
	gw->peers[w.peer].watches_in++;
}

/* Our own Terminated (payload t): out to every remote watcher of who. */
void
watch_local_death(struct gateway *gw, const void *data, size_t len)
{
	struct actor_terminated t;
	size_t i;

	if (len != sizeof(t))
		return;
	memcpy(&t, data, sizeof(t));
	for (i = 0; i < gw->win.n; ) {
		if (gw->win.w[i].tidx == t.who.index &&
		    gw->win.w[i].tinc == t.who.incarnation) {
			send_terminated_out(gw, &gw->win.w[i], &t);
			win_drop(gw, i);
		} else
			i++;
	}
}

/* Peer p is down: its actors' watchers learn it; its watches end. */
void
watch_peer_down(struct gateway *gw, struct peer *p)
{
	struct actor_terminated t;
	struct actor_ref ref;
	size_t i;

	memset(&t, 0, sizeof(t));
	t.wstatus = -1;
	t.exit_status = -1;
	t.gone = ACTOR_GONE_NODE_DOWN;
	for (i = 0; i < gw->wout.n; ) {
		if (gw->wout.w[i].peer == p->slot) {
			to_watcher(gw, &gw->wout.w[i], &t);
			drop(&gw->wout, i);
		} else
			i++;
	}
	for (i = 0; i < gw->win.n; ) {
		if (gw->win.w[i].peer != p->slot) {
			i++;
			continue;
		}
		ref.index = gw->win.w[i].tidx;
		ref.incarnation = gw->win.w[i].tinc;
		win_drop(gw, i);
		if (!watched(&gw->win, ref.index, ref.incarnation))
			(void)actor_unwatch(gw->self, ref);
	}
}
