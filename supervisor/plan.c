/*
 * plan.c: a supervisor's plan as data: the ordered lists of children it
 * will stop and start, each child named by identity (its node and the id
 * it was born with, never an index into kids), as OTP's supervisor.erl
 * computes the affected children as a list when it decides.
 *
 * It owns the lists' memory and order, and each child's place in them
 * (node->plan_at): whether a child is in a list, adding it and taking it
 * out cost O(1) whatever the number of children (issue 13: a set restart
 * of 10,000 children was O(N^2) in these lists alone).  It must never
 * start, stop or remove a child, nor decide anything: sup.c decides and
 * runs the plan, edit.c takes an edited child out of it.
 */
#include <stdlib.h>
#include <string.h>

#include "supervisor/actord.h"
#include "supervisor/log.h"

static int	by_index(const void *, const void *);
static int	by_index_desc(const void *, const void *);

bool
plan_ref_live(const struct plan_ref *r)
{
	return r->n != NULL && r->n->id == r->id;
}

/*
 * Which of n's places (node->plan_at) is its place in l: a plan's lists
 * name children of the supervisor whose plan it is, in its stop list or
 * in its start list.
 */
static size_t
which(const struct plan_list *l, const struct node *n)
{
	return n->parent != NULL && l == &n->parent->plan.start;
}

/* n's index in l, or l->n: its place checked against the list, O(1). */
static size_t
place(const struct plan_list *l, const struct node *n)
{
	size_t at = n->plan_at[which(l, n)];

	if (at < l->n && l->v[at].n == n && l->v[at].id == n->id)
		return at;
	return l->n;
}

bool
plan_has(const struct plan_list *l, const struct node *n)
{
	return place(l, n) < l->n;
}

/* The first place at or after i that names a child (l->n: none). */
size_t
plan_next(const struct plan_list *l, size_t i)
{
	while (i < l->n && l->v[i].n == NULL)
		i++;
	return i;
}

/* How many children l names. */
size_t
plan_count(const struct plan_list *l)
{
	return l->n - l->holes;
}

/* Empty, memory kept. */
void
plan_list_clear(struct plan_list *l)
{
	l->n = l->first = l->holes = l->scan = 0;
}

/*
 * The holes out, when they are as many as the children (so each costs
 * O(1) over time); the children keep their order and learn their new
 * places.  Never during a walk over l: sup.c calls it before one.
 */
static void
compact(struct plan_list *l)
{
	size_t i, k = 0, scan = 0;
	struct node *c;

	for (i = 0; i < l->n; i++) {
		if (i == l->scan)
			scan = k;
		if ((c = l->v[i].n) == NULL)
			continue;
		l->v[k] = l->v[i];
		c->plan_at[which(l, c)] = k;
		k++;
	}
	l->scan = l->scan >= l->n ? k : scan;
	l->n = k;
	l->first = l->holes = 0;
}

void
plan_tidy(struct plan_list *l)
{
	if (l->holes >= 16 && l->holes * 2 >= l->n)
		compact(l);
}

/* Append n unless it is there already. */
void
plan_add(struct plan_list *l, struct node *n)
{
	struct plan_ref *v;
	size_t cap;

	if (plan_has(l, n))
		return;
	if (l->n == l->cap && l->holes > 0)
		compact(l);
	if (l->n == l->cap) {
		cap = l->cap != 0 ? l->cap * 2 : 8;
		if ((v = reallocarray(l->v, cap, sizeof(*v))) == NULL)
			fatal("%s: reallocarray", __func__);
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n].n = n;
	l->v[l->n].id = n->id;
	n->plan_at[which(l, n)] = l->n;
	l->n++;
}

/*
 * The child at place i out, a hole left there: nothing else moves, so a
 * walk over l may take out what it is on.
 */
void
plan_del_at(struct plan_list *l, size_t i)
{
	if (i >= l->n || l->v[i].n == NULL)
		return;
	memset(&l->v[i], 0, sizeof(l->v[i]));
	l->holes++;
	if (l->holes == l->n) {
		plan_list_clear(l);
		return;
	}
	if (i == l->first)
		l->first = plan_next(l, i);
}

bool
plan_del(struct plan_list *l, const struct node *n)
{
	size_t at = place(l, n);

	if (at == l->n)
		return false;
	plan_del_at(l, at);
	return true;
}

static int
by_index(const void *a, const void *b)
{
	size_t x = node_index(((const struct plan_ref *)a)->n);
	size_t y = node_index(((const struct plan_ref *)b)->n);

	return x < y ? -1 : x > y;
}

static int
by_index_desc(const void *a, const void *b)
{
	return by_index(b, a);
}

/*
 * In start order, or in stop order (the last child first); holes out.
 * A stop in parallel then looks at every child again (sup.c, stop_step).
 */
void
plan_sort(struct plan_list *l, bool descending)
{
	size_t i;

	compact(l);
	l->scan = 0;
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), descending ? by_index_desc :
		    by_index);
	for (i = 0; i < l->n; i++)
		l->v[i].n->plan_at[which(l, l->v[i].n)] = i;
}

/* n leaves the tree or its place in the plan: no list names it any more. */
void
plan_forget(struct plan *p, const struct node *n)
{
	plan_del(&p->stop, n);
	plan_del(&p->start, n);
	if (p->trigger.n == n)
		memset(&p->trigger, 0, sizeof(p->trigger));
}

/* The plan is done: nothing to do, memory kept for the next one. */
void
plan_clear(struct plan *p)
{
	p->kind = PLAN_NONE;
	p->phase = PH_STOP;
	plan_list_clear(&p->stop);
	plan_list_clear(&p->start);
	memset(&p->trigger, 0, sizeof(p->trigger));
	p->why[0] = '\0';
	p->report = false;
}

void
plan_free(struct plan *p)
{
	free(p->stop.v);
	free(p->start.v);
	memset(&p->stop, 0, sizeof(p->stop));
	memset(&p->start, 0, sizeof(p->start));
}

const char *
plan_kind_name(enum plan_kind k)
{
	switch (k) {
	case PLAN_NONE:		return "none";
	case PLAN_BOOT:		return "boot";
	case PLAN_RESTART:	return "restart";
	case PLAN_STOP:		return "stop";
	case PLAN_BOOTFAIL:	return "boot failure";
	case PLAN_GIVEUP:	return "give up";
	}
	return "?";
}
