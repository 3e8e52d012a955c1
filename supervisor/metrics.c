/*
 * metrics.c: statistics in the Prometheus text exposition format
 * (version 0.0.4: HELP and TYPE lines, histograms as _bucket/_sum/_count
 * with cumulative buckets), and a minimal HTTP/1.x server for GET /metrics.
 *
 * It owns the listener's inner epoll descriptor, its connections and its
 * timerfd.  It must never block, never keep a connection past
 * METRICS_TIMEOUT, never read more than METRICS_MAX_REQUEST bytes of a
 * request, and never answer anything but GET /metrics with a 200.
 */
#include <sys/epoll.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/timerfd.h>

#include <netinet/in.h>

#include <errno.h>
#include <netdb.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/log.h"
#include "supervisor/metrics.h"
#include "supervisor/nodestatus.h"

enum mev_kind { MEV_LISTEN, MEV_TIMER, MEV_CONN };

struct mconn {
	enum mev_kind	 kind;		/* first: see struct mev */
	struct metrics_http *m;
	int		 fd;
	char		 in[METRICS_MAX_REQUEST];
	size_t		 inlen;
	struct ctl_reply *reply;	/* while the backend works */
	struct ctl_buf	 out;
	size_t		 outoff;
	bool		 writing;
	uint64_t	 deadline;
	TAILQ_ENTRY(mconn) entry;
};

struct mev {
	enum mev_kind	 kind;
};

struct metrics_http {
	int		 epfd;
	int		 listen_fd;
	int		 timer_fd;
	int		 port;
	struct mev	 listen_ev;
	struct mev	 timer_ev;
	unsigned	 nconns;
	bool		 paused;	/* out of descriptors: listener rests */
	uint64_t	 resume;	/* ms, monotonic */
	const struct ctl_backend *be;
	void		*ctx;
	const struct ctl_counters *ctr;
	TAILQ_HEAD(, mconn) conns;
};

static uint64_t	 mnow(void);
static void	 put_family(struct ctl_buf *, const char *, const char *,
		    const char *);
static void	 put_label(struct ctl_buf *, const char *);
static void	 put_nodes(struct ctl_buf *, const void *, size_t);
static void	 put_hist(struct ctl_buf *, const char *,
		    const struct ctl_response *, size_t);
static void	 m_accept(struct metrics_http *);
static void	 m_read(struct metrics_http *, struct mconn *);
static void	 m_answer(struct mconn *, int, const char *, const char *,
		    const char *, size_t, bool);
static void	 m_write(struct metrics_http *, struct mconn *);
static void	 m_close(struct metrics_http *, struct mconn *);
static void	 m_stats_done(struct ctl_reply *, void *);
static void	 m_arm(struct metrics_http *);

/* --- the text format ----------------------------------------------------- */

static void
put_family(struct ctl_buf *b, const char *name, const char *type,
    const char *help)
{
	ctl_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
	    type);
}

/* A label value, escaped as the exposition format says. */
static void
put_label(struct ctl_buf *b, const char *s)
{
	ctl_buf_add(b, "\"", 1);
	for (; *s != '\0'; s++) {
		if (*s == '\\')
			ctl_buf_add(b, "\\\\", 2);
		else if (*s == '"')
			ctl_buf_add(b, "\\\"", 2);
		else if (*s == '\n')
			ctl_buf_add(b, "\\n", 2);
		else
			ctl_buf_add(b, s, 1);
	}
	ctl_buf_add(b, "\"", 1);
}

/* which: 0 mailbox wait, 1 handler duration. */
static void
put_hist(struct ctl_buf *b, const char *name, const struct ctl_response *r,
    size_t which)
{
	const struct ctl_hist	*h;
	uint64_t		 cum;
	size_t			 i;
	uint32_t		 j;

	for (i = 0; i < r->nactors; i++) {
		h = which == 0 ? &r->actors[i].wait : &r->actors[i].handle;
		for (cum = 0, j = 0; j < h->nbuckets; j++) {
			cum += h->count[j];
			ctl_buf_printf(b, "%s_bucket{path=", name);
			put_label(b, r->actors[i].path);
			ctl_buf_printf(b, ",le=\"%g\"} %llu\n",
			    (double)h->le_us[j] / 1e6, (unsigned long long)cum);
		}
		ctl_buf_printf(b, "%s_bucket{path=", name);
		put_label(b, r->actors[i].path);
		ctl_buf_printf(b, ",le=\"+Inf\"} %llu\n",
		    (unsigned long long)h->total);
		ctl_buf_printf(b, "%s_sum{path=", name);
		put_label(b, r->actors[i].path);
		ctl_buf_printf(b, "} %.6f\n", (double)h->sum_us / 1e6);
		ctl_buf_printf(b, "%s_count{path=", name);
		put_label(b, r->actors[i].path);
		ctl_buf_printf(b, "} %llu\n", (unsigned long long)h->total);
	}
}

#define ACTOR_U64(r, field)	offsetof(struct ctl_actor_stats, field)

static const struct {
	const char	*name;
	const char	*type;
	const char	*help;
	size_t		 off;
} actor_series[] = {
	{ "actord_mailbox_depth", "gauge", "Messages queued in the mailbox.",
	    ACTOR_U64(r, depth) },
	{ "actord_mailbox_capacity", "gauge", "Cells in the mailbox ring.",
	    ACTOR_U64(r, capacity) },
	{ "actord_restarts_total", "counter", "Restarts of the actor.",
	    ACTOR_U64(r, restarts) },
	{ "actord_messages_sent_total", "counter",
	    "Messages sent to the actor (enqueued in its mailbox).",
	    ACTOR_U64(r, sent) },
	{ "actord_messages_received_total", "counter",
	    "Messages the actor received.", ACTOR_U64(r, received) },
	{ "actord_messages_dropped_total", "counter",
	    "Messages dropped by the mailbox overflow policy.",
	    ACTOR_U64(r, dropped) },
	{ "actord_messages_deadlettered_total", "counter",
	    "Messages to the actor that became dead letters.",
	    ACTOR_U64(r, deadlettered) },
	{ "actord_asks_failed_total", "counter",
	    "Asks to the actor that failed at once because it was down "
	    "(counted here, not dead letters).", ACTOR_U64(r, asks_failed) },
	{ "actord_messages_replaced_total", "counter",
	    "Queued tells replaced by a newer one with the same key "
	    "(overflow coalesce; not dead letters).", ACTOR_U64(r, replaced) },
};

static const struct {
	const char	*reason;
	size_t		 off;
} refusals[] = {
	{ "permission", offsetof(struct ctl_counters, refused_perm) },
	{ "busy", offsetof(struct ctl_counters, refused_busy) },
	{ "malformed", offsetof(struct ctl_counters, malformed) },
	{ "truncated", offsetof(struct ctl_counters, truncated) },
	{ "oversized", offsetof(struct ctl_counters, oversized) },
	{ "bad_version", offsetof(struct ctl_counters, bad_version) },
	{ "unknown_command", offsetof(struct ctl_counters, unknown_command) },
	{ "timeout", offsetof(struct ctl_counters, timeouts) },
};

#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/* A node's peers (nodestatus.h), one series each, labelled by peer. */
static const struct {
	const char	*name;
	const char	*type;
	const char	*help;
	size_t		 off;
} peer_series[] = {
	{ "actord_peer_messages_sent_total", "counter",
	  "Messages sent to the peer node.",
	  offsetof(struct nodestatus_peer, msgs_out) },
	{ "actord_peer_messages_received_total", "counter",
	  "Messages received from the peer node.",
	  offsetof(struct nodestatus_peer, msgs_in) },
	{ "actord_peer_bytes_sent_total", "counter",
	  "Bytes of frames sent to the peer node.",
	  offsetof(struct nodestatus_peer, bytes_out) },
	{ "actord_peer_bytes_received_total", "counter",
	  "Bytes of frames received from the peer node.",
	  offsetof(struct nodestatus_peer, bytes_in) },
	{ "actord_peer_dropped_total", "counter",
	  "Messages for the peer node that became dead letters.",
	  offsetof(struct nodestatus_peer, dropped) },
	{ "actord_peer_refused_total", "counter",
	  "Handshakes the peer node refused.",
	  offsetof(struct nodestatus_peer, refused) },
	{ "actord_peer_downs_total", "counter",
	  "Times the peer node was declared down.",
	  offsetof(struct nodestatus_peer, downs) },
};

static void
put_nodes(struct ctl_buf *b, const void *text, size_t len)
{
	struct nodestatus_self self;
	struct nodestatus_peer *p;
	size_t n, i, k;

	if (nodestatus_parse(text, len, &self, &p, &n) == -1)
		return;
	put_family(b, "actord_node_keys_refused_total", "counter",
	    "Connections refused for a key the node block does not list.");
	ctl_buf_printf(b, "actord_node_keys_refused_total %llu\n",
	    self.keys_refused);
	put_family(b, "actord_node_frames_refused_total", "counter",
	    "Frames from peers or clients refused as malformed or too large.");
	ctl_buf_printf(b, "actord_node_frames_refused_total %llu\n",
	    self.frames_refused);
	put_family(b, "actord_peer_up", "gauge",
	    "1 if the peer node is up, 0 if it is connecting or down.");
	for (i = 0; i < n; i++) {
		ctl_buf_printf(b, "actord_peer_up{peer=");
		put_label(b, p[i].name);
		ctl_buf_printf(b, "} %d\n", strcmp(p[i].state, "up") == 0);
	}
	put_family(b, "actord_peer_queued", "gauge",
	    "Messages waiting in the send queue of the peer node.");
	for (i = 0; i < n; i++) {
		ctl_buf_printf(b, "actord_peer_queued{peer=");
		put_label(b, p[i].name);
		ctl_buf_printf(b, "} %u\n", p[i].queued);
	}
	for (k = 0; k < NELEM(peer_series); k++) {
		put_family(b, peer_series[k].name, peer_series[k].type,
		    peer_series[k].help);
		for (i = 0; i < n; i++) {
			ctl_buf_printf(b, "%s{peer=", peer_series[k].name);
			put_label(b, p[i].name);
			ctl_buf_printf(b, "} %llu\n", *(const unsigned long long *)
			    (const void *)((const char *)&p[i] +
			    peer_series[k].off));
		}
	}
	free(p);
}

/* The whole exposition of a decoded stats answer.  -1 if buf failed. */
int
metrics_write(struct ctl_buf *b, const struct ctl_response *r)
{
	const struct ctl_counters *c = &r->control;
	size_t	 i, k;
	uint32_t j;

	for (k = 0; k < NELEM(actor_series); k++) {
		if (r->nactors == 0)
			break;
		put_family(b, actor_series[k].name, actor_series[k].type,
		    actor_series[k].help);
		for (i = 0; i < r->nactors; i++) {
			ctl_buf_printf(b, "%s{path=", actor_series[k].name);
			put_label(b, r->actors[i].path);
			ctl_buf_printf(b, "} %llu\n", (unsigned long long)
			    *(const uint64_t *)(const void *)
			    ((const char *)&r->actors[i] + actor_series[k].off));
		}
	}
	if (r->nactors > 0) {
		put_family(b, "actord_mailbox_wait_seconds", "histogram",
		    "Time a message waited in the mailbox before the actor "
		    "took it.");
		put_hist(b, "actord_mailbox_wait_seconds", r, 0);
		/* Only when measured: actord leaves it empty (no buckets). */
		for (i = 0; i < r->nactors; i++)
			if (r->actors[i].handle.nbuckets > 0)
				break;
		if (i < r->nactors) {
			put_family(b, "actord_handler_duration_seconds",
			    "histogram", "Time spent handling one message.");
			put_hist(b, "actord_handler_duration_seconds", r, 1);
		}
	}
	if (r->ngroups > 0) {
		put_family(b, "actord_shard_messages_total", "counter",
		    "Messages routed to each shard of a shard group.");
		for (i = 0; i < r->ngroups; i++)
			for (j = 0; j < r->groups[i].nshards; j++) {
				ctl_buf_printf(b,
				    "actord_shard_messages_total{group=");
				put_label(b, r->groups[i].name);
				ctl_buf_printf(b, ",shard=\"%u\"} %llu\n", j,
				    (unsigned long long)r->groups[i].count[j]);
			}
	}
	if (r->has_data)
		put_nodes(b, r->data, r->datalen);
	if (r->has_control) {
		put_family(b, "actord_control_connections_total", "counter",
		    "Connections accepted on the control socket.");
		ctl_buf_printf(b, "actord_control_connections_total %llu\n",
		    (unsigned long long)c->accepted);
		put_family(b, "actord_control_requests_total", "counter",
		    "Well-formed control requests.");
		ctl_buf_printf(b, "actord_control_requests_total %llu\n",
		    (unsigned long long)c->requests);
		put_family(b, "actord_control_refused_total", "counter",
		    "Control connections or requests refused, by reason.");
		for (k = 0; k < NELEM(refusals); k++)
			ctl_buf_printf(b, "actord_control_refused_total"
			    "{reason=\"%s\"} %llu\n", refusals[k].reason,
			    (unsigned long long)*(const uint64_t *)(const void *)
			    ((const char *)c + refusals[k].off));
		put_family(b, "actord_control_evicted_total", "counter",
		    "Idle control connections closed to make room.");
		ctl_buf_printf(b, "actord_control_evicted_total %llu\n",
		    (unsigned long long)c->evicted);
		put_family(b, "actord_control_clients", "gauge",
		    "Clients connected to the control socket.");
		ctl_buf_printf(b, "actord_control_clients %llu\n",
		    (unsigned long long)c->clients);
	}
	return b->err ? -1 : 0;
}

/* --- the HTTP listener --------------------------------------------------- */

static uint64_t
mnow(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
m_epoll(struct metrics_http *m, int op, int fd, uint32_t events, void *ptr)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = events;
	ev.data.ptr = ptr;
	return epoll_ctl(m->epfd, op, fd, &ev);
}

/* listen is "HOST:PORT" or "[V6HOST]:PORT", numeric only: no DNS here. */
struct metrics_http *
metrics_open(const char *listen_addr, const struct ctl_backend *be, void *ctx,
    const struct ctl_counters *ctr, char *err, size_t errlen)
{
	struct metrics_http	*m;
	struct addrinfo		 hints, *ai = NULL;
	struct sockaddr_storage	 ss;
	socklen_t		 sslen = sizeof(ss);
	char			 host[128], *port;
	int			 rc, one = 1;

	if (strlen(listen_addr) >= sizeof(host)) {
		snprintf(err, errlen, "metrics_listen %s: too long", listen_addr);
		return NULL;
	}
	strcpy(host, listen_addr);
	if ((port = strrchr(host, ':')) == NULL) {
		snprintf(err, errlen, "metrics_listen %s: expected HOST:PORT",
		    listen_addr);
		return NULL;
	}
	*port++ = '\0';
	memmove(host, host[0] == '[' ? host + 1 : host, strlen(host) + 1);
	if (host[0] != '\0' && host[strlen(host) - 1] == ']')
		host[strlen(host) - 1] = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	if ((rc = getaddrinfo(host, port, &hints, &ai)) != 0) {
		snprintf(err, errlen, "metrics_listen %s: %s", listen_addr,
		    gai_strerror(rc));
		return NULL;
	}
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		freeaddrinfo(ai);
		snprintf(err, errlen, "metrics: %s", strerror(errno));
		return NULL;
	}
	TAILQ_INIT(&m->conns);
	m->listen_ev.kind = MEV_LISTEN;
	m->timer_ev.kind = MEV_TIMER;
	m->be = be;
	m->ctx = ctx;
	m->ctr = ctr;
	m->epfd = epoll_create1(EPOLL_CLOEXEC);
	m->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	m->listen_fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (m->epfd == -1 || m->timer_fd == -1 || m->listen_fd == -1 ||
	    setsockopt(m->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one,
	    sizeof(one)) == -1 ||
	    bind(m->listen_fd, ai->ai_addr, ai->ai_addrlen) == -1 ||
	    listen(m->listen_fd, 16) == -1 ||
	    getsockname(m->listen_fd, (struct sockaddr *)&ss, &sslen) == -1 ||
	    m_epoll(m, EPOLL_CTL_ADD, m->listen_fd, EPOLLIN, &m->listen_ev) ||
	    m_epoll(m, EPOLL_CTL_ADD, m->timer_fd, EPOLLIN, &m->timer_ev)) {
		snprintf(err, errlen, "metrics_listen %s: %s", listen_addr,
		    strerror(errno));
		freeaddrinfo(ai);
		metrics_close(m);
		return NULL;
	}
	freeaddrinfo(ai);
	m->port = ntohs(ss.ss_family == AF_INET6 ?
	    ((struct sockaddr_in6 *)&ss)->sin6_port :
	    ((struct sockaddr_in *)&ss)->sin_port);
	return m;
}

int
metrics_fd(const struct metrics_http *m)
{
	return m->epfd;
}

int
metrics_port(const struct metrics_http *m)
{
	return m->port;
}

void
metrics_close(struct metrics_http *m)
{
	struct mconn *mc;

	if (m == NULL)
		return;
	while ((mc = TAILQ_FIRST(&m->conns)) != NULL)
		m_close(m, mc);
	if (m->listen_fd != -1)
		close(m->listen_fd);
	if (m->timer_fd != -1)
		close(m->timer_fd);
	if (m->epfd != -1)
		close(m->epfd);
	free(m);
}

void
metrics_dispatch(struct metrics_http *m)
{
	struct epoll_event	 evs[16];
	struct mev		*ev;
	struct mconn		*mc, *next;
	uint64_t		 ticks, now;
	int			 i, n;

	n = epoll_wait(m->epfd, evs, 16, 0);
	for (i = 0; i < n; i++) {
		ev = evs[i].data.ptr;
		if (ev->kind == MEV_LISTEN)
			m_accept(m);
		else if (ev->kind == MEV_TIMER)
			(void)!read(m->timer_fd, &ticks, sizeof(ticks));
		else {
			mc = (struct mconn *)(void *)ev;
			if (mc->reply != NULL) {
				if (evs[i].events & (EPOLLRDHUP | EPOLLHUP |
				    EPOLLERR))
					m_close(m, mc);
			} else if (mc->writing)
				m_write(m, mc);
			else
				m_read(m, mc);
		}
	}
	now = mnow();
	for (mc = TAILQ_FIRST(&m->conns); mc != NULL; mc = next) {
		next = TAILQ_NEXT(mc, entry);
		if (mc->deadline != 0 && mc->deadline <= now)
			m_close(m, mc);
	}
	if (m->paused && m->resume <= now && m_epoll(m, EPOLL_CTL_ADD,
	    m->listen_fd, EPOLLIN, &m->listen_ev) == 0)
		m->paused = false;
	m_arm(m);
}

static void
m_arm(struct metrics_http *m)
{
	struct itimerspec	 its;
	struct mconn		*mc;
	uint64_t		 next = 0;

	TAILQ_FOREACH(mc, &m->conns, entry)
		if (mc->deadline != 0 && (next == 0 || mc->deadline < next))
			next = mc->deadline;
	if (m->paused && (next == 0 || m->resume < next))
		next = m->resume;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = next / 1000;
	its.it_value.tv_nsec = (next % 1000) * 1000000;
	timerfd_settime(m->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void
m_accept(struct metrics_http *m)
{
	struct mconn	*mc;
	int		 fd;

	while ((fd = accept4(m->listen_fd, NULL, NULL,
	    SOCK_NONBLOCK | SOCK_CLOEXEC)) != -1) {
		if (m->nconns >= METRICS_MAX_CLIENTS ||
		    (mc = calloc(1, sizeof(*mc))) == NULL) {
			static const char busy[] = "HTTP/1.0 503 Service "
			    "Unavailable\r\nContent-Length: 0\r\n"
			    "Connection: close\r\n\r\n";

			(void)!send(fd, busy, sizeof(busy) - 1,
			    MSG_DONTWAIT | MSG_NOSIGNAL);
			close(fd);
			continue;
		}
		mc->kind = MEV_CONN;
		mc->m = m;
		mc->fd = fd;
		mc->deadline = mnow() + METRICS_TIMEOUT;
		ctl_buf_init(&mc->out, CTL_MAX_RESPONSE);
		if (m_epoll(m, EPOLL_CTL_ADD, fd, EPOLLIN, mc) == -1) {
			close(fd);
			free(mc);
			continue;
		}
		TAILQ_INSERT_TAIL(&m->conns, mc, entry);
		m->nconns++;
	}
	if (errno == EMFILE || errno == ENFILE) {
		/* The pending connection would wake us for ever: rest. */
		log_warnx("metrics: out of descriptors, not accepting for "
		    "%d ms", METRICS_PAUSE);
		epoll_ctl(m->epfd, EPOLL_CTL_DEL, m->listen_fd, NULL);
		m->paused = true;
		m->resume = mnow() + METRICS_PAUSE;
	}
}

static void
m_read(struct metrics_http *m, struct mconn *mc)
{
	struct ctl_request	 q;
	struct ctl_reply	*r;
	char			*eol, *sp1, *sp2, *qm;
	ssize_t			 n;

	n = recv(mc->fd, mc->in + mc->inlen, sizeof(mc->in) - 1 - mc->inlen, 0);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		m_close(m, mc);
		return;
	}
	mc->inlen += n;
	mc->in[mc->inlen] = '\0';
	if (strstr(mc->in, "\r\n\r\n") == NULL &&
	    strstr(mc->in, "\n\n") == NULL) {
		if (mc->inlen >= sizeof(mc->in) - 1)
			m_answer(mc, 431, "Request Header Fields Too Large",
			    NULL, "request too large\n", 18, true);
		return;
	}
	/* The request line: METHOD SP TARGET SP HTTP/1.x */
	eol = strpbrk(mc->in, "\r\n");
	*eol = '\0';
	sp1 = strchr(mc->in, ' ');
	sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (sp1 == NULL || sp2 == NULL || strncmp(sp2 + 1, "HTTP/1.", 7) != 0) {
		m_answer(mc, 400, "Bad Request", NULL, "bad request\n", 12, true);
		return;
	}
	*sp1 = *sp2 = '\0';
	if ((qm = strchr(sp1 + 1, '?')) != NULL)
		*qm = '\0';
	if (strcmp(mc->in, "GET") != 0) {
		m_answer(mc, 405, "Method Not Allowed", "Allow: GET\r\n",
		    "only GET\n", 9, true);
		return;
	}
	if (strcmp(sp1 + 1, "/metrics") != 0) {
		m_answer(mc, 404, "Not Found", NULL, "try /metrics\n", 13, true);
		return;
	}
	if ((r = mc->reply = ctl_reply_new(CTL_CMD_STATS, m_stats_done, mc)) ==
	    NULL) {
		m_answer(mc, 500, "Internal Server Error", NULL, "", 0, true);
		return;
	}
	if (m->ctr != NULL)
		ctl_reply_counters(mc->reply, m->ctr);
	memset(&q, 0, sizeof(q));
	q.cmd = CTL_CMD_STATS;
	m_epoll(m, EPOLL_CTL_MOD, mc->fd, EPOLLRDHUP, mc);
	mc->deadline = 0;
	/* mc->reply is cleared (and r freed) once the reply is done. */
	if (ctl_backend_call(m->be, m->ctx, &q, r) == CTL_REPLY_NOW &&
	    mc->reply == r)
		ctl_reply_finish(r);
}

/* The backend finished the stats: render them, or a 500 with the error. */
static void
m_stats_done(struct ctl_reply *r, void *arg)
{
	struct mconn		*mc = arg;
	const struct ctl_buf	*f = ctl_reply_frame(r);
	struct ctl_response	 resp;
	struct ctl_buf		 text;
	char			 err[256];

	mc->reply = NULL;
	ctl_buf_init(&text, CTL_MAX_RESPONSE);
	if (ctl_response_decode(f->data, f->len, &resp, err, sizeof(err)) == -1)
		m_answer(mc, 500, "Internal Server Error", NULL, err,
		    strlen(err), false);
	else if (resp.status != CTL_OK)
		m_answer(mc, 500, "Internal Server Error", NULL, resp.error,
		    strlen(resp.error), false);
	else if (metrics_write(&text, &resp) == -1)
		m_answer(mc, 500, "Internal Server Error", NULL, "too large\n",
		    10, false);
	else
		m_answer(mc, 200, "OK", "Content-Type: text/plain; "
		    "version=0.0.4; charset=utf-8\r\n", (const char *)text.data,
		    text.len, false);
	ctl_response_free(&resp);
	ctl_buf_free(&text);
	ctl_reply_free(r);
}

/*
 * Queue a whole answer; write it now when called from the connection's
 * own event, else on EPOLLOUT (so no pending event names a freed conn).
 */
static void
m_answer(struct mconn *mc, int code, const char *reason, const char *hdrs,
    const char *body, size_t len, bool now)
{
	ctl_buf_reset(&mc->out);
	ctl_buf_printf(&mc->out, "HTTP/1.0 %d %s\r\n%sContent-Length: %zu\r\n"
	    "Connection: close\r\n\r\n", code, reason, hdrs ? hdrs : "", len);
	ctl_buf_add(&mc->out, body, len);
	mc->writing = true;
	mc->outoff = 0;
	mc->deadline = mnow() + METRICS_TIMEOUT;
	if (now)
		m_write(mc->m, mc);
	else {
		m_epoll(mc->m, EPOLL_CTL_MOD, mc->fd, EPOLLOUT, mc);
		m_arm(mc->m);
	}
}

static void
m_write(struct metrics_http *m, struct mconn *mc)
{
	ssize_t n;

	while (mc->outoff < mc->out.len) {
		n = send(mc->fd, mc->out.data + mc->outoff,
		    mc->out.len - mc->outoff, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == -1 && errno == EAGAIN) {
			m_epoll(m, EPOLL_CTL_MOD, mc->fd, EPOLLOUT, mc);
			return;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			break;
		mc->outoff += n;
	}
	m_close(m, mc);
}

static void
m_close(struct metrics_http *m, struct mconn *mc)
{
	if (mc->reply != NULL) {
		if (m->be->cancel != NULL)
			m->be->cancel(m->ctx, mc->reply);
		ctl_reply_free(mc->reply);
	}
	epoll_ctl(m->epfd, EPOLL_CTL_DEL, mc->fd, NULL);
	close(mc->fd);
	ctl_buf_free(&mc->out);
	TAILQ_REMOVE(&m->conns, mc, entry);
	m->nconns--;
	free(mc);
}
