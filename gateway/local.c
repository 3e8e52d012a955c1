/*
 * local.c: the gateway's mailbox side.
 *
 * Out: a local actor's tell or ask for another node comes as an envelope
 * (worker/remote.c) on the gateway's main lane.  It is checked whole,
 * its peer found (by name for node:/path, by slot for a remote
 * reference, whose epoch must still be the peer's, else "stale node"),
 * and handed to peer.c.  An ask is deferred (actor_defer): its answer is
 * the REPLY that comes back, or ACTOR_ENODEDOWN at once when the peer is
 * or goes down; so the deferred set, which actord fails with
 * ACTOR_EDIED if the gateway dies, holds every ask in flight.
 *
 * In: a BATCH from a peer or a client (listener.c).  A TELL goes to the
 * local actor with the remote sender as its sender (a reference the
 * receiver can tell or ask back); an ASK is asked of the local actor by
 * the gateway (actor_ask_send) and its answer, which comes back on our
 * reply lane, goes out as a REPLY; a LOOKUP is answered at once; a REPLY
 * answers the deferred ask it names.  A batch for another epoch of this
 * node is not delivered: its asks fail with ACTOR_ESTALENODE, the rest
 * are dead letters "stale node".
 *
 * Owns: the tables of asks in flight both ways.  Must never wait on a
 * local mailbox (every send here has a zero timeout) nor trust an
 * envelope or a message it did not check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway/gateway.h"

#define TAKE_EMPTY(rc)	((rc) == ACTOR_EEMPTY || (rc) == ACTOR_ETIMEDOUT)

static void	 envelope(struct gateway *, const struct actor_msg *);
static int	 forward_ask(struct gateway *, struct peer *, struct wire_msg *,
		    int);
static void	 answer_in(struct gateway *, const struct actor_msg *);
static void	 reply_out(struct gateway *, int, const uint8_t *, size_t,
		    const struct wire_msg *);
static void	 reply_error(struct gateway *, struct conn *,
		    const struct wire_msg *, int, const char *);
static void	 deliver(struct gateway *, struct conn *,
		    const struct wire_msg *);
static void	 ask_in(struct gateway *, struct conn *,
		    const struct wire_msg *);
static void	 lookup_in(struct gateway *, struct conn *,
		    const struct wire_msg *);
static void	 reply_in(struct gateway *, struct conn *,
		    const struct wire_msg *);
static int	 target(struct gateway *, const struct wire_msg *,
		    struct actor_ref *);
static void	 shm_of(const struct wire_msg *, struct shm_msg *);

int
local_open(struct gateway *gw)
{
	struct actor_ref me = actor_self(gw->self);
	int fd;

	gw->arena = actor_arena(gw->self);
	gw->idx = me.index;
	gw->epoch = shm_arena_id(gw->arena);
	if (gw->epoch == 0)
		gw->epoch = 1;
	if ((fd = shm_doorbell_open(gw->arena, gw->idx)) < 0) {
		fprintf(stderr, "gateway: doorbell: %s\n", shm_strerror(fd));
		return -1;
	}
	gw->bell = fd;
	actor_recv_answers(gw->self, true);
	return 0;
}

void
local_close(struct gateway *gw)
{
	uint32_t i;

	for (i = 0; i < gw->fwd.cap; i++)
		free(gw->fwd.vals[i]);
	for (i = 0; i < gw->inask.cap; i++)
		free(gw->inask.vals[i]);
	map_free(&gw->fwd);
	map_free(&gw->inask);
	watch_free(gw);
	free(gw->fwd_by_entry);
	wire_buf_free(&gw->tmp);
	wire_buf_free(&gw->cout);
	if (gw->self != NULL)
		actor_close(gw->self);
	gw->self = NULL;
}

/*
 * What the mailbox holds, up to GW_BATCH_TAKE messages: 1 if more may
 * wait, 0 if it is empty, -1 on an error of the arena.
 */
int
local_take(struct gateway *gw)
{
	struct actor_msg m;
	int n, rc;

	for (n = 0; n < GW_BATCH_TAKE; n++) {
		rc = actor_recv(gw->self, &m, 0);
		if (TAKE_EMPTY(rc))
			return 0;
		if (rc < 0) {
			fprintf(stderr, "gateway: receive: %s\n",
			    actor_strerror(rc));
			return -1;
		}
		if (m.flags & ACTOR_MSG_REPLY)
			answer_in(gw, &m);
		else if (m.flags & ACTOR_MSG_SYSTEM) {
			if (m.tag == ACTOR_SYS_STOP)
				gw->stop = true;
			else if (m.tag == ACTOR_SYS_TERMINATED)
				watch_local_death(gw, m.data, m.len);
		} else if (m.tag == REMOTE_TAG)
			envelope(gw, &m);
		else if (m.flags & ACTOR_MSG_ASK)
			(void)actor_reply_error(gw->self, ACTOR_EINVAL,
			    "the gateway takes envelopes only");
		actor_done(gw->self);
		if (gw->stop)
			return 0;
	}
	return 1;
}

/* A wire message as the header of a dead letter. */
static void
shm_of(const struct wire_msg *w, struct shm_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->tag = w->tag;
	m->len = w->len;
	m->sender.index = w->from_index;
	m->sender.incarnation = w->from_inc;
	m->corr = w->corr;
	if (w->kind == WK_ASK || w->kind == WK_LOOKUP)
		m->flags = SHM_MSG_ASK;
}

void
local_dead_letter(struct gateway *gw, const struct wire_msg *w,
    uint32_t recipient, enum shm_dl_reason why)
{
	struct shm_msg m;
	struct gw_fwd *f;

	shm_of(w, &m);
	(void)shm_dl_put(gw->arena, recipient, SHM_LANE_MAIN, why, &m,
	    w->data);
	status_changed(gw);
	/* A queued ask of ours: its asker learns it now. */
	if ((w->kind == WK_ASK || w->kind == WK_LOOKUP) &&
	    (f = map_del(&gw->fwd, w->corr)) != NULL) {
		(void)actor_answer_error(gw->self, &f->caller,
		    why == SHM_DL_STALE_NODE ? ACTOR_ESTALENODE :
		    ACTOR_ENODEDOWN, shm_reason_name(why));
		free(f);
	}
}

/* --- out: envelopes of local actors --------------------------------------- */

static void
envelope(struct gateway *gw, const struct actor_msg *m)
{
	struct remote_env e;
	struct wire_msg w;
	struct peer *p;
	char spath[WIRE_PATH_MAX + 1];
	bool ask = (m->flags & ACTOR_MSG_ASK) != 0, lost = false;
	int gen = -1;

	if (remote_env_get(m->data, m->len, &e) < 0 ||
	    (e.kind == WK_ASK || e.kind == WK_LOOKUP) != ask) {
		if (ask)
			(void)actor_reply_error(gw->self, ACTOR_EINVAL,
			    "malformed envelope");
		return;
	}
	/* A shard of a group spanning nodes: by path, to its node. */
	if (!(e.flags & WF_PATH) && e.peer == REMOTE_SHARD_PEER)
		lost = shard_route(gw, &e, spath, sizeof(spath)) < 0;
	p = lost ? NULL : (e.flags & WF_PATH) ? peer_by_name(gw, e.node) :
	    e.peer < gw->npeers ? &gw->peers[e.peer] : NULL;
	memset(&w, 0, sizeof(w));
	w.kind = e.kind;
	w.flags = e.flags & WF_PATH;
	w.path = e.path;
	w.path_len = e.path_len;
	w.tag = e.tag;
	w.to_index = e.to_index;
	w.to_inc = e.to_inc;
	w.from_index = m->sender.index == UINT32_MAX ? WIRE_NOBODY :
	    m->sender.index;
	w.from_inc = m->sender.incarnation;
	w.data = e.data;
	w.len = (uint32_t)e.len;
	if (p == NULL) {
		if (ask)
			(void)actor_reply_error(gw->self, ACTOR_ENOENT,
			    lost ? "no such shard" : (e.flags & WF_PATH) ?
			    "no such node" : "no such peer");
		else
			local_dead_letter(gw, &w, gw->idx, SHM_DL_NO_ACTOR);
		return;
	}
	if (!(e.flags & WF_PATH)) {
		gen = e.gen;
		if (p->epoch != 0 && gen != REMOTE_GEN(p->epoch)) {
			gw->stale++;
			p->dropped++;
			if (ask)
				(void)actor_reply_error(gw->self,
				    ACTOR_ESTALENODE, "stale node");
			else
				local_dead_letter(gw, &w, gw->idx,
				    SHM_DL_STALE_NODE);
			return;
		}
	}
	if ((e.kind == WK_WATCH || e.kind == WK_UNWATCH) &&
	    watch_out(gw, p, &w) != 0)
		return;			/* answered here */
	if (ask) {
		if (forward_ask(gw, p, &w, gen) < 0)
			return;
	} else if (peer_send(gw, p, &w, gen) < 0) {
		p->dropped++;
		local_dead_letter(gw, &w, gw->idx, peer_unsent(p, &w));
	}
}

/*
 * The ask in hand, for peer p: deferred, then sent.  A peer that is down
 * fails it at once.  0, or -1 when it was answered here.
 */
static int
forward_ask(struct gateway *gw, struct peer *p, struct wire_msg *w, int gen)
{
	struct gw_fwd *f;
	uint64_t *t, old;
	uint32_t n;
	char why[80];

	if (p->state == PEER_DOWN) {
		snprintf(why, sizeof(why), "node %s down", p->spec->name);
		(void)actor_reply_error(gw->self, ACTOR_ENODEDOWN, why);
		return -1;
	}
	if ((f = calloc(1, sizeof(*f))) == NULL) {
		(void)actor_reply_error(gw->self, ACTOR_ESYS, "out of memory");
		return -1;
	}
	if (actor_defer(gw->self, &f->caller) < 0) {
		free(f);
		(void)actor_reply_error(gw->self, ACTOR_EFULL,
		    "the gateway has too many asks in flight");
		return -1;
	}
	/* The entry's previous ask is over (the set took it back). */
	if (f->caller.entry >= gw->nentries) {
		n = gw->nentries == 0 ? 64 : gw->nentries;
		while (n <= f->caller.entry)
			n *= 2;
		if ((t = realloc(gw->fwd_by_entry, n * sizeof(*t))) == NULL)
			goto nomem;
		memset(t + gw->nentries, 0, (n - gw->nentries) * sizeof(*t));
		gw->fwd_by_entry = t;
		gw->nentries = n;
	}
	if ((old = gw->fwd_by_entry[f->caller.entry]) != 0)
		free(map_del(&gw->fwd, old));
	if (++gw->fwd_seq == 0)
		gw->fwd_seq = 1;
	f->corr = (uint64_t)(gw->fwd_seq & 0xffff) << 24 | f->caller.entry;
	f->peer = p->slot;
	f->kind = w->kind;
	if (map_put(&gw->fwd, f->corr, f) == -1)
		goto nomem;
	gw->fwd_by_entry[f->caller.entry] = f->corr;
	w->corr = f->corr;
	if (peer_send(gw, p, w, gen) < 0) {
		map_del(&gw->fwd, f->corr);
		p->dropped++;
		(void)actor_answer_error(gw->self, &f->caller,
		    peer_unsent(p, w) == SHM_DL_OVERSIZE ? ACTOR_EOVERSIZE :
		    ACTOR_ENODEDOWN, shm_reason_name(peer_unsent(p, w)));
		free(f);
		return -1;
	}
	return 0;
nomem:
	(void)actor_answer_error(gw->self, &f->caller, ACTOR_ESYS,
	    "out of memory");
	free(f);
	return -1;
}

/* Peer p is down: every ask waiting on it fails now with code. */
void
local_peer_down(struct gateway *gw, struct peer *p, int code)
{
	struct gw_fwd *f;
	char why[80];
	uint32_t i;

	snprintf(why, sizeof(why), "node %s down", p->spec->name);
	for (i = 0; i < gw->fwd.cap; ) {
		f = gw->fwd.vals[i];
		if (gw->fwd.keys[i] == 0 || f->peer != p->slot) {
			i++;
			continue;
		}
		/* map_del shifts a later key into slot i: look at it again. */
		map_del(&gw->fwd, f->corr);
		(void)actor_answer_error(gw->self, &f->caller, code, why);
		free(f);
	}
}

/* --- in: batches from peers and clients ------------------------------------ */

void
local_batch(struct gateway *gw, struct conn *c, struct wire_frame *f)
{
	struct wire_msg w;
	bool stale = f->u.batch.epoch != 0 && f->u.batch.epoch != gw->epoch;

	while (wire_next(f, &w)) {
		if (stale) {
			gw->stale++;
			if (w.kind == WK_ASK || w.kind == WK_LOOKUP)
				reply_error(gw, c, &w, ACTOR_ESTALENODE,
				    "stale node: it restarted since");
			else if (w.kind != WK_REPLY)
				local_dead_letter(gw, &w, (w.flags & WF_PATH)
				    || w.to_index >= shm_nmailboxes(gw->arena)
				    ? gw->idx : w.to_index, SHM_DL_STALE_NODE);
			continue;
		}
		switch (w.kind) {
		case WK_TELL:
			deliver(gw, c, &w);
			break;
		case WK_ASK:
			ask_in(gw, c, &w);
			break;
		case WK_LOOKUP:
			lookup_in(gw, c, &w);
			break;
		case WK_REPLY:
			reply_in(gw, c, &w);
			break;
		case WK_WATCH:
		case WK_UNWATCH:
			watch_in(gw, c, &w);
			break;
		case WK_TERMINATED:
			watch_terminated_in(gw, c, &w);
			break;
		default:
			break;
		}
	}
}

/* The local actor a message names.  0, or an ACTOR_E* code. */
static int
target(struct gateway *gw, const struct wire_msg *w, struct actor_ref *ref)
{
	char path[WIRE_PATH_MAX + 1];
	int idx;

	if (w->flags & WF_PATH) {
		memcpy(path, w->path, w->path_len);
		path[w->path_len] = '\0';
		if ((idx = shm_lookup(gw->arena, path)) < 0)
			return idx == SHM_ENOENT ? ACTOR_ENOENT : idx;
		ref->index = (uint32_t)idx;
		ref->incarnation = ACTOR_ANY;
		return 0;
	}
	if (w->to_index >= shm_nmailboxes(gw->arena))
		return ACTOR_ENOENT;
	ref->index = w->to_index;
	ref->incarnation = w->to_inc;
	return 0;
}

/* The sender a local actor sees for a message from c. */
static struct actor_ref
sender_of(const struct conn *c, const struct wire_msg *w)
{
	struct actor_ref r = { UINT32_MAX, 0 };

	if (c->peer >= 0 && w->from_index < WIRE_INDEX_MAX) {
		r.index = REMOTE_REF(c->peer, REMOTE_GEN(c->epoch),
		    w->from_index);
		r.incarnation = w->from_inc;
	}
	return r;
}

static void
deliver(struct gateway *gw, struct conn *c, const struct wire_msg *w)
{
	struct actor_ref to;
	int rc;

	if ((rc = target(gw, w, &to)) < 0) {
		local_dead_letter(gw, w, gw->idx, SHM_DL_NO_ACTOR);
		return;
	}
	/* A refusal (full, stale, down) made its own dead letter. */
	(void)remote_deliver(gw->self, to, sender_of(c, w), w->tag, w->data,
	    w->len);
}

static void
ask_in(struct gateway *gw, struct conn *c, const struct wire_msg *w)
{
	struct gw_inask *ia;
	struct actor_ref to;
	uint64_t corr;
	int rc;

	if ((rc = target(gw, w, &to)) < 0) {
		reply_error(gw, c, w, rc, NULL);
		return;
	}
	if ((ia = calloc(1, sizeof(*ia))) == NULL) {
		reply_error(gw, c, w, ACTOR_ESYS, "out of memory");
		return;
	}
	/*
	 * Never a wait for room: the gateway's one thread serves every peer
	 * and client, and a full mailbox would hold them all (and the
	 * heartbeats) for up to GW_ASK_TIMEOUT_NS.  The asker gets
	 * ACTOR_EFULL, as for a tell its overflow policy and a dead letter.
	 */
	rc = actor_ask_send_with(gw->self, to, w->tag, w->data, w->len,
	    GW_ASK_TIMEOUT_NS, ACTOR_ASK_NO_WAIT, &corr);
	if (rc < 0) {
		free(ia);
		reply_error(gw, c, w, rc, NULL);
		return;
	}
	ia->corr = corr;
	ia->peer = c->peer;
	memcpy(ia->rid, c->rid, c->rid_len);
	ia->rid_len = c->rid_len;
	ia->from_index = w->from_index;
	ia->from_inc = w->from_inc;
	ia->wcorr = w->corr;
	ia->kind = w->kind;
	if (map_put(&gw->inask, corr, ia) == -1)
		free(ia);	/* its answer will be dropped */
}

static void
lookup_in(struct gateway *gw, struct conn *c, const struct wire_msg *w)
{
	struct actor_ref ref;
	uint8_t out[8];
	int rc;

	if (!(w->flags & WF_PATH)) {
		reply_error(gw, c, w, ACTOR_EINVAL, "LOOKUP needs a path");
		return;
	}
	if ((rc = target(gw, w, &ref)) < 0) {
		reply_error(gw, c, w, rc, NULL);
		return;
	}
	ref.incarnation = shm_actor_incarnation(gw->arena, ref.index);
	out[0] = (uint8_t)ref.index;
	out[1] = (uint8_t)(ref.index >> 8);
	out[2] = (uint8_t)(ref.index >> 16);
	out[3] = (uint8_t)(ref.index >> 24);
	out[4] = (uint8_t)ref.incarnation;
	out[5] = (uint8_t)(ref.incarnation >> 8);
	out[6] = (uint8_t)(ref.incarnation >> 16);
	out[7] = (uint8_t)(ref.incarnation >> 24);
	reply_out(gw, c->peer, c->rid, c->rid_len, &(struct wire_msg){
	    .kind = WK_REPLY, .to_index = w->from_index,
	    .to_inc = w->from_inc, .from_index = gw->idx, .corr = w->corr,
	    .len = sizeof(out), .data = out });
}

/*
 * A REPLY to whoever asked: on our dealer to a peer, on the listener to a
 * client (one frame each).
 */
static void
reply_out(struct gateway *gw, int peer, const uint8_t *rid, size_t rid_len,
    const struct wire_msg *r)
{
	struct peer *p;

	if (peer >= 0) {
		p = &gw->peers[peer];
		if (peer_send(gw, p, r, -1) < 0) {
			p->dropped++;
			local_dead_letter(gw, r, gw->idx, peer_unsent(p, r));
		}
		return;
	}
	if (wire_batch_begin(&gw->cout, 0) == -1 ||
	    wire_batch_add(&gw->cout, r) == -1)
		return;
	wire_batch_end(&gw->cout);
	(void)listener_send(gw, rid, rid_len, gw->cout.p, gw->cout.len);
}

/* An error REPLY to ask w from c: code, and text (NULL: the code's name). */
static void
reply_error(struct gateway *gw, struct conn *c, const struct wire_msg *w,
    int code, const char *text)
{
	uint8_t buf[4 + ACTOR_ERRTEXT_MAX];
	int32_t v = code;
	size_t n;

	if (text == NULL)
		text = actor_strerror(code);
	n = strlen(text);
	if (n > ACTOR_ERRTEXT_MAX - 1)
		n = ACTOR_ERRTEXT_MAX - 1;
	buf[0] = (uint8_t)v;
	buf[1] = (uint8_t)((uint32_t)v >> 8);
	buf[2] = (uint8_t)((uint32_t)v >> 16);
	buf[3] = (uint8_t)((uint32_t)v >> 24);
	memcpy(buf + 4, text, n);
	buf[4 + n] = '\0';
	reply_out(gw, c->peer, c->rid, c->rid_len, &(struct wire_msg){
	    .kind = WK_REPLY, .flags = WF_ERROR, .to_index = w->from_index,
	    .to_inc = w->from_inc, .from_index = gw->idx, .corr = w->corr,
	    .len = (uint32_t)(4 + n + 1), .data = buf });
}

/* An answer to one of our asks for a remote asker: back it goes. */
static void
answer_in(struct gateway *gw, const struct actor_msg *m)
{
	struct gw_inask *ia;

	if ((ia = map_del(&gw->inask, m->corr)) == NULL)
		return;
	reply_out(gw, ia->peer, ia->rid, ia->rid_len, &(struct wire_msg){
	    .kind = WK_REPLY,
	    .flags = (m->flags & ACTOR_MSG_ERROR) ? WF_ERROR : 0,
	    .tag = m->tag, .to_index = ia->from_index, .to_inc = ia->from_inc,
	    .from_index = gw->idx, .corr = ia->wcorr, .len = m->len,
	    .data = m->data });
	free(ia);
}

/* A REPLY from a peer: the answer to one of our deferred asks. */
static void
reply_in(struct gateway *gw, struct conn *c, const struct wire_msg *w)
{
	struct gw_fwd *f;
	struct actor_ref ref;
	const uint8_t *d = w->data;
	int32_t code;
	char text[ACTOR_ERRTEXT_MAX];
	size_t n;

	if (c->peer < 0 || (f = map_get(&gw->fwd, w->corr)) == NULL ||
	    f->peer != (unsigned)c->peer)
		return;		/* late, or not ours: dropped */
	map_del(&gw->fwd, w->corr);
	gw->fwd_by_entry[f->caller.entry] = 0;
	if (w->flags & WF_ERROR) {
		code = 0;
		if (w->len >= 4)
			code = (int32_t)((uint32_t)d[0] | (uint32_t)d[1] << 8 |
			    (uint32_t)d[2] << 16 | (uint32_t)d[3] << 24);
		n = w->len > 4 ? w->len - 4 : 0;
		if (n > sizeof(text) - 1)
			n = sizeof(text) - 1;
		memcpy(text, d + 4, n);
		text[n] = '\0';
		if (code < ACTOR_ELAST)
			code = ACTOR_EPROTO;
		(void)actor_answer_error(gw->self, &f->caller, code, text);
	} else if (f->kind == WK_LOOKUP) {
		if (w->len != 8 || (ref.index = (uint32_t)d[0] |
		    (uint32_t)d[1] << 8 | (uint32_t)d[2] << 16 |
		    (uint32_t)d[3] << 24) >= WIRE_INDEX_MAX) {
			(void)actor_answer_error(gw->self, &f->caller,
			    ACTOR_EPROTO, "malformed LOOKUP answer");
		} else {
			ref.incarnation = (uint32_t)d[4] | (uint32_t)d[5] << 8 |
			    (uint32_t)d[6] << 16 | (uint32_t)d[7] << 24;
			ref.index = REMOTE_REF(f->peer,
			    REMOTE_GEN(gw->peers[f->peer].epoch), ref.index);
			(void)actor_answer(gw->self, &f->caller, 0, &ref,
			    sizeof(ref));
		}
	} else
		(void)actor_answer(gw->self, &f->caller, w->tag, w->data,
		    w->len);
	free(f);
}
