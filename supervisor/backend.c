/*
 * backend.c: the control socket (control.c) and the metrics listener
 * (metrics.c) of a running actord, answered from the real supervision
 * tree: struct ctl_backend implemented over the actord API (api.c,
 * reload.c, output.c) and the shared-memory arena (shm/shm.h) for send,
 * dead letters and statistics.
 *
 * It owns the listening descriptors' places in actord's loop, the replies
 * it has deferred (a restart waiting for the new incarnation, log -f and
 * deadletters -f followers) and actord's one producer slot in the arena.
 * It must never decide what a command does to the tree beyond the OTP
 * result rules below (api.c and sup.c do the work), never block (a send
 * to a full mailbox fails at once) and never tick while idle: the only
 * timer, for deadletters -f, runs while a follower waits.
 *
 * Result rules (actorctl(8)): start of a running child fails "running",
 * of one in a restart loop "restarting"; stop of a stopped child
 * succeeds; remove of a running or restarting child fails, of a gone one
 * "no such path"; add of an existing path fails "exists, running" or
 * "exists, not running"; a failed manual start answers the real cause.
 *
 * The read-once rule (shm/shm.h): the arena is read here only through
 * shm_counters, actor_stats, shm_dl_read and shm_mailbox_capacity, which
 * copy each worker-writable value once; what is computed from the copies
 * (sums of counters) saturates instead of wrapping.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "shm/shm.h"
#include "supervisor/actord.h"
#include "supervisor/config.h"
#include "supervisor/control.h"
#include "supervisor/log.h"
#include "supervisor/metrics.h"
#include "worker/actor.h"
#include "worker/remote.h"

#define DL_RECENT	100	/* dead letters a plain `deadletters` shows */
#define DL_POLL_MS	100	/* deadletters -f looks this often, if followed */
#define LOG_CHUNK	8192	/* bytes of output per answer */

enum wait_kind {
	W_OP,		/* start, stop, restart, add: the core's completion */
	W_LOG,		/* log -f: new output of one node */
	W_DL,		/* deadletters -f: new dead letters */
	W_ASK		/* ask: the answer, an error, or the timeout */
};

struct waiter {
	struct waiter	*next;
	struct tree_ctl	*tc;
	enum wait_kind	 kind;
	struct ctl_reply *reply;	/* NULL once its client went away */
	char		 path[SPEC_PATH_MAX];
	char		 added[SPEC_PATH_MAX];	/* add: the new instance */
	uint64_t	 cursor;
	struct pending_ask *ask;	/* W_ASK: asks.c's handle */
	uint32_t	 timeout_ms;	/* W_ASK */
};

struct tree_ctl {
	struct actord	*ad;
	const char	*config;	/* reload reads this file */
	struct control	*ctl;
	struct ev	 ctl_ev;
	struct metrics_http *mh;
	struct ev	 mh_ev;
	struct waiter	*waiters;
	struct timer	 dl_timer;
};

/* actord_start_node, actord_stop_node, actord_restart_node */
typedef int	(*op_fn)(struct actord *, const char *, done_fn, void *);

static int	be_status(void *, const char *, struct ctl_reply *);
static int	op_later(struct tree_ctl *, struct node *, const char *, op_fn,
		    struct ctl_reply *);
static int	be_start(void *, const char *, struct ctl_reply *);
static int	be_stop(void *, const char *, struct ctl_reply *);
static int	be_restart(void *, const char *, struct ctl_reply *);
static int	be_kill(void *, const char *, int, bool, struct ctl_reply *);
static int	be_add(void *, const char *, struct ctl_reply *);
static bool	spans_nodes(const struct node *, struct ctl_reply *);
static int	be_remove(void *, const char *, struct ctl_reply *);
static int	be_reload(void *, struct ctl_reply *);
static int	be_send(void *, const char *, uint32_t, const void *, size_t,
		    struct ctl_reply *);
static int	be_ask(void *, const char *, uint32_t, const void *, size_t,
		    uint32_t, struct ctl_reply *);
static int	be_deadletters(void *, uint64_t, bool, struct ctl_reply *);
static int	be_stats(void *, const char *, struct ctl_reply *);
static int	be_log(void *, const char *, uint64_t, bool, struct ctl_reply *);
static int	be_shutdown(void *, struct ctl_reply *);
static int	be_nodes(void *, struct ctl_reply *);
static char	*gateway_text(struct tree_ctl *, size_t *, const char **);
static void	be_cancel(void *, struct ctl_reply *);
static struct node *mailbox_of(struct tree_ctl *, const char *,
		    struct ctl_reply *);
static void	msg_error(struct ctl_reply *, int, const struct actor_msg *,
		    uint32_t);
static void	ask_done(void *, int, const struct actor_msg *);
static int	ask_start(struct tree_ctl *, struct node *, const char *,
		    uint32_t, const void *, size_t, uint32_t, struct ctl_reply *);
static void	on_control(void *, uint32_t);
static void	on_metrics(void *, uint32_t);
static void	on_output(struct actord *, struct node *, void *);
static void	on_dl_timer(void *);
static void	op_done(void *, int, const char *);
static struct waiter *waiter_new(struct tree_ctl *, enum wait_kind,
		    struct ctl_reply *, const char *, uint64_t);
static void	waiter_unlink(struct waiter *);
static int	api_error(struct ctl_reply *, int, const struct node *);
static void	put_status(const struct node_status *, void *);
static void	node_stats(struct tree_ctl *, const struct node *,
		    struct ctl_actor_stats *);
static void	hist_from_shm(const uint64_t *, struct ctl_hist *,
		    uint64_t *, uint64_t *);
static void	stats_walk(struct tree_ctl *, struct node *,
		    struct ctl_reply *);
static bool	dl_answer(struct tree_ctl *, uint64_t, struct ctl_reply *);
static bool	log_answer(struct tree_ctl *, const char *, uint64_t, bool,
		    struct ctl_reply *);
static void	dl_wake(struct tree_ctl *);
static bool	next_instance_is(const struct node *, const char *);
static int	open_metrics(struct tree_ctl *, const char *,
		    struct metrics_http **, char *, size_t);
static void	serve_metrics(struct tree_ctl *, struct metrics_http *,
		    const char *);

static const struct ctl_backend tree_backend = {
	.status = be_status,
	.start = be_start,
	.stop = be_stop,
	.restart = be_restart,
	.kill = be_kill,
	.add = be_add,
	.remove = be_remove,
	.reload = be_reload,
	.send = be_send,
	.ask = be_ask,
	.deadletters = be_deadletters,
	.stats = be_stats,
	.log = be_log,
	.shutdown = be_shutdown,
	.nodes = be_nodes,
	.cancel = be_cancel,
};

/* --- opening and closing ---------------------------------------------------- */

struct tree_ctl *
backend_open(struct actord *ad, const char *config, char *err, size_t errlen)
{
	struct control_config cfg;
	struct tree_ctl *tc;

	if ((tc = calloc(1, sizeof(*tc))) == NULL) {
		snprintf(err, errlen, "control: %s", strerror(errno));
		return NULL;
	}
	tc->ad = ad;
	tc->config = config;
	timer_init(&tc->dl_timer, on_dl_timer, tc);
	memset(&cfg, 0, sizeof(cfg));
	cfg.runtime_dir = ad->spec->runtime_dir;
	cfg.group = ad->spec->control_group;
	if ((tc->ctl = control_open(&cfg, &tree_backend, tc, err, errlen)) ==
	    NULL)
		goto fail;
	if (loop_add(&ad->loop, &tc->ctl_ev, control_fd(tc->ctl), EPOLLIN,
	    on_control, tc) == -1) {
		snprintf(err, errlen, "control: epoll: %s", strerror(errno));
		goto fail;
	}
	if (ad->spec->metrics_listen != NULL) {
		if (open_metrics(tc, ad->spec->metrics_listen, &tc->mh, err,
		    errlen) == -1)
			goto fail;
		serve_metrics(tc, tc->mh, ad->spec->metrics_listen);
	}
	ad->on_output = on_output;
	ad->output_arg = tc;
	log_info("control socket %s", control_socket_path(tc->ctl));
	return tc;
fail:
	backend_close(tc);
	return NULL;
}

/* A metrics listener at addr, not yet in the loop; -1 with err. */
static int
open_metrics(struct tree_ctl *tc, const char *addr, struct metrics_http **mh,
    char *err, size_t errlen)
{
	*mh = metrics_open(addr, &tree_backend, tc, control_counters(tc->ctl),
	    err, errlen);
	return *mh == NULL ? -1 : 0;
}

/* Serve metrics from mh (NULL: none) instead of the listener before. */
static void
serve_metrics(struct tree_ctl *tc, struct metrics_http *mh, const char *addr)
{
	if (tc->mh != NULL && tc->mh != mh) {
		loop_del(&tc->ad->loop, &tc->mh_ev);
		metrics_close(tc->mh);
	}
	tc->mh = mh;
	memset(&tc->mh_ev, 0, sizeof(tc->mh_ev));
	tc->mh_ev.fd = -1;
	if (mh == NULL)
		return;
	if (loop_add(&tc->ad->loop, &tc->mh_ev, metrics_fd(mh), EPOLLIN,
	    on_metrics, tc) == -1)
		log_warn("metrics: epoll");
	else
		log_info("metrics at http://%s/metrics", addr);
}

/*
 * Reload (actorctl reload, SIGHUP): the file's tree, control socket and
 * metrics listener, all or nothing.  The new listeners are opened first,
 * beside the old ones; if one cannot be, or the tree refuses the file,
 * nothing changes.  Then the tree takes the file and the listeners are
 * swapped: a moved control socket keeps its connected clients.
 */
int
backend_reload(struct tree_ctl *tc, char *err, size_t errlen)
{
	struct actord_spec *spec, *old = tc->ad->spec;
	struct control_config cfg;
	struct control_move mv;
	struct metrics_http *mh = tc->mh;
	const char *addr;
	bool moved_metrics;
	int e;

	if ((spec = config_load(tc->config, err, errlen)) == NULL)
		return EINVAL;
	memset(&cfg, 0, sizeof(cfg));
	cfg.runtime_dir = spec->runtime_dir;
	cfg.group = spec->control_group;
	if (control_move_prepare(tc->ctl, &cfg, &mv, err, errlen) == -1) {
		spec_free(spec);
		return EINVAL;
	}
	addr = spec->metrics_listen;
	moved_metrics = (addr == NULL) != (old->metrics_listen == NULL) ||
	    (addr != NULL && strcmp(addr, old->metrics_listen) != 0);
	if (moved_metrics && addr != NULL &&
	    open_metrics(tc, addr, &mh, err, errlen) == -1) {
		control_move_abort(&mv);
		spec_free(spec);
		return EINVAL;
	}
	if (moved_metrics && addr == NULL)
		mh = NULL;
	if ((e = actord_reload(tc->ad, spec, err, errlen)) != 0) {
		if (mh != tc->mh && mh != NULL)
			metrics_close(mh);
		control_move_abort(&mv);
		spec_free(spec);
		return e;
	}
	control_move_commit(tc->ctl, &mv);
	if (moved_metrics)
		serve_metrics(tc, mh, addr);
	return 0;
}

const char *
backend_socket_path(const struct tree_ctl *tc)
{
	return control_socket_path(tc->ctl);
}

/*
 * Close everything.  Operations still in the core's hands forget their
 * completion first, so that freeing the tree later calls nothing here.
 */
void
backend_close(struct tree_ctl *tc)
{
	struct actord *ad;
	struct waiter *w;

	if (tc == NULL)
		return;
	ad = tc->ad;
	actord_forget_done(ad, op_done);
	if (ad->on_output == on_output) {
		ad->on_output = NULL;
		ad->output_arg = NULL;
	}
	timer_cancel(&ad->loop, &tc->dl_timer);
	if (tc->mh != NULL) {
		if (tc->mh_ev.fn != NULL)
			loop_del(&ad->loop, &tc->mh_ev);
		metrics_close(tc->mh);
	}
	if (tc->ctl != NULL) {
		if (tc->ctl_ev.fn != NULL)
			loop_del(&ad->loop, &tc->ctl_ev);
		control_close(tc->ctl);	/* cancels what waits */
	}
	while ((w = tc->waiters) != NULL) {
		tc->waiters = w->next;
		if (w->kind == W_ASK)
			asks_forget(ad, w->ask);
		free(w);
	}
	free(tc);
}

/*
 * After the tree is done: let the last answers (shutdown's) go out, for
 * at most ms, before the socket closes under them.
 */
void
backend_drain(struct tree_ctl *tc, int ms)
{
	uint64_t end = now_ms() + (uint64_t)ms;
	struct epoll_event ev;
	int fd = control_fd(tc->ctl), ep;

	if ((ep = epoll_create1(EPOLL_CLOEXEC)) == -1)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0)
		while (control_counters(tc->ctl)->clients > 0 &&
		    now_ms() < end)
			if (epoll_wait(ep, &ev, 1, (int)(end - now_ms())) > 0)
				control_dispatch(tc->ctl);
	close(ep);
}

static void
on_control(void *arg, uint32_t events)
{
	struct tree_ctl *tc = arg;

	(void)events;
	control_dispatch(tc->ctl);
}

static void
on_metrics(void *arg, uint32_t events)
{
	struct tree_ctl *tc = arg;

	(void)events;
	metrics_dispatch(tc->mh);
}

/* --- waiters: replies deferred until the tree says something ---------------- */

static struct waiter *
waiter_new(struct tree_ctl *tc, enum wait_kind kind, struct ctl_reply *r,
    const char *path, uint64_t cursor)
{
	struct waiter *w;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->tc = tc;
	w->kind = kind;
	w->reply = r;
	w->cursor = cursor;
	if (path != NULL)
		snprintf(w->path, sizeof(w->path), "%s", path);
	w->next = tc->waiters;
	tc->waiters = w;
	return w;
}

static void
waiter_unlink(struct waiter *w)
{
	struct waiter **pp;

	for (pp = &w->tc->waiters; *pp != NULL; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
}

/*
 * The client of a deferred reply went away.  A follower is simply
 * forgotten; an operation stays until the core completes it.
 */
static void
be_cancel(void *ctx, struct ctl_reply *r)
{
	struct tree_ctl *tc = ctx;
	struct waiter *w, *next;

	for (w = tc->waiters; w != NULL; w = next) {
		next = w->next;
		if (w->reply != r)
			continue;
		w->reply = NULL;
		if (w->kind == W_ASK) {
			asks_forget(tc->ad, w->ask);
			w->ask = NULL;
		}
		if (w->kind != W_OP) {
			waiter_unlink(w);
			free(w);
		}
	}
	/* No follower left: the dead-letter timer stops now, not later. */
	for (w = tc->waiters; w != NULL; w = w->next)
		if (w->kind == W_DL)
			return;
	timer_cancel(&tc->ad->loop, &tc->dl_timer);
}

/* The core finished an operation (api.c): answer, if anyone still asks. */
static void
op_done(void *arg, int error, const char *msg)
{
	struct waiter *w = arg;
	struct ctl_reply *r = w->reply;
	char added[SPEC_PATH_MAX];

	snprintf(added, sizeof(added), "%s", w->added);
	waiter_unlink(w);
	free(w);
	if (r == NULL)
		return;
	if (error == EIO)
		ctl_reply_error(r, CTL_E_FAILED, "%s", msg != NULL ? msg :
		    "failed to start");
	else if (error != 0)
		ctl_reply_error(r, CTL_E_FAILED, "%s", msg != NULL ? msg :
		    strerror(error));
	else if (added[0] != '\0')
		ctl_reply_message(r, "added %s", added);
	ctl_reply_finish(r);
}

/* --- errors ------------------------------------------------------------------- */

/* An errno from api.c, with its text (actord_strerror, actorctl(8)'s words). */
static int
api_error(struct ctl_reply *r, int e, const struct node *n)
{
	char text[256];
	int code;

	switch (e) {
	case ENOENT:
		code = CTL_E_NOENT;
		break;
	case EALREADY:
	case EINPROGRESS:
	case EBUSY:
	case EAGAIN:
	case ESHUTDOWN:
		code = CTL_E_STATE;
		break;
	case EINVAL:
		code = CTL_E_INVAL;
		break;
	case ESRCH:
		code = CTL_E_DOWN;
		break;
	default:
		code = CTL_E_FAILED;
		break;
	}
	ctl_reply_error(r, code, "%s", actord_strerror(e, n, text,
	    sizeof(text)));
	return CTL_REPLY_NOW;
}

/* --- status --------------------------------------------------------------------- */

struct status_ctx {
	struct tree_ctl	*tc;
	struct ctl_reply *r;
};

static void
put_status(const struct node_status *st, void *arg)
{
	struct status_ctx *sc = arg;
	struct shm_counters c;
	struct ctl_node cn;

	memset(&cn, 0, sizeof(cn));
	snprintf(cn.path, sizeof(cn.path), "%s", st->path);
	snprintf(cn.kind, sizeof(cn.kind), "%s", node_kind_name(st->kind));
	snprintf(cn.state, sizeof(cn.state), "%s", st->remote != NULL ?
	    "remote" : node_state_name(st->state));
	if (st->remote != NULL)
		snprintf(cn.node, sizeof(cn.node), "%s", st->remote);
	cn.pid = st->kind == NODE_WORKER ? st->pid : 0;
	cn.uptime_ms = st->uptime_ms;
	cn.restarts = (uint32_t)st->restarts;
	cn.incarnation = st->incarnation;
	snprintf(cn.last_exit, sizeof(cn.last_exit), "%s", st->last_exit);
	cn.mailbox_depth = -1;
	if (st->mbox >= 0 && sc->tc->ad->arena != NULL &&
	    shm_counters(sc->tc->ad->arena, (uint32_t)st->mbox, &c) == 0)
		cn.mailbox_depth = (int64_t)c.depth;
	if (st->kind != NODE_WORKER) {
		snprintf(cn.strategy, sizeof(cn.strategy), "%s",
		    strategy_name(st->strategy));
		cn.period_restarts = (uint32_t)st->restarts_in_period;
		cn.intensity = st->intensity;
		cn.period = st->period;
	}
	ctl_reply_node(sc->r, &cn);
}

static int
be_status(void *ctx, const char *path, struct ctl_reply *r)
{
	struct tree_ctl *tc = ctx;
	struct status_ctx sc = { tc, r };
	struct node *n = tc->ad->root;

	if (path != NULL && (n = actord_find(tc->ad, path)) == NULL)
		return api_error(r, ENOENT, NULL);
	node_walk(n, put_status, &sc);
	return CTL_REPLY_NOW;
}

/* --- start, stop, restart, kill, add, remove ---------------------------------- */

/*
 * Run op (actord_start_node and the like) on node n at path, its reply
 * deferred to op_done; an error answered now if op refuses at once.
 */
static int
op_later(struct tree_ctl *tc, struct node *n, const char *path, op_fn op,
    struct ctl_reply *r)
{
	struct waiter *w;
	int e;

	if ((w = waiter_new(tc, W_OP, r, path, 0)) == NULL)
		return api_error(r, ENOMEM, n);
	if ((e = op(tc->ad, path, op_done, w)) != 0) {
		waiter_unlink(w);
		free(w);
		return api_error(r, e, n);
	}
	return CTL_REPLY_LATER;	/* maybe finished already: control.c checks */
}

static int
be_start(void *ctx, const char *path, struct ctl_reply *r)
{
	struct tree_ctl *tc = ctx;
	struct node *n;

	if ((n = actord_find(tc->ad, path)) == NULL)
		return api_error(r, ENOENT, NULL);
	return op_later(tc, n, path, actord_start_node, r);
}

static int
be_stop(void *ctx, const char *path, struct ctl_reply *r)
{
	struct tree_ctl *tc = ctx;
	struct node *n;

	if ((n = actord_find(tc->ad, path)) == NULL)
		return api_error(r, ENOENT, NULL);
	return op_later(tc, n, path, actord_stop_node, r);
}

/* Answered when the new incarnation is running (its completion). */
static int
be_restart(void *ctx, const char *path, struct ctl_reply *r)
{
	struct tree_ctl *tc = ctx;
	struct node *n;

	if ((n = actord_find(tc->ad, path)) == NULL)
		return api_error(r, ENOENT, NULL);
	return op_later(tc, n, path, actord_restart_node, r);
}

/*
 * kill: a worker's process group; a supervisor's path only when the
 * request says tree, since it reaches every worker under it ("/" is all
 * of them).  The answer says how many were signalled.
 */
static int
be_kill(void *ctx, const char *path, int signo, bool tree,
    struct ctl_reply *r)
{
	struct tree_ctl *tc = ctx;
	const char *name;
	struct node *n;
	unsigned sent;
	pid_t pid;
	int e;

	if ((n = actord_find(tc->ad, path)) == NULL)
		return api_error(r, ENOENT, NULL);
	if (n->kind != NODE_WORKER && !tree) {
		ctl_reply_error(r, CTL_E_INVAL, "%s is a supervisor: give "
		    "--tree to signal every worker under it", n->path);
		return CTL_REPLY_NOW;
	}
	pid = n->pid;		/* before the signal: its death may be reaped */
	if ((e = actord_kill_node(tc->ad, path, signo, &sent)) != 0)
		return api_error(r, e, n);
	name = sigabbrev_np(signo);
	if (n->kind == NODE_WORKER)
		ctl_reply_message(r, "signal %d%s%s%s sent to %s (pid %d)",
		    signo, name ? " (" : "", name ? name : "", name ? ")" : "",
		    n->path, (int)pid);
	else
		ctl_reply_message(r, "signal %d%s%s%s sent to %u worker%s "
		    "under %s", signo, name ? " (" : "", name ? name : "",
		    name ? ")" : "", sent, sent == 1 ? "" : "s", n->path);
	return CTL_REPLY_NOW;
}

/*
 * add GROUP/N: a new instance of a worker with instances.  actord names
 * instances one past the highest, so N must be that name; add GROUP adds
 * the next one whatever its name.
 */
static int
be_add(void *ctx, const char *path, struct ctl_reply *r)
{
	struct tree_ctl *tc = ctx;
	struct waiter *w;
	struct node *n, *g;
	char parent[SPEC_PATH_MAX], *slash;
	const char *group = path;
	int e;

	if ((n = actord_find(tc->ad, path)) != NULL && n->kind != NODE_GROUP) {
		ctl_reply_error(r, CTL_E_EXISTS, "exists, %s",
		    n->state == NS_RUNNING ? "running" : "not running");
		return CTL_REPLY_NOW;
	}
	if (n != NULL && spans_nodes(n, r))
		return CTL_REPLY_NOW;
	if (n == NULL) {
		snprintf(parent, sizeof(parent), "%s", path);
		if ((slash = strrchr(parent, '/')) != NULL)
			*slash = '\0';
		if (parent[0] == '\0' ||
		    (g = actord_find(tc->ad, parent)) == NULL ||
		    g->kind != NODE_GROUP) {
			ctl_reply_error(r, CTL_E_NOENT, "%s: no worker with "
			    "instances", parent[0] != '\0' ? parent : "/");
			return CTL_REPLY_NOW;
		}
		if (spans_nodes(g, r))
			return CTL_REPLY_NOW;
		if (!next_instance_is(g, path)) {
			ctl_reply_error(r, CTL_E_INVAL, "instances are added "
			    "in order: add %s names the next one", parent);
			return CTL_REPLY_NOW;
		}
		group = parent;
	} else
		g = n;
	if ((w = waiter_new(tc, W_OP, r, path, 0)) == NULL)
		return api_error(r, ENOMEM, NULL);
	/* The new name is written before the completion may run. */
	e = actord_add_instance(tc->ad, group, op_done, w, w->added,
	    sizeof(w->added));
	if (e != 0) {
		waiter_unlink(w);
		free(w);
		return api_error(r, e, actord_find(tc->ad, group));
	}
	return CTL_REPLY_LATER;	/* maybe finished already: control.c checks */
}

/* A group spanning nodes has its instances from the placement: refused. */
static bool
spans_nodes(const struct node *g, struct ctl_reply *r)
{
	if (g->cs == NULL || g->cs->nnodes == 0)
		return false;
	ctl_reply_error(r, CTL_E_INVAL, "%s spans nodes: its instances are "
	    "the configuration's", g->path);
	return true;
}

/* Whether path is the name actord_add_instance gives the next instance. */
static bool
next_instance_is(const struct node *g, const char *path)
{
	unsigned long next = 0, v;
	char want[SPEC_PATH_MAX + 24], *end;
	size_t i;

	for (i = 0; i < g->nkids; i++) {
		v = strtoul(g->kids[i]->name, &end, 10);
		if (*end == '\0' && v + 1 > next)
			next = v + 1;
	}
	snprintf(want, sizeof(want), "%s/%lu", g->path, next);
	return strcmp(want, path) == 0;
}

static int
be_remove(void *ctx, const char *path, struct ctl_reply *r)
{
	struct tree_ctl *tc = ctx;
	struct node *n;
	int e;

	if ((n = actord_find(tc->ad, path)) == NULL)
		return api_error(r, ENOENT, NULL);
	if ((e = actord_remove_node(tc->ad, path)) != 0)
		return api_error(r, e, n);
	return CTL_REPLY_NOW;
}

static int
be_reload(void *ctx, struct ctl_reply *r)
{
	struct tree_ctl *tc = ctx;
	char err[CTL_ERROR_MAX - 64];

	if (tc->config == NULL) {
		ctl_reply_error(r, CTL_E_UNSUPPORTED, "no configuration file");
		return CTL_REPLY_NOW;
	}
	log_info("control: reloading %s", tc->config);
	if (backend_reload(tc, err, sizeof(err)) != 0) {
		log_warnx("reload refused: %s", err);
		ctl_reply_error(r, CTL_E_FAILED, "%s", err);
	} else
		ctl_reply_message(r, "reloaded %s", tc->config);
	return CTL_REPLY_NOW;
}

/* --- send and ask ---------------------------------------------------------------- */

/* The node with a mailbox at path, or an answer saying why not. */
static struct node *
mailbox_of(struct tree_ctl *tc, const char *path, struct ctl_reply *r)
{
	struct node *n;
	const char *there;

	if ((n = actord_find(tc->ad, path)) == NULL) {
		/* Another node's shard: say where. */
		if ((there = tree_placed_on(tc->ad, path)) != NULL)
			ctl_reply_error(r, CTL_E_NOENT, "placed on node %s: "
			    "%s:%s", there, there, path);
		else
			(void)api_error(r, ENOENT, NULL);
		return NULL;
	}
	if (n->kind != NODE_WORKER || n->mbox < 0 ||
	    tc->ad->self_actor == NULL) {
		ctl_reply_error(r, CTL_E_INVAL, "has no mailbox");
		return NULL;
	}
	return n;
}

/*
 * What a failed tell or ask says to the client: a status and a text for
 * actorctl, and libactor's code (with the application's, for an answer
 * of the application's own) for a client library.
 */
static void
msg_error(struct ctl_reply *r, int rc, const struct actor_msg *m,
    uint32_t timeout_ms)
{
	int32_t app = 0;
	bool error_answer = m != NULL && (m->flags & ACTOR_MSG_ERROR);

	switch (rc) {
	case ACTOR_EFULL:
	case ACTOR_EDROPPED:
		ctl_reply_error(r, CTL_E_FAILED, "mailbox full");
		break;
	case ACTOR_EDOWN:
		ctl_reply_error(r, CTL_E_DOWN, "not running");
		break;
	case ACTOR_ETIMEDOUT:
		ctl_reply_error(r, CTL_E_TIMEOUT, "no answer within %u ms",
		    timeout_ms);
		break;
	default:
		/* An error answer: its text says why (poison, on_down...). */
		if (error_answer && *actor_error_text(m) != '\0' &&
		    strcmp(actor_error_text(m), actor_strerror(rc)) != 0)
			ctl_reply_error(r, CTL_E_FAILED, "%s: %s",
			    actor_strerror(rc), actor_error_text(m));
		else
			ctl_reply_error(r, CTL_E_FAILED, "%s",
			    actor_strerror(rc));
		break;
	}
	if (rc == ACTOR_EREPLY && error_answer)
		app = actor_error_code(m);
	ctl_reply_code(r, rc, rc == ACTOR_EREPLY ? &app : NULL,
	    error_answer ? actor_error_text(m) : NULL);
}

/* A tell from actord's own actor; never waits for room. */
static int
be_send(void *ctx, const char *path, uint32_t tag, const void *data,
    size_t len, struct ctl_reply *r)
{
	struct tree_ctl *tc = ctx;
	struct remote_env env;
	struct actor_ref ref;
	struct node *n;
	int rc;

	if (tc->ad->self_actor != NULL &&
	    remote_path_env(path, tag, data, len, &env) > 0) {
		/* "node:/path": through the gateway, which says if it can. */
		rc = remote_tell(tc->ad->self_actor, &env, 0);
		dl_wake(tc);
		if (rc < 0)
			msg_error(r, rc, NULL, 0);
		return CTL_REPLY_NOW;
	}
	if ((n = mailbox_of(tc, path, r)) == NULL)
		return CTL_REPLY_NOW;
	ref.index = (uint32_t)n->mbox;
	ref.incarnation = ACTOR_ANY;
	rc = actor_tell_timeout(tc->ad->self_actor, ref, tag, data, len, 0);
	dl_wake(tc);		/* it may have made a dead letter */
	if (rc < 0)
		msg_error(r, rc, NULL, 0);
	return CTL_REPLY_NOW;
}

/*
 * An ask from actord's own actor, answered when the answer comes, the
 * actor dies with it (an error answer from actor_reaped), or the timeout
 * runs out.  A down or stopping actor fails at once.
 */
static int
be_ask(void *ctx, const char *path, uint32_t tag, const void *data,
    size_t len, uint32_t timeout_ms, struct ctl_reply *r)
{
	struct tree_ctl *tc = ctx;
	struct node *n;

	if (path[0] != '/')		/* "node:/path": the gateway's */
		return ask_start(tc, NULL, path, tag, data, len, timeout_ms,
		    r);
	if ((n = mailbox_of(tc, path, r)) == NULL)
		return CTL_REPLY_NOW;
	if (n->state != NS_RUNNING && n->state != NS_STARTING) {
		ctl_reply_error(r, CTL_E_DOWN, "not running (%s)",
		    node_state_name(n->state));
		ctl_reply_code(r, ACTOR_EDOWN, NULL, NULL);
		return CTL_REPLY_NOW;
	}
	return ask_start(tc, n, path, tag, data, len, timeout_ms, r);
}

/* The ask of be_ask, of node n, or (n NULL) of a remote path. */
static int
ask_start(struct tree_ctl *tc, struct node *n, const char *path,
    uint32_t tag, const void *data, size_t len, uint32_t timeout_ms,
    struct ctl_reply *r)
{
	struct waiter *w;
	int rc;

	if ((w = waiter_new(tc, W_ASK, r, path, 0)) == NULL)
		return api_error(r, ENOMEM, n);
	w->timeout_ms = timeout_ms;
	if (n != NULL)
		rc = asks_send(tc->ad, (uint32_t)n->mbox, tag, data, len,
		    timeout_ms, ask_done, w, &w->ask);
	else
		rc = asks_send_remote(tc->ad, path, tag, data, len,
		    timeout_ms, ask_done, w, &w->ask);
	dl_wake(tc);
	if (rc < 0) {
		waiter_unlink(w);
		free(w);
		msg_error(r, rc, NULL, timeout_ms);
		return CTL_REPLY_NOW;
	}
	return CTL_REPLY_LATER;
}

static void
ask_done(void *arg, int error, const struct actor_msg *m)
{
	struct waiter *w = arg;
	struct ctl_reply *r = w->reply;

	waiter_unlink(w);
	if (r != NULL) {
		if (error == 0) {
			ctl_reply_tag(r, m->tag);
			ctl_reply_data(r, m->data, m->len);
		} else
			msg_error(r, error, m, w->timeout_ms);
		ctl_reply_finish(r);
	}
	dl_wake(w->tc);
	free(w);
}

/* --- dead letters ---------------------------------------------------------------- */

/*
 * Entries from position cursor (UINT64_MAX: the last DL_RECENT); the
 * reply's cursor is the position after the last one, for the next call.
 */
static bool
dl_answer(struct tree_ctl *tc, uint64_t cursor, struct ctl_reply *r)
{
	struct shm_arena *a = tc->ad->arena;
	struct actor_dead_letter d;
	struct ctl_deadletter cd;
	struct timespec rt;
	uint64_t head, mono, real;
	char who[SPEC_PATH_MAX];
	bool any = false;

	if (a == NULL) {
		ctl_reply_cursor(r, 0);
		return false;
	}
	head = shm_dl_head(a);
	if (cursor == UINT64_MAX)
		cursor = head > DL_RECENT ? head - DL_RECENT : 0;
	clock_gettime(CLOCK_REALTIME, &rt);
	real = (uint64_t)rt.tv_sec * 1000 + (uint64_t)rt.tv_nsec / 1000000;
	mono = shm_now_ns();
	while (actor_dl_read(a, &cursor, &d) == 1) {
		memset(&cd, 0, sizeof(cd));
		cd.seq = d.seq;
		cd.time_ms = real - (mono > d.time_ns ? mono - d.time_ns : 0) /
		    1000000;
		/* No path: a bad index, or its actor removed since ("#N"). */
		if (shm_actor_path(a, d.recipient, who, sizeof(who)) < 0 ||
		    who[0] == '\0')
			snprintf(who, sizeof(who), "#%u", d.recipient);
		snprintf(cd.recipient, sizeof(cd.recipient), "%s", who);
		/* {0, 0}: actord before it had a mailbox, or a client. */
		if ((d.sender.index == 0 && d.sender.incarnation == 0) ||
		    d.sender.index == UINT32_MAX)
			cd.sender[0] = '\0';
		else if (shm_actor_path(a, d.sender.index, who,
		    sizeof(who)) >= 0)
			snprintf(cd.sender, sizeof(cd.sender), "%s", who);
		snprintf(cd.reason, sizeof(cd.reason), "%s", d.reason_name);
		cd.tag = d.tag;
		cd.size = d.len;
		ctl_reply_deadletter(r, &cd);
		any = true;
	}
	ctl_reply_cursor(r, cursor);
	return any;
}

static int
be_deadletters(void *ctx, uint64_t cursor, bool wait, struct ctl_reply *r)
{
	struct tree_ctl *tc = ctx;

	if (!wait || cursor == UINT64_MAX || tc->ad->arena == NULL ||
	    shm_dl_head(tc->ad->arena) > cursor) {
		dl_answer(tc, cursor, r);
		return CTL_REPLY_NOW;
	}
	if (waiter_new(tc, W_DL, r, NULL, cursor) == NULL)
		return api_error(r, ENOMEM, NULL);
	/* Other processes write dead letters: look while someone follows. */
	if (!timer_pending(&tc->dl_timer))
		timer_after(&tc->ad->loop, &tc->dl_timer, DL_POLL_MS);
	return CTL_REPLY_LATER;
}

/* Answer the followers that have something new; the timer runs for the rest. */
static void
dl_wake(struct tree_ctl *tc)
{
	struct waiter *w, *next;
	uint64_t head;
	bool left = false;

	if (tc->ad->arena == NULL)
		return;
	head = shm_dl_head(tc->ad->arena);
	for (w = tc->waiters; w != NULL; w = next) {
		next = w->next;
		if (w->kind != W_DL)
			continue;
		if (head <= w->cursor) {
			left = true;
			continue;
		}
		waiter_unlink(w);
		dl_answer(tc, w->cursor, w->reply);
		ctl_reply_finish(w->reply);
		free(w);
	}
	if (!left)
		timer_cancel(&tc->ad->loop, &tc->dl_timer);
	else if (!timer_pending(&tc->dl_timer))
		timer_after(&tc->ad->loop, &tc->dl_timer, DL_POLL_MS);
}

static void
on_dl_timer(void *arg)
{
	dl_wake(arg);
}

/* --- stats ------------------------------------------------------------------------- */

/*
 * shm's wait histogram has log2 buckets of ns, [2^i, 2^(i+1)).  Buckets
 * up to 2^10 ns go in the first (le 1 us), then one per power of two, its
 * bound rounded to whole microseconds.  The sum is estimated from the
 * buckets' middles (shm keeps no sum); p50 and p99 are bucket bounds.
 */
static void
hist_from_shm(const uint64_t *ns, struct ctl_hist *h, uint64_t *p50,
    uint64_t *p99)
{
	uint64_t cum, upper, left;
	uint32_t k;
	unsigned i;
	double sum = 0;

	memset(h, 0, sizeof(*h));
	h->nbuckets = SHM_HIST_BUCKETS - 10;
	for (k = 0; k < h->nbuckets; k++)
		h->le_us[k] = ((1ULL << (10 + k)) + 500) / 1000;
	/*
	 * A worker can write every bucket (up to 2^64 - 1 each): the sums
	 * saturate, the buckets are cut so that their own sum fits (which
	 * actorctl checks), and the double is converted only below 2^64.
	 */
	for (i = 0; i < SHM_HIST_BUCKETS; i++) {
		k = i < 10 ? 0 : i - 9;
		if (k >= h->nbuckets)
			k = h->nbuckets - 1;
		h->count[k] = shm_sat_add(h->count[k], ns[i]);
		h->total = shm_sat_add(h->total, ns[i]);
		sum += (double)ns[i] * 1.5 * (double)(1ULL << i) / 1000.0;
	}
	for (left = UINT64_MAX, k = 0; k < h->nbuckets; k++) {
		if (h->count[k] > left)
			h->count[k] = left;
		left -= h->count[k];
	}
	h->sum_us = sum < 18446744073709551616.0 ? (uint64_t)sum : UINT64_MAX;
	*p50 = *p99 = 0;
	if (h->total == 0)
		return;
	for (cum = 0, k = 0; k < h->nbuckets; k++) {
		cum += h->count[k];
		upper = h->le_us[k];
		if (*p50 == 0 && cum >= h->total - h->total / 2)
			*p50 = upper;
		if ((unsigned __int128)cum * 100 >=
		    (unsigned __int128)h->total * 99) {
			*p99 = upper;
			break;
		}
	}
}

/*
 * The four series of an actor: depth, wait p50/p99 (shm's counters),
 * handler duration p50/p99 (libactor's actor_stats, one message in 8
 * sampled; nbuckets 0, shown "n/a", until a sample was taken), restarts.
 */
static void
node_stats(struct tree_ctl *tc, const struct node *n,
    struct ctl_actor_stats *s)
{
	struct shm_counters c;
	struct actor_stats as;

	memset(s, 0, sizeof(*s));
	snprintf(s->path, sizeof(s->path), "%s", n->path);
	s->restarts = n->restarts;
	if (shm_counters(tc->ad->arena, (uint32_t)n->mbox, &c) < 0)
		return;
	/* The effective capacity: a late node's spare ring may be larger. */
	s->capacity = shm_mailbox_capacity(tc->ad->arena, (uint32_t)n->mbox);
	s->depth = c.depth;
	s->sent = c.enqueued;
	s->received = c.dequeued;
	s->dropped = c.dropped;
	s->deadlettered = c.dead_lettered;
	s->replaced = c.replaced;
	hist_from_shm(c.wait_hist, &s->wait, &s->wait_p50_us, &s->wait_p99_us);
	if (actor_stats(tc->ad->arena, (uint32_t)n->mbox, &as) == 0) {
		s->asks_failed = as.asks_failed;
		hist_from_shm(as.handler_hist, &s->handle, &s->handle_p50_us,
		    &s->handle_p99_us);
		if (s->handle.total == 0)	/* nothing sampled yet: n/a */
			memset(&s->handle, 0, sizeof(s->handle));
	}
}

/* Actors under n in start order, then its instances groups' spread. */
static void
stats_walk(struct tree_ctl *tc, struct node *n, struct ctl_reply *r)
{
	struct ctl_actor_stats s;
	struct ctl_shard_group g;
	struct shm_counters c;
	size_t i;
	bool any = false;

	if (n->kind == NODE_WORKER) {
		if (n->mbox >= 0) {
			node_stats(tc, n, &s);
			ctl_reply_actor(r, &s);
		}
		return;
	}
	for (i = 0; i < n->nkids; i++)
		stats_walk(tc, n->kids[i], r);
	/* A group spanning nodes has only some of its shards here. */
	if (n->kind != NODE_GROUP || (n->cs != NULL && n->cs->nnodes > 0))
		return;
	memset(&g, 0, sizeof(g));
	snprintf(g.name, sizeof(g.name), "%s", n->path);
	/* The shards are the instances with a mailbox, in order. */
	for (i = 0; i < n->nkids && g.nshards < CTL_SHARDS_MAX; i++)
		if (n->kids[i]->mbox >= 0 && shm_counters(tc->ad->arena,
		    (uint32_t)n->kids[i]->mbox, &c) == 0) {
			g.count[g.nshards++] = c.enqueued;
			any = true;
		}
	if (any)
		ctl_reply_shards(r, &g);
}

static int
be_stats(void *ctx, const char *path, struct ctl_reply *r)
{
	struct tree_ctl *tc = ctx;
	struct node *n = tc->ad->root;
	const char *why;
	size_t len;
	char *text;

	if (path != NULL && (n = actord_find(tc->ad, path)) == NULL)
		return api_error(r, ENOENT, NULL);
	if (tc->ad->arena != NULL)
		stats_walk(tc, n, r);
	/* A node's peers, for the metrics (none until the gateway told). */
	if (path == NULL && (text = gateway_text(tc, &len, &why)) != NULL) {
		ctl_reply_data(r, text, len);
		free(text);
	}
	return CTL_REPLY_NOW;
}

/* --- log ----------------------------------------------------------------------------- */

/* Output from cursor; false (nothing added) if there is none and wait. */
static bool
log_answer(struct tree_ctl *tc, const char *path, uint64_t cursor,
    bool wait, struct ctl_reply *r)
{
	char buf[LOG_CHUNK];
	struct node *n;
	uint64_t next;
	size_t k;

	if ((n = actord_find(tc->ad, path)) == NULL) {
		ctl_reply_error(r, CTL_E_NOENT, "no such path");
		return true;
	}
	k = output_read(n, cursor, buf, sizeof(buf), &next);
	if (k == 0 && wait)
		return false;
	ctl_reply_data(r, buf, k);
	ctl_reply_cursor(r, next);
	return true;
}

static int
be_log(void *ctx, const char *path, uint64_t cursor, bool wait,
    struct ctl_reply *r)
{
	struct tree_ctl *tc = ctx;
	struct node *n;

	if ((n = actord_find(tc->ad, path)) == NULL)
		return api_error(r, ENOENT, NULL);
	if (n->kind != NODE_WORKER) {
		ctl_reply_error(r, CTL_E_INVAL, "a %s has no output",
		    node_kind_name(n->kind));
		return CTL_REPLY_NOW;
	}
	if (log_answer(tc, path, cursor, wait && cursor != UINT64_MAX, r))
		return CTL_REPLY_NOW;
	if (waiter_new(tc, W_LOG, r, path, cursor) == NULL)
		return api_error(r, ENOMEM, n);
	return CTL_REPLY_LATER;
}

/* A node printed: its followers get what is new. */
static void
on_output(struct actord *ad, struct node *n, void *arg)
{
	struct tree_ctl *tc = arg;
	struct waiter *w, *next;

	(void)ad;
	for (w = tc->waiters; w != NULL; w = next) {
		next = w->next;
		if (w->kind != W_LOG || strcmp(w->path, n->path) != 0)
			continue;
		if (!log_answer(tc, w->path, w->cursor, true, w->reply))
			continue;
		waiter_unlink(w);
		ctl_reply_finish(w->reply);
		free(w);
	}
}

/* --- shutdown ------------------------------------------------------------------------- */

static int
be_shutdown(void *ctx, struct ctl_reply *r)
{
	struct tree_ctl *tc = ctx;

	log_info("control: shutdown asked");
	ctl_reply_message(r, "shutting down");
	actord_shutdown(tc->ad);
	return CTL_REPLY_NOW;
}

/*
 * The peer table the gateway committed as its state (gateway/status.c,
 * nodestatus.h), as it is: actorctl and the metrics parse it.  Read
 * through the snapshot's CRC, never trusted further: it is a worker's
 * text.  malloc'd, *len bytes; or NULL and why.
 */
static char *
gateway_text(struct tree_ctl *tc, size_t *len, const char **why)
{
	struct node *n;
	char *buf;

	*len = 0;
	if (tc->ad->spec->node == NULL) {
		*why = "not a node: actord.conf has no node block";
		return NULL;
	}
	if ((n = actord_find(tc->ad, "/" GATEWAY_NAME)) == NULL ||
	    n->mbox < 0 || tc->ad->arena == NULL) {
		*why = "no gateway";
		return NULL;
	}
	if ((buf = malloc(CTL_MAX_DATA)) == NULL) {
		*why = "out of memory";
		return NULL;
	}
	if (actor_snapshot_read(tc->ad->arena, (uint32_t)n->mbox, buf,
	    CTL_MAX_DATA, len) < 0) {
		free(buf);
		*why = "the gateway has not told its peers yet";
		return NULL;
	}
	return buf;
}

static int
be_nodes(void *ctx, struct ctl_reply *r)
{
	const char *why;
	size_t len;
	char *text;

	if ((text = gateway_text(ctx, &len, &why)) == NULL)
		ctl_reply_error(r, CTL_E_STATE, "%s", why);
	else
		ctl_reply_data(r, text, len);
	free(text);
	return CTL_REPLY_NOW;
}
