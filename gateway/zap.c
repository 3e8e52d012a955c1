/*
 * zap.c: the ZAP handler (ZeroMQ RFC 27) of the listener.  libzmq asks it,
 * during each CurveZMQ handshake, whether the client's public key may
 * connect: it may only if the node block lists it among its peers or its
 * clients.  An admitted key gets its name as the User-Id, which the
 * listener reads on every frame (so a HELLO cannot claim another name);
 * an unknown key is refused (status 400), logged with the address it came
 * from, and counted.
 *
 * Owns: the admission rule.  Must never admit a key that is not listed,
 * nor block: it answers each request as it comes, in the loop.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <zmq.h>

#include "gateway/gateway.h"

#define ZAP_PARTS	7	/* version .. the CURVE key */

static const struct peer_spec *admitted(struct gateway *, const uint8_t *,
		    bool *);
static int	 reply(struct gateway *, zmq_msg_t *, const char *,
		    const char *, const char *);

int
zap_open(struct gateway *gw)
{
	int linger = 0;

	if ((gw->zap = zmq_socket(gw->zctx, ZMQ_REP)) == NULL ||
	    zmq_setsockopt(gw->zap, ZMQ_LINGER, &linger, sizeof(linger)) ==
	    -1 || zmq_bind(gw->zap, GW_ZAP_ENDPOINT) == -1) {
		fprintf(stderr, "gateway: ZAP handler: %s\n",
		    zmq_strerror(errno));
		return -1;
	}
	gw->zap_used = true;		/* the loop's first round looks */
	return 0;
}

/* The listed key, and whether it is a peer's; NULL if none lists it. */
static const struct peer_spec *
admitted(struct gateway *gw, const uint8_t *key, bool *is_peer)
{
	const struct node_spec *ns = gw->ns;
	uint8_t k[KEY_BYTES];
	size_t i;

	for (i = 0; i < gw->npeers; i++)
		if (memcmp(gw->peers[i].pub, key, KEY_BYTES) == 0) {
			*is_peer = true;
			return gw->peers[i].spec;
		}
	for (i = 0; i < ns->nclients; i++)
		if (key_z85_decode(ns->clients[i].public_key, k) == 0 &&
		    memcmp(k, key, KEY_BYTES) == 0) {
			*is_peer = false;
			return &ns->clients[i];
		}
	return NULL;
}

static int
reply(struct gateway *gw, zmq_msg_t *id, const char *status,
    const char *text, const char *user)
{
	const char *parts[6] = { "1.0", NULL, status, text, user, "" };
	int i;

	gw->zap_used = true;
	if (zmq_send(gw->zap, "1.0", 3, ZMQ_SNDMORE) == -1 ||
	    zmq_send(gw->zap, zmq_msg_data(id),
	    zmq_msg_size(id), ZMQ_SNDMORE) == -1)
		return -1;
	for (i = 2; i < 6; i++)
		if (zmq_send(gw->zap, parts[i], strlen(parts[i]),
		    i < 5 ? ZMQ_SNDMORE : 0) == -1)
			return -1;
	return 0;
}

/*
 * One request: version, request id, domain, address, identity,
 * mechanism, then the mechanism's credentials (CURVE: the client's key).
 */
void
zap_handle(struct gateway *gw)
{
	zmq_msg_t part[ZAP_PARTS + 1];
	const struct peer_spec *who = NULL;
	char addr[64], user[WIRE_NAME_MAX + 8];
	bool is_peer = false, ok = false;
	int n = 0, more;
	size_t i, len;

	gw->zap_used = true;		/* one request a call: more may wait */
	for (;;) {
		if (n > ZAP_PARTS) {
			zmq_msg_close(&part[n - 1]);	/* extra parts */
			n--;
		}
		zmq_msg_init(&part[n]);
		if (zmq_msg_recv(&part[n], gw->zap, ZMQ_DONTWAIT) == -1) {
			zmq_msg_close(&part[n]);
			break;
		}
		more = zmq_msg_more(&part[n]);
		n++;
		if (!more)
			break;
	}
	if (n < 2)
		goto out;
	if (n == ZAP_PARTS && zmq_msg_size(&part[5]) == 5 &&
	    memcmp(zmq_msg_data(&part[5]), "CURVE", 5) == 0 &&
	    zmq_msg_size(&part[6]) == KEY_BYTES &&
	    (who = admitted(gw, zmq_msg_data(&part[6]), &is_peer)) != NULL)
		ok = true;
	len = zmq_msg_size(&part[3]) < sizeof(addr) - 1 ?
	    zmq_msg_size(&part[3]) : sizeof(addr) - 1;
	memcpy(addr, n > 3 ? zmq_msg_data(&part[3]) : "", n > 3 ? len : 0);
	addr[n > 3 ? len : 0] = '\0';
	if (ok) {
		snprintf(user, sizeof(user), "%s:%s", is_peer ? "peer" :
		    "client", who->name);
		(void)reply(gw, &part[1], "200", "OK", user);
	} else {
		char z85[KEY_Z85_LEN + 1] = "?";

		if (n == ZAP_PARTS && zmq_msg_size(&part[6]) == KEY_BYTES)
			key_z85_encode(zmq_msg_data(&part[6]), z85);
		gw->keys_refused++;
		fprintf(stderr, "gateway: refused unknown key %s from %s "
		    "(%llu refused so far)\n", z85, addr,
		    (unsigned long long)gw->keys_refused);
		(void)reply(gw, &part[1], "400", "unknown key", "");
		status_changed(gw);
	}
out:
	for (i = 0; i < (size_t)n; i++)
		zmq_msg_close(&part[i]);
}
