/*
 * main.c: actord-gateway's settings, keys and loop.  actord starts it as
 * /@gateway with the node block in ACTORD_NODE (supervisor/nodespec.c);
 * it reads its secret key (refusing one that others can read, as actord
 * already did), attaches to its mailbox, opens the ZAP handler, the
 * listener and one connection per peer, says it is ready, and runs one
 * loop until SIGTERM or a Stop:
 *
 *	take from the mailbox (at most GW_BATCH_TAKE), flush the batches,
 *	arm the doorbell, zmq_poll (the doorbell, every socket) until the
 *	next deadline, handle what is ready, heartbeats and timeouts.
 *
 * An idle gateway wakes only for its heartbeats.  Exit status: 0 after a
 * stop, 1 when it cannot start (the reason is on stderr, in actord's log).
 *
 * Owns: struct gateway, the loop.  Must never block but in zmq_poll.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <zmq.h>

#include "gateway/gateway.h"
#include "shm/shm.h"
#include "supervisor/config.h"

#define POLL_MAX	(3 + 2 * REMOTE_PEERS_MAX)

static volatile sig_atomic_t	 stopping;

static void	 on_term(int);
static int	 setup(struct gateway *);
static int	 run(struct gateway *);
static int	 poll_once(struct gateway *, bool);

int64_t
gw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A socket that failed a send: said once per kind of failure. */
void
gw_zsend_error(const char *what, void *sock)
{
	(void)sock;
	if (errno != EAGAIN)
		fprintf(stderr, "gateway: %s: %s\n", what,
		    zmq_strerror(errno));
}

static void
on_term(int sig)
{
	(void)sig;
	stopping = 1;
}

static int
setup(struct gateway *gw)
{
	const char *text = getenv(GATEWAY_ENV_NODE);
	char err[512], pubz[KEY_Z85_LEN + 1];
	uint8_t sec[KEY_BYTES];

	if (text == NULL) {
		fprintf(stderr, "gateway: no %s: actord starts the gateway "
		    "of a node\n", GATEWAY_ENV_NODE);
		return -1;
	}
	if ((gw->ns = config_parse_node(text, GATEWAY_ENV_NODE, err,
	    sizeof(err))) == NULL) {
		fprintf(stderr, "gateway: %s\n", err);
		return -1;
	}
	if (gw->ns->npeers > REMOTE_PEERS_MAX) {
		fprintf(stderr, "gateway: more than %d peers\n",
		    REMOTE_PEERS_MAX);
		return -1;
	}
	if (key_file_read(gw->ns->secret_key_file, true, gw->secret, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "gateway: %s\n", err);
		return -1;
	}
	if (key_z85_decode(gw->secret, sec) == -1 ||
	    zmq_curve_public(pubz, gw->secret) != 0 ||
	    key_z85_decode(pubz, gw->pub) == -1) {
		fprintf(stderr, "gateway: %s: not a secret key\n",
		    gw->ns->secret_key_file);
		return -1;
	}
	explicit_bzero(sec, sizeof(sec));
	if (actor_attach(&gw->self, err, sizeof(err)) < 0) {
		fprintf(stderr, "gateway: %s\n", err);
		return -1;
	}
	gw->session = (uint64_t)time(NULL) << 20;
	if ((gw->zctx = zmq_ctx_new()) == NULL) {
		fprintf(stderr, "gateway: zmq_ctx_new: %s\n",
		    zmq_strerror(errno));
		return -1;
	}
	if (local_open(gw) == -1 || zap_open(gw) == -1 ||
	    listener_open(gw) == -1 || peers_open(gw) == -1)
		return -1;
	if (actor_ready(gw->self) < 0) {
		fprintf(stderr, "gateway: cannot say ready\n");
		return -1;
	}
	fprintf(stderr, "gateway: node %s, epoch %016llx, listening on %s, "
	    "%zu peers\n", gw->ns->name, (unsigned long long)gw->epoch,
	    gw->ns->listen, gw->npeers);
	return 0;
}

/*
 * One wait and what it found.  busy: the mailbox has more; do not sleep.
 */
static int
poll_once(struct gateway *gw, bool busy)
{
	zmq_pollitem_t items[POLL_MAX];
	int64_t now, deadline;
	long timeout;
	size_t i, n = 0;
	int rc;

	if (!busy && shm_doorbell_arm(gw->arena, gw->idx, SHM_LANES_ALL) != 0)
		busy = true;
	now = gw_now();
	deadline = peer_deadline(gw);
	if (gw->status_due != 0 && gw->status_due < deadline)
		deadline = gw->status_due;
	timeout = busy ? 0 : deadline <= now ? 0 :
	    (long)((deadline - now + 999999) / 1000000);
	if (gw->dirty && timeout > 1)
		timeout = 1;		/* a batch waits for ZeroMQ's room */
	memset(items, 0, sizeof(items));
	items[n].fd = gw->bell;
	items[n++].events = ZMQ_POLLIN;
	items[n].socket = gw->router;
	items[n++].events = ZMQ_POLLIN;
	items[n].socket = gw->zap;
	items[n++].events = ZMQ_POLLIN;
	for (i = 0; i < gw->npeers; i++) {
		items[n].socket = gw->peers[i].dealer;
		items[n++].events = ZMQ_POLLIN;
		items[n].socket = gw->peers[i].monitor;
		items[n++].events = ZMQ_POLLIN;
	}
	rc = zmq_poll(items, (int)n, timeout);
	shm_doorbell_disarm(gw->arena, gw->idx, gw->bell);
	if (rc == -1) {
		if (errno == EINTR)
			return 0;
		fprintf(stderr, "gateway: zmq_poll: %s\n", zmq_strerror(errno));
		return -1;
	}
	if (items[1].revents & ZMQ_POLLIN)
		listener_recv(gw);
	if (items[2].revents & ZMQ_POLLIN)
		zap_handle(gw);
	for (i = 0; i < gw->npeers; i++) {
		if (items[3 + 2 * i].revents & ZMQ_POLLIN)
			peer_recv(gw, &gw->peers[i]);
		if (items[4 + 2 * i].revents & ZMQ_POLLIN)
			peer_monitor(gw, &gw->peers[i]);
	}
	now = gw_now();
	peer_tick(gw, now);
	status_commit(gw, now);
	return 0;
}

static int
run(struct gateway *gw)
{
	int more;

	while (!stopping && !gw->stop) {
		if ((more = local_take(gw)) < 0)
			return -1;
		peers_flush(gw);
		if (poll_once(gw, more > 0) == -1)
			return -1;
		peers_flush(gw);
	}
	return 0;
}

int
main(void)
{
	struct gateway gw;
	struct sigaction sa;
	int rc;

	memset(&gw, 0, sizeof(gw));
	gw.bell = -1;
	setvbuf(stderr, NULL, _IOLBF, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	(void)sigaction(SIGPIPE, &sa, NULL);
	if (setup(&gw) == -1)
		return 1;
	rc = run(&gw);
	peers_close(&gw);
	listener_close(&gw);
	local_close(&gw);
	if (gw.zap != NULL)
		zmq_close(gw.zap);
	if (gw.zctx != NULL)
		zmq_ctx_term(gw.zctx);
	explicit_bzero(gw.secret, sizeof(gw.secret));
	free(gw.status_text);
	node_spec_free(gw.ns);
	return rc == 0 ? 0 : 1;
}
