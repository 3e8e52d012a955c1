/*
 * reload.c: apply a new spec to the running tree by diffing it, child by
 * child and by name: new children start, removed ones stop and go, changed
 * ones restart with their new spec, unchanged ones are not touched (same
 * pid).  A nested supervisor is diffed in place: its own settings
 * (strategy, intensity, backoff) apply at once, its children are diffed.
 *
 * It owns the choice of what a reload does to each node.  It must never
 * validate a configuration (config.c did, before we get here) and never
 * free a spec that a node still points to: the old spec is retired and
 * freed with the daemon.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/actord.h"
#include "supervisor/config.h"
#include "supervisor/log.h"

static void	diff_sup(struct node *, const struct sup_spec *);
static struct node *kid_named(struct node *, const char *);
static const struct child_spec *spec_named(const struct sup_spec *,
		    const char *);
static void	drop(struct node *);
static void	change(struct node *, const struct child_spec *);
static void	set_group(struct node *, const struct child_spec *);
static bool	same_shape(const struct node *, const struct child_spec *);

static struct node *
kid_named(struct node *s, const char *name)
{
	size_t i;

	/* A node on its way out counts only if a new one replaces it. */
	for (i = 0; i < s->nkids; i++)
		if ((!s->kids[i]->api_remove || s->kids[i]->pending_cs != NULL) &&
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

/* A removed child: stopped, then removed from the tree. */
static void
drop(struct node *n)
{
	log_info("%s: removed from the configuration", n->path);
	if (timer_pending(&n->backoff))
		timer_cancel(&n->ad->loop, &n->backoff);
	if (node_is_down(n) && n->state != NS_STOPPING) {
		node_unlink(n);
		node_free(n);
		return;
	}
	n->api_remove = true;
	if (n->state == NS_STOPPING && n->api_stop)
		return;			/* already on its way down */
	n->api_stop = true;
	if (n->state != NS_STOPPING)
		node_stop(n);
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

/* A changed child: restarted with its new spec (or only updated if down). */
static void
change(struct node *n, const struct child_spec *cs)
{
	log_info("%s: changed, restarting", n->path);
	if (n->kind == NODE_GROUP) {
		/*
		 * A group is rebuilt with its new instances: stopped and
		 * removed first, so that no two nodes share a path; sup.c
		 * puts the new one in its place (node_replace).
		 */
		if (timer_pending(&n->backoff))
			timer_cancel(&n->ad->loop, &n->backoff);
		n->pending_cs = cs;
		n->api_remove = true;
		if (node_is_down(n)) {
			node_replace(n);
			return;
		}
		if (n->state == NS_STOPPING && n->api_stop)
			return;
		n->api_stop = true;
		if (n->state != NS_STOPPING)
			node_stop(n);
		return;
	}
	if (node_is_down(n)) {
		n->cs = cs;
		if (!n->manual_stopped && n->parent->state == NS_RUNNING) {
			if (timer_pending(&n->backoff))
				timer_cancel(&n->ad->loop, &n->backoff);
			node_start(n, WHY_MANUAL);
		}
		return;
	}
	n->pending_cs = cs;
	if (n->state == NS_STOPPING)
		return;			/* it takes the new spec when it starts */
	n->api_stop = true;
	n->api_restart = true;
	node_stop(n);
}

static void
diff_sup(struct node *s, const struct sup_spec *ss)
{
	struct node **order, *k;
	const struct child_spec *cs;
	size_t i, j, n = 0;

	s->ss = ss;
	/* Children no longer configured, or now of another kind. */
	for (i = s->nkids; i-- > 0;) {
		k = s->kids[i];
		if (k->api_remove)
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
		} else if (spec_child_equal(k->cs, cs)) {
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
	/* New ones, then the start order of the new spec. */
	for (i = 0; i < ss->nchildren; i++) {
		cs = &ss->children[i];
		if (kid_named(s, cs->name) != NULL)
			continue;
		log_info("%s%s%s: new in the configuration",
		    s->parent == NULL ? "" : s->path, "/", cs->name);
		if ((k = node_new_child(s, cs, cs->name)) == NULL ||
		    node_insert(s, k, s->nkids) == -1) {
			log_warnx("%s: cannot add %s", s->path, cs->name);
			continue;
		}
		if (s->state == NS_RUNNING)
			node_start(k, WHY_MANUAL);
	}
	if ((order = calloc(s->nkids + 1, sizeof(*order))) == NULL)
		return;
	for (i = 0; i < ss->nchildren; i++)
		if ((k = kid_named(s, ss->children[i].name)) != NULL)
			order[n++] = k;
	for (j = 0; j < s->nkids; j++)
		if (s->kids[j]->api_remove && s->kids[j]->pending_cs == NULL)
			order[n++] = s->kids[j];	/* on their way out */
	if (n == s->nkids)
		memcpy(s->kids, order, n * sizeof(*order));
	free(order);
}

/*
 * Apply newspec (already validated) to the running tree.  On success the
 * daemon owns newspec; on failure (a busy tree) the caller keeps it.
 */
int
actord_reload(struct actord *ad, struct actord_spec *newspec, char *err,
    size_t errlen)
{
	struct actord_spec **r;

	if (ad->shutting_down || ad->done) {
		snprintf(err, errlen, "shutting down");
		return ESHUTDOWN;
	}
	if (ad->root->op != OP_NONE || ad->root->state != NS_RUNNING) {
		snprintf(err, errlen, "the root supervisor is %s; try again",
		    ad->root->op == OP_BOOT ? "starting" : "busy");
		return EBUSY;
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
	log_info("reloading%s%s", newspec->file != NULL ? " " : "",
	    newspec->file != NULL ? newspec->file : "");
	diff_sup(ad->root, &newspec->root);
	ad->retired[ad->nretired++] = ad->spec;
	ad->spec = newspec;
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
