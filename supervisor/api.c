/*
 * api.c: the small C API that the control socket (and embedding programs)
 * call: find a node by path, start, stop, restart with a completion
 * callback, kill with a signal, add an instance to a group, remove a
 * stopped node, walk the tree for status; and the completions owed to
 * callers (waiters).  Reload lives in reload.c.
 *
 * It owns the checks that make a request valid, the results it gives
 * while a supervisor is at work, and their texts (actord_strerror, the
 * words of actorctl(8)).  Nothing is refused because a supervisor is
 * busy: as OTP's supervisor handles calls between two steps of its work,
 * a call here acts between two steps of a plan (sup.c), and a tree edit
 * goes through edit.c, which keeps the plan consistent.  Manual stops,
 * starts and restarts never count toward restart intensity.  It must
 * never decide a restart.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/actord.h"
#include "supervisor/log.h"

/* A completion owed to a caller: when the node is up, or when down. */
struct api_waiter {
	struct api_waiter *next;
	done_fn		 fn;
	void		*arg;
	bool		 up;
};

static int	check_node(struct actord *, const char *, struct node **);
static void	stop_by_hand(struct node *, done_fn, void *);
static void	restart_by_hand(struct node *);
static int	kill_tree(struct node *, int);
static bool	is_temporary(const struct node *);
static const char *again_text(const struct node *);

struct node *
actord_find(struct actord *ad, const char *path)
{
	return node_find(ad->root, path);
}

/* --- completions ------------------------------------------------------------- */

void
api_wait(struct node *n, bool up, done_fn fn, void *arg)
{
	struct api_waiter *w, **pp;

	if (fn == NULL)
		return;
	if ((w = calloc(1, sizeof(*w))) == NULL)
		fatal("%s: calloc", __func__);
	w->fn = fn;
	w->arg = arg;
	w->up = up;
	for (pp = &n->waiters; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = w;
}

/*
 * n is up (up true) or down: the callers waiting for that hear error and
 * msg, in the order they asked.  They are detached first, since a
 * completion may call the API again.
 */
void
api_settle(struct node *n, bool up, int error, const char *msg)
{
	struct api_waiter *done = NULL, **tail = &done, **pp, *w;

	for (pp = &n->waiters; (w = *pp) != NULL;) {
		if (w->up != up) {
			pp = &w->next;
			continue;
		}
		*pp = w->next;
		w->next = NULL;
		*tail = w;
		tail = &w->next;
	}
	while ((w = done) != NULL) {
		done = w->next;
		w->fn(w->arg, error, msg);
		free(w);
	}
}

/* Every caller waiting on n hears ECANCELED and why. */
void
api_cancel(struct node *n, const char *why)
{
	api_settle(n, true, ECANCELED, why);
	api_settle(n, false, ECANCELED, why);
}

/* The caller of these completions goes away: none is called any more. */
void
actord_forget_done(struct actord *ad, done_fn fn)
{
	struct api_waiter **pp, *w;
	struct node *n;

	for (n = ad->all; n != NULL; n = n->next_all)
		for (pp = &n->waiters; (w = *pp) != NULL;) {
			if (w->fn == fn) {
				*pp = w->next;
				free(w);
			} else
				pp = &w->next;
		}
}

/* --- the calls ---------------------------------------------------------------- */

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
	*np = n;
	return 0;
}

static bool
is_temporary(const struct node *n)
{
	return n->cs != NULL && n->cs->restart == RESTART_TEMPORARY;
}

/*
 * Start a stopped child.  A child its supervisor is about to start (a
 * boot not there yet) or starting by hand is joined: done when it runs.
 */
int
actord_start_node(struct actord *ad, const char *path, done_fn done,
    void *arg)
{
	struct node *n;
	int e;

	if ((e = check_node(ad, path, &n)) != 0)
		return e;
	if (sup_in_loop(n))
		return EINPROGRESS;
	if (n->state == NS_RUNNING)
		return EALREADY;
	if (n->state == NS_STARTING || sup_will_start(n)) {
		api_wait(n, true, done, arg);
		return 0;
	}
	if (!sup_can_start(n->parent))
		return EAGAIN;
	log_info("%s: start asked", n->path);
	api_wait(n, true, done, arg);
	if (n->state == NS_STOPPING) {
		/* Being stopped by hand: started once it is down. */
		if (n->after_stop == AFTER_NONE)
			n->after_stop = AFTER_START;
		return 0;
	}
	node_start(n, WHY_MANUAL);
	return 0;
}

/*
 * Stop a child and end its restart loop for good; a temporary child is
 * removed once down (OTP deletes its spec).  Always allowed.
 */
int
actord_stop_node(struct actord *ad, const char *path, done_fn done,
    void *arg)
{
	struct node *n, *s;
	int e;

	if ((e = check_node(ad, path, &n)) != 0)
		return e;
	log_info("%s: stop asked", n->path);
	s = n->parent;
	sup_end_loop(n);
	stop_by_hand(n, done, arg);
	sup_resume(s);
	return 0;
}

/* n is out of its restart loop: it goes down, and stays down. */
static void
stop_by_hand(struct node *n, done_fn done, void *arg)
{
	n->manual_stopped = true;
	api_settle(n, true, ECANCELED, "stopped by hand");
	if (n->after_stop == AFTER_START)
		n->after_stop = AFTER_NONE;
	if (is_temporary(n) && n->after_stop == AFTER_NONE)
		n->after_stop = AFTER_REMOVE;
	if (node_is_down(n)) {
		if (done != NULL)
			done(arg, 0, NULL);
		if (n->after_stop == AFTER_REMOVE) {
			log_info("%s: temporary, removed", n->path);
			edit_remove(n);
		} else if (n->after_stop == AFTER_REPLACE)
			edit_replace(n);
		return;
	}
	api_wait(n, false, done, arg);
	if (n->state != NS_STOPPING)
		node_stop(n);
}

/* Stop (ending any restart loop) and start again, by hand. */
int
actord_restart_node(struct actord *ad, const char *path, done_fn done,
    void *arg)
{
	struct node *n, *s;
	int e;

	if ((e = check_node(ad, path, &n)) != 0)
		return e;
	if (!sup_can_start(n->parent))
		return EAGAIN;
	if (n->after_stop == AFTER_REMOVE || n->after_stop == AFTER_REPLACE)
		return EAGAIN;		/* a reload takes it away */
	log_info("%s: restart asked", n->path);
	if (sup_will_start(n) && !sup_in_loop(n)) {
		api_wait(n, true, done, arg);	/* a boot not there yet */
		return 0;
	}
	s = n->parent;
	sup_end_loop(n);
	api_wait(n, true, done, arg);
	restart_by_hand(n);
	sup_resume(s);
	return 0;
}

/* n is out of its restart loop: it goes down if up, then starts. */
static void
restart_by_hand(struct node *n)
{
	if (node_is_down(n)) {
		node_start(n, WHY_MANUAL);
		return;
	}
	if (n->state == NS_STARTING && n->why == WHY_MANUAL)
		return;			/* already starting by hand */
	n->after_stop = AFTER_START;
	if (n->state != NS_STOPPING)
		node_stop(n);
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
 * SIGTERM sent this way is a clean exit for the restart rules.  *sent (if
 * not NULL) says to how many workers it went.
 */
int
actord_kill_node(struct actord *ad, const char *path, int sig,
    unsigned *sent)
{
	struct node *n;
	int k;

	if (sent != NULL)
		*sent = 0;
	if ((n = node_find(ad->root, path)) == NULL)
		return ENOENT;
	if (sig < 0 || sig >= NSIG)
		return EINVAL;
	log_info("%s: signal %d asked", n->path, sig);
	if ((k = kill_tree(n, sig)) == 0)
		return ESRCH;
	if (sent != NULL)
		*sent = (unsigned)k;
	return 0;
}

/*
 * A new instance name/N, N one past the highest; started if the group
 * runs or boots.  If that start fails, nothing is added (OTP start_child).
 */
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
	/* A group spanning nodes has the instances its placement gives. */
	if (g->kind != NODE_GROUP || g->cs->nnodes > 0)
		return EINVAL;
	if (ad->shutting_down || ad->done)
		return ESHUTDOWN;
	if (sup_stopping(g))
		return EAGAIN;
	for (i = 0; i < g->nkids; i++) {
		v = strtoul(g->kids[i]->name, &end, 10);
		if (*end == '\0' && v + 1 > next)
			next = v + 1;
	}
	snprintf(name, sizeof(name), "%lu", next);
	if ((n = node_new_child(g, g->cs, name)) == NULL)
		return errno == ENOSPC ? ENOSPC : ENOMEM;
	if (edit_insert(g, n, g->nkids) == -1) {
		node_free(n);
		return ENOMEM;
	}
	n->dynamic = true;
	if (newpath != NULL)
		snprintf(newpath, len, "%s", n->path);
	log_info("%s: instance added", n->path);
	if (!sup_can_start(g)) {
		if (done != NULL)
			done(arg, 0, NULL);
		return 0;
	}
	n->adding = true;
	api_wait(n, true, done, arg);
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
	if (sup_in_loop(n) || !node_is_down(n))
		return EBUSY;
	log_info("%s: removed", n->path);
	api_cancel(n, "removed");
	edit_remove(n);
	return 0;
}

/*
 * Why a call on n may not start anything now (EAGAIN).  For an add, n is
 * the group: it is the supervisor that refuses.
 */
static const char *
again_text(const struct node *n)
{
	const struct node *s;

	if (n == NULL)
		return "its supervisor is not running";
	if (n->after_stop == AFTER_REMOVE)
		return "removed from the configuration";
	if (n->after_stop == AFTER_REPLACE)
		return "rebuilt by a reload";
	s = n->kind == NODE_GROUP && sup_stopping(n) ? n : n->parent;
	if (s != NULL && (sup_stopping(s) || s->ad->shutting_down))
		return "its supervisor is stopping";
	return "its supervisor is not running";
}

/*
 * The text actorctl(8) shows for an error of the calls above on node n
 * (NULL if there is none; for an add, the group): the reason alone,
 * actorctl adds command and path.
 */
const char *
actord_strerror(int e, const struct node *n, char *buf, size_t len)
{
	switch (e) {
	case 0:
		snprintf(buf, len, "ok");
		break;
	case ENOENT:
		snprintf(buf, len, "no such path");
		break;
	case EALREADY:
		snprintf(buf, len, "running");
		break;
	case EINPROGRESS:
		snprintf(buf, len, "restarting");
		break;
	case EBUSY:
		snprintf(buf, len, "%s (stop it first)", n == NULL ? "running" :
		    sup_in_loop(n) ? "restarting" : node_state_name(n->state));
		break;
	case EAGAIN:
		snprintf(buf, len, "%s", again_text(n));
		break;
	case ESHUTDOWN:
		snprintf(buf, len, "actord is shutting down");
		break;
	case EINVAL:
		snprintf(buf, len, "%s", n != NULL && n->parent == NULL ?
		    "the root (use shutdown)" : "not allowed here");
		break;
	case ESRCH:
		snprintf(buf, len, "not running");
		break;
	case ENOSPC:
		snprintf(buf, len, "no spare mailbox: raise spare_mailboxes");
		break;
	default:
		snprintf(buf, len, "%s", strerror(e));
		break;
	}
	return buf;
}

void
actord_walk(struct actord *ad, walk_fn fn, void *arg)
{
	node_walk(ad->root, fn, arg);
}
