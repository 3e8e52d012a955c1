/*
 * api.c: the small C API that the control socket (and embedding programs)
 * call: find a node by path, start, stop, restart with a completion
 * callback, kill with a signal, add an instance to a group, remove a
 * stopped node, walk the tree for status.  Reload lives in reload.c.
 *
 * It owns the checks that make a request valid.  It must never change a
 * supervisor's plan: a node whose supervisor is in the middle of an
 * operation (a set restart, a stop) is busy, and the request is refused
 * with EBUSY rather than raced.  Manual stops, starts and restarts never
 * count toward restart intensity.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/actord.h"
#include "supervisor/log.h"

static int	check_node(struct actord *, const char *, struct node **);
static int	kill_tree(struct node *, int);

struct node *
actord_find(struct actord *ad, const char *path)
{
	return node_find(ad->root, path);
}

static int
check_node(struct actord *ad, const char *path, struct node **np)
{
	struct node *n;

	if ((n = node_find(ad->root, path)) == NULL)
		return ENOENT;
	if (n->parent == NULL)
		return EINVAL;		/* the root: use shutdown */
	if (ad->shutting_down || ad->done)
		return ESHUTDOWN;
	if (n->done != NULL || n->api_stop)
		return EBUSY;		/* one operation at a time */
	if (n->parent->op != OP_NONE && n->parent->op != OP_BOOT)
		return EBUSY;
	/* Its supervisor waits for this start: do not pull it away. */
	if (n->state == NS_STARTING && (n->why == WHY_BOOT ||
	    n->why == WHY_SET))
		return EBUSY;
	*np = n;
	return 0;
}

int
actord_start_node(struct actord *ad, const char *path, done_fn done,
    void *arg)
{
	struct node *n;
	int e;

	if ((e = check_node(ad, path, &n)) != 0)
		return e;
	if (!node_is_down(n))
		return EALREADY;
	if (n->parent->state != NS_RUNNING)
		return EAGAIN;		/* its supervisor is not up */
	if (timer_pending(&n->backoff))
		timer_cancel(&ad->loop, &n->backoff);
	n->manual_stopped = false;
	n->done = done;
	n->done_arg = arg;
	log_info("%s: start asked", n->path);
	node_start(n, WHY_MANUAL);
	return 0;
}

int
actord_stop_node(struct actord *ad, const char *path, done_fn done,
    void *arg)
{
	struct node *n;
	int e;

	if ((e = check_node(ad, path, &n)) != 0)
		return e;
	log_info("%s: stop asked", n->path);
	if (node_is_down(n)) {
		/* A restart loop ends here: no further attempts. */
		if (timer_pending(&n->backoff))
			timer_cancel(&ad->loop, &n->backoff);
		if (n->state == NS_RESTARTING)
			n->state = NS_STOPPED;
		n->manual_stopped = true;
		if (done != NULL)
			done(arg, 0, NULL);
		return 0;
	}
	if (n->state == NS_STOPPING)
		return EBUSY;
	n->api_stop = true;
	n->done = done;
	n->done_arg = arg;
	node_stop(n);
	return 0;
}

int
actord_restart_node(struct actord *ad, const char *path, done_fn done,
    void *arg)
{
	struct node *n;
	int e;

	if ((e = check_node(ad, path, &n)) != 0)
		return e;
	if (node_is_down(n))
		return actord_start_node(ad, path, done, arg);
	if (n->state == NS_STOPPING)
		return EBUSY;
	log_info("%s: restart asked", n->path);
	n->api_stop = true;
	n->api_restart = true;
	n->done = done;
	n->done_arg = arg;
	node_stop(n);
	return 0;
}

static int
kill_tree(struct node *n, int sig)
{
	size_t i;
	int sent = 0;

	if (n->kind == NODE_WORKER) {
		if (n->pid > 0 && killpg(n->pid, sig) == 0) {
			cgroup_signal(n, sig);	/* and what left the group */
			sent++;
		}
		return sent;
	}
	for (i = 0; i < n->nkids; i++)
		sent += kill_tree(n->kids[i], sig);
	return sent;
}

/*
 * A signal to a node's process groups, as if sent from outside: a death by
 * SIGTERM sent this way is a clean exit for the restart rules.
 */
int
actord_kill_node(struct actord *ad, const char *path, int sig)
{
	struct node *n;

	if ((n = node_find(ad->root, path)) == NULL)
		return ENOENT;
	if (sig < 0 || sig >= NSIG)
		return EINVAL;
	log_info("%s: signal %d asked", n->path, sig);
	return kill_tree(n, sig) > 0 ? 0 : ESRCH;
}

/* A new instance name/N, N one past the highest; started if the group runs. */
int
actord_add_instance(struct actord *ad, const char *path, done_fn done,
    void *arg, char *newpath, size_t len)
{
	struct node *g, *n;
	char name[16];
	unsigned long next = 0, v;
	size_t i;
	char *end;

	if ((g = node_find(ad->root, path)) == NULL)
		return ENOENT;
	if (g->kind != NODE_GROUP)
		return EINVAL;
	if (ad->shutting_down || ad->done)
		return ESHUTDOWN;
	if (g->op != OP_NONE)
		return EBUSY;
	for (i = 0; i < g->nkids; i++) {
		v = strtoul(g->kids[i]->name, &end, 10);
		if (*end == '\0' && v + 1 > next)
			next = v + 1;
	}
	snprintf(name, sizeof(name), "%lu", next);
	if ((n = node_new_child(g, g->cs, name)) == NULL)
		return errno == ENOSPC ? ENOSPC : ENOMEM;
	if (node_insert(g, n, g->nkids) == -1) {
		node_free(n);
		return ENOMEM;
	}
	n->dynamic = true;
	if (newpath != NULL)
		snprintf(newpath, len, "%s", n->path);
	log_info("%s: instance added", n->path);
	if (g->state != NS_RUNNING) {
		if (done != NULL)
			done(arg, 0, NULL);
		return 0;
	}
	n->done = done;
	n->done_arg = arg;
	node_start(n, WHY_MANUAL);
	return 0;
}

int
actord_remove_node(struct actord *ad, const char *path)
{
	struct node *n;
	int e;

	if ((e = check_node(ad, path, &n)) != 0)
		return e;
	if (!node_is_down(n))
		return EBUSY;
	if (timer_pending(&n->backoff))
		timer_cancel(&ad->loop, &n->backoff);
	log_info("%s: removed", n->path);
	node_unlink(n);
	node_free(n);
	return 0;
}

void
actord_walk(struct actord *ad, walk_fn fn, void *arg)
{
	node_walk(ad->root, fn, arg);
}
