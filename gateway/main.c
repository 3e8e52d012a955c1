/*
 * main.c: actord-gateway's settings, keys and loop.  actord starts it as
 * /@gateway with the node block in ACTORD_NODE (supervisor/nodespec.c);
 * it reads its secret key (refusing one that others can read, as actord
 * already did), attaches to its mailbox, opens the ZAP handler, the
 * listener and one connection per peer, says it is ready, and runs one
 * loop until SIGTERM or a Stop:
 *
 *	take from the mailbox (at most GW_BATCH_TAKE), flush the batches,
 *	arm the doorbell, poll (the doorbell, every socket's ZMQ_FD) until
 *	the next deadline, handle what is ready, heartbeats and timeouts.
 *
 * An idle gateway wakes only for its heartbeats.  Exit status: 0 after a
 * stop, 1 when it cannot start (the reason is on stderr, in actord's log).
 *
 * Owns: struct gateway, the loop.  Must never block but in poll.
 */
#include <errno.h>
#include <poll.h>
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

/* What the loop waits on: the doorbell and every socket. */
enum source_kind { SRC_BELL, SRC_ROUTER, SRC_ZAP, SRC_DEALER, SRC_MONITOR };

struct source {
	enum source_kind kind;
	void		*sock;		/* NULL: the doorbell */
	struct peer	*peer;		/* of a dealer or a monitor */
	bool		*used;		/* look at it before sleeping */
};

static volatile sig_atomic_t	 stopping;

static void	 on_term(int);
static int	 setup(struct gateway *);
static int	 run(struct gateway *);
static size_t	 sources(struct gateway *, struct pollfd *, struct source *);
static bool	 has_input(void *);
static void	 handle(struct gateway *, const struct source *);
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
 * The loop's poll set: the doorbell first, then every socket by its
 * ZMQ_FD (no system call).  A socket's descriptor only says "look at
 * ZMQ_EVENTS": it fires when commands reach the socket, and a send or a
 * receive of ours may take that signal while a message waits; so a
 * socket is looked at when its descriptor fires or when the gateway used
 * it since its last look (its used flag), never otherwise.  zmq_poll
 * looked at every socket twice a wait, two system calls each: on an ask's
 * critical path, two waits a node, that was most of what the gateway
 * added to a round trip.
 */
static size_t
sources(struct gateway *gw, struct pollfd *fds, struct source *src)
{
	size_t i, n = 0;

	fds[n].fd = gw->bell;
	src[n++] = (struct source){ SRC_BELL, NULL, NULL, NULL };
	src[n++] = (struct source){ SRC_ROUTER, gw->router, NULL,
	    &gw->router_used };
	src[n++] = (struct source){ SRC_ZAP, gw->zap, NULL, &gw->zap_used };
	for (i = 0; i < gw->npeers; i++) {
		if (gw->peers[i].dealer == NULL)
			continue;
		src[n++] = (struct source){ SRC_DEALER, gw->peers[i].dealer,
		    &gw->peers[i], &gw->peers[i].dealer_used };
		src[n++] = (struct source){ SRC_MONITOR, gw->peers[i].monitor,
		    &gw->peers[i], &gw->peers[i].monitor_used };
	}
	for (i = 0; i < n; i++) {
		size_t len = sizeof(fds[i].fd);

		fds[i].events = POLLIN;
		fds[i].revents = 0;
		if (src[i].sock != NULL && zmq_getsockopt(src[i].sock, ZMQ_FD,
		    &fds[i].fd, &len) == -1)
			fds[i].fd = -1;		/* poll ignores it */
	}
	return n;
}

/* Does sock hold a message?  Takes its pending commands (and signal). */
static bool
has_input(void *sock)
{
	uint32_t ev = 0;
	size_t len = sizeof(ev);

	return zmq_getsockopt(sock, ZMQ_EVENTS, &ev, &len) == 0 &&
	    (ev & ZMQ_POLLIN) != 0;
}

static void
handle(struct gateway *gw, const struct source *s)
{
	switch (s->kind) {
	case SRC_ROUTER:
		listener_recv(gw);
		break;
	case SRC_ZAP:
		zap_handle(gw);
		break;
	case SRC_DEALER:
		peer_recv(gw, s->peer);
		break;
	case SRC_MONITOR:
		peer_monitor(gw, s->peer);
		break;
	default:
		break;
	}
}

/*
 * One wait and what it found.  busy: the mailbox has more; do not sleep.
 */
static int
poll_once(struct gateway *gw, bool busy)
{
	struct pollfd fds[POLL_MAX];
	struct source src[POLL_MAX];
	bool ready[POLL_MAX];
	int64_t now, deadline;
	long timeout;
	size_t i, n;
	int rc;

	n = sources(gw, fds, src);
	memset(ready, 0, sizeof(ready));
	for (i = 1; i < n; i++)
		if (*src[i].used) {
			*src[i].used = false;
			if ((ready[i] = has_input(src[i].sock)))
				busy = true;
		}
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
	rc = poll(fds, (nfds_t)n, (int)timeout);
	shm_doorbell_disarm(gw->arena, gw->idx, rc > 0 &&
	    (fds[0].revents & POLLIN) ? gw->bell : -1);
	if (rc == -1) {
		if (errno == EINTR)
			return 0;
		fprintf(stderr, "gateway: poll: %s\n", strerror(errno));
		return -1;
	}
	for (i = 1; rc > 0 && i < n; i++)
		if (fds[i].revents != 0 && !ready[i])
			ready[i] = has_input(src[i].sock);
	for (i = 1; i < n; i++)
		if (ready[i])
			handle(gw, &src[i]);
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
