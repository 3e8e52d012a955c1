/*
 * tree.c: the nodes of the running tree: building them from a spec, their
 * paths (/db, /web/frontend, /counter/3), lookup by path and by pid,
 * insertion and removal, and the walk that status uses.
 *
 * It owns the memory of nodes and the pid index: a hash table from each
 * running worker's pid to its node (chained through pid_next, as many
 * buckets as workers with a pid, doubled as they grow), so that the reap
 * of one pid costs the same in a tree of 10 or of 10,000 workers.  Every
 * change of a node's pid goes through node_set_pid.  A node is never freed
 * in the middle of an event-loop turn (an epoll batch may still point into
 * it): node_free puts it in a graveyard that tree_release empties between
 * turns.  It must never start or stop anything.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/actord.h"
#include "supervisor/config.h"
#include "supervisor/log.h"
#include "worker/remote.h"

static struct node *node_alloc(struct actord *, struct node *, const char *);
static int	build_children(struct node *, const struct sup_spec *);
static void	all_remove(struct node *);
static void	renumber(struct node *, size_t);
static void	walk(struct node *, unsigned, walk_fn, void *);
static void	walk_placed(struct node *, unsigned, walk_fn, void *);
static size_t	pid_bucket(const struct actord *, pid_t);
static void	pid_unlink(struct node *);
static void	pid_grow(struct actord *);

#define PID_BUCKETS_MIN	64

static struct node *
node_alloc(struct actord *ad, struct node *parent, const char *name)
{
	struct node *n;

	if ((n = calloc(1, sizeof(*n))) == NULL)
		return NULL;
	n->ad = ad;
	n->parent = parent;
	n->id = ++ad->next_id;
	snprintf(n->name, sizeof(n->name), "%s", name);
	if (parent == NULL)
		snprintf(n->path, sizeof(n->path), "/");
	else if (parent->parent == NULL)
		snprintf(n->path, sizeof(n->path), "/%s", name);
	else if (snprintf(n->path, sizeof(n->path), "%s/%s", parent->path,
	    name) >= (int)sizeof(n->path))
		log_warnx("%s: path truncated", n->path);
	n->state = NS_STOPPED;
	n->notify_fd = n->pidfd = -1;
	n->mbox = -1;
	n->notify_ev.fd = n->pid_ev.fd = -1;
	timer_init(&n->timer, NULL, n);
	timer_init(&n->backoff, NULL, n);
	timer_init(&n->op_timer, NULL, n);
	n->prev_all = NULL;
	n->next_all = ad->all;
	if (ad->all != NULL)
		ad->all->prev_all = n;
	ad->all = n;
	return n;
}

/* A child node under parent, built from cs, with its own children. */
struct node *
node_new_child(struct node *parent, const struct child_spec *cs,
    const char *name)
{
	struct node *n, *k;
	char iname[16];
	unsigned i;
	int saved;

	if ((n = node_alloc(parent->ad, parent, name)) == NULL)
		return NULL;
	n->cs = cs;
	if (parent->kind == NODE_GROUP) {
		n->kind = NODE_WORKER;	/* an instance */
		if (mailboxes_assign(n) == -1)
			goto fail;	/* ENOSPC: no spare mailbox fits */
	} else if (cs->kind == CHILD_SUPERVISOR) {
		n->kind = NODE_SUP;
		n->ss = cs->sup;
		if (build_children(n, cs->sup) == -1)
			goto fail;
	} else if (cs->instances > 0) {
		n->kind = NODE_GROUP;
		n->group_ss = *parent->ss;
		n->group_ss.strategy = STRATEGY_ONE_FOR_ONE;
		n->group_ss.children = NULL;
		n->group_ss.nchildren = 0;
		n->ss = &n->group_ss;
		for (i = 0; i < cs->instances; i++) {
			/* Another node's shard is a placement, not a node. */
			if (n->ad->spec != NULL && !node_spec_local(
			    n->ad->spec->node, n->path, cs, i))
				continue;
			snprintf(iname, sizeof(iname), "%u", i);
			if ((k = node_new_child(n, cs, iname)) == NULL ||
			    node_insert(n, k, n->nkids) == -1)
				goto fail;
		}
	} else {
		n->kind = NODE_WORKER;
		if (mailboxes_assign(n) == -1)
			goto fail;
	}
	return n;
fail:
	saved = errno;
	node_free(n);
	errno = saved;
	return NULL;
}

static int
build_children(struct node *s, const struct sup_spec *ss)
{
	struct node *k;
	size_t i;

	for (i = 0; i < ss->nchildren; i++) {
		if ((k = node_new_child(s, &ss->children[i],
		    ss->children[i].name)) == NULL)
			return -1;
		if (node_insert(s, k, s->nkids) == -1) {
			node_free(k);
			return -1;
		}
	}
	return 0;
}

struct node *
tree_build(struct actord *ad, const struct actord_spec *spec)
{
	struct node *root;

	if ((root = node_alloc(ad, NULL, "")) == NULL)
		return NULL;
	root->kind = NODE_SUP;
	root->ss = &spec->root;
	if (build_children(root, &spec->root) == -1) {
		node_free(root);
		return NULL;
	}
	return root;
}

int
node_insert(struct node *s, struct node *n, size_t at)
{
	struct node **nk;
	size_t ncap;

	if (s->nkids == s->kidcap) {
		ncap = s->kidcap ? s->kidcap * 2 : 8;
		if ((nk = reallocarray(s->kids, ncap, sizeof(*nk))) == NULL)
			return -1;
		s->kids = nk;
		s->kidcap = ncap;
	}
	if (at > s->nkids)
		at = s->nkids;
	memmove(&s->kids[at + 1], &s->kids[at],
	    (s->nkids - at) * sizeof(*s->kids));
	s->kids[at] = n;
	s->nkids++;
	n->parent = s;
	renumber(s, at);
	return 0;
}

/* Children from "from" on learn their place again (node_index). */
static void
renumber(struct node *s, size_t from)
{
	size_t i;

	for (i = from; i < s->nkids; i++)
		s->kids[i]->at = i;
}

/* Take n out of its parent's children (it stays in the pid list). */
void
node_unlink(struct node *n)
{
	struct node *s = n->parent;
	size_t i;

	if (s == NULL || (i = node_index(n)) >= s->nkids)
		return;
	memmove(&s->kids[i], &s->kids[i + 1],
	    (s->nkids - i - 1) * sizeof(*s->kids));
	s->nkids--;
	renumber(s, i);
}

static void
all_remove(struct node *n)
{
	struct actord *ad = n->ad;

	/* O(1): a tree of N freed at once is O(N), not O(N^2). */
	if (n->prev_all != NULL)
		n->prev_all->next_all = n->next_all;
	else if (ad->all == n)
		ad->all = n->next_all;
	else
		return;			/* not in the list */
	if (n->next_all != NULL)
		n->next_all->prev_all = n->prev_all;
	n->next_all = n->prev_all = NULL;
}

/* Release n and its subtree: descriptors and timers now, memory later. */
void
node_free(struct node *n)
{
	struct actord *ad = n->ad;
	size_t i;

	for (i = 0; i < n->nkids; i++)
		node_free(n->kids[i]);
	n->nkids = 0;
	timer_cancel(&ad->loop, &n->timer);
	timer_cancel(&ad->loop, &n->backoff);
	timer_cancel(&ad->loop, &n->op_timer);
	ready_release(n);
	worker_unwatch(n);
	mailboxes_release(n);
	output_node_gone(n);
	cgroup_remove(n);
	api_cancel(n, "node removed");
	pid_unlink(n);		/* its pid (if any) no longer names it */
	all_remove(n);
	n->gone = true;
	n->next_all = ad->graveyard;
	ad->graveyard = n;
}

void
tree_release(struct actord *ad)
{
	struct node *n;

	while ((n = ad->graveyard) != NULL) {
		ad->graveyard = n->next_all;
		free(n->kids);
		plan_free(&n->plan);
		free(n->decisions);
		free(n->tail);
		free(n);
	}
}

struct node *
node_find(struct node *root, const char *path)
{
	struct node *n = root;
	const char *p = path, *e;
	size_t i, len;

	if (root == NULL || path == NULL || path[0] != '/')
		return NULL;
	while (*p == '/')
		p++;
	while (*p != '\0') {
		e = strchr(p, '/');
		len = e != NULL ? (size_t)(e - p) : strlen(p);
		for (i = 0; i < n->nkids; i++)
			if (strlen(n->kids[i]->name) == len &&
			    memcmp(n->kids[i]->name, p, len) == 0)
				break;
		if (i == n->nkids)
			return NULL;
		n = n->kids[i];
		p += len;
		while (*p == '/')
			p++;
	}
	return n;
}

static size_t
pid_bucket(const struct actord *ad, pid_t pid)
{
	/* Fibonacci hashing: consecutive pids spread over the buckets. */
	return (size_t)(((uint32_t)pid * 2654435769u) >> 8) &
	    (ad->pid_nbuckets - 1);
}

/* Take n out of the pid index, if it is there. */
static void
pid_unlink(struct node *n)
{
	struct actord *ad = n->ad;
	struct node **pp;

	if (n->pid <= 0 || ad->pid_buckets == NULL)
		return;
	for (pp = &ad->pid_buckets[pid_bucket(ad, n->pid)]; *pp != NULL;
	    pp = &(*pp)->pid_next)
		if (*pp == n) {
			*pp = n->pid_next;
			n->pid_next = NULL;
			ad->npids--;
			return;
		}
}

/*
 * Twice the buckets once there are more pids than buckets.  Without
 * memory the table stays as it is: chains grow longer, lookups stay
 * right.  The first table indexes every worker that already has a pid
 * (none, unless an earlier allocation failed).
 */
static void
pid_grow(struct actord *ad)
{
	struct node **nb, *n, *next;
	size_t i, old = ad->pid_nbuckets, cap;

	if (ad->pid_buckets != NULL && ad->npids < old)
		return;
	cap = ad->pid_buckets == NULL ? PID_BUCKETS_MIN : old * 2;
	if ((nb = calloc(cap, sizeof(*nb))) == NULL)
		return;
	ad->pid_nbuckets = cap;
	if (ad->pid_buckets == NULL) {
		ad->pid_buckets = nb;
		ad->npids = 0;
		for (n = ad->all; n != NULL; n = n->next_all)
			if (n->pid > 0) {
				n->pid_next = nb[pid_bucket(ad, n->pid)];
				nb[pid_bucket(ad, n->pid)] = n;
				ad->npids++;
			}
		return;
	}
	for (i = 0; i < old; i++)
		for (n = ad->pid_buckets[i]; n != NULL; n = next) {
			next = n->pid_next;
			n->pid_next = nb[pid_bucket(ad, n->pid)];
			nb[pid_bucket(ad, n->pid)] = n;
		}
	free(ad->pid_buckets);
	ad->pid_buckets = nb;
}

/*
 * A worker's pid changes (forked: its pid; reaped: 0).  Returns -1 only
 * when no table could ever be allocated: then the pid is set but not
 * indexed, and node_by_pid walks every node.
 */
int
node_set_pid(struct node *n, pid_t pid)
{
	struct actord *ad = n->ad;
	size_t b;

	pid_unlink(n);
	n->pid = 0;		/* not indexed twice by a first table */
	if (pid <= 0)
		return 0;
	pid_grow(ad);
	n->pid = pid;
	if (ad->pid_buckets == NULL)
		return -1;
	b = pid_bucket(ad, pid);
	n->pid_next = ad->pid_buckets[b];
	ad->pid_buckets[b] = n;
	ad->npids++;
	return 0;
}

struct node *
node_by_pid(struct actord *ad, pid_t pid)
{
	struct node *n;

	if (pid <= 0)
		return NULL;
	if (ad->pid_buckets != NULL) {
		for (n = ad->pid_buckets[pid_bucket(ad, pid)]; n != NULL;
		    n = n->pid_next)
			if (n->pid == pid && n->kind == NODE_WORKER)
				return n;
		return NULL;
	}
	for (n = ad->all; n != NULL; n = n->next_all)
		if (n->kind == NODE_WORKER && n->pid == pid)
			return n;
	return NULL;
}

void
tree_pids_free(struct actord *ad)
{
	free(ad->pid_buckets);
	ad->pid_buckets = NULL;
	ad->pid_nbuckets = ad->npids = 0;
}

size_t
node_index(const struct node *n)
{
	size_t i;

	if (n->parent == NULL)
		return 0;
	/* O(1): plan_sort calls it O(N log N) times for a set of N. */
	if (n->at < n->parent->nkids && n->parent->kids[n->at] == n)
		return n->at;
	for (i = 0; i < n->parent->nkids; i++)
		if (n->parent->kids[i] == n)
			return i;
	return n->parent->nkids;
}

bool
node_is_down(const struct node *n)
{
	return n->state == NS_STOPPED || n->state == NS_FAILED ||
	    n->state == NS_RESTARTING;
}

const char *
node_state_name(enum node_state s)
{
	static const char *names[NS__COUNT] = {
		[NS_STOPPED] = "stopped",
		[NS_STARTING] = "starting",
		[NS_RUNNING] = "running",
		[NS_RESTARTING] = "restarting",
		[NS_STOPPING] = "stopping",
		[NS_FAILED] = "failed",
	};

	return s < NS__COUNT ? names[s] : "?";
}

const char *
node_kind_name(enum node_kind k)
{
	switch (k) {
	case NODE_WORKER:	return "worker";
	case NODE_SUP:		return "supervisor";
	case NODE_GROUP:	return "group";
	}
	return "?";
}

const char *
strategy_name(enum strategy s)
{
	switch (s) {
	case STRATEGY_ONE_FOR_ONE:	return "one_for_one";
	case STRATEGY_ONE_FOR_ALL:	return "one_for_all";
	case STRATEGY_REST_FOR_ONE:	return "rest_for_one";
	}
	return "?";
}

static void
walk(struct node *n, unsigned depth, walk_fn fn, void *arg)
{
	struct node_status st;
	size_t i;

	memset(&st, 0, sizeof(st));
	st.path = n->path;
	st.name = n->name;
	st.kind = n->kind;
	st.state = n->state;
	st.pid = n->pid;
	st.started_at = n->started_at;
	st.restarts = n->restarts;
	st.last_exit = n->last_exit;
	st.incarnation = n->incarnation;
	st.cause = n->cause;
	st.depth = depth;
	st.mbox = n->mbox;
	if (n->state == NS_RUNNING && n->started_ms != 0)
		st.uptime_ms = loop_now(&n->ad->loop) - n->started_ms;
	if (n->kind != NODE_WORKER) {
		st.restarts_in_period = sup_decisions_in_period(n);
		st.strategy = n->ss->strategy;
		st.intensity = n->ss->intensity;
		st.period = n->ss->period;
	}
	fn(&st, arg);
	if (n->kind == NODE_GROUP && n->cs != NULL && n->cs->nnodes > 0) {
		walk_placed(n, depth + 1, fn, arg);
		return;
	}
	for (i = 0; i < n->nkids; i++)
		walk(n->kids[i], depth + 1, fn, arg);
}

/*
 * The instances of a group spanning nodes, in order: this node's as
 * nodes, the others as the placement of a shard on another node.
 */
static void
walk_placed(struct node *g, unsigned depth, walk_fn fn, void *arg)
{
	const struct child_spec *cs = g->cs;
	struct node_status st;
	char path[sizeof(g->path) + 16], name[16];
	size_t k = 0, at;
	unsigned i;

	for (i = 0; i < cs->instances; i++) {
		snprintf(name, sizeof(name), "%u", i);
		if (k < g->nkids && strcmp(g->kids[k]->name, name) == 0) {
			walk(g->kids[k++], depth, fn, arg);
			continue;
		}
		at = placement_node(g->path, i, cs->nodes, cs->nnodes);
		snprintf(path, sizeof(path), "%s/%u", g->path, i);
		memset(&st, 0, sizeof(st));
		st.path = path;
		st.name = name;
		st.kind = NODE_WORKER;
		st.state = NS_STOPPED;
		st.last_exit = "";
		st.depth = depth;
		st.mbox = -1;
		st.remote = cs->nodes[at];
		fn(&st, arg);
	}
	for (; k < g->nkids; k++)
		walk(g->kids[k], depth, fn, arg);
}

void
node_walk(struct node *n, walk_fn fn, void *arg)
{
	if (n != NULL)
		walk(n, 0, fn, arg);
}

/*
 * The node that runs the shard at path, when it is a shard of a group
 * spanning nodes that the placement gives another node; else NULL.
 */
const char *
tree_placed_on(struct actord *ad, const char *path)
{
	const char *slash = strrchr(path, '/');
	char group[sizeof(ad->root->path)], *end;
	const struct child_spec *cs;
	struct node *g;
	unsigned long s;

	if (slash == NULL || slash == path ||
	    (size_t)(slash - path) >= sizeof(group))
		return NULL;
	memcpy(group, path, (size_t)(slash - path));
	group[slash - path] = '\0';
	if ((g = node_find(ad->root, group)) == NULL ||
	    g->kind != NODE_GROUP || (cs = g->cs) == NULL || cs->nnodes == 0)
		return NULL;
	s = strtoul(slash + 1, &end, 10);
	if (slash[1] == '\0' || *end != '\0' || s >= cs->instances ||
	    node_find(ad->root, path) != NULL)
		return NULL;
	return cs->nodes[placement_node(g->path, (uint32_t)s, cs->nodes,
	    cs->nnodes)];
}
