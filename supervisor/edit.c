/*
 * edit.c: the one door through which a supervisor's children change at
 * run time: a child inserted (an add, a reload's new child), removed (a
 * remove, a temporary child that exited or was stopped, a reload's
 * dropped child), reordered (a reload), or rebuilt in its place (a
 * reload's group with a new instance count).
 *
 * It owns the consistency between kids and the plan in flight: an edited
 * child leaves every list of its supervisor's plan before it leaves kids,
 * and a reorder sorts the lists again, so no edit can leave a plan naming
 * a child that is gone or in an order that is not the tree's.  It must
 * never decide a restart: once the plan is consistent, sup.c runs it.
 */
#include <stdio.h>
#include <string.h>

#include "supervisor/actord.h"
#include "supervisor/log.h"

int
edit_insert(struct node *s, struct node *k, size_t at)
{
	if (node_insert(s, k, at) == -1)
		return -1;
	plan_sort(&s->plan.start, false);
	plan_sort(&s->plan.stop, true);
	return 0;
}

/*
 * Take k out of the tree (and of any plan) and free it with its subtree;
 * a plan that waited for it moves on.  What k owed to API callers must be
 * settled before: what is left is cancelled.
 */
void
edit_remove(struct node *k)
{
	struct node *s = k->parent;

	if (s != NULL)
		plan_forget(&s->plan, k);
	node_unlink(k);
	node_free(k);
	if (s != NULL && s->plan.kind != PLAN_NONE)
		sup_run(s);
}

/* kids become order (the same nodes); the plan follows the new order. */
void
edit_reorder(struct node *s, struct node **order, size_t n)
{
	if (n != s->nkids)
		return;
	memcpy(s->kids, order, n * sizeof(*order));
	plan_sort(&s->plan.start, false);
	plan_sort(&s->plan.stop, true);
}

/* The mailboxes of k's workers (k stopped) back to the spares. */
static void
release_mailboxes(struct node *k)
{
	size_t i;

	for (i = 0; i < k->nkids; i++)
		release_mailboxes(k->kids[i]);
	if (k->kind == NODE_WORKER)
		mailboxes_release(k);
}

/*
 * A new node built from k->pending_cs in the place of k (stopped), then
 * started if its supervisor wants it.  Reload rebuilds groups this way.
 * The new node is in the tree before k goes: taking k out may end its
 * supervisor's plan, and that may remove the supervisor itself (a reload
 * that drops it), which must take the new node with it.  But k's
 * mailboxes go back to the spares first, for the new node to take: a
 * group grown from N to M instances needs M - N spares, as the reload's
 * check counted, not M.
 */
void
edit_replace(struct node *k)
{
	struct node *s = k->parent, *nk;
	const struct child_spec *cs = k->pending_cs;
	size_t at = node_index(k);

	k->pending_cs = NULL;
	release_mailboxes(k);
	if ((nk = node_new_child(s, cs, cs->name)) == NULL ||
	    edit_insert(s, nk, at + 1) == -1) {
		log_warnx("%s/%s: cannot rebuild", s->parent == NULL ? "" :
		    s->path, cs->name);
		if (nk != NULL)
			node_free(nk);
		edit_remove(k);
		return;
	}
	plan_forget(&s->plan, k);
	node_unlink(k);
	node_free(k);
	if (!sup_adopt(nk) && s->plan.kind != PLAN_NONE)
		sup_run(s);
}
