/*
 * listener.c: the node's ROUTER socket, bound to node.listen as a
 * CurveZMQ server.  Peers connect to it (their dealers, peer.c) and so do
 * clients; each connection is known by its routing id and by the name ZAP
 * gave its key (zap.c).  What comes in is checked whole by wire_decode
 * before anything of it is used: a bad frame is counted and answered with
 * an ERROR, and after node.bad_frames of them the connection is ignored
 * until it says HELLO on a new connection.  HELLO is answered by WELCOME,
 * PING by PONG; batches go to local.c.
 *
 * Owns: the listener's connections (struct conn).  Must never send a
 * peer anything but WELCOME, PONG and ERROR (actor messages go to peers
 * on our own dealer), nor use a byte of a frame wire_decode refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <zmq.h>

#include "gateway/gateway.h"

#define RECV_ROUND	1024	/* frames per wake-up, then the others' turn */
#define CLIENTS_MAX	1024	/* client connections remembered */
#define BIND_WAIT_MS	2000	/* node.listen in use: how long to retry */
#define BIND_RETRY_MS	20

static int	 bind_patiently(struct gateway *);
static struct conn *conn_of(struct gateway *, zmq_msg_t *, zmq_msg_t *);
static void	 conn_drop_older(struct gateway *, const struct conn *);
static void	 refuse(struct gateway *, struct conn *, const char *,
		    uint32_t, const char *);
static void	 handle(struct gateway *, struct conn *, const char *,
		    const uint8_t *, size_t);
static void	 hello(struct gateway *, struct conn *, const char *,
		    const struct wire_hello *);

/*
 * zmq_bind, waiting up to BIND_WAIT_MS while the address is in use: a
 * node started again at once after its actord was killed finds its old
 * gateway still exiting (the kernel sends it SIGKILL as actord dies,
 * PR_SET_PDEATHSIG), holding the port for a few milliseconds more.
 */
static int
bind_patiently(struct gateway *gw)
{
	const struct timespec pause = { 0, BIND_RETRY_MS * 1000000L };
	int waited;

	for (waited = 0; zmq_bind(gw->router, gw->ns->listen) == -1;
	    waited += BIND_RETRY_MS) {
		if (errno != EADDRINUSE || waited >= BIND_WAIT_MS)
			return -1;
		if (waited == 0)
			fprintf(stderr, "gateway: listen %s: address in use; "
			    "trying again for %d ms\n", gw->ns->listen,
			    BIND_WAIT_MS);
		(void)nanosleep(&pause, NULL);
	}
	return 0;
}

int
listener_open(struct gateway *gw)
{
	int one = 1, zero = 0;
	int64_t maxmsg = (int64_t)gw->ns->max_frame * 2;
	uint8_t sec[KEY_BYTES];
	int rc;

	if ((gw->router = zmq_socket(gw->zctx, ZMQ_ROUTER)) == NULL)
		goto fail;
	(void)key_z85_decode(gw->secret, sec);
	rc = zmq_setsockopt(gw->router, ZMQ_CURVE_SERVER, &one, sizeof(one));
	if (rc == 0)
		rc = zmq_setsockopt(gw->router, ZMQ_CURVE_SECRETKEY, sec,
		    KEY_BYTES);
	explicit_bzero(sec, sizeof(sec));
	if (rc == -1 ||
	    zmq_setsockopt(gw->router, ZMQ_ZAP_DOMAIN, GW_ZAP_DOMAIN,
	    strlen(GW_ZAP_DOMAIN)) == -1 ||
	    zmq_setsockopt(gw->router, ZMQ_LINGER, &zero, sizeof(zero)) ==
	    -1 ||
	    zmq_setsockopt(gw->router, ZMQ_MAXMSGSIZE, &maxmsg,
	    sizeof(maxmsg)) == -1)
		goto fail;
	if (bind_patiently(gw) == -1) {
		fprintf(stderr, "gateway: listen %s: %s\n", gw->ns->listen,
		    zmq_strerror(errno));
		return -1;
	}
	gw->router_used = true;		/* the loop's first round looks */
	return 0;
fail:
	fprintf(stderr, "gateway: listener: %s\n", zmq_strerror(errno));
	return -1;
}

void
listener_close(struct gateway *gw)
{
	struct conn *c;

	while ((c = gw->conns) != NULL) {
		gw->conns = c->next;
		free(c);
	}
	if (gw->router != NULL)
		zmq_close(gw->router);
	gw->router = NULL;
}

/*
 * The connection a frame came on, made on its first frame.  NULL: the key
 * has no name (cannot happen: ZAP admitted it) or no memory.
 */
static struct conn *
conn_of(struct gateway *gw, zmq_msg_t *rid, zmq_msg_t *frame)
{
	const char *user;
	struct conn *c, **pp, *last_client = NULL;
	size_t len = zmq_msg_size(rid), nclients = 0;
	struct peer *p;

	if (len == 0 || len > GW_RID_MAX)
		return NULL;
	for (pp = &gw->conns; (c = *pp) != NULL; pp = &c->next) {
		if (c->rid_len == len && memcmp(c->rid, zmq_msg_data(rid),
		    len) == 0)
			return c;
		if (c->peer < 0) {
			nclients++;
			last_client = c;
		}
	}
	if ((user = zmq_msg_gets(frame, "User-Id")) == NULL)
		return NULL;
	if (nclients >= CLIENTS_MAX && last_client != NULL) {
		for (pp = &gw->conns; *pp != last_client; pp = &(*pp)->next)
			continue;
		*pp = last_client->next;
		free(last_client);
	}
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	memcpy(c->rid, zmq_msg_data(rid), len);
	c->rid_len = len;
	c->peer = -1;
	if (strncmp(user, "peer:", 5) == 0) {
		snprintf(c->name, sizeof(c->name), "%s", user + 5);
		if ((p = peer_by_name(gw, c->name)) != NULL)
			c->peer = (int)p->slot;
	} else if (strncmp(user, "client:", 7) == 0)
		snprintf(c->name, sizeof(c->name), "%s", user + 7);
	c->next = gw->conns;
	gw->conns = c;
	return c;
}

/* A peer said HELLO on c: its older connections are over. */
static void
conn_drop_older(struct gateway *gw, const struct conn *keep)
{
	struct conn *c, **pp = &gw->conns;

	while ((c = *pp) != NULL) {
		if (c != keep && c->peer == keep->peer && c->peer >= 0) {
			*pp = c->next;
			free(c);
		} else
			pp = &c->next;
	}
}

int
listener_send(struct gateway *gw, const uint8_t *rid, size_t rid_len,
    const void *frame, size_t len)
{
	gw->router_used = true;
	if (zmq_send(gw->router, rid, rid_len, ZMQ_SNDMORE | ZMQ_DONTWAIT) ==
	    -1 || zmq_send(gw->router, frame, len, ZMQ_DONTWAIT) == -1) {
		gw_zsend_error("listener", gw->router);
		return -1;
	}
	return 0;
}

/* A frame refused: counted, answered, and past bad_frames, the end. */
static void
refuse(struct gateway *gw, struct conn *c, const char *addr, uint32_t code,
    const char *why)
{
	struct peer *p = c->peer >= 0 ? &gw->peers[c->peer] : NULL;

	gw->frames_refused++;
	c->bad++;
	if (c->bad <= 3 || c->bad == gw->ns->bad_frames)
		fprintf(stderr, "gateway: refused a frame from %s %s at %s: "
		    "%s (%llu refused so far)\n", p != NULL ? "peer" :
		    "client", c->name, addr, why,
		    (unsigned long long)gw->frames_refused);
	if (wire_error(&gw->tmp, code, why) == 0)
		(void)listener_send(gw, c->rid, c->rid_len, gw->tmp.p,
		    gw->tmp.len);
	if (c->bad >= gw->ns->bad_frames && !c->closed) {
		c->closed = true;
		fprintf(stderr, "gateway: %s %s at %s: %u bad frames: its "
		    "connection is ignored from now on\n", p != NULL ? "peer" :
		    "client", c->name, addr, c->bad);
	}
	status_changed(gw);
}

static void
hello(struct gateway *gw, struct conn *c, const char *addr,
    const struct wire_hello *h)
{
	struct wire_hello w;
	struct peer *p = c->peer >= 0 ? &gw->peers[c->peer] : NULL;

	if (strcmp(h->name, c->name) != 0) {
		refuse(gw, c, addr, WIRE_ERR_NAME, "HELLO's name is not the "
		    "name its key is listed under");
		return;
	}
	if (p != NULL) {
		if (h->session < p->rx_session) {
			c->closed = true;	/* an older connection */
			return;
		}
		if (p->rx_epoch != 0 && p->rx_epoch != h->epoch)
			fprintf(stderr, "gateway: peer %s restarted: epoch "
			    "%016llx, was %016llx\n", c->name,
			    (unsigned long long)h->epoch,
			    (unsigned long long)p->rx_epoch);
		p->rx_session = h->session;
		p->rx_epoch = h->epoch;
		conn_drop_older(gw, c);
	}
	c->hello = true;
	c->session = h->session;
	c->epoch = h->epoch;
	memset(&w, 0, sizeof(w));
	w.epoch = gw->epoch;
	w.session = h->session;
	w.max_frame = gw->ns->max_frame;
	snprintf(w.name, sizeof(w.name), "%s", gw->ns->name);
	if (wire_hello(&gw->tmp, WIRE_WELCOME, &w) == 0)
		(void)listener_send(gw, c->rid, c->rid_len, gw->tmp.p,
		    gw->tmp.len);
}

static void
handle(struct gateway *gw, struct conn *c, const char *addr,
    const uint8_t *data, size_t len)
{
	struct wire_frame f;
	struct peer *p = c->peer >= 0 ? &gw->peers[c->peer] : NULL;
	int rc;

	if ((rc = wire_decode(data, len, gw->ns->max_frame, &f)) < 0) {
		refuse(gw, c, addr, rc == WIRE_EVERSION ? WIRE_ERR_VERSION :
		    WIRE_ERR_BAD_FRAME, wire_strerror(rc));
		return;
	}
	if (f.type == WIRE_HELLO) {
		hello(gw, c, addr, &f.u.hello);
		return;
	}
	if (!c->hello) {
		refuse(gw, c, addr, WIRE_ERR_NO_HELLO, "a frame before HELLO");
		return;
	}
	if (p != NULL && c->session < p->rx_session)
		return;			/* a connection given up */
	switch (f.type) {
	case WIRE_PING:
		if (wire_ping(&gw->tmp, WIRE_PONG, f.u.nonce) == 0)
			(void)listener_send(gw, c->rid, c->rid_len, gw->tmp.p,
			    gw->tmp.len);
		if (p != NULL)
			peer_pinged(gw, p, gw_now());	/* beat with it */
		break;
	case WIRE_BATCH:
		if (p != NULL) {
			p->msgs_in += f.u.batch.count;
			p->bytes_in += len;
		}
		local_batch(gw, c, &f);
		break;
	default:
		refuse(gw, c, addr, WIRE_ERR_BAD_FRAME, "a frame only a "
		    "listener sends");
		break;
	}
}

/* Every frame waiting on the listener, up to RECV_ROUND. */
void
listener_recv(struct gateway *gw)
{
	zmq_msg_t rid, frame;
	const char *a;
	char addr[64];
	struct conn *c;
	int i;

	for (i = 0; i < RECV_ROUND; i++) {
		zmq_msg_init(&rid);
		if (zmq_msg_recv(&rid, gw->router, ZMQ_DONTWAIT) == -1) {
			zmq_msg_close(&rid);
			return;
		}
		zmq_msg_init(&frame);
		if (!zmq_msg_more(&rid) ||
		    zmq_msg_recv(&frame, gw->router, ZMQ_DONTWAIT) == -1) {
			zmq_msg_close(&frame);
			zmq_msg_close(&rid);
			continue;
		}
		a = zmq_msg_gets(&frame, "Peer-Address");
		snprintf(addr, sizeof(addr), "%s", a != NULL ? a : "?");
		c = conn_of(gw, &rid, &frame);
		if (zmq_msg_more(&frame)) {
			/* More than one part: never a frame of ours. */
			while (zmq_msg_more(&frame)) {
				zmq_msg_close(&frame);
				zmq_msg_init(&frame);
				if (zmq_msg_recv(&frame, gw->router,
				    ZMQ_DONTWAIT) == -1)
					break;
			}
			if (c != NULL && !c->closed)
				refuse(gw, c, addr, WIRE_ERR_BAD_FRAME,
				    "a message of more than one part");
		} else if (c != NULL && !c->closed)
			handle(gw, c, addr, zmq_msg_data(&frame),
			    zmq_msg_size(&frame));
		zmq_msg_close(&frame);
		zmq_msg_close(&rid);
	}
	gw->router_used = true;		/* more may wait: the next round */
}
