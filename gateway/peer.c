/*
 * peer.c: this node's connection to each peer: a DEALER socket, a
 * CurveZMQ client with the node's key pair and the peer's public key as
 * the server key, and a monitor of its events.  Its state:
 *
 *	CONNECTING  HELLO sent (it waits in ZeroMQ until the TCP connection
 *	            and the handshake are done), no WELCOME yet
 *	UP          WELCOME came: its epoch and max_frame are known; batches
 *	            go out; PING every heartbeat, all peers in one beat, led
 *	            by whichever node beats first (peer_pinged)
 *	DOWN        it was up, and its connection closed (the monitor says
 *	            so at once) or nothing came from it for heartbeat_timeout:
 *	            the asks waiting on it fail at once (local_peer_down), a
 *	            new dealer (a new session) connects again
 *
 * Messages for a peer that is not up wait in its send queue (at most
 * node.send_queue, then they are dead letters "node unreachable"); when
 * it comes up they go first, but those meant for an epoch it no longer
 * has are dead letters "stale node".  Messages for an up peer go into one
 * batch per peer, sent once per round of the loop (peers_flush): many
 * messages waiting make one frame.
 *
 * Owns: struct peer, the dealers.  Must never send a BATCH before WELCOME
 * nor for another epoch than the peer's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zmq.h>

#include "gateway/gateway.h"

#define MON_EVENTS	(ZMQ_EVENT_DISCONNECTED | \
			 ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)

static int	 dealer_open(struct gateway *, struct peer *);
static void	 dealer_close(struct peer *);
static void	 up(struct gateway *, struct peer *, const struct wire_hello *);
static void	 down(struct gateway *, struct peer *, const char *);
static int	 enqueue(struct gateway *, struct peer *,
		    const struct wire_msg *, int);
static void	 drain(struct gateway *, struct peer *);
static int	 flush_one(struct gateway *, struct peer *);
static int	 batch_put(struct gateway *, struct peer *,
		    const struct wire_msg *);

int
peers_open(struct gateway *gw)
{
	struct peer *p;
	size_t i;

	if (gw->ns->npeers == 0)
		return 0;
	if ((gw->peers = calloc(gw->ns->npeers, sizeof(*gw->peers))) ==
	    NULL) {
		fprintf(stderr, "gateway: out of memory\n");
		return -1;
	}
	gw->npeers = gw->ns->npeers;
	for (i = 0; i < gw->npeers; i++) {
		p = &gw->peers[i];
		p->spec = &gw->ns->peers[i];
		p->slot = (unsigned)i;
		if (key_z85_decode(p->spec->public_key, p->pub) == -1) {
			fprintf(stderr, "gateway: peer %s: bad public key\n",
			    p->spec->name);
			return -1;
		}
		if (dealer_open(gw, p) == -1)
			return -1;
	}
	return 0;
}

void
peers_close(struct gateway *gw)
{
	struct gw_queued *q;
	size_t i;

	for (i = 0; i < gw->npeers; i++) {
		dealer_close(&gw->peers[i]);
		wire_buf_free(&gw->peers[i].out);
		while ((q = gw->peers[i].qhead) != NULL) {
			gw->peers[i].qhead = q->next;
			free(q);
		}
	}
	free(gw->peers);
	gw->peers = NULL;
	gw->npeers = 0;
}

struct peer *
peer_by_name(struct gateway *gw, const char *name)
{
	size_t i;

	for (i = 0; i < gw->npeers; i++)
		if (strcmp(gw->peers[i].spec->name, name) == 0)
			return &gw->peers[i];
	return NULL;
}

/* A new dealer, a new session: HELLO waits in it until it connects. */
static int
dealer_open(struct gateway *gw, struct peer *p)
{
	char mon[64];
	uint8_t sec[KEY_BYTES];
	struct wire_hello h;
	int zero = 0, ivl = 100, ivl_max = 1000, rc;

	p->session = ++gw->session;
	p->opened = p->last_rx = gw_now();
	p->ping_sent = 0;
	if ((p->dealer = zmq_socket(gw->zctx, ZMQ_DEALER)) == NULL)
		goto fail;
	(void)key_z85_decode(gw->secret, sec);
	rc = zmq_setsockopt(p->dealer, ZMQ_CURVE_SERVERKEY, p->pub,
	    KEY_BYTES);
	if (rc == 0)
		rc = zmq_setsockopt(p->dealer, ZMQ_CURVE_PUBLICKEY, gw->pub,
		    KEY_BYTES);
	if (rc == 0)
		rc = zmq_setsockopt(p->dealer, ZMQ_CURVE_SECRETKEY, sec,
		    KEY_BYTES);
	explicit_bzero(sec, sizeof(sec));
	if (rc == -1 ||
	    zmq_setsockopt(p->dealer, ZMQ_LINGER, &zero, sizeof(zero)) == -1 ||
	    zmq_setsockopt(p->dealer, ZMQ_RECONNECT_IVL, &ivl, sizeof(ivl)) ==
	    -1 || zmq_setsockopt(p->dealer, ZMQ_RECONNECT_IVL_MAX, &ivl_max,
	    sizeof(ivl_max)) == -1)
		goto fail;
	snprintf(mon, sizeof(mon), "inproc://gw-monitor-%u-%llu", p->slot,
	    (unsigned long long)p->session);
	if (zmq_socket_monitor(p->dealer, mon, MON_EVENTS) == -1 ||
	    (p->monitor = zmq_socket(gw->zctx, ZMQ_PAIR)) == NULL ||
	    zmq_setsockopt(p->monitor, ZMQ_LINGER, &zero, sizeof(zero)) ==
	    -1 || zmq_connect(p->monitor, mon) == -1)
		goto fail;
	if (zmq_connect(p->dealer, p->spec->endpoint) == -1) {
		fprintf(stderr, "gateway: peer %s: connect %s: %s\n",
		    p->spec->name, p->spec->endpoint, zmq_strerror(errno));
		return -1;
	}
	memset(&h, 0, sizeof(h));
	h.epoch = gw->epoch;
	h.session = p->session;
	h.max_frame = gw->ns->max_frame;
	snprintf(h.name, sizeof(h.name), "%s", gw->ns->name);
	/*
	 * Both looked at by the loop's first round: a message on a pipe
	 * nobody read yet raises no signal (the monitor's inproc pipe exists
	 * from zmq_connect on, and its first event would go unseen).
	 */
	p->dealer_used = p->monitor_used = true;
	if (wire_hello(&gw->tmp, WIRE_HELLO, &h) == -1 ||
	    zmq_send(p->dealer, gw->tmp.p, gw->tmp.len, ZMQ_DONTWAIT) == -1)
		gw_zsend_error("HELLO", p->dealer);
	return 0;
fail:
	fprintf(stderr, "gateway: peer %s: %s\n", p->spec->name,
	    zmq_strerror(errno));
	return -1;
}

static void
dealer_close(struct peer *p)
{
	if (p->dealer != NULL) {
		(void)zmq_socket_monitor(p->dealer, NULL, 0);
		zmq_close(p->dealer);
	}
	if (p->monitor != NULL)
		zmq_close(p->monitor);
	p->dealer = p->monitor = NULL;
	p->dealer_used = p->monitor_used = false;
	p->out.len = 0;
	p->out.count = 0;
}

static void
up(struct gateway *gw, struct peer *p, const struct wire_hello *w)
{
	if (strcmp(w->name, p->spec->name) != 0 || w->epoch == 0) {
		fprintf(stderr, "gateway: peer %s answered as \"%s\", epoch "
		    "%016llx: ignored\n", p->spec->name, w->name,
		    (unsigned long long)w->epoch);
		return;
	}
	if (p->epoch != 0 && p->epoch != w->epoch)
		fprintf(stderr, "gateway: peer %s has a new epoch %016llx "
		    "(was %016llx): it restarted\n", p->spec->name,
		    (unsigned long long)w->epoch,
		    (unsigned long long)p->epoch);
	p->epoch = w->epoch;
	p->max_frame = w->max_frame;
	p->state = PEER_UP;
	p->auth_refused = false;
	p->next_ping = gw_now() + (int64_t)gw->ns->heartbeat * 1000000;
	p->pinged = 0;			/* beats with the next one */
	fprintf(stderr, "gateway: peer %s up (epoch %016llx, %u queued)\n",
	    p->spec->name, (unsigned long long)p->epoch, p->qlen);
	drain(gw, p);
	status_changed(gw);
}

static void
down(struct gateway *gw, struct peer *p, const char *why)
{
	fprintf(stderr, "gateway: peer %s down: %s\n", p->spec->name, why);
	p->state = PEER_DOWN;
	p->downs++;
	p->rtt_ns = 0;
	local_peer_down(gw, p, ACTOR_ENODEDOWN);
	watch_peer_down(gw, p);
	dealer_close(p);
	if (dealer_open(gw, p) == -1)
		fprintf(stderr, "gateway: peer %s: cannot connect again\n",
		    p->spec->name);
	status_changed(gw);
}

/* Every frame waiting on the peer's dealer. */
void
peer_recv(struct gateway *gw, struct peer *p)
{
	struct wire_frame f;
	zmq_msg_t msg;
	int i, rc;

	for (i = 0; i < 256 && p->dealer != NULL; i++) {
		zmq_msg_init(&msg);
		if (zmq_msg_recv(&msg, p->dealer, ZMQ_DONTWAIT) == -1) {
			zmq_msg_close(&msg);
			return;
		}
		p->last_rx = gw_now();
		rc = wire_decode(zmq_msg_data(&msg), zmq_msg_size(&msg),
		    gw->ns->max_frame, &f);
		if (rc < 0 || zmq_msg_more(&msg)) {
			gw->frames_refused++;
			fprintf(stderr, "gateway: peer %s sent a bad frame: "
			    "%s\n", p->spec->name, rc < 0 ? wire_strerror(rc) :
			    "more than one part");
		} else if (f.type == WIRE_WELCOME)
			up(gw, p, &f.u.hello);
		else if (f.type == WIRE_PONG && f.u.nonce == p->ping_nonce &&
		    p->ping_sent != 0) {
			p->rtt_ns = p->last_rx - p->ping_sent;
			p->ping_sent = 0;
		} else if (f.type == WIRE_ERROR)
			fprintf(stderr, "gateway: peer %s refused a frame of "
			    "ours: %.*s\n", p->spec->name,
			    (int)f.u.error.text_len, f.u.error.text);
		zmq_msg_close(&msg);
	}
	p->dealer_used = p->dealer != NULL;	/* more may wait */
}

/* The dealer's events: a lost connection is a node down, at once. */
void
peer_monitor(struct gateway *gw, struct peer *p)
{
	zmq_msg_t msg;
	uint16_t event = 0;
	int i;

	for (i = 0; i < 64 && p->monitor != NULL; i++) {
		zmq_msg_init(&msg);
		if (zmq_msg_recv(&msg, p->monitor, ZMQ_DONTWAIT) == -1) {
			zmq_msg_close(&msg);
			return;
		}
		if (zmq_msg_size(&msg) >= 2 && zmq_msg_more(&msg))
			memcpy(&event, zmq_msg_data(&msg), 2);
		else
			event = 0;		/* the endpoint part */
		zmq_msg_close(&msg);
		if (event == ZMQ_EVENT_DISCONNECTED && p->state == PEER_UP) {
			down(gw, p, "connection lost");
			return;		/* a new monitor */
		}
		/*
		 * Only a refusal of our key counts: a handshake cut by a
		 * peer that died or restarted fails "protocol" or "no
		 * detail", and its messages must wait in the queue.
		 */
		if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) {
			p->refused++;
			p->auth_refused = true;
			if (p->refused == 1 || p->refused % 100 == 0)
				fprintf(stderr, "gateway: peer %s refused our "
				    "handshake (%llu times): is our key in its "
				    "peers?\n", p->spec->name,
				    (unsigned long long)p->refused);
			status_changed(gw);
		}
	}
	p->monitor_used = p->monitor != NULL;	/* more may wait */
}

/* A PING to p, now; the next one at next. */
static void
ping(struct gateway *gw, struct peer *p, int64_t now, int64_t next)
{
	p->ping_nonce = (uint64_t)now;
	if (wire_ping(&gw->tmp, WIRE_PING, p->ping_nonce) == 0 &&
	    zmq_send(p->dealer, gw->tmp.p, gw->tmp.len, ZMQ_DONTWAIT) == -1)
		gw_zsend_error("PING", p->dealer);
	p->ping_sent = p->pinged = now;
	p->next_ping = next;
	p->dealer_used = true;
	status_changed(gw);		/* the counters, once a beat */
}

/*
 * A heartbeat: a PING to every up peer whose last one is at least half a
 * heartbeat old (so every peer beats in the same round), the next at
 * next.
 */
static void
beat(struct gateway *gw, int64_t now, int64_t next)
{
	int64_t hb = (int64_t)gw->ns->heartbeat * 1000000;
	struct peer *p;
	size_t i;

	for (i = 0; i < gw->npeers; i++) {
		p = &gw->peers[i];
		if (p->state == PEER_UP && p->dealer != NULL &&
		    now - p->pinged >= hb / 2)
			ping(gw, p, now, next);
	}
}

/*
 * Peer p's PING came (on the listener, now).  If our own beat is at
 * least half a heartbeat old, we beat now with it and put the next one
 * off to one and a half heartbeats: the node whose beat comes first
 * leads, the others follow its PINGs, and an idle gateway wakes about
 * twice a heartbeat (to beat, and for what answers it: PONGs and the
 * others' PINGs together) instead of once more per peer.  If the leader
 * goes quiet, the first follower whose own beat comes due leads.
 */
void
peer_pinged(struct gateway *gw, struct peer *p, int64_t now)
{
	int64_t hb = (int64_t)gw->ns->heartbeat * 1000000;

	if (p->state == PEER_UP && now - p->pinged >= hb / 2)
		beat(gw, now, now + hb + hb / 2);
}

/* Heartbeats and timeouts, at now. */
void
peer_tick(struct gateway *gw, int64_t now)
{
	int64_t hb = (int64_t)gw->ns->heartbeat * 1000000;
	int64_t limit = (int64_t)gw->ns->heartbeat_timeout * 1000000;
	char why[64];
	struct peer *p;
	size_t i;
	bool due = false;

	for (i = 0; i < gw->npeers; i++) {
		p = &gw->peers[i];
		if (p->state != PEER_UP) {
			if (now - p->opened >= limit) {
				/* No WELCOME: try a new connection. */
				dealer_close(p);
				(void)dealer_open(gw, p);
			}
			continue;
		}
		if (now - p->last_rx >= limit) {
			snprintf(why, sizeof(why), "nothing for %u ms",
			    gw->ns->heartbeat_timeout);
			down(gw, p, why);
			continue;
		}
		if (now >= p->next_ping)
			due = true;
	}
	if (due)
		beat(gw, now, now + hb);
}

/* The next time peer_tick has something to do. */
int64_t
peer_deadline(const struct gateway *gw)
{
	int64_t limit = (int64_t)gw->ns->heartbeat_timeout * 1000000;
	int64_t d = gw_now() + 60LL * 1000000000, t;
	const struct peer *p;
	size_t i;

	for (i = 0; i < gw->npeers; i++) {
		p = &gw->peers[i];
		t = p->state == PEER_UP ? p->next_ping : p->opened + limit;
		if (t < d)
			d = t;
		if (p->state == PEER_UP && p->last_rx + limit < d)
			d = p->last_rx + limit;
	}
	return d;
}

/* A copy in the send queue; -1: the queue is full. */
static int
enqueue(struct gateway *gw, struct peer *p, const struct wire_msg *m,
    int gen)
{
	struct gw_queued *q;

	if (p->qlen >= gw->ns->send_queue ||
	    (q = malloc(sizeof(*q) + m->path_len + m->len)) == NULL)
		return -1;
	q->next = NULL;
	q->gen = gen;
	q->m = *m;
	if (m->path_len > 0)	/* a reply has none: path is NULL */
		memcpy(q->buf, m->path, m->path_len);
	if (m->len > 0)
		memcpy(q->buf + m->path_len, m->data, m->len);
	q->m.path = (const char *)q->buf;
	q->m.data = q->buf + m->path_len;
	if (p->qtail != NULL)
		p->qtail->next = q;
	else
		p->qhead = q;
	p->qtail = q;
	p->qlen++;
	status_changed(gw);
	return 0;
}

/*
 * The queue into batches, in order; what was meant for a past epoch is
 * stale.  It stops, keeping the rest, when ZeroMQ has no room.
 */
static void
drain(struct gateway *gw, struct peer *p)
{
	struct gw_queued *q;
	int rc;

	while ((q = p->qhead) != NULL && p->state == PEER_UP) {
		if (q->gen >= 0 && q->gen != REMOTE_GEN(p->epoch)) {
			gw->stale++;
			p->dropped++;
			local_dead_letter(gw, &q->m, gw->idx,
			    SHM_DL_STALE_NODE);
		} else if ((rc = batch_put(gw, p, &q->m)) == 1) {
			gw->dirty = true;
			return;		/* the loop drains it later */
		} else if (rc < 0) {
			p->dropped++;
			local_dead_letter(gw, &q->m, gw->idx,
			    peer_unsent(p, &q->m));
		}
		p->qhead = q->next;
		if (p->qhead == NULL)
			p->qtail = NULL;
		p->qlen--;
		free(q);
	}
}

/*
 * m into p's batch.  0; 1: no room in ZeroMQ for the full batch before
 * it (nothing done); -1: it can never be sent (larger than the peer's
 * max_frame, no memory).
 */
static int
batch_put(struct gateway *gw, struct peer *p, const struct wire_msg *m)
{
	size_t size = wire_msg_size(m);

	if (WIRE_HDR + 12 + size > p->max_frame)
		return -1;
	if (p->out.count > 0 && p->out.len + size > p->max_frame &&
	    flush_one(gw, p) == -1)
		return 1;
	if (p->out.count == 0 && wire_batch_begin(&p->out, p->epoch) == -1)
		return -1;
	if (wire_batch_add(&p->out, m) == -1)
		return -1;
	gw->dirty = true;
	return 0;
}

/* Why m, which peer_send refused, was not sent: its dead letter's reason. */
enum shm_dl_reason
peer_unsent(const struct peer *p, const struct wire_msg *m)
{
	if (p->auth_refused)
		return SHM_DL_REFUSED;
	if (p->max_frame != 0 && WIRE_HDR + 12 + wire_msg_size(m) >
	    p->max_frame)
		return SHM_DL_OVERSIZE;
	return SHM_DL_UNREACHABLE;
}

/*
 * m for p, meant for the epoch whose REMOTE_GEN is gen (-1: any; the
 * caller checked it against the epoch p has, if it has one).  0: in a
 * batch or queued; -1: it could not be (queue full, larger than a frame,
 * no memory): the caller dead-letters it.
 */
int
peer_send(struct gateway *gw, struct peer *p, const struct wire_msg *m,
    int gen)
{
	int rc;

	/* Queued for the epoch it has: a restarted peer gets none of it. */
	if (gen < 0 && p->epoch != 0)
		gen = REMOTE_GEN(p->epoch);
	if (p->auth_refused)
		return -1;
	if (p->state != PEER_UP || p->qhead != NULL)
		return enqueue(gw, p, m, gen);
	if ((rc = batch_put(gw, p, m)) == 1)
		return enqueue(gw, p, m, gen);
	return rc;
}

/* 0: sent (or nothing to send); -1: it waits (ZeroMQ's queue is full). */
static int
flush_one(struct gateway *gw, struct peer *p)
{
	if (p->out.count == 0 || p->dealer == NULL)
		return 0;
	wire_batch_end(&p->out);
	p->dealer_used = true;
	if (zmq_send(p->dealer, p->out.p, p->out.len, ZMQ_DONTWAIT) == -1) {
		if (errno == EAGAIN)
			return -1;
		gw_zsend_error("batch", p->dealer);
	} else {
		p->msgs_out += p->out.count;
		p->bytes_out += p->out.len;
	}
	(void)gw;
	p->out.len = 0;
	p->out.count = 0;
	return 0;
}

void
peers_flush(struct gateway *gw)
{
	size_t i;
	bool waiting = false;

	if (!gw->dirty)
		return;
	for (i = 0; i < gw->npeers; i++) {
		if (flush_one(gw, &gw->peers[i]) == -1)
			waiting = true;
		else if (gw->peers[i].qhead != NULL &&
		    gw->peers[i].state == PEER_UP) {
			drain(gw, &gw->peers[i]);
			waiting = true;
		}
	}
	gw->dirty = waiting;
}
