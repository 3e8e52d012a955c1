/*
 * ctl_fake_server.c: a control socket (control.c) and optionally the
 * metrics listener (metrics.c) in front of a fake tree, for the tests of
 * the control protocol and of actorctl.  The fake backend follows the
 * same OTP rules the real tree does (start of a running child fails with
 * "running", stop is idempotent, ...) on a small fixed tree, and answers
 * restart, ask, deadletters -f and log -f later, as actord would.
 *
 *	ctl_fake_server -d DIR [-G] [-g GROUP] [-m HOST:PORT] [-c MAXCLIENTS]
 *	    [-u MAXPERUID] [-t TIMEOUT_MS] [-n NOFILE] [-w WORKERS]
 *
 * Prints "ready PORT" (the metrics port, 0 without -m) on standard output
 * once it is listening.  -n lowers RLIMIT_NOFILE once everything is open,
 * to exercise running out of descriptors; -w adds WORKERS more running
 * workers under /bulk (for benchmarks: status of a 100-child tree); -G
 * starts /web as a supervisor that has already given up once.  Exits 0 on SIGTERM or after `shutdown`.  If
 * DIR/reload-error exists, reload fails with its first line as the error.
 *
 * It owns nothing but its fake tree; it never forks a real worker.
 */
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "supervisor/control.h"
#include "supervisor/log.h"
#include "supervisor/metrics.h"

#define MAXNODES	256
#define MAXPEND		64
#define MAXDL		256
#define LOGMAX		8192
#define RESTART_DELAY	30	/* ms until a restarted child "runs" */

struct fnode {
	bool		 used;
	char		 path[CTL_PATH_MAX];
	bool		 sup;
	const char	*state;
	int		 pid;
	uint64_t	 started;	/* ms */
	uint32_t	 restarts;
	uint64_t	 incarnation;
	char		 last_exit[CTL_EXIT_MAX];
	bool		 mailbox;
	uint64_t	 depth;
	uint64_t	 sent, received;
	const char	*strategy;
	bool		 group;		/* a worker with instances */
	const char	*start_error;	/* start fails with this */
	char		 log[LOGMAX];
	size_t		 loglen;
};

enum pkind { P_RESTART, P_ASK, P_DL, P_LOG };

struct pend {
	bool		 used;
	enum pkind	 kind;
	struct ctl_reply *reply;
	uint64_t	 due;		/* ms; 0: on an event */
	int		 node;
	uint64_t	 cursor;
	uint32_t	 timeout;
};

struct fake {
	const char	*dir;
	struct fnode	 n[MAXNODES];
	struct pend	 p[MAXPEND];
	struct ctl_deadletter dl[MAXDL];
	size_t		 ndl;
	uint64_t	 dlseq;
	int		 nextpid;
	bool		 shutting_down;
	int		 timer_fd;
};

static uint64_t
ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
add_node(struct fake *f, const char *path, bool sup, const char *state)
{
	int i;

	for (i = 0; i < MAXNODES; i++)
		if (!f->n[i].used)
			break;
	if (i == MAXNODES)
		return -1;
	memset(&f->n[i], 0, sizeof(f->n[i]));
	f->n[i].used = true;
	snprintf(f->n[i].path, sizeof(f->n[i].path), "%s", path);
	f->n[i].sup = sup;
	f->n[i].state = state;
	f->n[i].incarnation = 1;
	f->n[i].strategy = sup ? "one_for_one" : "";
	if (strcmp(state, "running") == 0) {
		/* Supervisors live inside actord: no pid of their own. */
		f->n[i].pid = sup ? 0 : f->nextpid++;
		f->n[i].started = ms_now() - 65000;
	}
	return i;
}

static int
find(struct fake *f, const char *path)
{
	int i;

	if (path == NULL)
		return -1;
	for (i = 0; i < MAXNODES; i++)
		if (f->n[i].used && strcmp(f->n[i].path, path) == 0)
			return i;
	return -1;
}

static void
log_append(struct fnode *n, const char *text)
{
	size_t len = strlen(text);

	if (n->loglen + len < LOGMAX) {
		memcpy(n->log + n->loglen, text, len);
		n->loglen += len;
	}
}

static void
init_tree(struct fake *f)
{
	int i;

	f->nextpid = 4000;
	add_node(f, "/", true, "running");
	i = add_node(f, "/web", true, "running");
	f->n[i].strategy = "rest_for_one";
	i = add_node(f, "/web/frontend", false, "running");
	f->n[i].mailbox = true;
	f->n[i].depth = 3;
	log_append(&f->n[i], "frontend: listening on :8080\n");
	i = add_node(f, "/web/api", false, "running");
	f->n[i].group = true;
	f->n[i].state = "running";
	/* /web/api is the instances group: its nodes are /web/api/N. */
	f->n[i].used = false;
	i = add_node(f, "/web/api/0", false, "running");
	f->n[i].mailbox = true;
	i = add_node(f, "/web/api/1", false, "running");
	f->n[i].mailbox = true;
	f->n[i].depth = 700;
	i = add_node(f, "/db", false, "restarting");
	f->n[i].restarts = 4;
	f->n[i].incarnation = 5;
	strcpy(f->n[i].last_exit, "exited 1");
	i = add_node(f, "/batch", false, "stopped");
	f->n[i].mailbox = true;
	strcpy(f->n[i].last_exit, "exited 0");
	i = add_node(f, "/broken", false, "stopped");
	f->n[i].start_error = "No such file or directory: /usr/bin/nonexistent";
}

static void
add_deadletter(struct fake *f, const char *to, const char *from,
    const char *reason, uint32_t tag, uint32_t size)
{
	struct ctl_deadletter *d;

	if (f->ndl == MAXDL) {
		memmove(f->dl, f->dl + 1, (MAXDL - 1) * sizeof(f->dl[0]));
		f->ndl--;
	}
	d = &f->dl[f->ndl++];
	memset(d, 0, sizeof(*d));
	d->seq = ++f->dlseq;
	d->time_ms = (uint64_t)time(NULL) * 1000 + d->seq;
	snprintf(d->recipient, sizeof(d->recipient), "%s", to);
	snprintf(d->sender, sizeof(d->sender), "%s", from);
	snprintf(d->reason, sizeof(d->reason), "%s", reason);
	d->tag = tag;
	d->size = size;
}

static int
pend_add(struct fake *f, enum pkind kind, struct ctl_reply *r, uint64_t due,
    int node, uint64_t cursor)
{
	struct itimerspec its;
	int i;

	for (i = 0; i < MAXPEND; i++)
		if (!f->p[i].used)
			break;
	if (i == MAXPEND) {
		ctl_reply_error(r, CTL_E_BUSY, "fake: too many pending replies");
		return CTL_REPLY_NOW;
	}
	f->p[i] = (struct pend){ true, kind, r, due, node, cursor, 0 };
	/* A coarse 10 ms tick while something is pending. */
	memset(&its, 0, sizeof(its));
	its.it_value.tv_nsec = 10000000;
	its.it_interval.tv_nsec = 10000000;
	timerfd_settime(f->timer_fd, 0, &its, NULL);
	return CTL_REPLY_LATER;
}

static void
put_node(struct ctl_reply *r, const struct fnode *n)
{
	struct ctl_node cn;

	memset(&cn, 0, sizeof(cn));
	snprintf(cn.path, sizeof(cn.path), "%s", n->path);
	snprintf(cn.kind, sizeof(cn.kind), "%s", n->sup ? "supervisor" : "worker");
	snprintf(cn.state, sizeof(cn.state), "%s", n->state);
	cn.pid = n->pid;
	cn.uptime_ms = n->pid ? ms_now() - n->started : 0;
	cn.restarts = n->restarts;
	cn.period_restarts = n->sup ? 1 : 0;
	cn.incarnation = n->incarnation;
	snprintf(cn.last_exit, sizeof(cn.last_exit), "%s", n->last_exit);
	cn.mailbox_depth = n->mailbox ? (int64_t)n->depth : -1;
	snprintf(cn.strategy, sizeof(cn.strategy), "%s", n->strategy);
	if (n->sup) {
		cn.intensity = 5;
		cn.period = 10;
	}
	ctl_reply_node(r, &cn);
}

static bool
under(const char *path, const char *top)
{
	size_t n = strlen(top);

	if (strcmp(top, "/") == 0 || strcmp(path, top) == 0)
		return true;
	return strncmp(path, top, n) == 0 && path[n] == '/';
}

/* --- the backend --------------------------------------------------------- */

static int
fb_status(void *ctx, const char *path, struct ctl_reply *r)
{
	struct fake	*f = ctx;
	int		 i;

	if (path != NULL && find(f, path) == -1) {
		ctl_reply_error(r, CTL_E_NOENT, "no such path");
		return CTL_REPLY_NOW;
	}
	for (i = 0; i < MAXNODES; i++)
		if (f->n[i].used && (path == NULL || under(f->n[i].path, path)))
			put_node(r, &f->n[i]);
	return CTL_REPLY_NOW;
}

static int
lookup(struct fake *f, const char *path, struct ctl_reply *r)
{
	int i;

	if ((i = find(f, path)) == -1)
		ctl_reply_error(r, CTL_E_NOENT, "no such path");
	return i;
}

static void
run(struct fake *f, struct fnode *n)
{
	n->state = "running";
	n->pid = f->nextpid++;
	n->started = ms_now();
	n->incarnation++;
}

/* A fake SIGTERM: n has no process, is in state, and a running n says so. */
static void
take_down(struct fnode *n, const char *state)
{
	if (strcmp(n->state, "running") == 0)
		strcpy(n->last_exit, "killed by signal 15");
	n->state = state;
	n->pid = 0;
}

static int
fb_start(void *ctx, const char *path, struct ctl_reply *r)
{
	struct fake	*f = ctx;
	struct fnode	*n;
	int		 i;

	if ((i = lookup(f, path, r)) == -1)
		return CTL_REPLY_NOW;
	n = &f->n[i];
	if (strcmp(n->state, "running") == 0 ||
	    strcmp(n->state, "restarting") == 0)
		ctl_reply_error(r, CTL_E_STATE, "%s", n->state);
	else if (n->start_error != NULL)
		ctl_reply_error(r, CTL_E_FAILED, "%s", n->start_error);
	else
		run(f, n);
	return CTL_REPLY_NOW;
}

static int
fb_stop(void *ctx, const char *path, struct ctl_reply *r)
{
	struct fake	*f = ctx;
	int		 i, k;

	if ((i = lookup(f, path, r)) == -1)
		return CTL_REPLY_NOW;
	for (k = 0; k < MAXNODES; k++) {
		if (!f->n[k].used || !under(f->n[k].path, path) || f->n[k].sup)
			continue;
		take_down(&f->n[k], "stopped");
	}
	return CTL_REPLY_NOW;
}

static int
fb_restart(void *ctx, const char *path, struct ctl_reply *r)
{
	struct fake	*f = ctx;
	int		 i;

	if ((i = lookup(f, path, r)) == -1)
		return CTL_REPLY_NOW;
	if (f->n[i].start_error != NULL) {
		ctl_reply_error(r, CTL_E_FAILED, "%s", f->n[i].start_error);
		return CTL_REPLY_NOW;
	}
	take_down(&f->n[i], "starting");
	/* Answered when the new incarnation runs. */
	return pend_add(f, P_RESTART, r, ms_now() + RESTART_DELAY, i, 0);
}

static int
fb_kill(void *ctx, const char *path, int signo, bool tree,
    struct ctl_reply *r)
{
	struct fake	*f = ctx;
	struct fnode	*n;
	int		 i;

	if ((i = lookup(f, path, r)) == -1)
		return CTL_REPLY_NOW;
	n = &f->n[i];
	if (n->sup && !tree) {
		ctl_reply_error(r, CTL_E_INVAL, "%s is a supervisor: give "
		    "--tree to signal every worker under it", path);
		return CTL_REPLY_NOW;
	}
	if (n->pid == 0) {
		ctl_reply_error(r, CTL_E_DOWN, "not running");
		return CTL_REPLY_NOW;
	}
	snprintf(n->last_exit, sizeof(n->last_exit), "killed by signal %d",
	    signo);
	n->restarts++;
	run(f, n);	/* the fake supervisor restarts it at once */
	return CTL_REPLY_NOW;
}

static int
fb_add(void *ctx, const char *path, struct ctl_reply *r)
{
	struct fake	*f = ctx;
	char		 parent[CTL_PATH_MAX], *slash;
	int		 i;

	if ((i = find(f, path)) != -1) {
		ctl_reply_error(r, CTL_E_EXISTS, "exists, %s",
		    strcmp(f->n[i].state, "running") == 0 ? "running" :
		    "not running");
		return CTL_REPLY_NOW;
	}
	snprintf(parent, sizeof(parent), "%s", path);
	if ((slash = strrchr(parent, '/')) != NULL)
		*slash = '\0';
	if (strcmp(parent, "/web/api") != 0) {
		ctl_reply_error(r, CTL_E_NOENT, "%s: no worker with instances",
		    parent[0] ? parent : "/");
		return CTL_REPLY_NOW;
	}
	if ((i = add_node(f, path, false, "running")) == -1) {
		ctl_reply_error(r, CTL_E_FAILED, "fake tree full");
		return CTL_REPLY_NOW;
	}
	f->n[i].mailbox = true;
	f->n[i].started = ms_now();
	return CTL_REPLY_NOW;
}

static int
fb_remove(void *ctx, const char *path, struct ctl_reply *r)
{
	struct fake	*f = ctx;
	int		 i;

	if ((i = lookup(f, path, r)) == -1)
		return CTL_REPLY_NOW;
	if (strcmp(f->n[i].state, "running") == 0 ||
	    strcmp(f->n[i].state, "restarting") == 0)
		ctl_reply_error(r, CTL_E_STATE, "%s (stop it first)",
		    f->n[i].state);
	else
		f->n[i].used = false;
	return CTL_REPLY_NOW;
}

static int
fb_reload(void *ctx, struct ctl_reply *r)
{
	struct fake	*f = ctx;
	char		 path[512], line[256];
	FILE		*fp;

	snprintf(path, sizeof(path), "%s/reload-error", f->dir);
	if ((fp = fopen(path, "r")) != NULL) {
		if (fgets(line, sizeof(line), fp) == NULL)
			line[0] = '\0';
		fclose(fp);
		line[strcspn(line, "\n")] = '\0';
		ctl_reply_error(r, CTL_E_FAILED, "%s", line);
	} else
		ctl_reply_message(r, "reloaded: 0 started, 0 stopped, "
		    "0 restarted");
	return CTL_REPLY_NOW;
}

static void	answer(struct fake *, struct pend *);

/*
 * Something new for the followers: answer them at once, from inside the
 * command that caused it (another client's request), as actord would.
 */
static void
wake(struct fake *f, enum pkind kind, int node)
{
	int i;

	for (i = 0; i < MAXPEND; i++)
		if (f->p[i].used && f->p[i].kind == kind &&
		    (node == -1 || f->p[i].node == node)) {
			f->p[i].used = false;
			answer(f, &f->p[i]);
		}
}

static int
fb_send(void *ctx, const char *path, uint32_t tag, const void *data,
    size_t len, struct ctl_reply *r)
{
	struct fake	*f = ctx;
	struct fnode	*n;
	char		 line[128];
	int		 i;

	(void)data;
	if ((i = lookup(f, path, r)) == -1)
		return CTL_REPLY_NOW;
	n = &f->n[i];
	if (!n->mailbox) {
		ctl_reply_error(r, CTL_E_INVAL, "has no mailbox");
		return CTL_REPLY_NOW;
	}
	if (strcmp(n->state, "stopped") == 0) {
		/* while_down = reject: the message is a dead letter. */
		add_deadletter(f, path, "", "actor down", tag, len);
		wake(f, P_DL, -1);
		return CTL_REPLY_NOW;
	}
	n->received++;
	snprintf(line, sizeof(line), "%s: got tag %u (%zu bytes)\n",
	    path + 1, tag, len);
	log_append(n, line);
	wake(f, P_LOG, i);
	return CTL_REPLY_NOW;
}

static int
fb_ask(void *ctx, const char *path, uint32_t tag, const void *data,
    size_t len, uint32_t timeout_ms, struct ctl_reply *r)
{
	struct fake	*f = ctx;
	int		 i, rc;

	if ((i = lookup(f, path, r)) == -1)
		return CTL_REPLY_NOW;
	if (strcmp(f->n[i].state, "running") != 0) {
		ctl_reply_error(r, CTL_E_DOWN, "not running");
		return CTL_REPLY_NOW;
	}
	if (tag == 1) {		/* echo */
		ctl_reply_data(r, data, len);
		return CTL_REPLY_NOW;
	}
	/* Any other tag: the fake actor never answers. */
	rc = pend_add(f, P_ASK, r, ms_now() + timeout_ms, i, 0);
	for (i = 0; i < MAXPEND; i++)
		if (f->p[i].used && f->p[i].reply == r)
			f->p[i].timeout = timeout_ms;
	return rc;
}

static bool
dl_answer(struct fake *f, uint64_t cursor, struct ctl_reply *r)
{
	size_t	 i;
	bool	 any = false;

	for (i = 0; i < f->ndl; i++)
		if (f->dl[i].seq > cursor || cursor == UINT64_MAX) {
			ctl_reply_deadletter(r, &f->dl[i]);
			any = true;
		}
	ctl_reply_cursor(r, f->dlseq);
	return any;
}

static int
fb_deadletters(void *ctx, uint64_t cursor, bool wait, struct ctl_reply *r)
{
	struct fake *f = ctx;

	if (!wait || cursor == UINT64_MAX) {
		dl_answer(f, cursor, r);
		return CTL_REPLY_NOW;
	}
	for (size_t i = 0; i < f->ndl; i++)
		if (f->dl[i].seq > cursor) {
			dl_answer(f, cursor, r);
			return CTL_REPLY_NOW;
		}
	return pend_add(f, P_DL, r, 0, -1, cursor);
}

static void
actor_stats(const struct fnode *n, struct ctl_actor_stats *s)
{
	static const uint64_t le[4] = { 100, 1000, 10000, 100000 };
	int k;

	memset(s, 0, sizeof(*s));
	snprintf(s->path, sizeof(s->path), "%s", n->path);
	s->depth = n->depth;
	s->capacity = 1024;
	s->wait_p50_us = 80;
	s->wait_p99_us = 2100;
	s->handle_p50_us = 40;
	s->handle_p99_us = 900;
	s->restarts = n->restarts;
	s->sent = 10;
	s->received = n->received + 20;
	s->dropped = 1;
	s->deadlettered = 2;
	s->asks_failed = 3;
	for (k = 0; k < 4; k++) {
		s->wait.le_us[k] = s->handle.le_us[k] = le[k];
		s->wait.count[k] = 10 - 2 * k;
		s->handle.count[k] = 12 - 3 * k;
	}
	s->wait.nbuckets = s->handle.nbuckets = 4;
	s->wait.total = 10 + 8 + 6 + 4 + 1;
	s->wait.sum_us = 12345;
	s->handle.total = 12 + 9 + 6 + 3;
	s->handle.sum_us = 6789;
}

static int
fb_stats(void *ctx, const char *path, struct ctl_reply *r)
{
	struct fake		*f = ctx;
	struct ctl_actor_stats	 s;
	struct ctl_shard_group	 g;
	int			 i;

	if (path != NULL && lookup(f, path, r) == -1)
		return CTL_REPLY_NOW;
	for (i = 0; i < MAXNODES; i++)
		if (f->n[i].used && f->n[i].mailbox &&
		    (path == NULL || under(f->n[i].path, path))) {
			actor_stats(&f->n[i], &s);
			ctl_reply_actor(r, &s);
		}
	if (path == NULL || under("/web/api", path)) {
		memset(&g, 0, sizeof(g));
		strcpy(g.name, "/web/api");
		g.nshards = 4;
		g.count[0] = 100;
		g.count[1] = 110;
		g.count[2] = 600;
		g.count[3] = 90;
		ctl_reply_shards(r, &g);
	}
	return CTL_REPLY_NOW;
}

static int
fb_log(void *ctx, const char *path, uint64_t cursor, bool wait,
    struct ctl_reply *r)
{
	struct fake	*f = ctx;
	struct fnode	*n;
	int		 i;

	if ((i = lookup(f, path, r)) == -1)
		return CTL_REPLY_NOW;
	n = &f->n[i];
	if (cursor == UINT64_MAX)
		cursor = 0;	/* the whole (small) fake log is the tail */
	if (cursor > n->loglen)
		cursor = n->loglen;
	if (cursor < n->loglen || !wait) {
		ctl_reply_data(r, n->log + cursor, n->loglen - cursor);
		ctl_reply_cursor(r, n->loglen);
		return CTL_REPLY_NOW;
	}
	return pend_add(f, P_LOG, r, 0, i, cursor);
}

static int
fb_shutdown(void *ctx, struct ctl_reply *r)
{
	struct fake *f = ctx;

	f->shutting_down = true;
	ctl_reply_message(r, "shutting down");
	return CTL_REPLY_NOW;
}

static void
fb_cancel(void *ctx, struct ctl_reply *r)
{
	struct fake	*f = ctx;
	int		 i;

	for (i = 0; i < MAXPEND; i++)
		if (f->p[i].used && f->p[i].reply == r)
			f->p[i].used = false;
}

static const struct ctl_backend fake_backend = {
	.status = fb_status,
	.start = fb_start,
	.stop = fb_stop,
	.restart = fb_restart,
	.kill = fb_kill,
	.add = fb_add,
	.remove = fb_remove,
	.reload = fb_reload,
	.send = fb_send,
	.ask = fb_ask,
	.deadletters = fb_deadletters,
	.stats = fb_stats,
	.log = fb_log,
	.shutdown = fb_shutdown,
	.cancel = fb_cancel,
};

static void
answer(struct fake *f, struct pend *p)
{
	struct fnode *n;

	switch (p->kind) {
	case P_RESTART:
		run(f, &f->n[p->node]);
		break;
	case P_ASK:
		ctl_reply_error(p->reply, CTL_E_TIMEOUT,
		    "no answer within %u ms", p->timeout);
		break;
	case P_DL:
		dl_answer(f, p->cursor, p->reply);
		break;
	case P_LOG:
		n = &f->n[p->node];
		ctl_reply_data(p->reply, n->log + p->cursor,
		    n->loglen - p->cursor);
		ctl_reply_cursor(p->reply, n->loglen);
		break;
	}
	ctl_reply_finish(p->reply);
}

/* The tick: answer what is due. */
static void
tick(struct fake *f)
{
	struct pend	*p;
	uint64_t	 now = ms_now();
	int		 i, left = 0;

	for (i = 0; i < MAXPEND; i++) {
		p = &f->p[i];
		if (!p->used)
			continue;
		if (p->due == 0 || p->due > now) {
			left++;
			continue;
		}
		p->used = false;
		answer(f, p);
	}
	if (left == 0) {
		struct itimerspec its;

		memset(&its, 0, sizeof(its));
		timerfd_settime(f->timer_fd, 0, &its, NULL);
	}
}

int
main(int argc, char **argv)
{
	struct control_config	 cfg;
	struct control		*ctl;
	struct metrics_http	*mh = NULL;
	struct fake		 f;
	struct epoll_event	 ev, evs[8];
	sigset_t		 set;
	const char		*maddr = NULL;
	char			 err[512];
	uint64_t		 ticks, stop_at = 0;
	struct rlimit		 rl;
	int			 ch, ep, sfd, i, n, nofile = 0, extra = 0;
	bool			 gave_up = false;

	memset(&cfg, 0, sizeof(cfg));
	memset(&f, 0, sizeof(f));
	while ((ch = getopt(argc, argv, "Gd:g:m:c:u:t:n:w:")) != -1) {
		switch (ch) {
		case 'G': gave_up = true; break;
		case 'd': cfg.runtime_dir = optarg; break;
		case 'g': cfg.group = optarg; break;
		case 'm': maddr = optarg; break;
		case 'c': cfg.max_clients = atoi(optarg); break;
		case 'u': cfg.max_per_uid = atoi(optarg); break;
		case 't': cfg.timeout_ms = atoi(optarg); break;
		case 'n': nofile = atoi(optarg); break;
		case 'w': extra = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: ctl_fake_server -d DIR [-g GROUP] "
			    "[-m ADDR] [-c MAX] [-t MS]\n");
			return 2;
		}
	}
	if (cfg.runtime_dir == NULL)
		return 2;
	log_init("ctl_fake_server", 1);
	f.dir = cfg.runtime_dir;
	init_tree(&f);
	if (gave_up && (i = find(&f, "/web")) != -1) {
		f.n[i].restarts = 1;
		snprintf(f.n[i].last_exit, sizeof(f.n[i].last_exit), "gave up: "
		    "/web/frontend exited 1; more than 5 restarts in 10 s");
	}
	if (extra > 0)
		add_node(&f, "/bulk", true, "running");
	for (i = 0; i < extra; i++) {
		char p[32];

		snprintf(p, sizeof(p), "/bulk/w%d", i);
		if (add_node(&f, p, false, "running") == -1)
			break;
	}
	add_deadletter(&f, "/web/api/1", "/web/frontend", "mailbox full", 7, 12);
	add_deadletter(&f, "/gone", "/web/frontend", "no such actor", 3, 0);
	add_deadletter(&f, "/db", "", "actor down", 9, 40);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if ((sfd = signalfd(-1, &set, SFD_CLOEXEC)) == -1 ||
	    (f.timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC |
	    TFD_NONBLOCK)) == -1 || (ep = epoll_create1(EPOLL_CLOEXEC)) == -1)
		fatal("setup");
	if ((ctl = control_open(&cfg, &fake_backend, &f, err, sizeof(err))) ==
	    NULL)
		fatalx("%s", err);
	if (maddr != NULL && (mh = metrics_open(maddr, &fake_backend, &f,
	    control_counters(ctl), err, sizeof(err))) == NULL)
		fatalx("%s", err);
	/* The inner epoll descriptors go into the main loop's epoll. */
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.u32 = 0;
	epoll_ctl(ep, EPOLL_CTL_ADD, control_fd(ctl), &ev);
	ev.data.u32 = 1;
	epoll_ctl(ep, EPOLL_CTL_ADD, f.timer_fd, &ev);
	ev.data.u32 = 2;
	epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
	if (mh != NULL) {
		ev.data.u32 = 3;
		epoll_ctl(ep, EPOLL_CTL_ADD, metrics_fd(mh), &ev);
	}
	if (nofile > 0) {
		rl.rlim_cur = rl.rlim_max = nofile;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
			fatal("setrlimit");
	}
	printf("ready %d\n", mh != NULL ? metrics_port(mh) : 0);
	fflush(stdout);
	for (;;) {
		n = epoll_wait(ep, evs, 8, stop_at ? 20 : -1);
		if (n == -1 && errno != EINTR)
			fatal("epoll_wait");
		for (i = 0; i < n; i++) {
			switch (evs[i].data.u32) {
			case 0:
				control_dispatch(ctl);
				break;
			case 1:
				(void)!read(f.timer_fd, &ticks, sizeof(ticks));
				tick(&f);
				break;
			case 2:
				goto out;
			case 3:
				metrics_dispatch(mh);
				break;
			}
		}
		/* After shutdown: let the answer go out, then leave. */
		if (f.shutting_down && stop_at == 0)
			stop_at = ms_now() + 200;
		if (stop_at != 0 && (ms_now() >= stop_at ||
		    control_counters(ctl)->clients == 0))
			break;
	}
out:
	metrics_close(mh);
	control_close(ctl);
	return 0;
}
