/*
 * plan.c: a supervisor's plan as data: the ordered lists of children it
 * will stop and start, each child named by identity (its node and the id
 * it was born with, never an index into kids), as OTP's supervisor.erl
 * computes the affected children as a list when it decides.
 *
 * It owns the lists' memory and order.  It must never start, stop or
 * remove a child, nor decide anything: sup.c decides and runs the plan,
 * edit.c takes an edited child out of it.
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

bool
plan_has(const struct plan_list *l, const struct node *n)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i].n == n)
			return true;
	return false;
}

/* Append n unless it is there already. */
void
plan_add(struct plan_list *l, struct node *n)
{
	struct plan_ref *v;
	size_t cap;

	if (plan_has(l, n))
		return;
	if (l->n == l->cap) {
		cap = l->cap != 0 ? l->cap * 2 : 8;
		if ((v = reallocarray(l->v, cap, sizeof(*v))) == NULL)
			fatal("%s: reallocarray", __func__);
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n].n = n;
	l->v[l->n].id = n->id;
	l->n++;
}

bool
plan_del(struct plan_list *l, const struct node *n)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i].n == n) {
			memmove(&l->v[i], &l->v[i + 1],
			    (l->n - i - 1) * sizeof(*l->v));
			l->n--;
			return true;
		}
	return false;
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

/* In start order, or in stop order (the last child first). */
void
plan_sort(struct plan_list *l, bool descending)
{
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), descending ? by_index_desc :
		    by_index);
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
	p->stop.n = 0;
	p->start.n = 0;
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
