/*
 * reload.c: apply a new spec to the running tree by diffing it, child by
 * child and by name: new children start, removed ones stop and go, changed
 * ones restart with their new spec, unchanged ones are not touched (same
 * pid).  A nested supervisor is diffed in place: its own settings
 * (strategy, intensity, backoff) apply at once, its children are diffed.
 * A reload is applied whatever the supervisors are doing (a boot, a set
 * restart, a backoff): every tree edit goes through edit.c, which keeps
 * the plans in flight consistent.
 *
 * It owns the choice of what a reload does to each node.  It must never
 * validate a configuration (config.c did, before we get here) and never
 * free a spec that a node still points to: the old spec is retired, and
 * freed at a later reload once no node points into it (or with the
 * daemon).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/actord.h"
#include "supervisor/config.h"
#include "supervisor/log.h"

static void	diff_sup(struct node *, const struct sup_spec *);
static struct node *kid_named(struct node *, const char *);
static struct node *leaving_named(struct node *, const char *);
static const struct child_spec *spec_named(const struct sup_spec *,
		    const char *);
static void	drop(struct node *);
static void	change(struct node *, const struct child_spec *);
static void	set_group(struct node *, const struct child_spec *);
static bool	same_shape(const struct node *, const struct child_spec *);
static void	reorder(struct node *, const struct sup_spec *);
static void	retired_sweep(struct actord *);

static struct node *
kid_named(struct node *s, const char *name)
{
	size_t i;

	/* A node on its way out counts only if a new one replaces it. */
	for (i = 0; i < s->nkids; i++)
		if (s->kids[i]->after_stop != AFTER_REMOVE &&
		    strcmp(s->kids[i]->name, name) == 0)
			return s->kids[i];
	return NULL;
}

/* A child of that name on its way out (stopping, then removed). */
static struct node *
leaving_named(struct node *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->nkids; i++)
		if (s->kids[i]->after_stop == AFTER_REMOVE &&
		    strcmp(s->kids[i]->name, name) == 0)
			return s->kids[i];
	return NULL;
}

static const struct child_spec *
spec_named(const struct sup_spec *ss, const char *name)
{
	size_t i;

	for (i = 0; i < ss->nchildren; i++)
		if (strcmp(ss->children[i].name, name) == 0)
			return &ss->children[i];
	return NULL;
}

/* Would the node be built the same kind of node from this spec? */
static bool
same_shape(const struct node *n, const struct child_spec *cs)
{
	switch (n->kind) {
	case NODE_SUP:
		return cs->kind == CHILD_SUPERVISOR;
	case NODE_GROUP:
		return cs->kind == CHILD_WORKER && cs->instances > 0;
	case NODE_WORKER:
	default:
		return cs->kind == CHILD_WORKER && cs->instances == 0;
	}
}

/* A removed child: its loop ends, it is stopped, then removed (edit.c). */
static void
drop(struct node *n)
{
	struct node *s = n->parent;

	log_info("%s: removed from the configuration", n->path);
	sup_end_loop(n);
	api_settle(n, true, ECANCELED, "removed from the configuration");
	if (node_is_down(n)) {
		api_cancel(n, "removed from the configuration");
		edit_remove(n);
	} else {
		n->after_stop = AFTER_REMOVE;
		if (n->state != NS_STOPPING)
			node_stop(n);
	}
	sup_resume(s);
}

/* Point a group and its instances at a new (equal) spec. */
static void
set_group(struct node *g, const struct child_spec *cs)
{
	size_t i;

	g->cs = cs;
	for (i = 0; i < g->nkids; i++)
		g->kids[i]->cs = cs;
}

/*
 * A changed child: it takes its new spec at its next start (node_start).
 * One that runs is restarted by hand now; one in a restart loop or in its
 * supervisor's plan gets it when the loop or the plan starts it.
 */
static void
change(struct node *n, const struct child_spec *cs)
{
	struct node *s = n->parent;

	log_info("%s: changed, restarting", n->path);
	n->pending_cs = cs;
	if (n->kind == NODE_GROUP) {
		/*
		 * A group is rebuilt with its new instances: stopped and
		 * removed first, so that no two nodes share a path; edit.c
		 * puts the new one in its place.
		 */
		sup_end_loop(n);
		if (node_is_down(n))
			edit_replace(n);
		else {
			n->after_stop = AFTER_REPLACE;
			if (n->state != NS_STOPPING)
				node_stop(n);
		}
		sup_resume(s);
		return;
	}
	if (sup_in_loop(n) || sup_will_start(n) || n->state == NS_STOPPING)
		return;
	if (node_is_down(n)) {
		if (!n->manual_stopped && n->parent->state == NS_RUNNING &&
		    sup_can_start(n->parent))
			node_start(n, WHY_MANUAL);
		return;
	}
	n->after_stop = AFTER_START;
	node_stop(n);
}

/* The start order of the new spec; children on their way out last. */
static void
reorder(struct node *s, const struct sup_spec *ss)
{
	struct node **order, *k;
	size_t i, n = 0;

	if ((order = calloc(s->nkids + 1, sizeof(*order))) == NULL)
		return;
	for (i = 0; i < ss->nchildren; i++)
		if ((k = kid_named(s, ss->children[i].name)) != NULL)
			order[n++] = k;
	for (i = 0; i < s->nkids; i++)
		if (s->kids[i]->after_stop == AFTER_REMOVE)
			order[n++] = s->kids[i];
	edit_reorder(s, order, n);
	free(order);
}

static void
diff_sup(struct node *s, const struct sup_spec *ss)
{
	struct node *k;
	const struct child_spec *cs;
	size_t i;

	s->ss = ss;
	/* Children no longer configured, or now of another kind. */
	for (i = s->nkids; i-- > 0;) {
		if (i >= s->nkids)
			continue;	/* an edit took more than one */
		k = s->kids[i];
		if (k->after_stop == AFTER_REMOVE)
			continue;
		cs = spec_named(ss, k->name);
		if (cs == NULL || !same_shape(k, cs))
			drop(k);
	}
	/* Present in both: unchanged, changed, or a supervisor to descend. */
	for (i = 0; i < ss->nchildren; i++) {
		cs = &ss->children[i];
		if ((k = kid_named(s, cs->name)) == NULL)
			continue;
		if (k->kind == NODE_SUP) {
			k->cs = cs;
			diff_sup(k, cs->sup);
		} else if (k->after_stop == AFTER_REPLACE)
			k->pending_cs = cs;	/* rebuilt from the newest */
		else if (spec_child_equal(k->cs, cs)) {
			if (k->kind == NODE_GROUP) {
				set_group(k, cs);
				k->group_ss = *ss;
				k->group_ss.strategy = STRATEGY_ONE_FOR_ONE;
				k->group_ss.children = NULL;
				k->group_ss.nchildren = 0;
			} else
				k->cs = cs;
		} else
			change(k, cs);
	}
	/* New ones, in the order of the new spec, then that order. */
	for (i = 0; i < ss->nchildren; i++) {
		cs = &ss->children[i];
		if (kid_named(s, cs->name) != NULL)
			continue;
		if ((k = leaving_named(s, cs->name)) != NULL) {
			/*
			 * Its name is still stopping (a temporary child
			 * stopped, a child of another kind): the new one
			 * takes its place once it is down (edit.c), so
			 * that no two nodes share a path.
			 */
			k->after_stop = AFTER_REPLACE;
			k->pending_cs = cs;
			continue;
		}
		log_info("%s%s%s: new in the configuration",
		    s->parent == NULL ? "" : s->path, "/", cs->name);
		if ((k = node_new_child(s, cs, cs->name)) == NULL ||
		    edit_insert(s, k, s->nkids) == -1) {
			log_warnx("%s: cannot add %s", s->path, cs->name);
			if (k != NULL)
				node_free(k);
			continue;
		}
		(void)sup_adopt(k);
	}
	reorder(s, ss);
}

/* --- retired specs ------------------------------------------------------------ */

/* Where a spec's parts are, that a node may point to: sorted ranges. */
struct ranges {
	struct { uintptr_t lo, hi; } *r;	/* [lo, hi) */
	size_t		 n, cap;
	bool		 failed;	/* out of memory: assume it is used */
};

static void
range_add(struct ranges *rs, const void *p, size_t len)
{
	void *r;

	if (rs->n == rs->cap) {
		rs->cap = rs->cap == 0 ? 16 : 2 * rs->cap;
		if ((r = reallocarray(rs->r, rs->cap, sizeof(*rs->r))) ==
		    NULL) {
			rs->failed = true;
			rs->cap = rs->n;
			return;
		}
		rs->r = r;
	}
	rs->r[rs->n].lo = (uintptr_t)p;
	rs->r[rs->n++].hi = (uintptr_t)p + len;
}

/* A supervisor spec and its children arrays, at every depth. */
static void
ranges_of(struct ranges *rs, const struct sup_spec *ss)
{
	size_t i;

	range_add(rs, ss, sizeof(*ss));
	if (ss->nchildren == 0)
		return;
	range_add(rs, ss->children, ss->nchildren * sizeof(*ss->children));
	for (i = 0; i < ss->nchildren; i++)
		if (ss->children[i].sup != NULL)
			ranges_of(rs, ss->children[i].sup);
}

static int
range_cmp(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

/* Is p in one of the sorted ranges? */
static bool
in_ranges(const struct ranges *rs, const void *p)
{
	uintptr_t a = (uintptr_t)p;
	size_t lo = 0, hi = rs->n, mid;

	if (p == NULL)
		return false;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (a < rs->r[mid].lo)
			hi = mid;
		else if (a >= rs->r[mid].hi)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

/* Does any node, in the tree or freed this turn, point into spec? */
static bool
spec_used(const struct actord *ad, const struct actord_spec *spec)
{
	struct ranges rs = { NULL, 0, 0, false };
	const struct node *n, *lists[2] = { ad->all, ad->graveyard };
	bool used = false;
	size_t l;

	ranges_of(&rs, &spec->root);
	if (rs.failed) {
		free(rs.r);
		return true;
	}
	qsort(rs.r, rs.n, sizeof(*rs.r), range_cmp);
	for (l = 0; l < 2 && !used; l++)
		for (n = lists[l]; n != NULL && !used; n = n->next_all)
			used = in_ranges(&rs, n->cs) ||
			    in_ranges(&rs, n->pending_cs) ||
			    in_ranges(&rs, n->ss);
	free(rs.r);
	return used;
}

/*
 * A spec a reload replaced is kept while a node still points into it (a
 * child on its way out, a restart not yet begun), then freed: an actord
 * reloaded every minute for months must not keep every file it read.
 * Looked at each reload: O((nodes + spec) log spec) per spec kept.
 */
static void
retired_sweep(struct actord *ad)
{
	size_t i, k = 0;

	for (i = 0; i < ad->nretired; i++) {
		if (ad->free_spec != NULL && !spec_used(ad, ad->retired[i]))
			ad->free_spec(ad->retired[i]);
		else
			ad->retired[k++] = ad->retired[i];
	}
	ad->nretired = k;
}

/*
 * Apply newspec (already validated) to the running tree.  On success the
 * daemon owns newspec; on failure (shutting down, no spare mailbox) the
 * caller keeps it.
 */
int
actord_reload(struct actord *ad, struct actord_spec *newspec, char *err,
    size_t errlen)
{
	struct actord_spec **r;

	if (ad->shutting_down || ad->done) {
		snprintf(err, errlen, "actord is shutting down");
		return ESHUTDOWN;
	}
	/* The arena is sealed: new mailboxes come from the spares. */
	if (mailboxes_reload_check(ad, newspec, err, errlen) == -1)
		return ENOSPC;
	r = reallocarray(ad->retired, ad->nretired + 1, sizeof(*r));
	if (r == NULL) {
		snprintf(err, errlen, "%s", strerror(errno));
		return ENOMEM;
	}
	ad->retired = r;
	retired_sweep(ad);
	log_info("reloading%s%s", newspec->file != NULL ? " " : "",
	    newspec->file != NULL ? newspec->file : "");
	sup_hold(ad);
	diff_sup(ad->root, &newspec->root);
	ad->retired[ad->nretired++] = ad->spec;
	ad->spec = newspec;
	sup_release(ad);
	return 0;
}

/*
 * Read path and apply it (SIGHUP, actorctl reload).  An invalid file is
 * refused with its error and the running tree stays as it was.
 */
int
actord_reload_file(struct actord *ad, const char *path, char *err,
    size_t errlen)
{
	struct actord_spec *spec;
	int e;

	if ((spec = config_load(path, err, errlen)) == NULL)
		return EINVAL;
	if ((e = actord_reload(ad, spec, err, errlen)) != 0)
		spec_free(spec);
	return e;
}
